package ibsimdiff

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad"
)

// withoutMHz is s with the frequency of ibsysstat's cpu lines replaced
// by F: /proc/cpuinfo may change it between the two servers' reads.
func withoutMHz(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if j := strings.LastIndex(l, " MHZ "); j >= 0 {
			lines[i] = l[:j] + " MHZ F"
		}
	}
	return strings.Join(lines, "\n")
}

// sysstatCPUInfo is the /proc/cpuinfo both servers answer with when
// the C server can be given it (sysstatCServer): two processors, the
// second without a model, in a file's words.
const sysstatCPUInfo = "processor\t: 0\nvendor_id\t: Sim\nmodel name\t: Simulated CPU @ 1.00GHz\ncpu MHz\t\t: 1000.000\n\n" +
	"processor\t: 1\nvendor_id\t: Sim\ncpu MHz\t\t: 999.999\n\n"

// sysstatCServer starts the C `ibsysstat -S` on node answering with
// info's host and domain names and the processors of the file cpuinfo:
// in a user, mount and UTS namespace (unshare -rmu) where it sets the
// names and binds the file over /proc/cpuinfo, umad2sim preloaded into
// the server only. Where the namespaces are not to be had it starts the
// server as it is, and info becomes this machine's (SysstatLocal).
func sysstatCServer(t *testing.T, ctx context.Context, s *ibsimtest.Sim, node string, info *diag.SysstatInfo, cpuinfo string) (state, output func() string) {
	t.Helper()
	srv, err := s.Command(ctx, node, "ibsysstat", "-S")
	if err != nil {
		t.Fatal(err)
	}
	const script = `echo "$1" > /proc/sys/kernel/hostname && echo "$2" > /proc/sys/kernel/domainname && mount --bind "$0" /proc/cpuinfo && LD_PRELOAD="$3" exec "$4" -S`
	if out, err := exec.CommandContext(ctx, "unshare", "-rmu", "sh", "-c", strings.Replace(script, `LD_PRELOAD="$3" exec "$4" -S`, "true", 1),
		cpuinfo, info.Host, info.Domain).CombinedOutput(); err != nil {
		t.Logf("no user, mount and UTS namespace to give the C server a host name and /proc/cpuinfo (%v: %s): both servers answer with this machine's", err, out)
		*info = *diag.SysstatLocal()
		return cServer(t, ctx, srv)
	}
	preload := ""
	env := srv.Env[:0:0]
	for _, e := range srv.Env {
		if v, ok := strings.CutPrefix(e, "LD_PRELOAD="); ok {
			preload = v
			continue
		}
		env = append(env, e)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatal(err)
	}
	srv.Path, srv.Env = unshare, env
	srv.Args = []string{"unshare", "-rmu", "sh", "-c", script, cpuinfo, info.Host, info.Domain, preload, srv.Args[0]}
	return cServer(t, ctx, srv)
}

// TestIBSysstatMatchesC: on one fabric (OpenSM stopped first, as for
// ibping -S: its SMInfo to the issm server's port crashes umad2sim) the
// C `ibsysstat -S` serves on Hca3 and diag's server (IBSysstatServe, on
// a Session attached issm) on Hca2, both answering with one host name
// and /proc/cpuinfo (sysstatCServer's namespaces; else this machine's).
// From Hca1 the C ibsysstat and `ibscript ibsysstat` ask each server
// every op: the same stdout and exit status; the C client prints the
// same for both servers; and the two servers' answers to the same
// requests are the same bytes (the TID's top 16 bits aside, ibsim's).
// Failures: a port with no server (ibsim bounces: "Connection timed
// out", 255), a LID nobody has, an unknown op (usage, 2).
func TestIBSysstatMatchesC(t *testing.T) {
	s := privateSM(t, topo2sw)
	s.StopSM()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cpuinfo := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(cpuinfo, []byte(sysstatCPUInfo), 0o644); err != nil {
		t.Fatal(err)
	}
	info := &diag.SysstatInfo{Host: "sysstat-host", Domain: "example.org", CPUs: diag.ParseCPUInfo(sysstatCPUInfo)}
	state, cOut := sysstatCServer(t, ctx, s, "Hca3", info, cpuinfo)
	srvSess, _ := session(t, s, "Hca2", &ibsim.Options{ISSM: true}, nil)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan uint64, 1)
	go func() {
		n, err := diag.IBSysstatServe(sctx, &diag.Env{Session: srvSess}, diag.PingOUI, info)
		if err != nil {
			t.Error(err)
		}
		served <- n
	}()
	sess, _ := session(t, s, "Hca1", nil, nil)
	cLID, goLID := strconv.Itoa(int(portLID(t, sess, "Hca3"))), strconv.Itoa(int(portLID(t, sess, "Hca2")))
	none := strconv.Itoa(int(portLID(t, sess, "Hca4")))
	// diag's server registers its agent on its own goroutine: until then
	// its port answers with status 0x000C, which ibsysstat prints as an
	// empty line. Asked until it answers (those answers not counted).
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r := cTool(t, s, "Hca1", "ibsysstat", goLID, "host"); len(r.stdout) > 1 || time.Now().After(deadline) {
			break
		}
	}
	asked := 0
	for _, args := range [][]string{
		{cLID}, {cLID, "ping"}, {cLID, "host"}, {cLID, "cpu"}, {"-o", "0x1405", cLID, "host"}, {cLID, "cpu", "extra"},
		{goLID}, {goLID, "ping"}, {goLID, "host"}, {goLID, "cpu"}, {"-o", "0x001405", goLID, "host"}, {goLID, "cpu", "extra"},
		{none, "host"}, {"-t", "100", "999"}, {cLID, "bogus"}, {"-S", cLID, "bogus"},
	} {
		what := "ibsysstat " + strings.Join(args, " ")
		want := cTool(t, s, "Hca1", "ibsysstat", args...)
		got := ibscriptTool(t, s, "Hca1", "ibsysstat", args...)
		diffQuery(t, what, want, got)
		if want.code == 2 && len(want.stdout)+len(got.stdout) != 0 {
			t.Errorf("%s: a usage error printed on stdout: C %q, ibscript %q", what, want.stdout, got.stdout)
		}
	}
	// The C client prints the same for both servers.
	for _, op := range []string{"ping", "host", "cpu"} {
		fromC := cTool(t, s, "Hca1", "ibsysstat", cLID, op)
		fromGo := cTool(t, s, "Hca1", "ibsysstat", goLID, op)
		asked++
		w, g := withoutMHz(string(fromC.stdout)), withoutMHz(string(fromGo.stdout))
		if op == "host" && w != info.Host+"."+info.Domain+"\n" && info.Domain != "" {
			t.Errorf("ibsysstat host: the C server says %q, want %s.%s", w, info.Host, info.Domain)
		}
		if w != g || fromC.code != 0 || fromGo.code != 0 {
			t.Errorf("ibsysstat %s: the C server's answer (exit %d):\n%s\ndiag's (exit %d):\n%s", op, fromC.code, fromC.stdout, fromGo.code, fromGo.stdout)
		}
	}
	asked += compareSysstatReplies(t, ctx, s.Sock, cLID, goLID)
	if state() != "running" {
		t.Errorf("the C server: %s, output %q", state(), cOut())
	}
	stop()
	if n := <-served; n < uint64(asked) {
		t.Errorf("diag's server answered %d requests, want at least the %d of the C client and the Transport", n, asked)
	}
}

