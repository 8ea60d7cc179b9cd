package diag_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
)

// sysstatPair is a server (IBSysstatServe with info, on Hca2) and a
// client Env (on Hca1) on one embedded simulated fabric, and the
// server's LID; the server stops when the test ends and reports how
// many requests it answered to served.
func sysstatPair(t *testing.T, info *diag.SysstatInfo) (f *sim.Fabric, client *diag.Env, lid uint16, served func() uint64) {
	t.Helper()
	return servedPair(t, func(ctx context.Context, env *diag.Env) (uint64, error) {
		return diag.IBSysstatServe(ctx, env, diag.PingOUI, info)
	})
}

// servedPair runs serve on Hca2 of net.2sw2path4hca and returns the
// fabric, a client Env on Hca1, the server's LID, and served, which
// stops the server and returns what serve answered (called when the
// test ends too).
func servedPair(t *testing.T, serve func(context.Context, *diag.Env) (uint64, error)) (f *sim.Fabric, client *diag.Env, lid uint16, served func() uint64) {
	t.Helper()
	var err error
	f, err = sim.Load("../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	o := &engine.Options{Timeout: 200 * time.Millisecond, Retries: 2}
	srv := attachSession(t, f, "Hca2", o)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan uint64, 1)
	go func() {
		n, err := serve(ctx, &diag.Env{Session: srv})
		if err != nil {
			t.Error(err)
		}
		done <- n
	}()
	var n uint64
	var stopped bool
	served = func() uint64 {
		if !stopped {
			stop()
			n, stopped = <-done, true
		}
		return n
	}
	t.Cleanup(func() { served() })
	return f, &diag.Env{Session: attachSession(t, f, "Hca1", o)}, srv.Port().LID, served
}

func sysstatText(t *testing.T, env *diag.Env, o diag.IBSysstatOptions) (string, error) {
	t.Helper()
	r, err := diag.IBSysstatRun(context.Background(), env, o)
	if r == nil {
		return "", err
	}
	var b strings.Builder
	diag.WriteIBSysstat(&b, r)
	return b.String(), err
}

