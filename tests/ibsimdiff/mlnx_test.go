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
			r := diffTool(t, s, host, args[0], args[1:]...)
			// ibnetdiscover -l lists nodes, no links.
			if !strings.Contains(string(r.stdout), "FDR10") && !slices.Equal(args, []string{"ibnetdiscover", "-l"}) {
				t.Errorf("%s on %s: the C tool printed no FDR10 link:\n%s", strings.Join(args, " "), host, r.stdout)
			}
		}
	}
}
