package ibsimdiff

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// sysstatFabric is a private ibsim fabric (OpenSM stopped first, as
// for ibping -S: its SMInfo to the issm server's port crashes umad2sim)
// where the C `ibsysstat -S` serves on Hca3 (cLID) and diag's server
// (IBSysstatServe, on a Session attached issm) on Hca2 (goLID), both
// answering with info: host names and the processors of a cpuinfo text
// (sysstatCServer's namespaces; else this machine's, and injected is
// false). Hca4 (none) runs no server.
type sysstatFabric struct {
	s                 *ibsimtest.Sim
	ctx               context.Context
	cLID, goLID, none string
	info              *diag.SysstatInfo
	injected          bool
	cState, cOut      func() string
	// stopGo stops diag's server and says how many requests it answered.
	stopGo func() uint64
}

func newSysstatFabric(t *testing.T, cpuinfoText string) *sysstatFabric {
	t.Helper()
	f := &sysstatFabric{s: privateSM(t, topo2sw)}
	f.s.StopSM()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	f.ctx = ctx
	cpuinfo := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(cpuinfo, []byte(cpuinfoText), 0o644); err != nil {
		t.Fatal(err)
	}
	f.info = &diag.SysstatInfo{Host: "sysstat-host", Domain: "example.org", CPUs: diag.ParseCPUInfo(cpuinfoText)}
	f.cState, f.cOut = sysstatCServer(t, ctx, f.s, "Hca3", f.info, cpuinfo)
	f.injected = f.info.Host == "sysstat-host"
	srvSess, _ := session(t, f.s, "Hca2", &ibsim.Options{ISSM: true}, nil)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan uint64, 1)
	go func() {
		n, err := diag.IBSysstatServe(sctx, &diag.Env{Session: srvSess}, diag.PingOUI, f.info)
		if err != nil {
			t.Error(err)
		}
		served <- n
	}()
	var once sync.Once
	var n uint64
	f.stopGo = func() uint64 { once.Do(func() { stop(); n = <-served }); return n }
	t.Cleanup(func() { f.stopGo() })
	sess, _ := session(t, f.s, "Hca1", nil, nil)
	f.cLID, f.goLID = strconv.Itoa(int(portLID(t, sess, "Hca3"))), strconv.Itoa(int(portLID(t, sess, "Hca2")))
	f.none = strconv.Itoa(int(portLID(t, sess, "Hca4")))
	// diag's server registers its agent on its own goroutine: until then
	// its port answers with status 0x000C, which ibsysstat prints as an
	// empty line. Asked until it answers.
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r := cTool(t, f.s, "Hca1", "ibsysstat", f.goLID, "host"); len(r.stdout) > 1 || time.Now().After(deadline) {
			break
		}
	}
	return f
}

// TestIBSysstatMatchesC: on a sysstatFabric whose servers answer with a
// two-processor /proc/cpuinfo, the C ibsysstat and `ibscript ibsysstat`
// on Hca1 ask each server every op: the same stdout and exit status; the
// C client prints the same for both servers; and the two servers'
// answers to the same requests are the same bytes (the TID's top 16 bits
// aside, ibsim's). Failures: a port with no server (ibsim bounces:
// "Connection timed out", 255), a LID nobody has, an unknown op (usage,
// 2).
func TestIBSysstatMatchesC(t *testing.T) {
	f := newSysstatFabric(t, sysstatCPUInfo)
	s, cLID, goLID := f.s, f.cLID, f.goLID
	asked := 0
	for _, args := range [][]string{
		{cLID}, {cLID, "ping"}, {cLID, "host"}, {cLID, "cpu"}, {"-o", "0x1405", cLID, "host"}, {cLID, "cpu", "extra"},
		{goLID}, {goLID, "ping"}, {goLID, "host"}, {goLID, "cpu"}, {"-o", "0x001405", goLID, "host"}, {goLID, "cpu", "extra"},
		{f.none, "host"}, {"-t", "100", "999"}, {cLID, "bogus"}, {"-S", cLID, "bogus"},
		// umad2sim hands the C server a request of any OUI (the client's
		// agent has the OpenIB OUI whatever -o says, 0 too).
		{"-o", "0", cLID, "host"}, {"-o", "0x123456", cLID, "cpu"},
	} {
		what := "ibsysstat " + strings.Join(args, " ")
		want := cTool(t, s, "Hca1", "ibsysstat", args...)
		got := ibscriptTool(t, s, "Hca1", "ibsysstat", args...)
		diffQuery(t, what, want, got)
		if want.code == 2 && len(want.stdout)+len(got.stdout) != 0 {
			t.Errorf("%s: a usage error printed on stdout: C %q, ibscript %q", what, want.stdout, got.stdout)
		}
	}
	compareUnbounced(t, f)
	// The C client prints the same for both servers.
	for _, op := range []string{"ping", "host", "cpu"} {
		fromC := cTool(t, s, "Hca1", "ibsysstat", cLID, op)
		fromGo := cTool(t, s, "Hca1", "ibsysstat", goLID, op)
		asked++
		w, g := withoutMHz(string(fromC.stdout)), withoutMHz(string(fromGo.stdout))
		if op == "host" && f.injected && w != "sysstat-host.example.org\n" {
			t.Errorf("ibsysstat host: the C server says %q, want sysstat-host.example.org", w)
		}
		if w != g || fromC.code != 0 || fromGo.code != 0 {
			t.Errorf("ibsysstat %s: the C server's answer (exit %d):\n%s\ndiag's (exit %d):\n%s", op, fromC.code, fromC.stdout, fromGo.code, fromGo.stdout)
		}
	}
	asked += compareSysstatReplies(t, f.ctx, s.Sock, cLID, goLID)
	if f.cState() != "running" {
		t.Errorf("the C server: %s, output %q", f.cState(), f.cOut())
	}
	if n := f.stopGo(); n < uint64(asked) {
		t.Errorf("diag's server answered %d requests, want at least the %d of the C client and the Transport", n, asked)
	}
}

