package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/host"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// umadHost is a fake kernel with one CA: port 1 Active, port 2 down.
func umadHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5},
		umadtest.HostPort{Num: 2, LID: 3, State: 1, PhysState: 2})
	return h
}

// openFake is openBackend on the fake kernel h.
func openFake(ctx context.Context, c *config, stderr io.Writer, h *umadtest.Host) (*host.Host, error) {
	c.testHost = func(o *host.Options) { o.Kernel = &kernel.Options{FS: h.FS, Open: h.Open} }
	return openBackend(ctx, c, stderr)
}

// TestOpenUMADMessages: what the command line says opening umad: (the
// library's cases are host's tests): the default port on stderr, errors
// naming --fabric, auto's pointing at sim:.
func TestOpenUMADMessages(t *testing.T) {
	var stderr bytes.Buffer
	c := &config{fabricURI: "umad:", timeout: engine.DefaultTimeout, retries: 1}
	b, err := openFake(t.Context(), c, &stderr, umadHost())
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if got, want := stderr.String(), "ibscript: using mlx5_0 port 1 (LID 0x1)\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	stderr.Reset()
	c.fabricURI = "umad:mlx5_0/2"
	b, err = openFake(t.Context(), c, &stderr, umadHost())
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if stderr.Len() != 0 {
		t.Errorf("umad:mlx5_0/2: stderr %q, want nothing", stderr.String())
	}
	denied := umadHost()
	denied.Deny(umad.DevDir + "/umad0")
	for _, tc := range []struct {
		uri  string
		h    *umadtest.Host
		want string
	}{
		{"umad:mlx5_0/x", umadHost(), `--fabric umad:mlx5_0/x: bad port "x" (want 0..254)`},
		{"umad:", umadtest.NewHost(umadtest.New(nil)), "--fabric umad:: kernel: no InfiniBand devices: /sys/class/infiniband_mad has no umad ports"},
		{"auto", denied, "--fabric auto: kernel: umad: open /dev/infiniband/umad0 (mlx5_0 port 1): permission denied"},
	} {
		c.fabricURI = tc.uri
		_, err := openFake(t.Context(), c, io.Discard, tc.h)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.uri, err, tc.want)
		}
		if tc.uri == "auto" && (err == nil || !strings.HasSuffix(err.Error(), " (--fabric sim: uses the simulator)")) {
			t.Errorf("auto: %v, want it to point at sim:", err)
		}
	}
}

// pkeyHost is the fake kernel with two CAs on one network: mlx5_0 port 1
// (LID 1), where the tools run, and mlx5_1 port 1 (LID 2), the peer.
func pkeyHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5})
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 2, State: 4, PhysState: 5})
	return h
}

// pkeyPeer is mlx5_1's port through the kernel backend: it answers every
// request of its agent with the request as a GetResp, sent back to the
// request's address (its P_Key index included), and keeps the P_Key index
// each request came in on (seen) and the LID it came from (from).
type pkeyPeer struct {
	tr   fabric.Transport
	mu   sync.Mutex
	seen []string
	from []string
	done chan struct{}
}

func newPKeyPeer(t *testing.T, h *umadtest.Host, a fabric.Agent) *pkeyPeer {
	t.Helper()
	return newPeerOn(t, h, "mlx5_1", a)
}

// newPeerOn is newPKeyPeer on port 1 of the device ca.
func newPeerOn(t *testing.T, h *umadtest.Host, ca string, a fabric.Agent) *pkeyPeer {
	t.Helper()
	f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open})
	tr, err := f.Open(t.Context(), ca, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Register(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	p := &pkeyPeer{tr: tr, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			pk := fabric.Packet{Data: make([]byte, mad.Size)}
			if err := tr.Recv(context.Background(), &pk); err != nil {
				return
			}
			if mad.IsResponse(pk.Data) {
				continue
			}
			p.mu.Lock()
			p.seen = append(p.seen, fmt.Sprintf("class 0x%02x pkey_index %d", mad.MgmtClassOf(pk.Data), pk.Addr.PKeyIndex))
			p.from = append(p.from, fmt.Sprintf("class 0x%02x from LID %d", mad.MgmtClassOf(pk.Data), pk.Addr.LID))
			p.mu.Unlock()
			resp := append([]byte(nil), pk.Data...)
			mad.SetMethod(resp, mad.MethodGetResp)
			tr.Send(context.Background(), &fabric.Packet{Agent: pk.Agent, Addr: pk.Addr, Data: resp})
		}
	}()
	t.Cleanup(func() {
		tr.Close()
		<-p.done
		f.Close()
	})
	return p
}

