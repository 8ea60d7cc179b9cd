package ibsimdiff

import (
	"bytes"
	"testing"
	"time"

	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
)

// TestNodeDescMatchesIBNetDiscover: node descriptions with multi-byte
// UTF-8 characters, control bytes, a non-UTF-8 byte and 64 bytes are
// printed byte for byte as ibnetdiscover prints them, whether the engine
// discovers ibsim or the embedded simulator loaded from the same file;
// so are bare descriptions with quotes, '#', trailing spaces and the
// port 0 keywords, as ibsim's parser cuts them (net.odd-desc,
// net.odd-keywords).
func TestNodeDescMatchesIBNetDiscover(t *testing.T) {
	for _, tp := range []string{"../topologies/net.nodedesc", "../topologies/net.odd-desc", "../topologies/net.odd-keywords"} {
		t.Run(topoName(tp), func(t *testing.T) { nodeDescMatches(t, tp) })
	}
}

// nodeDescMatches is TestNodeDescMatchesIBNetDiscover on topology tp.
func nodeDescMatches(t *testing.T, tp string) {
	s := shared.Get(t, tp, nil)
	ref, err := s.Run(t.Context(), "", "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	want := normDate(string(ref))
	if got, _ := discoverText(t, s, ""); normDate(got) != want {
		t.Errorf("engine on ibsim differs from ibnetdiscover:\n%s", lineDiff(want, normDate(got)))
	}

	f, err := sim.Load(tp, &sim.Options{IbsimStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sess := simtest.Session(t, f, nil)
	d, err := sess.Discover(t.Context(), nil)
	if err != nil || len(d.Errors) > 0 {
		t.Fatalf("discover: %v %v", err, d.Errors)
	}
	var b bytes.Buffer
	if err := topo.WriteIBNetDiscover(&b, d.Fabric, &topo.WriteOptions{Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := normDate(b.String()); got != want {
		t.Errorf("engine on the embedded simulator differs from ibnetdiscover:\n%s", lineDiff(want, got))
	}
}
