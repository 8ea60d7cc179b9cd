package topo

import (
	"os"
	"strings"
	"testing"
)

func TestParseDiffCheck(t *testing.T) {
	for in, want := range map[string]DiffCheck{
		"sw": DiffSwitch, "SW,Ca,router": DiffSwitch | DiffCA | DiffRouter, ",port,,lid,": DiffPort | DiffLID,
		"nodedesc": DiffNodeDesc, "": 0,
	} {
		if got, err := ParseDiffCheck(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseDiffCheck("sw,state"); err == nil || !strings.Contains(err.Error(), "invalid diff check key: state") {
		t.Errorf("state: %v", err)
	}
}

// TestWriteIBNetDiscoverDiffSame: a fabric diffed with itself prints
// nothing, whatever is checked; a fabric without one of its nodes prints
// that node with "> ", the links to it with both prefixes.
func TestWriteIBNetDiscoverDiffSame(t *testing.T) {
	f := parseTestTopology(t)
	var b strings.Builder
	if err := WriteIBNetDiscoverDiff(&b, f, f, DiffSwitch|DiffCA|DiffRouter|DiffPort|DiffLID|DiffNodeDesc, nil); err != nil || b.Len() != 0 {
		t.Fatalf("%v, %q", err, b.String())
	}
	less := parseTestTopology(t)
	var gone *Node
	for i, n := range less.Nodes {
		if n.Type == CA {
			gone = n
			less.Nodes = append(less.Nodes[:i:i], less.Nodes[i+1:]...)
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil {
					p.Remote.Remote = nil
				}
			}
			break
		}
	}
	b.Reset()
	if err := WriteIBNetDiscoverDiff(&b, less, f, DiffDefault, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "> caguid=0x") || !strings.Contains(out, "> Ca\t") || !strings.Contains(out, "\n> [") || !strings.Contains(out, gone.Desc) {
		t.Fatalf("no '> ' lines for the missing node %s:\n%s", gone, out)
	}
}

func parseTestTopology(t *testing.T) *Fabric {
	t.Helper()
	b, err := os.ReadFile("../tests/topologies/net.mixed-router")
	if err != nil {
		t.Fatal(err)
	}
	return mustParse(t, "net.mixed-router", string(b))
}
