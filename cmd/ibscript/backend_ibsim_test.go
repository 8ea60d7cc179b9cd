package main

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
)

var ibndDate = regexp.MustCompile(`(?m)^# Topology file: generated on .*$`)

func startIbsim(t *testing.T) *ibsimtest.Sim {
	t.Helper()
	ibsimtest.Require(t)
	s, err := ibsimtest.Start(t.Context(), t.TempDir(), topologies+"net.2sw2path4hca", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// attached lists the client slots ibsim's console reports.
func attached(t *testing.T, s *ibsimtest.Sim) []string {
	t.Helper()
	out, err := s.Console(t.Context(), "Attached")
	if err != nil {
		t.Fatal(err)
	}
	var l []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Client ") {
			l = append(l, line)
		}
	}
	return l
}

// TestDiscoverIbsimCLI runs `ibscript discover --fabric ibsim:SOCK?node=Hca1`
// end to end, once the ibsim scheme is routed to host's ibsim:.
func TestDiscoverIbsimCLI(t *testing.T) {
	s := startIbsim(t)
	ref, err := s.Run(t.Context(), "Hca1", "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := ibscript(t, "discover", "--fabric", "ibsim:"+s.Sock+"?node=Hca1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if w, g := ibndDate.ReplaceAllString(string(ref), ""), ibndDate.ReplaceAllString(out, ""); w != g {
		t.Errorf("ibscript discover differs from ibnetdiscover:\n%s", lineDiff(w, g))
	}
}

// TestIbsimSIGTERMReleasesSlot: SIGTERM to `ibscript run` on the ibsim
// backend, in the middle of a script's query loop, ends the process
// promptly and gives its ibsim client slot back.
func TestIbsimSIGTERMReleasesSlot(t *testing.T) { testSignalReleasesSlot(t, syscall.SIGTERM) }

func testSignalReleasesSlot(t *testing.T, sig syscall.Signal) {
	s := startIbsim(t)
	base := len(attached(t, s))
	c := startStuck(t, nil, "print('ready')\nwhile true do smp.nodeinfo('lid:1') end\n", "--fabric=ibsim:"+s.Sock+"?node=Hca2")
	if n := len(attached(t, s)); n != base+1 {
		t.Errorf("while running: %d clients attached, want %d", n, base+1)
	}
	c.cmd.Process.Signal(sig)
	c.end(t, "interrupted by "+signalName(sig)+"\n")
	if n := len(attached(t, s)); n != base {
		t.Errorf("after %v %d clients attached, want %d (the slot leaked); stderr %s", sig, n, base, c.stderr.String())
	}
}

// TestIbsimSIGINTReleasesSlot: the same for SIGINT (Ctrl-C) outside the
// REPL.
func TestIbsimSIGINTReleasesSlot(t *testing.T) {
	testSignalReleasesSlot(t, syscall.SIGINT)
}

// TestIbsimSIGHUPReleasesSlot and TestIbsimSIGQUITReleasesSlot: the same
// for the hang-up of a closed terminal or ssh session and for Ctrl-\
// (both ended the process on the spot before, leaking the slot).
func TestIbsimSIGHUPReleasesSlot(t *testing.T)  { testSignalReleasesSlot(t, syscall.SIGHUP) }
func TestIbsimSIGQUITReleasesSlot(t *testing.T) { testSignalReleasesSlot(t, syscall.SIGQUIT) }

// ibsimMaxClients is ibsim's IBSIM_MAX_CLIENTS: the clients it serves at
// once, fabric-wide.
const ibsimMaxClients = 10

// TestIbsimRefusalReasons: ibsim refuses CONNECT with the same ERROR
// whatever the reason; the error says which one it is (it said "all 10
// client slots are taken, the node is unknown" for each before).
func TestIbsimRefusalReasons(t *testing.T) {
	s := startIbsim(t)
	base := len(attached(t, s))
	_, err := ibsim.Open(t.Context(), s.Sock, &ibsim.Options{Node: "NoSuchNode"})
	if err == nil || !strings.Contains(err.Error(), `connect to node "NoSuchNode" refused: ibsim has no node of that id or NodeDescription`) {
		t.Errorf("unknown node: %v", err)
	}
	sm, err := ibsim.Open(t.Context(), s.Sock, &ibsim.Options{Node: "Hca2", ISSM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	_, err = ibsim.Open(t.Context(), s.Sock, &ibsim.Options{Node: "Hca2", ISSM: true})
	if err == nil || !strings.Contains(err.Error(), `refused: another issm client`) {
		t.Errorf("second issm client: %v", err)
	}
	var held []*ibsim.Transport
	defer func() {
		for _, tr := range held {
			tr.Close()
		}
	}()
	for len(held) < ibsimMaxClients-base-1 {
		tr, err := ibsim.Open(t.Context(), s.Sock, &ibsim.Options{Node: "Hca1"})
		if err != nil {
			t.Fatalf("client %d: %v", base+1+len(held), err)
		}
		held = append(held, tr)
	}
	for _, node := range []string{"Hca1", "NoSuchNode", ""} {
		_, err = ibsim.Open(t.Context(), s.Sock, &ibsim.Options{Node: node})
		if err == nil || !strings.Contains(err.Error(), "refused: all 10 of ibsim's client slots are taken") {
			t.Errorf("node %q with every slot taken: %v", node, err)
		}
	}
	for _, tr := range held {
		tr.Close()
	}
	sm.Close()
	held = nil
	if n := len(attached(t, s)); n != base {
		t.Errorf("after the probes and closes %d clients attached, want %d (a probe kept a slot)", n, base)
	}
}

// TestDiscoverIbsimCLIWithDrops: with the ibsim console's Error rate at
// 10% on every switch port, `ibscript discover` still lists every node and
// link ibnetdiscover lists (captured before the drops) and says on stderr
// how many SMPs it had to retransmit.
func TestDiscoverIbsimCLIWithDrops(t *testing.T) {
	s := startIbsim(t)
	ref, err := s.Run(t.Context(), "Hca1", "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	for _, sw := range []string{"Switch1", "Switch2"} {
		if _, err := s.Console(t.Context(), `Error "`+sw+`" 10`); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := ibscript(t, "discover", "--timeout", "20ms", "--retries", "20", "--fabric", "ibsim:"+s.Sock+"?node=Hca1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if w, g := ibndDate.ReplaceAllString(string(ref), ""), ibndDate.ReplaceAllString(out, ""); w != g {
		t.Errorf("with drops, ibscript discover differs from ibnetdiscover:\n%s", lineDiff(w, g))
	}
	if !regexp.MustCompile(`ibscript discover: \d+ SMPs, [1-9]\d* retransmitted after a timeout`).MatchString(errOut) {
		t.Errorf("stderr does not say how many retransmissions were needed: %q", errOut)
	}
	t.Logf("stderr: %s", strings.TrimSpace(errOut))
}

// TestRdmacmOverIbsimCLI: with ibsim:?nodes=...&issm=1 one script holds
// RDMA CM endpoints on several hosts of a live ibsim fabric, and every
// client slot comes back at the end.
func TestRdmacmOverIbsimCLI(t *testing.T) {
	s := startIbsim(t)
	base := len(attached(t, s))
	code, out, errOut := ibscript(t, "run", "--fabric", "ibsim:"+s.Sock+"?nodes=Hca1,Hca2,Hca3,Hca4&issm=1",
		"../../scripts/rdmacm_migrate.lua", "--arg", "connections=4")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "7 checks passed, 0 failed") {
		t.Errorf("report:\n%s", out)
	}
	if n := len(attached(t, s)); n != base {
		t.Errorf("%d clients attached after the run, want %d", n, base)
	}
	code, _, errOut = ibscript(t, "-e", "print(1)", "--fabric", "ibsim:"+s.Sock+"?nodes=Hca1,Nope")
	if code != exitOK {
		t.Fatalf("a bad name in nodes= only matters when that node is opened: exit %d %s", code, errOut)
	}
	code, _, errOut = ibscript(t, "-e", `umad.open_port("Hca9")`, "--fabric", "ibsim:"+s.Sock+"?nodes=Hca1,Hca2")
	if code != exitError || !strings.Contains(errOut, `no CA "Hca9" (this fabric's nodes: Hca1, Hca2)`) {
		t.Errorf("open of an unlisted node: exit %d %s", code, errOut)
	}
}

// TestDiscoverIbsimDies: ibsim is killed in the middle of discover's
// sweep. discover says so once ("... is gone: ..."), exits 2 and prints
// no partial topology; before, it printed what it had found, a line per
// unreachable target ("connection refused", hundreds of them) and exited 1.
func TestDiscoverIbsimDies(t *testing.T) {
	ibsimtest.Require(t)
	s, err := ibsimtest.Start(t.Context(), t.TempDir(), topologies+"fattree-500.net", &ibsimtest.Options{NoSM: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	var once sync.Once
	testDiscoverProgress = func(nodes int) {
		if nodes >= 20 {
			once.Do(s.Kill)
		}
	}
	t.Cleanup(func() { testDiscoverProgress = nil })
	code, out, errOut := ibscript(t, "discover", "--fabric", "ibsim:"+s.Sock)
	t.Logf("exit %d, stdout %d bytes, stderr: %.300s", code, len(out), errOut)
	if s.Alive() {
		t.Fatal("the sweep ended before ibsim could be killed")
	}
	if code != exitError || out != "" {
		t.Errorf("exit %d, stdout %d bytes, want exit 2 and nothing on stdout", code, len(out))
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "is gone") || !strings.HasPrefix(lines[0], "ibscript discover: ") {
		t.Errorf("stderr (%d lines), want one line saying ibsim is gone:\n%.2000s", len(lines), errOut)
	}
}

// TestLeaveACore: on a local ibsim GOMAXPROCS drops to one below the
// CPUs (at least one), unless $GOMAXPROCS is set.
func TestLeaveACore(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	runtime.GOMAXPROCS(runtime.NumCPU())
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	if undo := leaveACore(); undo != nil {
		undo()
	}
	if got, want := runtime.GOMAXPROCS(0), max(1, runtime.NumCPU()-1); got != want {
		t.Errorf("GOMAXPROCS %d, want %d", got, want)
	}
	runtime.GOMAXPROCS(runtime.NumCPU())
	t.Setenv("GOMAXPROCS", strconv.Itoa(runtime.NumCPU()))
	if undo := leaveACore(); undo != nil {
		undo()
		t.Error("with $GOMAXPROCS set: leaveACore narrowed the CPUs")
	}
	if got := runtime.GOMAXPROCS(0); got != runtime.NumCPU() {
		t.Errorf("with $GOMAXPROCS set: GOMAXPROCS %d, want %d", got, runtime.NumCPU())
	}
}