func (p *pkeyPeer) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// sources returns what from holds, and empties it.
func (p *pkeyPeer) sources() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.from
	p.from = nil
	return f
}

// runFakeTool runs `ibscript TOOL ARGS` on the fake kernel h (the tool's
// port: umad:mlx5_0/1, unless ARGS give --fabric) until ctx ends, and
// returns its status and output.
// registered, when not nil, is closed when the tool registers an agent of
// class 0x32 (ibping's).
func runFakeTool(ctx context.Context, t *testing.T, h *umadtest.Host, registered chan struct{}, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if !slices.Contains(args, "--fabric") {
		args = append([]string{"--fabric", "umad:mlx5_0/1"}, args...)
	}
	c, err := parseArgs(args, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	open := h.Open
	if registered != nil {
		var once sync.Once
		open = func(path string) (umad.Dev, error) {
			d, err := h.Open(path)
			return &watchedDev{Dev: d, onPing: func() { once.Do(func() { close(registered) }) }}, err
		}
	}
	c.testHost = func(o *host.Options) { o.Kernel = &kernel.Options{FS: h.FS, Open: open} }
	// runTool turns the collector off for its one shot; run puts it back
	// after (without that, it stays off for the package's later tests).
	defer keepGCSettings()()
	inv, code, done := prepareTool(c, &stdout, &stderr)
	if !done {
		code = runTool(ctx, inv)
	}
	return code, stdout.String(), stderr.String()
}

// watchedDev calls onPing after a REGISTER_AGENT2 of class 0x32 succeeds
// (struct ib_user_mad_reg_req2's mgmt_class is byte 8).
type watchedDev struct {
	umad.Dev
	onPing func()
}

func (d *watchedDev) Ioctl(req uint32, arg []byte) error {
	err := d.Dev.Ioctl(req, arg)
	if err == nil && req == umad.Req().RegisterAgent2 && len(arg) > 8 && arg[8] == diag.PingClass {
		d.onPing()
	}
	return err
}

// TestPKeyIdxSent: -Y N (current rdma-core's common option, #1759) sends
// the tools' GMPs on P_Key index N, as the kernel's umad header carries
// it (umad_set_pkey in libibmad's mad_build_pkt), seen by the peer's
// port on the kernel model; without -Y, index 0 as 44 sends them.
func TestPKeyIdxSent(t *testing.T) {
	h := pkeyHost()
	peer := newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassPerf, Version: 1}.WithMethods(mad.MethodGet))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"perfquery", "-Y", "3", "2", "1"}, "class 0x04 pkey_index 3"},
		{[]string{"perfquery", "--pkey-idx=0x10", "2", "1"}, "class 0x04 pkey_index 16"},
		{[]string{"perfquery", "2", "1"}, "class 0x04 pkey_index 0"},
	} {
		before := len(peer.got())
		code, _, stderr := runFakeTool(t.Context(), t, h, nil, tc.args...)
		if code != 0 {
			t.Fatalf("%s: status %d: %s", tc.args, code, stderr)
		}
		seen := peer.got()[before:]
		if len(seen) == 0 {
			t.Fatalf("%s: the peer saw nothing", tc.args)
		}
		for _, s := range seen {
			if s != tc.want {
				t.Errorf("%s: the peer saw %q, want %q", tc.args, seen, tc.want)
				break
			}
		}
	}
}

