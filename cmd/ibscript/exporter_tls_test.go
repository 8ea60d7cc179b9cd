package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// testPKI writes a CA and a server certificate for 127.0.0.1 signed by it
// (ECDSA P-256, valid an hour) into dir: ca.pem, cert.pem, key.pem. It
// returns the CA's pool.
func testPKI(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ibscript test CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*pem.Block{
		"ca.pem":   {Type: "CERTIFICATE", Bytes: caDER},
		"cert.pem": {Type: "CERTIFICATE", Bytes: der},
		"key.pem":  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool
}

// webConfig writes exporter-toolkit's web configuration: TLS with dir's
// certificate, and one basic-auth user whose password is bcrypt-hashed.
func webConfig(t *testing.T, dir, user, pass string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: %s\n",
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), user, hash)
	p := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExporterWebConfig (issue 35): --web.config.file serves over TLS
// with basic auth, as exporter-toolkit does for every exporter: no
// password or a wrong one is 401, plain HTTP gets no metrics, the right
// one gets them; a configuration that does not parse ends the start with
// status 2 before anything listens.
func TestExporterWebConfig(t *testing.T) {
	dir := t.TempDir()
	pool := testPKI(t, dir)
	cfg := webConfig(t, dir, "prom", "s3cret")
	addr, _, stderr := startExporter(t, "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--interval", "100ms", "--web.config.file", cfg)
	if !strings.Contains(stderr.String(), "serving /metrics on https://"+addr) {
		t.Errorf("stderr does not say https: %q", stderr.String())
	}
	// A hang bound, not a latency: for a user it does not know,
	// exporter-toolkit compares the password with a fixed cost-10 bcrypt
	// hash (against timing attacks), 0.11 s natively but 2.0 s under
	// -race at load 18, and past the 10 s this client had on a loaded CI
	// machine ("Client.Timeout exceeded while awaiting headers").
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(user, pass string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), "GET", "https://"+addr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("no password: %d, want 401", code)
	}
	if code, _ := get("prom", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	if code, _ := get("nobody", "s3cret"); code != http.StatusUnauthorized {
		t.Errorf("unknown user: %d, want 401", code)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := get("prom", "s3cret")
		if code == 200 && strings.Contains(body, "infiniband_switch_port_transmit_data_bytes_total{") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("right password: %d %.200q", code, body)
		}
		time.Sleep(100 * time.Millisecond) // polling for the first sweep
	}
	// Plain HTTP on the TLS port gets no metrics.
	resp, err := httpClient.Get("http://" + addr + "/metrics")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(b), "infiniband_") {
			t.Errorf("plain HTTP: %d %.200q", resp.StatusCode, b)
		}
	}
	// A client that does not trust the CA is refused by TLS.
	if _, err := (&http.Client{Timeout: 10 * time.Second}).Get("https://" + addr + "/metrics"); err == nil {
		t.Error("a client without the CA connected")
	}

	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: "+filepath.Join(dir, "missing.pem")+"\n  key_file: x\n"), 0o600)
	for _, f := range []string{bad, filepath.Join(dir, "nosuch.yml")} {
		var stdout, errb bytes.Buffer
		code := run([]string{"exporter", "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--web.listen-address", "127.0.0.1:0", "--web.config.file", f}, strings.NewReader(""), &stdout, &errb)
		if code != exitError || !strings.Contains(errb.String(), "--web.config.file "+f) {
			t.Errorf("%s: exit %d, %q; want 2 naming the file", f, code, errb.String())
		}
	}
}

// TestExporterPrometheusTLS runs Debian's Prometheus against the exporter
// served over TLS with basic auth (certificates made by the test):
// scraped with the CA and the password, the target is up and its series
// are there; a second job with a wrong password is down.
func TestExporterPrometheusTLS(t *testing.T) {
	promBin := needTool(t, "prometheus")
	dir := t.TempDir()
	testPKI(t, dir)
	cfg := webConfig(t, dir, "prom", "s3cret")
	addr, _, _ := startExporter(t, "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--interval", "100ms", "--web.config.file", cfg)
	for _, pw := range []string{"s3cret", "wrong"} {
		if err := os.WriteFile(filepath.Join(dir, pw+".pw"), []byte(pw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	job := func(name, pw string) string {
		return fmt.Sprintf("  - job_name: %s\n    scheme: https\n    tls_config:\n      ca_file: %s\n    basic_auth:\n      username: prom\n      password_file: %s\n    static_configs:\n      - targets: [%q]\n",
			name, filepath.Join(dir, "ca.pem"), filepath.Join(dir, pw+".pw"), addr)
	}
	promCfg := "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" + job("secure", "s3cret") + job("badpass", "wrong")
	prom := startPrometheus(t, promBin, dir, promCfg)
	// One series whose value holds ok.
	await := func(what, q string, ok func(float64) bool) {
		t.Helper()
		awaitProm(t, prom, what, q, func(r map[string]float64) bool {
			for _, v := range r {
				return len(r) == 1 && ok(v)
			}
			return false
		})
	}
	await("the TLS target is up", `up{job="secure"}`, func(v float64) bool { return v == 1 })
	// net.2sw2path4hca cables ports 1, 2, 3 and 5 of both switches.
	await("its series", `count(infiniband_switch_port_transmit_data_bytes_total{job="secure"})`, func(v float64) bool { return v == 8 })
	await("the wrong password's target is down", `up{job="badpass"}`, func(v float64) bool { return v == 0 })
	await("the wrong password's scrapes got nothing", `count(infiniband_switch_port_transmit_data_bytes_total{job="badpass"}) or vector(0)`, func(v float64) bool { return v == 0 })
}
