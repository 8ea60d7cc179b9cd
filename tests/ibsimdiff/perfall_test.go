package ibsimdiff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/topo"
)

// perfTraffic are the counters ibsim moves with every MAD it carries (not
// the unicast and multicast ones): the engine's read, after perfquery's,
// may only be larger.
var perfTraffic = map[string]bool{"PortXmitData": true, "PortRcvData": true, "PortXmitPkts": true, "PortRcvPkts": true}

// TestPerfAllPortsMatchesPerfQuery: engine.PerfCounters for PortSelect 255
// gives what perfquery -a and -x -a print on the generated router fabric:
// on the one-port CA, whose PMA lacks AllPortSelect, both sum its ports
// (perfquery warns that it emulates); on the switches ibsim's PMA sums
// them itself; the fields the capability masks leave out are the ones
// perfquery does not print. On a two-port CA both fail at port 2 (ibsim's
// CA PMA answers only the port it is asked through).
func TestPerfAllPortsMatchesPerfQuery(t *testing.T) {
	mt := mixedTopologies[0]
	s := privateInit(t, mt.path)
	ctx := t.Context()
	console(t, s,
		`PerformanceSet "HcaZ"[1] PortCounters.SymbolErrorCounter=42`,
		`PerformanceSet "HcaZ"[1] PortCounters.PortRcvErrors=1234`,
		`PerformanceSet "SwA"[1] PortCounters.PortXmitDiscards=99`,
		`PerformanceSet "SwA"[2] PortCounters.PortXmitDiscards=1`,
		`PerformanceSet "SwA"[3] PortCounters.LinkDownedCounter=250`,
		`PerformanceSet "SwA"[4] PortCounters.LinkDownedCounter=250`)
	sess, _ := session(t, s, mt.host, nil, nil)
	var hcaZ, hcaY, swA, swB uint16
	for _, mp := range mixedPorts(t, sess) {
		switch {
		case mp.node.Desc == "HcaZ":
			hcaZ = mp.lid
		case mp.node.Desc == "HcaY" && mp.num == 1:
			hcaY = mp.lid
		case mp.node.Desc == "SwA" && mp.node.Type == topo.Switch:
			swA = mp.lid
		case mp.node.Desc == "SwB":
			swB = mp.lid
		}
	}
	if hcaZ == 0 || hcaY == 0 || swA == 0 || swB == 0 {
		t.Fatalf("LIDs HcaZ %d HcaY %d SwA %d SwB %d", hcaZ, hcaY, swA, swB)
	}
	n := 0
	for _, c := range []struct {
		lid    uint16
		summed []uint8
		forced map[string]uint64
	}{
		{hcaZ, []uint8{1}, map[string]uint64{"SymbolErrorCounter": 42, "PortRcvErrors": 1234}},
		{swA, nil, map[string]uint64{"PortXmitDiscards": 100, "LinkDownedCounter": 255}}, // 250+250 stops at 8 bits
		{swB, nil, nil},
	} {
		for _, ext := range []bool{false, true} {
			args := []string{"-a", strconv.Itoa(int(c.lid))}
			if ext {
				args = append([]string{"-x"}, args...)
			}
			what := fmt.Sprintf("perfquery %s", strings.Join(args, " "))
			tool := dotted(run(t, s, mt.host, "perfquery", args...))
			got, err := sess.PerfCounters(ctx, engine.LID(c.lid), perf.AllPorts, ext)
			if err != nil {
				t.Fatalf("%s: engine: %v", what, err)
			}
			if !slices.Equal(got.Summed, c.summed) {
				t.Errorf("%s: summed ports %v, want %v", what, got.Summed, c.summed)
			}
			if !ext {
				compare(t, what+" (forced)", tool, c.forced)
			}
			want := map[string]uint64{}
			for _, f := range got.Layout.Fields {
				k := f.Name
				if m, ok := perfqNames[k]; ok {
					k = m
				}
				if slices.Contains(got.Absent, f.Name) {
					if v, ok := tool[k]; ok {
						t.Errorf("%s prints %s (%s), which the engine says the PMA does not give", what, k, v)
					}
					continue
				}
				if _, ok := tool[k]; !ok {
					t.Errorf("%s does not print %s", what, k)
					continue
				}
				v := f.Get(got.Data)
				if perfTraffic[f.Name] {
					g, err := strconv.ParseUint(strings.TrimSpace(tool[k]), 0, 64)
					if err != nil || g > v || g == 0 {
						t.Errorf("%s %s: perfquery %q, engine (read after it) %d: want 0 < perfquery <= engine", what, k, tool[k], v)
					}
					continue
				}
				want[k] = v
				n++
			}
			compare(t, what, tool, want)
		}
	}
	// The two-port CA: perfquery -a fails (ibsim refuses port 2 through
	// port 1), and so does the engine, naming the port.
	if out, err := s.Run(ctx, mt.host, "perfquery", "-a", strconv.Itoa(int(hcaY))); err == nil {
		t.Errorf("perfquery -a %d on a two-port CA succeeded:\n%s", hcaY, out)
	}
	if _, err := sess.PerfCounters(ctx, engine.LID(hcaY), perf.AllPorts, false); err == nil || !strings.Contains(err.Error(), "port 2") {
		t.Errorf("engine on the two-port CA: %v, want an error naming port 2", err)
	}
	t.Logf("%d counters compared with perfquery -a / -x -a", n)
}
