package tests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/plan"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

const planesTopology = "topologies/fattree-xdr-4planes.net"

// checkOf returns r's check named name.
func checkOf(t *testing.T, r *plan.Report, name string) *plan.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q", name)
	return nil
}

// planePort is the PortInfo of host's port on plane (the plane port of
// that number, genfattree's cabling), read by a directed route from
// h000-00's port on that plane, with the session and route: a CA sets
// only the port an SMP came in on.
func planePort(t *testing.T, f *sim.Fabric, host string, plane int) (*engine.Session, engine.Target, *smp.PortInfo) {
	t.Helper()
	s := simtest.PortSession(t, f, "h000-00", plane, nil)
	d, err := s.Discover(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range d.Fabric.Nodes {
		if n.Desc != host {
			continue
		}
		path, _ := d.Path(n.GUID)
		to := engine.Target{Kind: engine.ByDR, Path: path}
		data, err := s.SMP(context.Background(), to, mad.MethodGet, smp.AttrPortInfo, uint32(plane), nil)
		if err != nil {
			t.Fatal(err)
		}
		var pi smp.PortInfo
		if err := pi.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		return s, to, &pi
	}
	t.Fatalf("no %s on plane %d", host, plane)
	return nil, engine.Target{}, nil
}

// setLID gives host's plane port the LID lid by a PortInfo Set, as an SM
// would (its states, widths and speeds left as they are).
func setLID(t *testing.T, f *sim.Fabric, host string, plane int, lid uint16) {
	t.Helper()
	s, to, pi := planePort(t, f, host, plane)
	pi.LID = lid
	pi.PortState, pi.PortPhysicalState = 0, 0
	pi.LinkWidthEnabled, pi.LinkSpeedEnabled, pi.LinkSpeedExtEnabled = 0, 0, 0
	data, err := pi.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SMP(context.Background(), to, mad.MethodSet, smp.AttrPortInfo, uint32(plane), data); err != nil {
		t.Fatal(err)
	}
}

// failTexts is every failed result of r as text: the message and what it
// names (plan.Object, its plane included).
func failTexts(r *plan.Report) []string {
	var out []string
	for _, c := range r.Checks {
		for _, res := range c.Results {
			if res.Status == plan.Fail {
				out = append(out, c.Name+": "+res.Message+" @ "+res.Object.String())
			}
		}
	}
	return out
}

// TestValidatePlanes runs validate.lua from a planarized CA's port of the
// 4-plane XDR tree: every plane is discovered and checked (4 planes'
// ports: 48 links, 48 endport LIDs, 16 switches' routes), the
// planarized hosts' shared port GUIDs are no duplicate, and faults
// planted on plane 3 alone are found and named with their plane, as a
// duplicate GUID or LID is.
func TestValidatePlanes(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(string) string // of the topology text
		args  map[string]string
		plant func(t *testing.T, f *sim.Fabric)
		want  []string // the checks that fail
		named []string // what their failures say, each in some failure
	}{
		{name: "clean"},
		{name: "down link on plane 3", args: map[string]string{"reference": "REF"},
			plant: func(t *testing.T, f *sim.Fabric) {
				if err := f.SetLink("h000-01", 3, false); err != nil {
					t.Fatal(err)
				}
			}, want: []string{"error counters within thresholds", "topology matches the reference"},
			named: []string{`"h000-01" port 3 <-> "p3-leaf000" port 2`, `link_downed_counter=1 (threshold 0) @ "p3-leaf000" port 2 (plane 3)`}},
		{name: "narrow link on plane 3", args: map[string]string{"width": "4X"},
			edit: func(s string) string {
				// h000-02's plane-3 cable runs 1x (the link's width
				// as ibnetdiscover's text gives it, at both ends)
				s = strings.Replace(s, "[3]\t\"p3-leaf000\"[3]\t# lid 0 4xXDR", "[3]\t\"p3-leaf000\"[3]\t# lid 0 1xXDR", 1)
				return strings.Replace(s, "[3]\t\"h000-02\"[3]\t# lid 0 4xXDR", "[3]\t\"h000-02\"[3]\t# lid 0 1xXDR", 1)
			}, want: []string{"expected width and speed"}, named: []string{"h000-02 port 3 (plane 3) at 1X"}},
		{name: "counter over threshold on plane 3",
			plant: func(t *testing.T, f *sim.Fabric) {
				if err := f.SetCounter("p3-spine001", 2, "symbol_error_counter", 7); err != nil {
					t.Fatal(err)
				}
			}, want: []string{"error counters within thresholds"}, named: []string{`"p3-spine001" port 2 (plane 3)`, "symbol_error_counter=7 (threshold 0)"}},
		{name: "duplicate port GUID across nodes",
			plant: func(t *testing.T, f *sim.Fabric) {
				h := findNode(t, session(t, f), "h000-00")
				if err := f.SetPortGUID("h001-03", 3, h.Ports[1].GUID); err != nil {
					t.Fatal(err)
				}
			}, want: []string{"unique GUIDs"}, named: []string{"h001-03 port 3 (plane 3)"}},
		{name: "duplicate LID within plane 3",
			plant: func(t *testing.T, f *sim.Fabric) {
				_, _, pi := planePort(t, f, "h000-01", 3)
				setLID(t, f, "h001-03", 3, pi.LID)
			}, want: []string{"unique LIDs", "LFTs reach every LID"}, named: []string{"h000-01 port 3 (plane 3) and h001-03 port 3 (plane 3)", "LFTs reach every LID: plane 3: LID ", `("h001-03" port 3) is sent to "h000-01" port 3`}},
		// The routing faults are off the routes from h000-00 (the
		// session's host, on leaf000) to the nodes whose counters are
		// read: a GMP dropped by them would count a relay error.
		{name: "LFT hole on plane 3",
			plant: func(t *testing.T, f *sim.Fabric) {
				_, _, pi := planePort(t, f, "h000-02", 3)
				if err := f.SetLFT("p3-leaf001", pi.LID, 0xff); err != nil {
					t.Fatal(err)
				}
			}, want: []string{"LFTs reach every LID"}, named: []string{`is dropped (LFT entry 255) @ "p3-leaf001" (plane 3)`, "LFTs reach every LID: plane 3: LID "}},
		{name: "routing loop on plane 3",
			plant: func(t *testing.T, f *sim.Fabric) {
				// h000-02's plane-3 LID bounces between p3-leaf001 and
				// p3-spine000 (leaf001's port 5, spine000's port 2)
				_, _, pi := planePort(t, f, "h000-02", 3)
				if err := f.SetLFT("p3-leaf001", pi.LID, 5); err != nil {
					t.Fatal(err)
				}
				if err := f.SetLFT("p3-spine000", pi.LID, 2); err != nil {
					t.Fatal(err)
				}
			}, want: []string{"no routing loops"}, named: []string{"no routing loops: plane 3: forwarding loop through ", `" (plane 3) (0x`}},
		{name: "duplicate LID across planes",
			plant: func(t *testing.T, f *sim.Fabric) {
				_, _, pi := planePort(t, f, "h000-01", 1)
				setLID(t, f, "h001-03", 3, pi.LID)
			}, want: []string{"unique LIDs", "LFTs reach every LID"}, named: []string{"h000-01 port 1 (plane 1) and h001-03 port 3 (plane 3)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := planesTopology
			if c.edit != nil {
				b, err := os.ReadFile(planesTopology)
				if err != nil {
					t.Fatal(err)
				}
				path = filepath.Join(t.TempDir(), "planes.net")
				if err := os.WriteFile(path, []byte(c.edit(string(b))), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := loadSim(t, path)
			if c.plant != nil {
				c.plant(t, f)
			}
			args := map[string]string{"speed": "XDR"}
			for k, v := range c.args {
				if v == "REF" {
					v = planesTopology
				}
				args[k] = v
			}
			r := runPlan(t, f, "../scripts/validate.lua", args)
			got := failedChecks(r)
			if !slices.Equal(got, c.want) || r.Error != "" {
				t.Fatalf("failed %q, want %q, error %q\n%s", got, c.want, r.Error, strings.Join(failTexts(r), "\n"))
			}
			all := strings.Join(failTexts(r), "\n")
			for _, s := range c.named {
				if !strings.Contains(all, s) {
					t.Errorf("no failure names %q:\n%s", s, all)
				}
			}
			if c.name != "clean" {
				return
			}
			// every plane checked: 4 planes of 12 links, 12 endport LIDs
			// (4 switches, 8 host plane ports) and 4 switches each
			if r.Fabric.Nodes != 24 || r.Fabric.Links != 48 {
				t.Errorf("%d nodes, %d links, want 24 and 48", r.Fabric.Nodes, r.Fabric.Links)
			}
			for name, n := range map[string]int{"links ACTIVE": 48, "link width and speed": 48, "unique LIDs": 48,
				"ports name the MASTER SM": 48, "P_Keys match between partners": 48, "one MASTER SM": 4} {
				if c := checkOf(t, r, name); c.Passed != n {
					t.Errorf("%s: %d passed, want %d", name, c.Passed, n)
				}
			}
			for name, msg := range map[string]string{"discovery": "24 nodes, 48 links, 4 planes",
				"LFTs reach every LID": "16 switches, 48 LIDs, 192 routes followed"} {
				if c := checkOf(t, r, name); len(c.Results) == 0 || c.Results[len(c.Results)-1].Message != msg {
					t.Errorf("%s: %+v, want %q", name, c.Results, msg)
				}
			}
		})
	}
}

// TestChecksAlonePlanes runs each shipped check alone from the planarized
// CA's port of the 4-plane tree: each discovers every plane and passes
// (the ids check no longer flags the hosts' shared port GUIDs, the
// counters check reads 96 ports, not plane 1's 24, the routing check
// every plane's 16 switches).
func TestChecksAlonePlanes(t *testing.T) {
	f := loadSim(t, planesTopology)
	for check, passed := range map[string]map[string]int{
		"ids":        {"unique LIDs": 48},
		"sm":         {"ports name the MASTER SM": 48, "one MASTER SM": 4, "SM priorities": 4},
		"links":      {"links ACTIVE": 48},
		"counters":   {"error counters within thresholds": 96},
		"routing":    {},
		"partitions": {"P_Keys match between partners": 48},
	} {
		r := runPlan(t, f, "../scripts/checks/"+check+".lua", nil)
		if got := failedChecks(r); len(got) > 0 || r.Error != "" {
			t.Errorf("%s: failed %q, error %q\n%s", check, got, r.Error, strings.Join(failTexts(r), "\n"))
			continue
		}
		if c := checkOf(t, r, "discovery"); len(c.Results) == 0 || c.Results[0].Message != "24 nodes, 48 links, 4 planes" {
			t.Errorf("%s: discovery %+v", check, c.Results)
		}
		for name, n := range passed {
			if c := checkOf(t, r, name); c.Passed != n {
				t.Errorf("%s: %s: %d passed, want %d", check, name, c.Passed, n)
			}
		}
		if check == "sm" {
			// one SM per plane: h000-00's plane ports, LIDs 1, 3, 4 and 5 (as OpenSM gives LIDs, by port GUID)
			var got []string
			for _, res := range checkOf(t, r, "one MASTER SM").Results {
				got = append(got, res.Message)
			}
			want := []string{"plane 1: MASTER at LID 1", "plane 2: MASTER at LID 3", "plane 3: MASTER at LID 4", "plane 4: MASTER at LID 5"}
			if !slices.Equal(got, want) {
				t.Errorf("sm: one MASTER SM says %q, want %q", got, want)
			}
		}
		if check == "routing" {
			if c := checkOf(t, r, "LFTs reach every LID"); len(c.Results) == 0 || !strings.HasPrefix(c.Results[0].Message, "16 switches, 48 LIDs") {
				t.Errorf("routing: %+v", c.Results)
			}
		}
	}
}