// compareSysstatReplies sends the same requests (every attribute, one
// it does not know, a Set) to both servers from a Transport on Hca1 and
// compares their answers byte for byte as the wire carries them (a
// whole MAD), the top 16 bits of the TID aside (ibsim writes the
// requester's slot there); the cpu lines' MHz may differ. It returns how many requests diag's server got.
func compareSysstatReplies(t *testing.T, ctx context.Context, sock, cLID, goLID string) int {
	t.Helper()
	tr, err := ibsim.Open(ctx, sock, &ibsim.Options{Node: "Hca1"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	id, err := tr.Register(ctx, fabric.Agent{Class: diag.SysstatClass, Version: diag.SysstatVersion, OUI: diag.PingOUI})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(lid string, method uint8, attr uint16, tid uint64) []byte {
		l, _ := strconv.Atoi(lid)
		req := make([]byte, mad.Size)
		(&mad.Header{BaseVersion: 1, MgmtClass: diag.SysstatClass, ClassVersion: diag.SysstatVersion, Method: method, TID: tid, AttrID: attr, AttrMod: 7}).Put(req)
		req[36] = 0x5a // reserved: the servers keep it
		mad.SetVendorOUI(req, diag.PingOUI)
		copy(req[40:], "request data")
		if err := tr.Send(ctx, &fabric.Packet{Agent: id, Timeout: 2 * time.Second, Addr: fabric.Addr{LID: uint16(l), QPN: 1, QKey: 0x80010000}, Data: req}); err != nil {
			t.Fatal(err)
		}
		resp := fabric.Packet{Data: make([]byte, 0, mad.Size)}
		if err := tr.Recv(ctx, &resp); err != nil || resp.Status != 0 {
			t.Fatalf("attr %#x method %#x to lid %s: %v, status %d", attr, method, lid, err, resp.Status)
		}
		// The C server's answer is as long as its umad_send says, which
		// umad2sim passes on; the kernel puts a whole MAD on the wire
		// (zero-padded), as ibscript's ibsim transport sends one.
		b := make([]byte, mad.Size)
		copy(b, resp.Data)
		b[8], b[9] = 0, 0
		return b
	}
	n := 0
	for i, c := range []struct {
		method uint8
		attr   uint16
	}{{mad.MethodGet, diag.SysstatAttrPing}, {mad.MethodGet, diag.SysstatAttrHost}, {mad.MethodGet, diag.SysstatAttrCPU},
		{mad.MethodGet, 0x13}, {mad.MethodSet, diag.SysstatAttrHost}} {
		tid := uint64(0x100 + i)
		w, g := ask(cLID, c.method, c.attr, tid), ask(goLID, c.method, c.attr, tid)
		n++
		if withoutMHz(string(w)) != withoutMHz(string(g)) {
			t.Errorf("method %#x attr %#x: the servers' answers differ:\nC:    % x\ndiag: % x", c.method, c.attr, w, g)
		}
	}
	return n
}
