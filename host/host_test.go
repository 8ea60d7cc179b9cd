package host

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// Every goroutine a session or port starts must be gone once its Host is
// closed.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

const topologies = "../tests/topologies/"

func TestParseUMAD(t *testing.T) {
	tests := []struct {
		in   string
		ca   string
		port int
		err  string
	}{
		{"", "", 0, ""},
		{"mlx5_0", "mlx5_0", 0, ""},
		{"mlx5_0/2", "mlx5_0", 2, ""},
		{"/2", "", 2, ""},
		{"mlx5_0/x", "", 0, `bad port "x"`},
		{"mlx5_0/300", "", 0, `bad port "300"`},
		{"mlx5_0?node=a", "", 0, "bad CA name"},
	}
	for _, tt := range tests {
		ca, port, err := ParseUMAD(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseUMAD(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || ca != tt.ca || port != tt.port {
			t.Errorf("ParseUMAD(%q) = %q, %d, %v; want %q, %d", tt.in, ca, port, err, tt.ca, tt.port)
		}
	}
}

// umadHost is a fake kernel with one CA: port 1 Active, port 2 down.
func umadHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5},
		umadtest.HostPort{Num: 2, LID: 3, State: 1, PhysState: 2})
	return h
}

// TestOpenUMAD: umad: opens libibumad's default port and says which
// (Notice DefaultPort), umad:CA/PORT the one named and says nothing; auto
// opens the kernel's ports when sysfs lists one.
func TestOpenUMAD(t *testing.T) {
	h := umadHost()
	var notices []Notice
	o := &Options{Kernel: &kernel.Options{FS: h.FS, Open: h.Open}, Notice: func(n Notice) { notices = append(notices, n) }}
	for _, uri := range []string{"umad:", "auto"} {
		notices = nil
		hst, err := Open(t.Context(), uri, o)
		if err != nil {
			t.Fatal(err)
		}
		if a := hst.Transport().Port(); a.CAName != "mlx5_0" || a.PortNum != 1 {
			t.Errorf("%s: default port %s/%d", uri, a.CAName, a.PortNum)
		}
		if len(notices) != 1 || notices[0].Kind != DefaultPort || notices[0].Port.CAName != "mlx5_0" || notices[0].Port.PortNum != 1 || notices[0].Port.LID != 1 {
			t.Errorf("%s: notices %+v, want the default port", uri, notices)
		}
		if _, ok := hst.Raw().(*kernel.Fabric); !ok || hst.Sim() != nil {
			t.Errorf("%s: raw fabric %T", uri, hst.Raw())
		}
		if err := hst.Close(); err != nil {
			t.Errorf("%s: Close: %v", uri, err)
		}
	}
	notices = nil
	hst, err := Open(t.Context(), "umad:mlx5_0/2", o)
	if err != nil {
		t.Fatal(err)
	}
	if a := hst.Transport().Port(); a.PortNum != 2 || len(notices) != 0 {
		t.Errorf("port %d, notices %+v; want 2 and none", a.PortNum, notices)
	}
	hst.Close()
}

func TestOpenUMADErrors(t *testing.T) {
	ctx := t.Context()
	none := umadtest.NewHost(umadtest.New(nil))
	_, err := Open(ctx, "umad:", &Options{Kernel: &kernel.Options{FS: none.FS, Open: none.Open}})
	var ue *URIError
	if !errors.As(err, &ue) || ue.URI != "umad:" || !strings.Contains(err.Error(), "kernel: no InfiniBand devices: /sys/class/infiniband_mad has no umad ports") {
		t.Errorf("no devices: %v", err)
	}
	h := umadHost()
	h.Deny(umad.DevDir + "/umad0")
	_, err = Open(ctx, "umad:", &Options{Kernel: &kernel.Options{FS: h.FS, Open: h.Open}})
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/dev/infiniband/umad0") || !strings.Contains(err.Error(), "root or as a member of the rdma group") {
		t.Errorf("permission: %v", err)
	}
	_, err = Open(ctx, "auto", &Options{Kernel: &kernel.Options{FS: h.FS, Open: h.Open}})
	if !errors.As(err, &ue) || ue.URI != "auto" || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("auto with a port it may not open: %v, want the kernel's error, never the simulator", err)
	}
	_, err = Open(ctx, "umad:mlx9", &Options{Kernel: &kernel.Options{FS: umadHost().FS, Open: umadHost().Open}})
	if !errors.Is(err, syscall.ENODEV) {
		t.Errorf("unknown CA: %v", err)
	}
	_, err = Open(ctx, "umad:mlx5_0/x", nil)
	if err == nil || err.Error() != `umad:mlx5_0/x: bad port "x" (want 0..254)` {
		t.Errorf("bad port: %v", err)
	}
}