// TestIBSysstatLongAnswer: with eight processors the cpu answer (537
// bytes) takes three MADs. diag's server sends it as RMPP segments and
// `ibscript ibsysstat` gets it whole from there (its agent does RMPP, as
// ibsysstat's with a kernel); from the C server, which umad2sim cuts to
// one MAD (RMPP Active, type 0), it prints that MAD's 216 bytes. The C
// client, to whom umad2sim hands 224 bytes of each MAD, prints 184 bytes
// from either server.
func TestIBSysstatLongAnswer(t *testing.T) {
	var text, full strings.Builder
	for i := range 8 {
		fmt.Fprintf(&text, "processor\t: %d\nmodel name\t: Fake CPU model number %d of a long name\ncpu MHz\t\t: %d.500\n\n", i, i, 1000+i)
		fmt.Fprintf(&full, "cpu %d: model  Fake CPU model number %d of a long name MHZ  %d.500\n", i, i, 1000+i)
	}
	f := newSysstatFabric(t, text.String())
	if !f.injected {
		t.Skip("no namespaces to give the C server a long /proc/cpuinfo")
	}
	all := full.String()
	for _, c := range []struct {
		what string
		got  toolResult
		want string
	}{
		{"ibscript from diag's server", ibscriptTool(t, f.s, "Hca1", "ibsysstat", f.goLID, "cpu"), all + "\n"},
		{"ibscript from the C server", ibscriptTool(t, f.s, "Hca1", "ibsysstat", f.cLID, "cpu"), all[:216] + "\n"},
		{"C from diag's server", cTool(t, f.s, "Hca1", "ibsysstat", f.goLID, "cpu"), all[:184] + "\n"},
		{"C from the C server", cTool(t, f.s, "Hca1", "ibsysstat", f.cLID, "cpu"), all[:184] + "\n"},
	} {
		if string(c.got.stdout) != c.want || c.got.code != 0 {
			t.Errorf("%s: exit %d, %d bytes:\n%s\nwant %d bytes:\n%s", c.what, c.got.code, len(c.got.stdout), c.got.stdout, len(c.want), c.want)
		}
	}
}

// ibpanicPID is the "[pid] " of an IBPANIC line, which ibscript leaves
// out.
var ibpanicPID = regexp.MustCompile(`^ibpanic: \[\d+\] `)

// compareUnbounced: a request ibsim delivers and nobody answers (Hca4's
// issm client, a Transport with no agent, drops it) is not bounced, so
// nothing comes back to the C client, whose umad_recv fails after its
// -t: its IBPANIC on stderr, nothing on stdout, 255. ibscript prints
// the same (its request ends by its timer, not by a bounce); with
// Hca4's client gone ibsim bounces again and both print the iberror
// line.
func compareUnbounced(t *testing.T, f *sysstatFabric) {
	t.Helper()
	silent, err := ibsim.Open(f.ctx, f.s.Sock, &ibsim.Options{Node: "Hca4", ISSM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	args := []string{"-t", "200", f.none, "host"}
	want := cTool(t, f.s, "Hca1", "ibsysstat", args...)
	got := ibscriptTool(t, f.s, "Hca1", "ibsysstat", args...)
	what := "ibsysstat " + strings.Join(args, " ") + " (Hca4's issm client serves nothing)"
	diffQuery(t, what, want, got)
	w := ibpanicPID.ReplaceAllString(string(want.stderr), "ibpanic: ")
	if w != "ibpanic: ibsystat: umad_recv failed.: Connection timed out\n" || string(got.stderr) != w {
		t.Errorf("%s: stderr C %q, ibscript %q; want both \"ibpanic: [pid] ibsystat: umad_recv failed.: Connection timed out\" (pid aside)", what, want.stderr, got.stderr)
	}
	silent.Close()
	bounced := cTool(t, f.s, "Hca1", "ibsysstat", args...)
	diffQuery(t, "ibsysstat "+strings.Join(args, " ")+" (Hca4 without a client again)", bounced, ibscriptTool(t, f.s, "Hca1", "ibsysstat", args...))
	if !strings.Contains(string(bounced.stdout), "Connection timed out") {
		t.Errorf("with Hca4's client gone the C client printed %q, want its iberror line (ibsim bounces)", bounced.stdout)
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
