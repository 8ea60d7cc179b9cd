package sim

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMirroredFields: after a load, each port's mirrored PortInfo fields
// (LID, LMC, PortState, PortPhysicalState) are what its PortInfo holds, on
// every bundled topology, with a subnet manager and bare (build and
// configure set them without reading PortInfo back).
func TestMirroredFields(t *testing.T) {
	files, err := filepath.Glob(topology("*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no topologies: %v", err)
	}
	loaded := 0
	for _, file := range files {
		if st, err := os.Stat(file); err != nil || st.IsDir() {
			continue
		}
		for _, bare := range []bool{false, true} {
			f, err := Load(file, &Options{Bare: bare})
			if err != nil {
				continue // the files that test load errors
			}
			loaded++
			for _, n := range f.nodes {
				for _, p := range n.ports {
					if p == nil {
						continue
					}
					got := [4]int{int(p.lid), int(p.lmc), int(p.state), int(p.phys)}
					p.sync()
					if want := [4]int{int(p.lid), int(p.lmc), int(p.state), int(p.phys)}; got != want {
						t.Errorf("%s (bare %v): %s: lid, lmc, state, phys %v, PortInfo has %v", filepath.Base(file), bare, p, got, want)
					}
				}
			}
		}
	}
	if loaded < 20 {
		t.Errorf("%d topologies loaded, want the bundled ones", loaded)
	}
}
