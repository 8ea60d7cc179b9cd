package record_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/record"
	"github.com/ibscript/ibscript/internal/keytest"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

func discover(tb testing.TB, tr fabric.Transport) *engine.Discovery {
	tb.Helper()
	s, err := engine.New(tr, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	d, err := s.Discover(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func summary(d *engine.Discovery) []string {
	var out []string
	for _, n := range d.Fabric.Nodes {
		s := n.ID
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				s += " " + p.Remote.Node.ID
			}
		}
		out = append(out, s)
	}
	for _, e := range d.Errors {
		out = append(out, "error "+e.Path)
	}
	return out
}

// TestRecordReplay records discoveries on the simulator, clean and with
// 10% loss and a dead switch, and checks that replaying each recording
// gives the same nodes, links and per-target errors.
func TestRecordReplay(t *testing.T) {
	for _, tc := range []struct {
		name, net string
		faults    sim.Faults
	}{
		{"clean", "../../tests/topologies/net.2sw2path4hca", sim.Faults{}},
		{"lossy", "../../tests/topologies/fattree-50.net", sim.Faults{Seed: 3, Loss: 0.1, Duplicate: 0.02, Reorder: 0.02}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := sim.Load(tc.net, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.SetFaults(tc.faults); err != nil {
				t.Fatal(err)
			}
			want, r, size := recordDiscovery(t, f)
			got := summary(discover(t, record.NewReplay(r)))
			if tc.faults.Loss > 0 {
				// The sweep's order follows the order answers come in;
				// the replay keeps the recorded latencies, but a request
				// on a path the recording never took can still go out,
				// and times out: compare nodes and links only.
				want, got = nodesOnly(want), nodesOnly(got)
			}
			if !slices.Equal(want, got) {
				t.Errorf("replay differs:\nwant %q\ngot  %q", want, got)
			}
			t.Logf("%d events, %d bytes, %d lines of summary", len(r.Events), size, len(want))
		})
	}
}

// recordDiscovery records a discovery from f's SM port and reads the
// recording back: the discovery's summary, the recording, its size.
func recordDiscovery(t *testing.T, f *sim.Fabric) ([]string, *record.Recording, int) {
	t.Helper()
	tr, err := f.Open(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := record.NewRecorder(tr, &buf)
	if err != nil {
		t.Fatal(err)
	}
	want := summary(discover(t, rec))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return want, r, buf.Len()
}

func TestReadErrors(t *testing.T) {
	hdr := `{"format":"ibscript-record","version":1}` + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty recording"},
		{"not json", "hello\n", "line 1: not a recording: want the JSON header line"},
		{"passwd", "root:x:0:0:root:/root:/bin/bash\n", "line 1: not a recording"},
		{"json, not a header", `{"op":"close","tr":1}`, "line 1: not a recording"},
		{"blank line before an event", "\n" + `{"op":"close","tr":1}`, "line 2: not a recording"},
		{"other format", `{"format":"pcap","version":1}`, `format "pcap"`},
		{"version", `{"format":"ibscript-record","version":3}`, "version 3"},
		{"open without port", hdr + `{"op":"open","tr":1}`, "line 2: open without port"},
		{"negative transport", hdr + `{"op":"close","tr":-1}`, "line 2: transport -1"},
		{"bad op", hdr + `{"op":"nop"}`, `line 2: unknown op "nop"`},
		{"send without addr", hdr + `{"op":"send","data":"00"}`, "send without addr"},
		{"bad hex", hdr + `{"op":"send","addr":{},"data":"zz"}`, "line 2"},
		{"register without reg", hdr + `{"op":"register"}`, "register without reg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := record.Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzRead decodes arbitrary recordings and replays what decodes: no
// panic, and every send is answered or times out. Its seeds are small
// (one exchange of 24-byte MADs): the 8 KB recording of a discovery it
// had as a seed ran about 100 inputs a second, most of its time spent
// minimizing long inputs.
func FuzzRead(f *testing.F) {
	req := "0101010100000000000000000000000700110000" + "00000000"  // Get(NodeInfo), TID 7
	resp := "0101018100000000000000000000000700110000" + "00000000" // its GetResp
	f.Add([]byte(`{"format":"ibscript-record","version":1}` + "\n" +
		`{"op":"register","agent":0,"reg":{"Class":1,"Version":1}}` + "\n" +
		`{"t":1,"op":"send","agent":0,"timeout":1000,"retries":1,"addr":{"LID":1},"data":"` + req + `"}` + "\n" +
		`{"t":2,"op":"recv","agent":0,"addr":{"LID":1},"data":"` + resp + `"}`))
	f.Add([]byte(`{"format":"ibscript-record","version":1}` + "\n" + `{"op":"send","agent":0,"addr":{},"data":"0181"}`))
	f.Add([]byte(`{"format":"ibscript-record","version":2}` + "\n" + `{"op":"open","tr":1,"port":{"CAName":"x"}}` + "\n" +
		`{"op":"send","tr":1,"agent":0,"addr":{},"data":"` + req + `"}` + "\n" + `{"op":"close","tr":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := record.Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		// The session's transport, and each one opened later.
		pf := record.NewReplayFabric(r)
		defer pf.Close()
		trs := []fabric.Transport{record.NewReplay(r)}
		defer trs[0].Close()
		for {
			tr, err := pf.Open(context.Background(), "", 0)
			if err != nil {
				break
			}
			trs = append(trs, tr)
		}
		for _, e := range r.Events {
			if e.Op != record.OpSend {
				continue
			}
			rp := trs[0]
			if e.Tr < len(trs) {
				rp = trs[e.Tr]
			}
			var p fabric.Packet
			sp := &fabric.Packet{Timeout: 1, Addr: *e.Addr, Data: e.Data}
			if rp.Send(context.Background(), sp) != nil {
				continue
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for rp.Recv(ctx, &p) == nil {
			}
		}
	})
}

func nodesOnly(s []string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(l string) bool { return strings.HasPrefix(l, "error ") })
}

// recordSim is the simulator on net.2sw2path4hca with a Recorder on its
// default port writing to the returned buffer.
func recordSim(t *testing.T) (*sim.Fabric, *record.Recorder, *bytes.Buffer) {
	t.Helper()
	f := simtest.Load(t, "../../tests/topologies/net.2sw2path4hca", nil)
	tr, err := f.Open(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := new(bytes.Buffer)
	rec, err := record.NewRecorder(tr, buf)
	if err != nil {
		t.Fatal(err)
	}
	return f, rec, buf
}

// TestRecordMasksKeys records a discovery made with an M_Key (which the
// simulator's SMA echoes in every answer) and checks that the recording
// holds the key in no encoding, says its keys are masked, and still
// replays: the replayed session's requests carry the key, and match the
// masked requests of the recording.
func TestRecordMasksKeys(t *testing.T) {
	const mkey = 0x1122334455667788
	_, rec, buf := recordSim(t)
	discoverKey := func(tr fabric.Transport) []string {
		s, err := engine.New(tr, &engine.Options{MKey: mkey})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		d, err := s.Discover(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return summary(d)
	}
	want := discoverKey(rec)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if enc, at, ok := keytest.Find(buf.Bytes(), mkey); ok {
		t.Fatalf("recording holds the M_Key (%s) at byte %d: %.80q", enc, at, buf.Bytes()[max(0, at-40):])
	}
	r, err := record.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.Keys != record.KeysMasked {
		t.Errorf("header keys %q, want %q", r.Header.Keys, record.KeysMasked)
	}
	if got := discoverKey(record.NewReplay(r)); !slices.Equal(want, got) {
		t.Errorf("replay with the key differs:\nwant %q\ngot  %q", want, got)
	}
}

// countingTransport counts Sends; everything else is a no-op.
type countingTransport struct {
	fabric.Transport
	sends int
}

func (c *countingTransport) Send(context.Context, *fabric.Packet) error { c.sends++; return nil }
func (c *countingTransport) Port() fabric.PortAttr                      { return fabric.PortAttr{} }
func (c *countingTransport) Caps() fabric.Caps                          { return fabric.Caps{} }
func (c *countingTransport) Close() error                               { return nil }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestRecorderFailsClosed: once the recording cannot be written, Send
// fails with the recording's error and passes nothing more to the
// transport, and Close and Err report it.
func TestRecorderFailsClosed(t *testing.T) {
	ct := &countingTransport{}
	rec, err := record.NewRecorder(ct, failingWriter{})
	if err != nil {
		t.Fatal(err)
	}
	p := &fabric.Packet{Data: make([]byte, 256)}
	var sendErr error
	for range 100 {
		if sendErr = rec.Send(t.Context(), p); sendErr != nil {
			break
		}
	}
	if sendErr == nil || !strings.Contains(sendErr.Error(), "disk full") {
		t.Fatalf("100 sends into a failing recording: last error %v", sendErr)
	}
	before := ct.sends
	if rec.Send(t.Context(), p) == nil || ct.sends != before {
		t.Errorf("a send after the recording failed went out (%d -> %d sends)", before, ct.sends)
	}
	if err := rec.Close(); err == nil || rec.Err() == nil {
		t.Errorf("Close %v, Err %v: want the write error", err, rec.Err())
	}
}

// TestRecordEveryPort: ports opened through the recording Fabric (as
// umad.open_port and the RDMA CM open theirs) are recorded with the
// session's, each as its own transport, and ReplayFabric plays each back.
func TestRecordEveryPort(t *testing.T) {
	f, rec, buf := recordSim(t)
	rf := rec.Fabric(f)
	// The session asks for LID 1, the Hca3 port for itself (directed
	// route 0), so their answers differ.
	self, err := engine.ParseTarget("dr:0")
	if err != nil {
		t.Fatal(err)
	}
	target := engine.LID(1)
	nodeInfo := func(tr fabric.Transport) []byte {
		t.Helper()
		s, err := engine.New(tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ni, err := s.NodeInfo(t.Context(), target)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(fmt.Sprintf("%+v", ni))
	}
	want0 := nodeInfo(rec)
	other, err := rf.Open(t.Context(), "Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	target = self
	want1 := nodeInfo(other)
	if bytes.Equal(want0, want1) {
		t.Fatal("the two ports' answers are alike")
	}
	// The user-space IB CM opens its ports through the Fabric too.
	if _, err := rf.OpenCM(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("OpenCM on the simulator: %v, want ErrUnsupported (the user-space IB CM runs)", err)
	}
	if err := rf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[int][]string{}
	for _, e := range r.Events {
		ops[e.Tr] = append(ops[e.Tr], e.Op)
	}
	if o := ops[1]; len(o) < 4 || o[0] != record.OpOpen || o[len(o)-1] != record.OpClose || !slices.Contains(o, record.OpSend) || !slices.Contains(o, record.OpRecv) {
		t.Errorf("transport 1 (Hca3 port 1): %v, want open, its register, sends and receives, close", o)
	}
	if !slices.Contains(ops[0], record.OpSend) {
		t.Errorf("transport 0: %v", ops[0])
	}
	for _, e := range r.Events {
		if e.Op == record.OpOpen && (e.Port == nil || e.Port.CAName != "Hca3" || e.Port.PortNum != 1) {
			t.Errorf("open line: %+v", e.Port)
		}
	}
	// Replay: the session's port, then Hca3's, each with its own answers.
	target = engine.LID(1)
	if got := nodeInfo(record.NewReplay(r)); !bytes.Equal(got, want0) {
		t.Errorf("replayed session: %s, want %s", got, want0)
	}
	pf := record.NewReplayFabric(r)
	defer pf.Close()
	if _, err := pf.Open(t.Context(), "Hca1", 1); err == nil {
		t.Error("replay opened a port the recording never opened")
	}
	rt, err := pf.Open(t.Context(), "Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	target = self
	if got := nodeInfo(rt); !bytes.Equal(got, want1) {
		t.Errorf("replayed Hca3: %s, want %s", got, want1)
	}
	ports, _ := pf.Ports(t.Context())
	if len(ports) != 2 || ports[1].CAName != "Hca3" {
		t.Errorf("replayed ports %+v", ports)
	}
}

// TestReadLongLine: a line over the limit is an error naming the line
// (and, through ReadFile, the file), not bufio's "token too long".
func TestReadLongLine(t *testing.T) {
	text := `{"format":"ibscript-record","version":1}` + "\n" + `{"op":"send","data":"` + strings.Repeat("00", 3<<20) + `"}` + "\n"
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := record.ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), path+": record: line 2: longer than") || strings.Contains(err.Error(), "token too long") {
		t.Errorf("error %v, want %s: record: line 2: longer than ...", err, path)
	}
}

// TestReplayShortAnswer: a recorded answer of 16-23 bytes (a TID, no
// whole header) made replay: wait forever at 0% CPU: every reader drops
// it, and no timeout was queued since an answer was. Read refuses such a
// recording, and a Replay built from one in Go times the request out.
func TestReplayShortAnswer(t *testing.T) {
	hdr := `{"format":"ibscript-record","version":1}` + "\n"
	addr := `"addr":{"LID":1}`
	send := `{"op":"send","timeout":1000000,` + addr + `,"data":"` + strings.Repeat("01", 24) + `"}` + "\n"
	recv := `{"op":"recv",` + addr + `,"data":"` + strings.Repeat("01", 20) + `"}` + "\n"
	if _, err := record.Read(strings.NewReader(hdr + send + recv)); err == nil || !strings.Contains(err.Error(), "line 3: recv of 20 bytes, shorter than the 24-byte MAD header") {
		t.Errorf("Read: %v", err)
	}
	req := bytes.Repeat([]byte{1}, 24)
	rec := &record.Recording{Events: []record.Event{
		{Op: record.OpSend, Timeout: 1e6, Addr: &fabric.Addr{LID: 1}, Data: req},
		{Op: record.OpRecv, Addr: &fabric.Addr{LID: 1}, Data: bytes.Repeat([]byte{1}, 20)},
	}}
	r := record.NewReplay(rec)
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := r.Send(ctx, &fabric.Packet{Timeout: time.Millisecond, Addr: fabric.Addr{LID: 1}, Data: req}); err != nil {
		t.Fatal(err)
	}
	var p fabric.Packet
	if err := r.Recv(ctx, &p); err != nil || p.Status != fabric.StatusTimeout {
		t.Errorf("Recv: %v, status %d; want a timeout completion", err, p.Status)
	}
}

// TestReadStops: a long recording's read ends when the run's context
// does (Ctrl-C, SIGTERM, --time-limit), naming the cause.
func TestReadStops(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"format":"ibscript-record","version":1}` + "\n")
	for range 5000 {
		b.WriteString(`{"op":"close"}` + "\n")
	}
	if _, err := record.Read(strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("interrupted by SIGTERM"))
	if _, err := record.ReadContext(ctx, strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "read stopped: interrupted by SIGTERM") {
		t.Errorf("ReadContext under a done context: %v", err)
	}
}

// delayingTransport holds back the DR NodeInfo Gets whose route leaves
// the first switch by port via before handing them to the replay: the
// replayed sweep hears of the nodes behind it late, as a loaded machine
// can schedule it.
type delayingTransport struct {
	*record.Replay
	via   byte
	delay time.Duration
	wg    sync.WaitGroup
}

func (d *delayingTransport) Send(ctx context.Context, p *fabric.Packet) error {
	b := p.Data
	if len(b) == 256 && b[1] == 0x81 && b[3] == 0x01 && b[16] == 0 && b[17] == 0x11 && b[7] >= 2 && b[130] == d.via {
		q := *p
		q.Data = slices.Clone(p.Data)
		d.wg.Go(func() {
			time.Sleep(d.delay)
			d.Replay.Send(context.Background(), &q)
		})
		return nil
	}
	return d.Replay.Send(ctx, p)
}

// TestReplayReordered replays a discovery of the default fabric with the
// answers from behind leaf01 port 34 (spine02) held back: the replayed
// sweep reaches spine02 from the leaves behind spine01 and probes links
// from the end the recording did not (NodeInfo "behind leaf02 port 34",
// which timed out: TestRecordReplayValidate's failure under load). The
// replay gives the same nodes, links and no errors.
func TestReplayReordered(t *testing.T) {
	f, err := sim.Default(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, r, _ := recordDiscovery(t, f)
	dt := &delayingTransport{Replay: record.NewReplay(r), via: 34, delay: 300 * time.Millisecond}
	d := discover(t, dt)
	dt.wg.Wait()
	if got := summary(d); !slices.Equal(want, got) {
		t.Errorf("replay differs:\nwant %q\ngot  %q", want, got)
	}
	for _, e := range d.Errors {
		t.Errorf("replay: %s %s: %v", e.Path, e.Where, e.Err)
	}
}
