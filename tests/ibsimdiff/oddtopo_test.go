package ibsimdiff

import (
	"path/filepath"
	"testing"
)

// oddFindings are the differences TestRandomTopologies found on random
// fabrics, each on the smallest fabric that shows it, with the command
// lines that showed it: the C tool and ibscript's must print the same
// bytes and exit the same.
var oddFindings = []struct {
	path, host string
	cmds       [][]string
}{
	// A CA with two ports on one switch and a third on another: the
	// partial scan of -D (and -G) reaches the switch and, through it, the
	// CA's other port there (-n 2: the third too); iblinkinfo and
	// ibqueryerrors print the CA with them (seed 8).
	{"../topologies/net.odd-multiport", "H1", [][]string{
		{"iblinkinfo", "-D", "0,1,2"}, {"iblinkinfo", "-D", "0,1,3", "-l"}, {"iblinkinfo", "-D", "0,1,3", "-n", "2"},
		{"iblinkinfo", "-D", "0,1,2", "-n", "3", "--cas-only"}, {"iblinkinfo", "-D", "0,1,4,6"},
		{"iblinkinfo", "-G", "0x100004"}, {"iblinkinfo", "-G", "0x100005", "-n", "2"},
		{"ibqueryerrors", "-D", "0,1,2"}, {"ibqueryerrors", "-G", "0x100003", "-r"},
	}},
	// iblinkinfo -n: the links libibnetdisc makes within the hop limit,
	// where the engine's discovery limited to it had reached a node by a
	// longer route first (seed 16).
	{"../topologies/net.odd-hops", "sw3", [][]string{{"iblinkinfo", "-n", "2"}, {"iblinkinfo", "-n", "1", "-l"}}},
	{"../topologies/net.odd-hops", "ca5", [][]string{{"iblinkinfo", "-n", "3"}, {"iblinkinfo", "-n", "2", "--switches-only"}}},
}

// TestOddTopologyFindings runs oddFindings.
func TestOddTopologyFindings(t *testing.T) {
	for _, f := range oddFindings {
		t.Run(filepath.Base(f.path)+"/"+f.host, func(t *testing.T) {
			s := diagSim(t, f.path)
			for _, c := range f.cmds {
				diffTool(t, s, f.host, c[0], c[1:]...)
			}
		})
	}
}
