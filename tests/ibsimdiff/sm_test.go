package ibsimdiff

import (
	"path/filepath"
	"testing"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/internal/ibsimtest"
)

// TestSMMatchesOpenSMGenerated is compareWithIbsim on fabrics made for
// it: a ring of switches with parallel links, a two-port CA cabled to two
// switches, a router on two switches (its port lines annotated with a
// width and speed, which ibsim ignores on Rt lines), unused ports, a
// slower link (testdata/net.mix; no island the SM cannot reach: the
// harness waits for every cabled port to be Active); and
// fat trees with parallel uplinks, where every LID has many equal-hop
// ports to choose from.
func TestSMMatchesOpenSMGenerated(t *testing.T) {
	ibsimtest.Require(t)
	dir := t.TempDir()
	trees := []fattree.Spec{
		{Leaves: 6, Spines: 3, Hosts: 5, LinksPerSpine: 2},
		{Leaves: 5, Spines: 4, Hosts: 7, LinksPerSpine: 3},
	}
	files := []string{"testdata/net.mix"}
	for i, spec := range trees {
		p := filepath.Join(dir, "tree"+string(rune('a'+i))+".net")
		if err := spec.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	for _, tp := range files {
		t.Run(filepath.Base(tp), func(t *testing.T) {
			s, err := ibsimtest.Start(t.Context(), dir, tp, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Stop) // after the sessions' cleanups
			compareWithIbsim(t, s, tp)
		})
	}
}
