package topo_test

import (
	"strings"
	"testing"
)

// TestNodeDescCleanedPerByte: descriptions are printed as ibnetdiscover
// prints them (clean_nodedesc): every byte outside 0x20-0x7e becomes one
// space, so a two-byte character becomes two spaces, and the text stops
// after 63 bytes. The expected strings are what ibnetdiscover printed on
// ibsim for the same file (tests/ibsimdiff compares them live).
func TestNodeDescCleanedPerByte(t *testing.T) {
	out := ibnd(t, discover(t, "../tests/topologies/net.nodedesc"))
	for _, want := range []string{
		`# "Sw  itch-   1" base port 0 lid`,
		`# "h  st-      "`,
		`# "x y z"`,
		`# "` + strings.Repeat("L", 40) + strings.Repeat(" ", 23) + `"`,
		`# "Hca 4"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ibnetdiscover text lacks %q:\n%s", want, out)
		}
	}
}