// TestUMADSetGate: on the kernel backend (the fake kernel) a Set is
// refused without AllowSet, also through a recording; with AllowSet and
// an audit file it goes out and is audited.
func TestUMADSetGate(t *testing.T) {
	dir := t.TempDir()
	h := umadHost()
	o := &Options{Kernel: &kernel.Options{FS: h.FS, Open: h.Open}, Record: filepath.Join(dir, "rec.jsonl"),
		Session: engine.Options{Timeout: 10 * time.Millisecond, Retries: -1}}
	set := func() error {
		hst, err := Open(t.Context(), "umad:", o)
		if err != nil {
			t.Fatal(err)
		}
		defer hst.Close()
		_, err = hst.Session().Perf(t.Context(), engine.LID(1), mad.MethodSet, perf.AttrPortCounters, 1, []byte{0, 1, 0xff, 0xff})
		return err
	}
	if err := set(); !errors.Is(err, engine.ErrSetRefused) {
		t.Errorf("Set without AllowSet: %v", err)
	}
	o.Session.AllowSet, o.Audit, o.Record = true, filepath.Join(dir, "audit.log"), ""
	if err := set(); errors.Is(err, engine.ErrSetRefused) {
		t.Errorf("Set with AllowSet refused: %v", err)
	}
	log, err := os.ReadFile(o.Audit)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(log); strings.Count(s, "\n") != 1 || !strings.Contains(s, "ibscript: audit:") || !strings.Contains(s, "target=lid:1") || !strings.Contains(s, "new=0001ffff") {
		t.Errorf("audit log %q", s)
	}
	if fi, err := os.Stat(o.Audit); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode %v %v, want 0600", fi.Mode(), err)
	}
}

