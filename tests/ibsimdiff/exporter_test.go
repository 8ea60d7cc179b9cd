package ibsimdiff

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/exporter"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad/perf"
)

// TestExporterMatchesPerfQuery: on live ibsim, with error counters set
// through its console, one exporter sweep holds every linked switch port,
// and each port's error counters and PortXmitWait are what perfquery
// prints for it (the data and packet counters move with every MAD, so
// they are not compared).
func TestExporterMatchesPerfQuery(t *testing.T) {
	ibsimtest.Require(t)
	src, err := os.ReadFile(topo2sw)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tp := filepath.Join(dir, "net.exporter") // a private ibsim: its counters change
	if err := os.WriteFile(tp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ibsimtest.Start(t.Context(), dir, tp, nil)
	t.Cleanup(s.Stop) // after the session's cleanup closes it
	if err != nil {
		t.Fatal(err)
	}
	console(t, s,
		`PerformanceSet "Switch1"[1] PortCounters.SymbolErrorCounter=3`,
		`PerformanceSet "Switch1"[3] PortCounters.PortRcvErrors=1234`,
		`PerformanceSet "Switch2"[2] PortCounters.PortXmitWait=11`,
		`PerformanceSet "Switch2"[5] PortCounters.LinkDownedCounter=250`)
	sess, _ := session(t, s, "", nil, nil)
	snap, err := exporter.New(sess, nil).Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Errors != 0 || len(snap.Ports) != 8 {
		t.Fatalf("sweep: %d errors, %d ports (want 0 and the 8 linked switch ports)", snap.Errors, len(snap.Ports))
	}
	line := regexp.MustCompile(`(?m)^(\w+):\.*(\d+)$`)
	layout := perf.LayoutByID(perf.AttrPortCounters)
	compared := 0
	for _, ps := range snap.Ports {
		if ps.PCErr != nil || ps.ExtErr != nil || ps.CapsErr != nil {
			t.Errorf("%s port %d: %v %v %v", ps.Port.Node.Desc, ps.Port.Num, ps.PCErr, ps.ExtErr, ps.CapsErr)
			continue
		}
		lid := ps.Port.Node.Ports[0].LID
		out, err := s.Run(t.Context(), "", "perfquery", strconv.Itoa(int(lid)), strconv.Itoa(ps.Port.Num))
		if err != nil {
			t.Fatalf("perfquery %d %d: %v\n%s", lid, ps.Port.Num, err, out)
		}
		ref := map[string]uint64{}
		for _, m := range line.FindAllStringSubmatch(string(out), -1) {
			ref[m[1]], _ = strconv.ParseUint(m[2], 10, 64)
		}
		data, err := ps.PC.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range layout.Fields {
			if perfTraffic[f.Name] || strings.HasPrefix(f.Name, "PortSelect") || strings.HasPrefix(f.Name, "CounterSelect") {
				continue
			}
			want, ok := ref[f.Name]
			if !ok {
				continue // a field perfquery does not print
			}
			compared++
			if got := f.Get(data); got != want {
				t.Errorf("%s port %d %s: exporter %d, perfquery %d", ps.Port.Node.Desc, ps.Port.Num, f.Name, got, want)
			}
		}
	}
	// 8 ports, the 12 error counters, QP1Dropped and PortXmitWait
	if compared < 8*13 {
		t.Errorf("%d values compared, want at least %d", compared, 8*13)
	}
}