// TestPKeyIdxServed: ibping -S answers a ping on the P_Key index the
// request came in on (rdma-core #1759's mad_respond_via: the reply's
// pkey_idx is umad_get_pkey of the request), whatever -Y says.
func TestPKeyIdxServed(t *testing.T) {
	h := pkeyHost()
	f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open})
	defer f.Close()
	tr, err := f.Open(t.Context(), "mlx5_1", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	id, err := tr.Register(t.Context(), fabric.Agent{Class: diag.PingClass, Version: diag.PingVersion, OUI: diag.PingOUI})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan int, 1)
	registered := make(chan struct{})
	go func() {
		code, _, stderr := runFakeTool(ctx, t, h, registered, "ibping", "-S", "-Y", "1")
		if code != 0 {
			t.Log(stderr)
		}
		served <- code
	}()
	select {
	case <-registered:
	case code := <-served:
		t.Fatalf("ibping -S ended (status %d) before serving", code)
	}
	// The agent is registered before the server listens for pings: one
	// that comes in between is not answered (1 run in 4 under -race at
	// load 20 lost the first ping). Ping until the server answers, a
	// second at a time, then check each P_Key index.
	ping := func(tid uint64, idx uint16, wait time.Duration) fabric.Packet {
		req := make([]byte, mad.Size)
		req[0], req[1], req[2], req[3] = 1, diag.PingClass, diag.PingVersion, mad.MethodGet
		mad.SetTID(req, tid)
		oui := uint32(diag.PingOUI)
		req[37], req[38], req[39] = byte(oui>>16), byte(oui>>8), byte(oui)
		err := tr.Send(ctx, &fabric.Packet{Agent: id, Timeout: wait, Addr: fabric.Addr{LID: 1, QPN: 1, QKey: 0x80010000, PKeyIndex: idx}, Data: req})
		if err != nil {
			t.Fatal(err)
		}
		resp := fabric.Packet{Data: make([]byte, mad.Size)}
		if err := tr.Recv(ctx, &resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for try := uint64(0); ping(0x1000+try, 0, time.Second).Status != 0; try++ {
		if try == 60 {
			t.Fatal("ibping -S answered no ping in a minute")
		}
	}
	for _, idx := range []uint16{4, 0, 9} {
		// Only a failure waits this long.
		resp := ping(uint64(0x100+idx), idx, 30*time.Second)
		if resp.Status != 0 || mad.StatusOf(resp.Data) != 0 || !mad.IsResponse(resp.Data) {
			t.Fatalf("pkey_index %d: no answer (status %d)", idx, resp.Status)
		}
		if resp.Addr.PKeyIndex != idx {
			t.Errorf("ping on pkey_index %d answered on %d", idx, resp.Addr.PKeyIndex)
		}
	}
	cancel()
	if code := <-served; code != 0 {
		t.Errorf("ibping -S: status %d", code)
	}
}

// TestPKeyIdxOption: -Y as current rdma-core's process_opt reads it
// (ibdiag_common.c, commit bdf0a8fc4: strtol base 0 of the whole value,
// 0..UINT16_MAX) and its IBEXIT, and its --help line as
// ibdiag_show_usage prints common_opts' entry.
func TestPKeyIdxOption(t *testing.T) {
	for _, tc := range []struct {
		val string
		ok  bool
		idx uint16
	}{
		{"0", true, 0}, {"65535", true, 65535}, {"0x10", true, 16}, {"010", true, 8}, {" 7", true, 7}, {"+2", true, 2}, {"-0", true, 0},
		{"65536", false, 0}, {"-1", false, 0}, {"", false, 0}, {"abc", false, 0}, {"1x", false, 0}, {"0x", false, 0},
		{"99999999999999999999", false, 0},
	} {
		idx, err := cPKeyIdx(tc.val)
		if tc.ok != (err == nil) || idx != tc.idx {
			t.Errorf("cPKeyIdx(%q) = %d, %v; want %d, ok %v", tc.val, idx, err, tc.idx, tc.ok)
		}
		if err != nil {
			want := `Invalid P_Key index "` + tc.val + `".  Requires an integer in the range [0, 65535].`
			if err.Error() != want {
				t.Errorf("cPKeyIdx(%q): %q, want %q", tc.val, err, want)
			}
		}
	}
	code, stdout, _ := ibscript(t, "perfquery", "-Y", "65536")
	if want := "perfquery: iberror: failed: Invalid P_Key index \"65536\".  Requires an integer in the range [0, 65535].\n"; code != 255 || stdout != want {
		t.Errorf("perfquery -Y 65536: status %d, stdout %q; want 255, %q", code, stdout, want)
	}
	var usage strings.Builder
	code = run([]string{"help", "perfquery"}, nil, &usage, io.Discard)
	want := "  --pkey-idx, -Y <idx>    P_Key table index for outgoing SA/GMP MADs \n" +
		"                          (default 0)\n"
	if code != 0 || !strings.Contains(usage.String(), want) {
		t.Errorf("help perfquery: status %d, want the lines\n%s\nin:\n%s", code, want, usage.String())
	}
}