// TestOpenSim: sim: URIs open the bundled or a named topology at the port
// the query names, with the session's keys in the simulator; a wrong URI
// is a URIError naming it.
func TestOpenSim(t *testing.T) {
	ctx := t.Context()
	hst, err := Open(ctx, "sim:"+topologies+"net.2sw2path4hca?node=Hca3&port=1", &Options{Session: engine.Options{MKey: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if hst.Sim() == nil || hst.Session() == nil || hst.Recorder() != nil || hst.Fabric() != hst.Raw() {
		t.Errorf("host %+v", hst)
	}
	if a := hst.Transport().Port(); a.CAName == "" || a.PortNum != 1 {
		t.Errorf("port %+v", a)
	}
	d, err := hst.Session().Discover(ctx, nil)
	if err != nil || len(d.Errors) > 0 || len(d.Fabric.Nodes) != 6 {
		t.Errorf("discover: %v %v", err, d)
	}
	if err := hst.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := hst.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	wd, _ := os.Getwd()
	for _, c := range []struct{ uri, want string }{
		{"sim:?port=x", `sim:?port=x: bad port "x"`},
		{"sim:?bare=maybe", `sim:?bare=maybe: bad bare value "maybe"`},
		{"sim:?colour=red", `sim:?colour=red: unknown option "colour" (want node, port, bare, sm)`},
		{"sim:?%zz", `sim:?%zz: bad query: invalid URL escape "%zz"`},
		{"sim:no-such.net", "sim:no-such.net: no topology file no-such.net (in " + wd + "): no such file or directory"},
		{"sim:/", "sim:/: no topology file /: it is a directory"},
		{"sim:?node=nosuch", "sim:?node=nosuch: "},
		{"replay:", "replay:: want replay:FILE"},
		{"nosuch:x", `nosuch:x: unknown backend "nosuch" (want auto, sim:, umad:, ibsim: or replay:)`},
	} {
		_, err := Open(ctx, c.uri, nil)
		var ue *URIError
		if !errors.As(err, &ue) || ue.URI != c.uri || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want a URIError %q", c.uri, err, c.want)
		}
	}
}

// TestAutoFallsBackToSim: with no umad port auto opens the bundled
// topology and says so (Notice SimFallback).
func TestAutoFallsBackToSim(t *testing.T) {
	none := umadtest.NewHost(umadtest.New(nil))
	var notices []Notice
	hst, err := Open(t.Context(), "auto", &Options{Kernel: &kernel.Options{FS: none.FS, Open: none.Open}, Notice: func(n Notice) { notices = append(notices, n) }})
	if err != nil {
		t.Fatal(err)
	}
	defer hst.Close()
	if hst.Sim() == nil || len(notices) != 1 || notices[0].Kind != SimFallback || notices[0].Topology != sim.DefaultTopology {
		t.Errorf("raw %T, notices %+v", hst.Raw(), notices)
	}
}

// TestRecordReplay: a discovery recorded on sim: (Options.Record) is
// discovered again from replay: alone, node for node.
func TestRecordReplay(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	discover := func(uri string, o *Options) string {
		hst, err := Open(ctx, uri, o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := hst.Session().Discover(ctx, nil)
		if err != nil || len(d.Errors) > 0 {
			t.Fatalf("%s: discover: %v %v", uri, err, d.Errors)
		}
		if err := hst.Close(); err != nil {
			t.Fatalf("%s: Close: %v", uri, err)
		}
		var b bytes.Buffer
		topo.WriteIBNetDiscover(&b, d.Fabric, nil)
		return ibndDate.ReplaceAllString(b.String(), "")
	}
	want := discover("sim:", &Options{Record: path, Session: engine.Options{Timeout: 2 * time.Second}})
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Fatalf("recording %v %v", fi, err)
	}
	if got := discover("replay:"+path, nil); got != want {
		t.Errorf("replayed discovery differs:\n%s", cmp.Diff(want, got))
	}
	_, err := Open(ctx, "replay:"+filepath.Join(t.TempDir(), "none.jsonl"), nil)
	var ue *URIError
	if !errors.As(err, &ue) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing recording: %v", err)
	}
}

// TestFilesErrors: a recording or audit file that cannot be created is a
// RecordError or AuditError from Open, and nothing stays open; a
// recording that could not be written in full is a RecordError from
// Close.
func TestFilesErrors(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "no", "such")
	_, err := Open(ctx, "sim:", &Options{Record: filepath.Join(dir, "r.jsonl")})
	var re *RecordError
	if !errors.As(err, &re) || re.Path != filepath.Join(dir, "r.jsonl") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("record: %v", err)
	}
	_, err = Open(ctx, "sim:", &Options{Audit: filepath.Join(dir, "a.log")})
	var ae *AuditError
	if !errors.As(err, &ae) || ae.Path != filepath.Join(dir, "a.log") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("audit: %v", err)
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fill a recording")
	}
	hst, err := Open(ctx, "sim:", &Options{Record: "/dev/full"})
	if err != nil {
		t.Fatal(err)
	}
	hst.Session().Discover(ctx, nil)
	err = hst.Close()
	if !errors.As(err, &re) || re.Path != "/dev/full" || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close of a recording on a full device: %v, want a RecordError with ENOSPC", err)
	}
}