// TestSysstatOnSimulator: diag's server on one simulated port answers
// diag's client on another: ping, host, cpu
// lines as ibsysstat prints them; a port no server runs on answers as
// the Linux kernel does (status 0x000C, no data), which ibsysstat, who
// looks at the umad status only, prints as a success (as a request with
// another OUI gets from the server's port); a LID nobody has
// times out ("Connection timed out").
func TestSysstatOnSimulator(t *testing.T) {
	info := &diag.SysstatInfo{Host: "node7", Domain: "example.org",
		CPUs: []diag.SysstatCPU{{Model: " Sim CPU", MHz: " 1000.000"}, {Model: "(null)", MHz: " 2.5"}}}
	f, env, lid, served := sysstatPair(t, info)
	tg := engine.LID(lid)
	// The server registers its agent on its own goroutine: until then
	// the port answers as a port without one.
	asked := uint64(1)
	for deadline := time.Now().Add(10 * time.Second); ; asked++ {
		got, _ := sysstatText(t, env, diag.IBSysstatOptions{OUI: diag.PingOUI, Target: &tg, Op: "host"})
		if got == "node7.example.org\n" || time.Now().After(deadline) {
			break
		}
	}
	for _, c := range []struct {
		op, want string
	}{
		{"", "sysstat ping succeeded\n"},
		{"ping", "sysstat ping succeeded\n"},
		{"host", "node7.example.org\n"},
		{"cpu", "cpu 0: model  Sim CPU MHZ  1000.000\ncpu 1: model (null) MHZ  2.5\n\n"},
	} {
		got, err := sysstatText(t, env, diag.IBSysstatOptions{OUI: diag.PingOUI, Target: &tg, Op: c.op})
		if err != nil || got != c.want {
			t.Errorf("op %q: %q, %v; want %q", c.op, got, err, c.want)
		}
	}
	// Hca3 runs no server.
	tr, err := f.Attach("Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	none := engine.LID(tr.Port().LID)
	tr.Close()
	for op, want := range map[string]string{"ping": "sysstat ping succeeded\n", "host": "\n"} {
		if got, err := sysstatText(t, env, diag.IBSysstatOptions{OUI: diag.PingOUI, Target: &none, Op: op}); got != want || err != nil {
			t.Errorf("op %s to a port without a server: %q, %v; want %q", op, got, err, want)
		}
	}
	// Another OUI's request (-o 0 too: the client's agent has the OpenIB
	// OUI whatever the request names, as umad_register gives it) finds no
	// server on the port, which answers with status 0x000C.
	for _, oui := range []uint32{0, 0x123456} {
		for op, want := range map[string]string{"ping": "sysstat ping succeeded\n", "host": "\n"} {
			if got, err := sysstatText(t, env, diag.IBSysstatOptions{OUI: oui, Target: &tg, Op: op}); got != want || err != nil {
				t.Errorf("op %s with OUI %#x: %q, %v; want %q", op, oui, got, err, want)
			}
		}
	}
	nobody := engine.LID(999)
	_, err = sysstatText(t, env, diag.IBSysstatOptions{OUI: diag.PingOUI, Target: &nobody, Op: "host"})
	if te, ok := err.(*diag.ToolError); !ok || te.Msg != "ibsystat to Lid 999: Connection timed out" {
		t.Errorf("LID 999: %v", err)
	}
	if _, err := sysstatText(t, env, diag.IBSysstatOptions{Target: &tg, Op: "Host"}); !isUsage(err) {
		t.Errorf("op Host: %v, want a usage error", err)
	}
	if _, err := sysstatText(t, env, diag.IBSysstatOptions{}); !isUsage(err) {
		t.Errorf("no target, no -S: %v, want a usage error", err)
	}
	if n := served(); n < 5 || n > asked+4 {
		t.Errorf("the server answered %d requests, want 4 and 1 to %d of the first host", n, asked)
	}
}

func isUsage(err error) bool {
	_, ok := err.(*diag.UsageError)
	return ok
}

// TestParseCPUInfo: /proc/cpuinfo read as build_cpuinfo reads it.
func TestParseCPUInfo(t *testing.T) {
	text := "garbage: before any processor\n" +
		"processor\t: 0\nvendor_id\t: X\nmodel name\t: First CPU\ncpu MHz\t\t: 100.0\n\n" +
		"processor\t: 1\ncpu MHz\t\t: 200.0\nmodel name\t: old\nmodel name\t: Second: with colon\n\n" +
		"processor : 2 (not a tab: no processor)\nno colon line\n" +
		"processor\t: 2\nmodel name\t:" + strings.Repeat("x", 1100) + "\n"
	got := diag.ParseCPUInfo(text)
	want := []diag.SysstatCPU{
		{Model: " First CPU", MHz: " 100.0"},
		{Model: " Second: with colon", MHz: " 200.0"},
		// fgets reads 1022 bytes at a time: the model is the first
		// chunk's, after "model name\t:"; the rest of the line is a
		// chunk with no colon.
		{Model: strings.Repeat("x", 1022-len("model name\t:")), MHz: "(null)"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var many strings.Builder
	for i := range 300 {
		fmt.Fprintf(&many, "processor\t: %d\nmodel name\t: m%d\n", i, i)
	}
	if cpus := diag.ParseCPUInfo(many.String()); len(cpus) != 256 || cpus[255].Model != " m255" {
		t.Errorf("300 processors: %d read, the last %+v; want ibsysstat's 256", len(cpus), cpus[len(cpus)-1])
	}
}

// TestSysstatReplyLayout: the answer's bytes as ibsysstat's server
// builds them in the request's buffer (mad_build_pkt): a GetResp with
// the request's TID, attribute, modifier, class-specific and reserved
// bytes and OUI, RMPP version 1 and response time 0x1f, Active when the
// answer is longer than a MAD, and as long as mk_reply counts it.
func TestSysstatReplyLayout(t *testing.T) {
	req := make([]byte, 256)
	copy(req, []byte{1, 0x33, 1, 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0x11, 0xee, 0xff, 0, 0, 0, 9})
	copy(req[24:], []byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 0x77, 0x00, 0x14, 0x05})
	copy(req[40:], "request data")
	head := []byte{1, 0x33, 1, 0x81, 0, 0, 0xcc, 0xdd, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0x11, 0xee, 0xff, 0, 0, 0, 9,
		1, 0, 0xf8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x77, 0x00, 0x14, 0x05}
	info := &diag.SysstatInfo{Host: "h", Domain: "d"}
	if got := diag.SysstatReply(req, info); !bytes.Equal(got, append(append([]byte(nil), head...), "h.d"...)) {
		t.Errorf("host h.d:\n% x", got)
	}
	info.Domain = ""
	if got := diag.SysstatReply(req, info); !bytes.Equal(got, append(append([]byte(nil), head...), 'h', 0)) {
		t.Errorf("host h:\n% x", got)
	}
	for _, attr := range []byte{0x10, 0x13} {
		req[17] = attr
		head[17] = attr
		if got := diag.SysstatReply(req, info); !bytes.Equal(got, head) {
			t.Errorf("attr %#x:\n% x", attr, got)
		}
	}
	req[17], head[17] = 0x12, 0x12
	info.CPUs = make([]diag.SysstatCPU, 8)
	for i := range info.CPUs {
		info.CPUs[i] = diag.SysstatCPU{Model: " A model name of some length", MHz: " 1234.567"}
	}
	got := diag.SysstatReply(req, info)
	text := ""
	for i := range 8 {
		text += fmt.Sprintf("cpu %d: model  A model name of some length MHZ  1234.567\n", i)
	}
	head[26] |= 1 // Active: the answer takes more than one MAD
	if !bytes.Equal(got, append(append(append([]byte(nil), head...), text...), 0)) {
		t.Errorf("8 cpus (%d bytes):\n% x", len(text)+1, got)
	}
}

// TestSysstatRMPPOnSimulator: a cpu answer longer than a MAD goes from
// diag's server to diag's client as an RMPP transfer (both agents
// registered with RMPP, as ibsysstat's; the engine's RMPP driver on both
// ends of the simulated fabric) and is printed whole.
func TestSysstatRMPPOnSimulator(t *testing.T) {
	info := &diag.SysstatInfo{Host: "big", Domain: "example.org"}
	var want strings.Builder
	for i := range 20 {
		info.CPUs = append(info.CPUs, diag.SysstatCPU{Model: fmt.Sprintf(" Simulated processor model %d", i), MHz: " 3000.000"})
		fmt.Fprintf(&want, "cpu %d: model  Simulated processor model %d MHZ  3000.000\n", i, i)
	}
	want.WriteString("\n")
	_, env, lid, served := sysstatPair(t, info)
	tg := engine.LID(lid)
	var got string
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		got, err = sysstatText(t, env, diag.IBSysstatOptions{OUI: diag.PingOUI, Target: &tg, Op: "cpu"})
		if got == want.String() || time.Now().After(deadline) {
			if err != nil {
				t.Error(err)
			}
			break
		}
	}
	if got != want.String() || len(got) < 4*256 {
		t.Errorf("cpu: %d bytes %q\nwant %d bytes %q", len(got), got, want.Len(), want.String())
	}
	if served() == 0 {
		t.Error("the server answered nothing")
	}
}
