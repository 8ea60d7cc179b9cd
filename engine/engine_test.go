package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

const (
	net2sw    = "../topo/testdata/net.2sw2path4hca"
	ibnd2sw   = "../topo/testdata/ibnd.2sw2path4hca.txt"
	guidHca4  = 0x100009
	guidSw2   = 0x200001
	pathToSw2 = "dr:0,1,3"
)

// setup returns a Session on a Pipe whose far side is a fakeSMA of the
// 2sw2path4hca fabric, rooted at Hca1 port 1. Call it inside a bubble for
// timing tests.
func setup(t *testing.T, popts *fabrictest.PipeOptions, opts *engine.Options) (*engine.Session, *fabrictest.Pipe, *fakeSMA) {
	t.Helper()
	fake := loadFake(t, net2sw, "Hca1", 1)
	var po fabrictest.PipeOptions
	if popts != nil {
		po = *popts
	}
	po.PacketResponder = fake.respond
	pipe := fabrictest.NewPipe(&po)
	s, err := engine.New(pipe.Transport(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); pipe.Close() })
	return s, pipe, fake
}

func mustTarget(t testing.TB, s string) engine.Target {
	t.Helper()
	tg, err := engine.ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     engine.Target
		err      string // substring of the error; "" means success
	}{
		{name: "lid", in: "lid:5", want: engine.LID(5)},
		{name: "lid hex", in: "lid:0x1a", want: engine.LID(26)},
		{name: "bare", in: "5", want: engine.LID(5)},
		{name: "bare hex", in: "0x5", want: engine.LID(5)},
		{name: "dr local", in: "dr:0", want: engine.DR()},
		{name: "dr", in: "dr:0,1,3", want: engine.DR(1, 3)},
		{name: "guid", in: "guid:0x0002c90300001234", want: engine.GUID(0x0002c90300001234)},
		{name: "lid zero", in: "lid:0", err: `target "lid:0": LID 0x0 is not a unicast LID`},
		{name: "lid multicast", in: "0xc001", err: "not a unicast LID"},
		{name: "lid junk", in: "lid:five", err: `LID "five" is not a number`},
		{name: "dr no leading 0", in: "dr:1,3", err: "starts with 0"},
		{name: "dr bad port", in: "dr:0,x", err: `port "x"`},
		{name: "dr port 0", in: "dr:0,1,0", err: "hop 2: egress port 0"},
		{name: "dr empty", in: "dr:", err: "empty path"},
		{name: "dr long", in: "dr:0" + strings.Repeat(",1", 64), err: "64 hops"},
		{name: "guid junk", in: "guid:xyz", err: `GUID "xyz"`},
		{name: "gid", in: "gid:fd00::2", want: engine.GID([16]byte{0: 0xfd, 15: 2})},
		{name: "gid ib", in: "gid:fe80::2:c903:a0:1", want: engine.GID([16]byte{0: 0xfe, 1: 0x80, 9: 2, 10: 0xc9, 11: 3, 13: 0xa0, 15: 1})},
		{name: "gid junk", in: "gid:fd00::zz", err: `GID "fd00::zz" is not IPv6 text`},
		{name: "gid zero", in: "gid:::", err: "GID ::"},
		{name: "kind", in: "port:1", err: `unknown kind "port"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := engine.ParseTarget(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, engine.ErrBadTarget) {
					t.Fatalf("ParseTarget(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tc.in, err)
			}
			if got.Kind != tc.want.Kind || got.LID != tc.want.LID || got.GUID != tc.want.GUID || got.GID != tc.want.GID || !slices.Equal(got.Path, tc.want.Path) {
				t.Fatalf("ParseTarget(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if again, err := engine.ParseTarget(got.String()); err != nil || again.String() != got.String() {
				t.Errorf("round trip %q -> %q: %v", got, again, err)
			}
		})
	}
}

func TestTypedQueries(t *testing.T) {
	s, _, _ := setup(t, nil, nil)
	ctx := t.Context()
	ni, err := s.NodeInfo(ctx, mustTarget(t, pathToSw2))
	if err != nil || ni.NodeGUID != guidSw2 || ni.LocalPortNum != 3 || ni.NodeType != smp.NodeTypeSwitch {
		t.Fatalf("NodeInfo(%s) = %+v, %v", pathToSw2, ni, err)
	}
	local, err := s.NodeInfo(ctx, engine.DR())
	if err != nil || local.NodeGUID != 0x100000 || local.LocalPortNum != 1 {
		t.Fatalf("NodeInfo(dr:0) = %+v, %v", local, err)
	}
	nd, err := s.NodeDesc(ctx, engine.DR(1, 3, 2))
	if err != nil || nd.NodeString != "Hca4" {
		t.Fatalf("NodeDesc = %q, %v", nd.NodeString, err)
	}
	pi, err := s.PortInfo(ctx, engine.DR(1), 3)
	if err != nil || pi.PortState != smp.PortStateActive {
		t.Fatalf("PortInfo = %+v, %v", pi, err)
	}
	// LID-routed: the fake gives LIDs in file order, Switch1 port 0 = 1.
	ni, err = s.NodeInfo(ctx, engine.LID(1))
	if err != nil || ni.NodeGUID != 0x200000 {
		t.Fatalf("NodeInfo(lid:1) = %+v, %v", ni, err)
	}
	si, err := s.SwitchInfo(ctx, engine.LID(1))
	if err != nil || !si.EnhancedPort0 {
		t.Fatalf("SwitchInfo = %+v, %v", si, err)
	}
	raw, err := s.SMP(ctx, engine.DR(1), mad.MethodGet, smp.AttrNodeDescription, 0, nil)
	if err != nil || len(raw) != 64 || !strings.HasPrefix(string(raw), "Switch1\x00") {
		t.Fatalf("SMP NodeDescription = %q, %v", raw, err)
	}
	// Do: a raw transaction returns the response with its status.
	req := make([]byte, mad.Size)
	if _, err := smp.NewGet(req, 0xabcdef0000000077, smp.AttrSwitchInfo, 0, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Do(ctx, &fabric.Packet{Addr: fabric.Addr{LID: 3}, Data: req})
	if err != nil {
		t.Fatal(err)
	}
	if mad.StatusOf(resp.Data) != mad.StatusMethodAttrUnsup || mad.MethodOf(resp.Data) != mad.MethodGetResp {
		t.Errorf("Do SwitchInfo of a CA: status 0x%04x method 0x%02x, want 0x000c GetResp", mad.StatusOf(resp.Data), mad.MethodOf(resp.Data))
	}
}

func TestPerf(t *testing.T) {
	s, _, _ := setup(t, nil, nil)
	ctx := t.Context()
	// LID 1 is Switch1 (0x200000); a DR target is asked its LID first,
	// a GUID target takes it from a discovery.
	for _, tg := range []engine.Target{engine.LID(1), engine.DR(1), engine.GUID(0x200000)} {
		pc, err := s.PortCounters(ctx, tg, 3)
		if err != nil || pc.PortSelect != 3 || pc.PortXmitData != 0x200003 {
			t.Errorf("PortCounters(%s, 3) = %+v, %v", tg, pc, err)
		}
	}
	raw, err := s.Perf(ctx, engine.LID(1), mad.MethodGet, perf.AttrPortCounters, 2, nil)
	if err != nil || len(raw) != 192 || raw[1] != 2 {
		t.Errorf("Perf = %x, %v", raw, err)
	}
}

func TestStatusError(t *testing.T) {
	s, _, _ := setup(t, nil, nil)
	_, err := s.PortInfo(t.Context(), engine.DR(1), 9)
	var se *engine.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("PortInfo port 9: %v, want *StatusError", err)
	}
	if se.Status != mad.StatusInvalidField || se.AttrID != smp.AttrPortInfo || se.AttrMod != 9 || se.Class != mad.ClassSubnDR {
		t.Errorf("StatusError %+v", se)
	}
	for _, want := range []string{"dr:0,1", "PortInfo port 9", "invalid attribute or modifier value (0x001c)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// The raw API returns the data with the error.
	data, err := s.SMP(t.Context(), engine.DR(1), mad.MethodGet, smp.AttrPortInfo, 9, nil)
	if !errors.As(err, &se) || len(data) != 64 {
		t.Errorf("SMP: %d bytes, %v", len(data), err)
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, pipe, fake := setup(t, nil, &engine.Options{Timeout: 50 * time.Millisecond, Retries: 2})
		fake.drop = func(*topo.Node) bool { return true }
		start := time.Now()
		_, err := s.NodeInfo(t.Context(), engine.DR(1))
		var te *engine.TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, fabric.ErrTimeout) {
			t.Fatalf("NodeInfo: %v, want *TimeoutError", err)
		}
		if te.Tries != 3 || te.AttrID != smp.AttrNodeInfo || te.TID>>32 == 0 || uint32(te.TID) == 0 {
			t.Errorf("TimeoutError %+v", te)
		}
		if got := time.Since(start); got != 150*time.Millisecond {
			t.Errorf("timed out after %v, want 150ms", got)
		}
		if n := pipe.Requests(); n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
		for _, want := range []string{"dr:0,1", "NodeInfo", "timeout after 3 tries", "TID 0x"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		// Per-call overrides.
		start = time.Now()
		_, err = s.NodeInfo(t.Context(), engine.DR(1), engine.Timeout(10*time.Millisecond), engine.Retries(0))
		if !errors.As(err, &te) || te.Tries != 1 || time.Since(start) != 10*time.Millisecond {
			t.Errorf("one 10ms try: %v after %v", err, time.Since(start))
		}
	})
}

func TestRetrySucceeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, pipe, _ := setup(t, &fabrictest.PipeOptions{DropFirst: 2}, &engine.Options{Timeout: 50 * time.Millisecond})
		start := time.Now()
		ni, err := s.NodeInfo(t.Context(), engine.DR(1))
		if err != nil || ni.NodeGUID != 0x200000 {
			t.Fatalf("NodeInfo: %+v, %v", ni, err)
		}
		if time.Since(start) != 100*time.Millisecond || pipe.Requests() != 3 {
			t.Errorf("answered after %v and %d attempts, want 100ms and 3", time.Since(start), pipe.Requests())
		}
	})
}

// outstanding tracks, in fake time, how many SMPs each node has in flight:
// with a Pipe Delay d, a request arriving at t is answered at t+d.
type outstanding struct {
	mu      sync.Mutex
	d       time.Duration
	arrived map[*topo.Node][]time.Time
	all     []time.Time
	skip    func(req []byte) bool
	errs    []string
}

func (o *outstanding) seen(n *topo.Node, req []byte) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all = append(o.all, now)
	if o.skip != nil && o.skip(req) {
		return
	}
	if a := o.arrived[n]; len(a) > 0 && now.Sub(a[len(a)-1]) < o.d {
		o.errs = append(o.errs, fmt.Sprintf("%s: attribute 0x%04x at %v while the SMP of %v is outstanding",
			n.Desc, mad.AttrIDOf(req), now.Format("05.000"), a[len(a)-1].Format("05.000")))
	}
	o.arrived[n] = append(o.arrived[n], now)
}

// maxInFlight is the largest number of requests outstanding at once.
func (o *outstanding) maxInFlight() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	best := 0
	for i, t := range o.all {
		n := 0
		for _, u := range o.all[:i+1] {
			if t.Sub(u) < o.d {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func TestPerNodeSerialization(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const d = time.Millisecond
		s, _, fake := setup(t, &fabrictest.PipeOptions{Delay: d}, &engine.Options{Window: 3})
		out := &outstanding{d: d, arrived: map[*topo.Node][]time.Time{}}
		fake.seen = out.seen
		targets := []engine.Target{engine.DR(), engine.DR(1), engine.DR(1, 3), engine.DR(1, 3, 2), engine.LID(7)}
		var wg sync.WaitGroup
		for g := range 12 {
			wg.Go(func() {
				for i := range 5 {
					tg := targets[(g+i)%len(targets)]
					if _, err := s.PortInfo(t.Context(), tg, 1); err != nil {
						t.Errorf("PortInfo(%s): %v", tg, err)
					}
				}
			})
		}
		wg.Wait()
		for _, e := range out.errs {
			t.Error(e)
		}
		if m := out.maxInFlight(); m != 3 {
			t.Errorf("at most %d in flight, want the window, 3", m)
		}
	})
}

func TestCloseFailsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, fake := setup(t, nil, nil)
		fake.drop = func(*topo.Node) bool { return true }
		errc := make(chan error, 2)
		go func() {
			_, err := s.NodeInfo(context.Background(), engine.DR(1), engine.Timeout(-1))
			errc <- err
		}()
		go func() {
			_, err := s.NodeInfo(context.Background(), engine.DR(1), engine.Timeout(-1)) // queued behind the first
			errc <- err
		}()
		synctest.Wait()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := <-errc; !errors.Is(err, net.ErrClosed) {
				t.Errorf("pending call after Close: %v, want net.ErrClosed", err)
			}
		}
		if _, err := s.NodeInfo(t.Context(), engine.DR(1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("call after Close: %v, want net.ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, fake := setup(t, nil, &engine.Options{Timeout: time.Second, Retries: engine.NoRetries})
		fake.drop = func(*topo.Node) bool { return true }
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if _, err := s.NodeInfo(ctx, engine.DR(1)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("NodeInfo: %v, want DeadlineExceeded", err)
		}
		// The abandoned SMP still holds its node until the transport
		// completes it; the next call waits for that, then runs.
		fake.drop = nil
		start := time.Now()
		if _, err := s.NodeInfo(t.Context(), engine.DR(1)); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 990*time.Millisecond {
			t.Errorf("second call took %v, want 990ms (behind the abandoned one)", got)
		}
	})
}

// linkSet returns the links of f as "guid/port-guid/port" strings, each
// written from both ends.
func linkSet(f *topo.Fabric) []string {
	var ls []string
	for _, l := range f.Links() {
		a := fmt.Sprintf("%x/%d", l.A.Node.GUID, l.A.Num)
		b := fmt.Sprintf("%x/%d", l.B.Node.GUID, l.B.Num)
		ls = append(ls, a+"-"+b, b+"-"+a)
	}
	slices.Sort(ls)
	return ls
}

func guidSet(f *topo.Fabric) []uint64 {
	var gs []uint64
	for _, n := range f.Nodes {
		gs = append(gs, n.GUID)
	}
	slices.Sort(gs)
	return gs
}

// compareFabric checks got against the reference: same node GUIDs, same
// links, and every link recorded at both ends.
func compareFabric(t *testing.T, want, got *topo.Fabric) {
	t.Helper()
	if w, g := guidSet(want), guidSet(got); !slices.Equal(w, g) {
		t.Errorf("node GUIDs\n got %x\nwant %x", g, w)
	}
	if w, g := linkSet(want), linkSet(got); !slices.Equal(w, g) {
		t.Errorf("links\n got %v\nwant %v", g, w)
	}
	for _, n := range got.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Remote != p {
				t.Errorf("%v: link not recorded at the other end", p)
			}
		}
		if n.ID != topo.NodeIDFor(n.Type, n.GUID) {
			t.Errorf("node id %q", n.ID)
		}
	}
}

// ibnd2swRoots are the ports the net.2sw2path4hca discoveries start
// from: a switch's port 0 and two CAs' ports.
var ibnd2swRoots = []struct {
	node string
	port int
}{{"Switch1", 0}, {"Hca1", 1}, {"Hca4", 1}}

// discover2sw discovers net.2sw2path4hca from s and compares the fabric
// with what ibnetdiscover found (ibnd2sw), which it returns too.
func discover2sw(t *testing.T, s *engine.Session) (*engine.Discovery, *topo.Fabric) {
	t.Helper()
	want, err := topo.ParseFile(ibnd2sw)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := s.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(disc.Errors) != 0 {
		t.Errorf("errors: %v", disc.Errors)
	}
	compareFabric(t, want, disc.Fabric)
	return disc, want
}

func TestDiscoverFake(t *testing.T) {
	for _, root := range ibnd2swRoots {
		t.Run(root.node, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := loadFake(t, net2sw, root.node, root.port)
				const d = time.Millisecond
				pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{PacketResponder: fake.respond, Delay: d})
				defer pipe.Close()
				s, err := engine.New(pipe.Transport(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				out := &outstanding{d: d, arrived: map[*topo.Node][]time.Time{},
					skip: func(req []byte) bool { return mad.AttrIDOf(req) == smp.AttrNodeInfo }}
				fake.seen = out.seen
				disc, _ := discover2sw(t, s)
				for _, e := range out.errs {
					t.Error(e)
				}
				if m := out.maxInFlight(); m < 2 {
					t.Errorf("at most %d SMPs in flight: discovery is not pipelined", m)
				}
				if disc.Fabric.Nodes[0].Desc != root.node {
					t.Errorf("first node %q, want the local one %q", disc.Fabric.Nodes[0].Desc, root.node)
				}
				hca4 := disc.Fabric.Node(guidHca4)
				if hca4 == nil || hca4.Desc != "Hca4" || hca4.Ports[1].LID == 0 || hca4.Ports[1].State != smp.PortStateActive ||
					hca4.Ports[1].GUID != guidHca4+1 || hca4.Ports[1].WidthActive != 2 {
					t.Errorf("Hca4 = %v %+v", hca4, hca4.Ports[1])
				}
				if sw := disc.Fabric.Node(guidSw2); sw == nil || sw.Ports[0].LID == 0 || !sw.EnhancedPort0 || sw.Ports[4].State != smp.PortStateDown {
					t.Errorf("Switch2 = %v", sw)
				}
				// GUID targets resolve through the discovery, by node
				// or port GUID.
				for _, g := range []uint64{guidHca4, guidHca4 + 1} {
					ni, err := s.NodeInfo(t.Context(), engine.GUID(g))
					if err != nil || ni.NodeGUID != guidHca4 {
						t.Errorf("NodeInfo(guid 0x%x) = %x, %v", g, ni.NodeGUID, err)
					}
				}
				if _, err := s.NodeInfo(t.Context(), engine.GUID(0x999)); !errors.Is(err, engine.ErrNotFound) {
					t.Errorf("unknown GUID: %v, want ErrNotFound", err)
				}
			})
		})
	}
}

func TestDiscoverDeadNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, fake := setup(t, nil, &engine.Options{Timeout: 20 * time.Millisecond, Retries: 1})
		fake.drop = func(n *topo.Node) bool { return n.Desc == "Hca4" }
		disc, err := s.Discover(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(disc.Fabric.Nodes) != 5 || disc.Fabric.Node(guidHca4) != nil {
			t.Errorf("%d nodes, Hca4 %v; want 5 without Hca4", len(disc.Fabric.Nodes), disc.Fabric.Node(guidHca4))
		}
		if len(disc.Errors) != 1 || !errors.Is(disc.Errors[0], fabric.ErrTimeout) ||
			(disc.Errors[0].Path != "dr:0,1,3,2" && disc.Errors[0].Path != "dr:0,1,5,2") {
			t.Errorf("errors %v, want one timeout at the route to Hca4", disc.Errors)
		}
	})
}

func TestDiscoverMaxHops(t *testing.T) {
	s, _, _ := setup(t, nil, nil)
	disc, err := s.Discover(t.Context(), &engine.DiscoverOptions{MaxHops: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(disc.Fabric.Nodes) != 2 {
		t.Errorf("MaxHops 1 found %d nodes, want Hca1 and Switch1", len(disc.Fabric.Nodes))
	}
}

// TestDiscoverProgress: the sweep reports nodes found and queries
// outstanding as it goes, ending with every node and none outstanding.
func TestDiscoverProgress(t *testing.T) {
	s, _, _ := setup(t, nil, nil)
	var calls, last, lastPending int
	disc, err := s.Discover(t.Context(), &engine.DiscoverOptions{Progress: func(nodes, pending int) {
		calls++ // the sweep's handler goroutine only: no lock needed
		if nodes < last {
			t.Errorf("nodes went back from %d to %d", last, nodes)
		}
		last, lastPending = nodes, pending
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || last != len(disc.Fabric.Nodes) || lastPending != 0 {
		t.Errorf("%d calls, last %d nodes %d pending; want >= 2 calls ending at %d nodes, 0 pending", calls, last, lastPending, len(disc.Fabric.Nodes))
	}
}

func TestDiscoverCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, _ := setup(t, &fabrictest.PipeOptions{Delay: time.Millisecond}, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Millisecond)
		defer cancel()
		if _, err := s.Discover(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Discover: %v, want DeadlineExceeded", err)
		}
		// The cancelled sweep's queries drain in the background; the
		// Session goes on, and Close (setup's cleanup) waits for them.
		d, err := s.Discover(t.Context(), nil)
		if err != nil || len(d.Errors) != 0 || len(d.Fabric.Nodes) == 0 {
			t.Fatalf("Discover after a cancelled one: %v %v", err, d)
		}
	})
}

// queueOnly hides the mux's SetHandler, so the Session's reader goroutine
// routes every completion, as with the kernel backend.
func queueOnly(tr fabric.Transport) fabric.Transport {
	return fabrictest.WithCaps(tr, func(c *fabric.Caps) { c.SetHandler, c.Failed, c.FailErr = nil, nil, nil })
}

func TestReaderPath(t *testing.T) {
	want, err := topo.ParseFile(ibnd2sw)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		fake := loadFake(t, net2sw, "Hca1", 1)
		pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{PacketResponder: fake.respond})
		defer pipe.Close()
		s, err := engine.New(queueOnly(pipe.Transport()), &engine.Options{Timeout: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		disc, err := s.Discover(t.Context(), nil)
		if err != nil || len(disc.Errors) != 0 {
			t.Fatalf("Discover: %v %v", err, disc.Errors)
		}
		compareFabric(t, want, disc.Fabric)
		fake.drop = func(*topo.Node) bool { return true }
		if _, err := s.NodeInfo(t.Context(), engine.DR(1)); !errors.Is(err, fabric.ErrTimeout) {
			t.Errorf("NodeInfo of a dead node: %v, want a timeout", err)
		}
	})
}

// passOn is a wrapper that intercepts nothing: it reports the wrapped
// transport's Caps as every wrapper must.
type passOn struct{ fabric.Transport }

// TestWindowLimiter: the default window shrinks to what the transport
// asks for (ibsim over a unix socket), also through a wrapper (--record),
// an explicit one is kept.
func TestWindowLimiter(t *testing.T) {
	for _, tc := range []struct {
		window, want int
		wrap         bool
	}{{0, 2, false}, {3, 3, false}, {0, 2, true}} {
		synctest.Test(t, func(t *testing.T) {
			const d = time.Millisecond
			fake := loadFake(t, net2sw, "Hca1", 1)
			pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{Delay: d, PacketResponder: fake.respond})
			tr := fabrictest.WithCaps(pipe.Transport(), func(c *fabric.Caps) { c.MaxWindow = 2 }) // ibsim over an unpaired socket
			if tc.wrap {
				tr = passOn{tr}
			}
			s, err := engine.New(tr, &engine.Options{Window: tc.window})
			if err != nil {
				t.Fatal(err)
			}
			defer pipe.Close()
			defer s.Close()
			out := &outstanding{d: d, arrived: map[*topo.Node][]time.Time{}}
			fake.seen = out.seen
			targets := []engine.Target{engine.DR(), engine.DR(1), engine.DR(1, 3), engine.DR(1, 3, 2), engine.LID(7)}
			var wg sync.WaitGroup
			for _, tg := range targets {
				wg.Go(func() {
					for range 4 {
						if _, err := s.NodeInfo(t.Context(), tg); err != nil {
							t.Errorf("NodeInfo(%s): %v", tg, err)
						}
					}
				})
			}
			wg.Wait()
			if m := out.maxInFlight(); m != tc.want {
				t.Errorf("Window %d on a transport asking for 2: %d in flight, want %d", tc.window, m, tc.want)
			}
		})
	}
}

// TestRetransmitsCounted: Session.Retransmits says false for a transport
// that does not count (it said (0, true) through a recorder), and counts
// through the RMPP driver for one that does.
func TestRetransmitsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pipe := fabrictest.NewPipe(nil)
		defer pipe.Close()
		s, err := engine.New(fabrictest.WithCaps(pipe.Open(), func(c *fabric.Caps) { c.Retransmits = nil }), nil) // as the kernel's
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := s.Retransmits(); ok {
			t.Errorf("Retransmits on a transport that does not count = (%d, true), want false", n)
		}
		s.Close()
		pipe.Handle(func([]byte, fabric.Addr) ([]byte, bool) { return nil, false })
		s, err = engine.New(passOn{pipe.Open()}, &engine.Options{Timeout: 10 * time.Millisecond, Retries: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.NodeInfo(t.Context(), engine.LID(3)); !errors.Is(err, fabric.ErrTimeout) {
			t.Fatalf("NodeInfo nobody answers: %v, want a timeout", err)
		}
		if n, ok := s.Retransmits(); !ok || n != 2 {
			t.Errorf("Retransmits after one query timed out after 2 retries = (%d, %v), want (2, true)", n, ok)
		}
	})
}