// TestOpenWith: a fabric the caller built, opened at its default port,
// and closed with the Host.
func TestOpenWith(t *testing.T) {
	f, err := sim.Load(topologies+"net.2sw2path4hca", nil)
	if err != nil {
		t.Fatal(err)
	}
	hst, err := OpenWith(t.Context(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hst.Sim() != f {
		t.Errorf("Sim() %p, want %p", hst.Sim(), f)
	}
	if _, err := hst.Session().NodeInfo(t.Context(), engine.LID(hst.Transport().Port().LID)); err != nil {
		t.Errorf("NodeInfo of the local port: %v", err)
	}
	hst.Close()
	if _, err := f.Open(t.Context(), "", 0); err == nil {
		t.Error("the fabric opened a port after the Host closed it")
	}
}

var ibndDate = regexp.MustCompile(`(?m)^# Topology file: generated on .*$`)

// TestOpenIbsim: ibsim: attaches where Options.Ibsim or ?node= says, on
// the socket Options.Ibsim or the URI names, discovers what ibnetdiscover
// lists from the same node, and gives its slot back on Close.
func TestOpenIbsim(t *testing.T) {
	ibsimtest.Require(t)
	s, err := ibsimtest.Start(t.Context(), t.TempDir(), topologies+"net.2sw2path4hca", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	attached := func() int {
		out, err := s.Console(t.Context(), "Attached")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "Client ") {
				n++
			}
		}
		return n
	}
	base := attached() // OpenSM
	ref, err := s.Run(t.Context(), "Hca3", "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	local := 0
	o := &Options{Ibsim: IbsimDefaults{Sock: s.Sock, Node: "Hca1"}, Session: engine.Options{Timeout: 200 * time.Millisecond, Retries: 3},
		Notice: func(n Notice) {
			if n.Kind == LocalIbsim {
				local++
			}
		}}
	for _, uri := range []string{"ibsim:?node=Hca3", "ibsim:" + s.Sock + "?node=Hca3"} {
		hst, err := Open(t.Context(), uri, o)
		if err != nil {
			t.Fatal(err)
		}
		if n := attached(); n != base+1 {
			t.Errorf("%s: %d clients attached, want %d", uri, n, base+1)
		}
		d, err := hst.Session().Discover(t.Context(), nil)
		if err != nil || len(d.Errors) > 0 {
			t.Fatalf("%s: discover: %v %v", uri, err, d.Errors)
		}
		var got bytes.Buffer
		topo.WriteIBNetDiscover(&got, d.Fabric, nil)
		if w, g := ibndDate.ReplaceAllString(string(ref), ""), ibndDate.ReplaceAllString(got.String(), ""); w != g {
			t.Errorf("%s: discover differs from ibnetdiscover:\n%s", uri, cmp.Diff(w, g))
		}
		if err := hst.Close(); err != nil {
			t.Errorf("%s: close: %v", uri, err)
		}
		if n := attached(); n != base {
			t.Errorf("%s: after Close %d clients attached, want %d (a slot leaked)", uri, n, base)
		}
	}
	if local != 2 {
		t.Errorf("%d LocalIbsim notices, want 2", local)
	}
	// Options.Ibsim.Node is the default node.
	hst, err := Open(t.Context(), "ibsim:", o)
	if err != nil {
		t.Fatal(err)
	}
	if g := hst.Transport().Port().PortGUID; g != 0x100001 {
		t.Errorf("Node Hca1: attached to port GUID %#x, want 0x100001", g)
	}
	hst.Close()
	for _, c := range []struct{ uri, want string }{
		{"ibsim:?node=NoSuchNode", `connect to node "NoSuchNode" refused`},
		{"ibsim:?nod=x", `ibsim:?nod=x: unknown option "nod" (want node, nodes, issm, server)`},
		{"ibsim:?issm=maybe", `ibsim:?issm=maybe: bad issm value "maybe"`},
		{"ibsim:no-such-ibsim-sock", `ibsim:no-such-ibsim-sock: ibsim "no-such-ibsim-sock": control socket: connect: connection refused: no ibsim listens on that socket name`},
	} {
		_, err := Open(t.Context(), c.uri, o)
		var ue *URIError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want a URIError containing %q", c.uri, err, c.want)
		}
	}
	if _, err := Open(t.Context(), "ibsim:no-such-ibsim-sock", o); !errors.Is(err, ErrIbsimNotRunning) {
		t.Errorf("no ibsim: %v, want ErrIbsimNotRunning", err)
	}
	if n := attached(); n != base {
		t.Errorf("after the failed opens %d clients attached, want %d", n, base)
	}
}
