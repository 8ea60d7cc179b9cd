package ibsimdiff

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/topo"
)

// session attaches an engine Session to node of s; the test closes it.
func session(t *testing.T, s *ibsimtest.Sim, node string, o *ibsim.Options, eo *engine.Options) (*engine.Session, *ibsim.Transport) {
	t.Helper()
	var opts ibsim.Options
	if o != nil {
		opts = *o
	}
	opts.Node = node
	tr, err := ibsim.Open(t.Context(), s.Sock, &opts)
	if err != nil {
		t.Fatal(err)
	}
	if eo == nil {
		eo = &engine.Options{Timeout: 200 * time.Millisecond, Retries: 3}
	}
	sess, err := engine.New(tr, eo)
	if err != nil {
		tr.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sess.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return sess, tr
}

var dateLine = regexp.MustCompile(`(?m)^# Topology file: generated on .*$`)

func normDate(s string) string {
	return dateLine.ReplaceAllString(s, "# Topology file: generated on DATE")
}

// lineDiff shows where two texts differ, (-want +got) with context.
var lineDiff = madtest.TextDiff

// discoverText runs Discover on node and formats it as ibnetdiscover does.
func discoverText(t *testing.T, s *ibsimtest.Sim, node string) (string, *engine.Discovery) {
	t.Helper()
	sess, _ := session(t, s, node, nil, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	d, err := sess.Discover(ctx, nil)
	if err != nil {
		t.Fatalf("discover from %q: %v", node, err)
	}
	if len(d.Errors) > 0 {
		t.Fatalf("discover from %q: %d errors, first %s: %v", node, len(d.Errors), d.Errors[0].Path, d.Errors[0].Err)
	}
	var buf bytes.Buffer
	if err := topo.WriteIBNetDiscover(&buf, d.Fabric, nil); err != nil {
		t.Fatal(err)
	}
	return buf.String(), d
}

// TestDiscoverMatchesIBNetDiscover: on the same live ibsim fabric and from
// the same node, the engine's discovery printed in ibnetdiscover's format
// is byte-identical to ibnetdiscover's output (the date line aside), so
// the same nodes by GUID and the same links.
func TestDiscoverMatchesIBNetDiscover(t *testing.T) {
	cases := []struct {
		topo  string
		nodes []string // attachment points; "" = ibsim's default (the first node)
		count int      // nodes in the fabric
	}{
		{topo2sw, []string{"", "Hca1", "Hca4"}, 6},
		{topo2sw2p, []string{"", "Hca2"}, 4},
		{topoFat500, []string{"", "h011-07"}, 492},
	}
	for _, c := range cases {
		for _, node := range c.nodes {
			name := c.topo[strings.LastIndex(c.topo, "/")+1:] + "/" + node
			t.Run(name, func(t *testing.T) {
				s := shared.Get(t, c.topo, nil)
				start := time.Now()
				ref, err := s.Run(t.Context(), node, "ibnetdiscover")
				if err != nil {
					t.Fatal(err)
				}
				refTime := time.Since(start)
				got, d := discoverText(t, s, node)
				if n := len(d.Fabric.Nodes); n != c.count {
					t.Errorf("discovered %d nodes, want %d", n, c.count)
				}
				t.Logf("%s from %q: ibnetdiscover (process, umad2sim) %v; engine Discover %v, %d SMPs",
					name, node, refTime.Round(time.Millisecond), d.Elapsed.Round(time.Millisecond), d.MADs)
				if w, g := normDate(string(ref)), normDate(got); w != g {
					t.Errorf("engine discovery differs from ibnetdiscover:\n%s", lineDiff(w, g))
				}
			})
		}
	}
}
