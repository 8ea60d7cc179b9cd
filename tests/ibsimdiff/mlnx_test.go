package ibsimdiff

import (
	"slices"
	"strings"
	"testing"
)

// topoMlnx has Mellanox device IDs: MlnxExtPortInfo read during
// discovery, an FDR10 link, switches of 18, 36 and 64 ports.
const topoMlnx = "../topologies/net.mixed-mlnx"

// TestMellanoxFabricMatchesCTools: on a fabric of Mellanox device IDs the
// tools print what the C tools print, from a ConnectX-3 and from the
// SwitchX's port 0: FDR10 where MlnxExtPortInfo has it ("4xFDR10",
// "10.0 Gbps (FDR10)"), and the nodes in the order libibnetdisc finds them
// when it reads MlnxExtPortInfo before looking behind a QDR port.
func TestMellanoxFabricMatchesCTools(t *testing.T) {
	s := diagSim(t, topoMlnx)
	for _, host := range []string{"CX3", "SX"} {
		for _, args := range [][]string{
			{"iblinkinfo"},
			{"iblinkinfo", "-l", "-p"},
			{"iblinkinfo", "-D", "0"},
			{"iblinkinfo", "--switches-only"},
			{"ibnetdiscover"},
			{"ibnetdiscover", "-p"},
			{"ibnetdiscover", "-l"},
		} {
			var r toolResult
			if args[0] == "ibnetdiscover" {
				// Its "generated on" line is the second it ran.
				r = cTool(t, s, host, args[0], args[1:]...)
				got := ibscriptTool(t, s, host, args[0], args[1:]...)
				if w, g := normDate(string(r.stdout)), normDate(string(got.stdout)); w != g || got.code != r.code {
					t.Errorf("%s on %s: exit %d, the C tool's %d:\n%s", strings.Join(args, " "), host, got.code, r.code, lineDiff(w, g))
				}
			} else {
				r = diffTool(t, s, host, args[0], args[1:]...)
			}
			// ibnetdiscover -l lists nodes, no links.
			if !strings.Contains(string(r.stdout), "FDR10") && !slices.Equal(args, []string{"ibnetdiscover", "-l"}) {
				t.Errorf("%s on %s: the C tool printed no FDR10 link:\n%s", strings.Join(args, " "), host, r.stdout)
			}
		}
	}
	// -D to a CA or router one hop from a switch: libibnetdisc looks for
	// its peer through it ("Port not available"); two hops away, the
	// route's last hop but one.
	for _, c := range []struct {
		host string
		args []string
	}{
		{"SX", []string{"iblinkinfo", "-D", "0,1"}},
		{"SX", []string{"iblinkinfo", "-D", "0,4", "-l"}},
		{"SX", []string{"ibqueryerrors", "-D", "0,2", "--details"}},
		{"CX3", []string{"iblinkinfo", "-D", "0,1,4"}},
		// From the router (no LID, no SM known): ibqueryerrors' SA
		// PathRecord query has nowhere to go, so it prints nothing.
		{"Rt1", []string{"iblinkinfo"}},
		{"Rt1", []string{"ibqueryerrors"}},
		{"Rt1", []string{"ibqueryerrors", "-D", "0,1", "-r"}},
		// A map that cannot be read: iblinkinfo warns and goes on.
		{"CX3", []string{"iblinkinfo", "--node-name-map", "/nonexistent/map", "-l"}},
	} {
		diffTool(t, s, c.host, c.args[0], c.args[1:]...)
	}
}
