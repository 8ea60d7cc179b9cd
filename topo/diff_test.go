package topo_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
)

// discover brings a topology file up in the simulator and discovers it.
func discover(t *testing.T, path string) *topo.Fabric {
	return discoverFrom(t, path, nil)
}

func discoverFrom(t *testing.T, path string, opts *sim.Options) *topo.Fabric {
	t.Helper()
	f := simtest.Load(t, path, opts)
	s := simtest.Session(t, f, nil)
	d, err := s.Discover(t.Context(), nil)
	if err != nil || len(d.Errors) > 0 {
		t.Fatalf("discover: %v %v", err, d.Errors)
	}
	return d.Fabric
}

func ibnd(t *testing.T, f *topo.Fabric) string {
	t.Helper()
	var b bytes.Buffer
	if err := topo.WriteIBNetDiscover(&b, f, &topo.WriteOptions{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestIBNetDiscoverRoundTrip: ibnetdiscover output of a discovered fabric,
// loaded into the simulator and discovered again, writes the same bytes.
func TestIBNetDiscoverRoundTrip(t *testing.T) {
	for _, name := range []string{"net.2sw2path4hca", "fattree-50.net", "net.2sw2path4hca2port"} {
		t.Run(name, func(t *testing.T) {
			orig := discover(t, "../tests/topologies/"+name)
			first := ibnd(t, orig)
			path := filepath.Join(t.TempDir(), "ibnd.topo")
			if err := os.WriteFile(path, []byte(first), 0o644); err != nil {
				t.Fatal(err)
			}
			// The SM (where discovery starts) on the same node and port:
			// ibnetdiscover's node ids name it.
			o := orig.Origin
			second := ibnd(t, discoverFrom(t, path, &sim.Options{SMNode: topo.NodeIDFor(o.Node.Type, o.Node.GUID), SMPort: o.Num}))
			if first != second {
				t.Errorf("round trip differs:\n--- first\n%s\n--- second\n%s", first, second)
			}
		})
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	f := discover(t, "../tests/topologies/net.2sw2path4hca")
	var b bytes.Buffer
	if err := topo.WriteSnapshot(&b, f); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snap.json")
	os.WriteFile(path, b.Bytes(), 0o644)
	g, err := topo.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := topo.Diff(f, g); len(d) != 0 {
		t.Errorf("snapshot differs: %v", d)
	}
	g.Origin = f.Origin
	if ibnd(t, f) != ibnd(t, g) {
		t.Errorf("snapshot writes different ibnetdiscover output")
	}
	for _, bad := range []string{`{"schema":"other"}`, `{"schema":"ibscript.topology.v1","nodes":[{"type":"Hub"}]}`,
		`{"schema":"ibscript.topology.v1","nodes":[{"type":"CA","num_ports":1,"guid":"0x1","ports":[{"num":1,"remote":{"node":5,"port":1}}]}]}`,
		`{"schema":"ibscript.topology.v1","nodes":[{"type":"CA","num_ports":1,"guid":"0x1","ports":[{"num":1,"remote":{"node":0,"port":1}}]}]}`,
		`{"schema":"ibscript.topology.v1","nodes":[{"type":"CA","num_ports":1,"guid":"0x1","ports":[{"num":1,"lid":1},{"num":1,"lid":2}]}]}`} {
		if _, err := topo.ReadSnapshot(strings.NewReader(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: err %v", bad, err)
		}
	}
	// Another JSON document is named by its schema, whatever its nodes
	// hold (ibnetdiscover --format json's ports are a number; the
	// error named that field of it).
	for _, c := range []struct{ in, want string }{
		{`{"nodes":[{"type":"CA","ports":1}]}`, `bad.json: schema "", want "ibscript.topology.v1" (the JSON fabric.save writes)`},
		{`{"schema":"ibscript.topology.graph.v1","nodes":[{"id":"x"}]}`, `bad.json: schema "ibscript.topology.graph.v1", want "ibscript.topology.v1"`},
		{`{"schema":"ibscript.topology.v1","nodes":[{"type":"CA","ports":1}]}`, `bad.json: nodes: json: cannot unmarshal number`},
	} {
		if _, err := topo.ReadSnapshot(strings.NewReader(c.in), "bad.json"); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.in, err, c.want)
		}
	}
}

func TestParseNameMap(t *testing.T) {
	m, err := topo.ParseNameMap(strings.NewReader("# comment\n0x0002c90300000001 \"rack1 leaf\"\n\n0x10\tspine-a\n"), "map")
	if err != nil {
		t.Fatal(err)
	}
	if m[0x0002c90300000001] != "rack1 leaf" || m[0x10] != "spine-a" || len(m) != 2 {
		t.Errorf("%v", m)
	}
	if _, err := topo.ParseNameMap(strings.NewReader("zz \"x\"\n"), "map"); err == nil || !strings.Contains(err.Error(), "map:1") {
		t.Errorf("bad GUID: %v", err)
	}
}

// clone copies a fabric through a snapshot, to change it.
func clone(t *testing.T, f *topo.Fabric) *topo.Fabric {
	t.Helper()
	var b bytes.Buffer
	if err := topo.WriteSnapshot(&b, f); err != nil {
		t.Fatal(err)
	}
	g, err := topo.ReadSnapshot(&b, "clone")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func byDesc(f *topo.Fabric, desc string) *topo.Node {
	for _, n := range f.Nodes {
		if n.Desc == desc {
			return n
		}
	}
	return nil
}

func cut(p *topo.Port) {
	p.Remote.Remote = nil
	p.Remote = nil
}

func TestDiffKinds(t *testing.T) {
	ref := discover(t, "../tests/topologies/net.2sw2path4hca")
	byDesc(ref, "Switch2").DeviceID = 0xc738 // the simulator leaves it 0, which Diff ignores
	for _, c := range []struct {
		name   string
		change func(f *topo.Fabric)
		kinds  []string
		top    topo.Severity
	}{
		{"identical", func(f *topo.Fabric) {}, nil, 0},
		{"missing node", func(f *topo.Fabric) {
			h := byDesc(f, "Hca3")
			cut(h.Ports[1])
			f.Nodes = slices.DeleteFunc(f.Nodes, func(n *topo.Node) bool { return n == h })
		}, []string{topo.MissingNode}, topo.Critical},
		{"extra node", func(f *topo.Fabric) {
			sw := byDesc(f, "Switch1")
			n := &topo.Node{Desc: "Hca9", Type: topo.CA, NumPorts: 1, GUID: 0x999, Ports: make([]*topo.Port, 2)}
			n.Ports[1] = &topo.Port{Node: n, Num: 1, GUID: 0x99a, Remote: sw.Ports[4]}
			sw.Ports[4].Remote = n.Ports[1]
			f.Nodes = append(f.Nodes, n)
		}, []string{topo.ExtraNode}, topo.Minor},
		{"node replaced", func(f *topo.Fabric) {
			h := byDesc(f, "Hca3")
			h.GUID, h.Ports[1].GUID = 0xabc, 0xabd
		}, []string{topo.NodeReplaced}, topo.Major},
		{"missing cable", func(f *topo.Fabric) { cut(byDesc(f, "Switch1").Ports[5]) }, []string{topo.MissingCable}, topo.Critical},
		{"moved cable", func(f *topo.Fabric) {
			// Hca3's cable moves from Switch1 port 2 to port 4.
			sw := byDesc(f, "Switch1")
			h := sw.Ports[2].Remote
			sw.Ports[2].Remote = nil
			sw.Ports[4].Remote, h.Remote = h, sw.Ports[4]
		}, []string{topo.MovedCable, topo.MovedCable}, topo.Major},
		{"extra cable", func(f *topo.Fabric) {
			a, b := byDesc(f, "Switch1").Ports[4], byDesc(f, "Switch2").Ports[4]
			a.Remote, b.Remote = b, a
		}, []string{topo.ExtraCable}, topo.Minor},
		{"degraded link", func(f *topo.Fabric) {
			p := byDesc(f, "Switch1").Ports[3]
			p.WidthActive, p.Remote.WidthActive = 1, 1
		}, []string{topo.Degraded}, topo.Major},
		{"firmware fields", func(f *topo.Fabric) {
			n := byDesc(f, "Switch2")
			n.DeviceID++
			n.Revision++
			n.Desc = "Switch2-renamed"
		}, []string{topo.FieldChanged, topo.FieldChanged, topo.FieldChanged}, topo.Minor},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := clone(t, ref)
			c.change(cur)
			got := topo.Diff(ref, cur)
			var kinds []string
			for _, d := range got {
				kinds = append(kinds, d.Kind)
			}
			slices.Sort(kinds)
			want := slices.Clone(c.kinds)
			slices.Sort(want)
			if !slices.Equal(kinds, want) {
				t.Fatalf("kinds %q, want %q\n%v", kinds, want, got)
			}
			if len(got) > 0 && got[0].Severity != c.top {
				t.Errorf("first change %v, want severity %v", got[0], c.top)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Severity > got[i-1].Severity {
					t.Errorf("not ranked: %v", got)
				}
			}
		})
	}
}
