package ibsimdiff

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

// TestIbsimLoadsPlanarized: a topology with "# planarized" lines (a
// 2-plane tree, SDR, which ibsim 0.10 can run) loads in ibsim, which takes
// the lines for comments and runs each host as an ordinary 2-port CA,
// every port its own GUID (it models no planes: docs/planes.md); ibscript
// reads the same file as planarized hosts whose ports share port 1's GUID.
func TestIbsimLoadsPlanarized(t *testing.T) {
	ibsimtest.Require(t)
	path := filepath.Join(t.TempDir(), "planes.net")
	if err := (fattree.Spec{Leaves: 2, Spines: 1, Hosts: 2, LinksPerSpine: 1, Planes: 2}).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	// Alone: an OpenSM bound to one port would leave the other plane Init.
	s, err := ibsimtest.Start(t.Context(), filepath.Dir(path), path, &ibsimtest.Options{NoSM: true})
	t.Cleanup(s.Stop)
	if err != nil {
		t.Fatal(err)
	}
	dump, err := s.Console(t.Context(), "Dump")
	if err != nil {
		t.Fatal(err)
	}
	f, err := topo.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := f.NodeByID("h000-00")
	if !h.Planarized || h.Ports[1].GUID != h.Ports[2].GUID {
		t.Fatalf("ibscript: h000-00 planarized %v, port GUIDs %#x %#x", h.Planarized, h.Ports[1].GUID, h.Ports[2].GUID)
	}
	// ibsim: "Ca 2 "h000-00"", then one line per port starting with its
	// GUID in hex: h000-00's node GUID + 1 and + 2.
	_, rec, ok := strings.Cut(dump, "Ca 2 \"h000-00\"")
	if !ok {
		t.Fatalf("ibsim's dump has no 2-port CA h000-00:\n%s", dump)
	}
	rec, _, _ = strings.Cut(rec, "Ca 2 ")
	for port := 1; port <= 2; port++ {
		if want := fmt.Sprintf("\n%x\t[%d]\t", h.GUID+uint64(port), port); !strings.Contains(rec, want) {
			t.Errorf("ibsim's h000-00 port %d: want its own GUID %#x:\n%s", port, h.GUID+uint64(port), rec)
		}
	}
}
