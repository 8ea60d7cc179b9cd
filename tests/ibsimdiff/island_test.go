package ibsimdiff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsWhereNoSMReaches: on net.island (OpenSM on a switch's port 0,
// an island of a switch and a CA and a back-to-back pair of CAs no SM
// reaches), the tools print what the C tools print and exit as they do,
// run from the island (the port has LID 0 and MasterSMLID 0), from the
// back-to-back pair, from a two-port CA and from the SM's own switch.
func TestToolsWhereNoSMReaches(t *testing.T) {
	const path = "../topologies/net.island"
	s := diagSim(t, path)
	for _, host := range []string{"I1", "P1", "B", "S1"} {
		t.Run(host, func(t *testing.T) {
			for _, c := range [][]string{
				// ibaddr asks its own port by directed route where it has
				// no LID (resolve_self), and prints LID 0.
				{"ibaddr"}, {"ibaddr", "-l"}, {"ibaddr", "-L"}, {"ibaddr", "-g"},
				{"ibaddr", "-D", "0"}, {"ibaddr", "1"},
				// saquery with no SM known: sa_get_handle's panic, 255.
				{"saquery"}, {"saquery", "LR"}, {"saquery", "-s"}, {"saquery", "SMIR"},
				{"saquery", "--src-to-dst", "1:2"},
				{"ibnetdiscover", "-p"}, {"iblinkinfo"}, {"ibqueryerrors"}, {"ibswitches"}, {"ibhosts"},
				{"perfquery"}, {"smpquery", "-D", "portinfo", "0"}, {"smpquery", "nodeinfo", "1"},
				{"ibtracert", "1", "2"}, {"ibroute", "-D", "0,1"}, {"dump_lfts"},
				{"ibportstate", "-D", "0", "1"}, {"smpdump", "-D", "0", "0x15"},
			} {
				diffToolIBExit(t, s, host, c[0], c[1:]...)
			}
			if host == "S1" {
				return // -S of a switch's GUID hangs the C tool under umad2sim
			}
			// -S/-G of the host's own port: where no SA resolves it the
			// C tools scan the whole fabric and print the node as that
			// scan found it (its peer included); where the SA does, a
			// partial scan from its LID.
			ibnd := cTool(t, s, host, "ibnetdiscover")
			m := initiatedFrom.FindSubmatch(ibnd.stdout)
			if m == nil {
				t.Fatalf("no 'Initiated from' in ibnetdiscover's output:\n%s", ibnd.stdout)
			}
			self := "0x" + string(m[2])
			for _, c := range [][]string{
				{"iblinkinfo", "-S", self}, {"iblinkinfo", "-G", self, "-l"}, {"iblinkinfo", "-S", self, "-n", "1"},
				{"ibqueryerrors", "-S", self},
			} {
				diffToolIBExit(t, s, host, c[0], c[1:]...)
			}
		})
	}
}

// TestToolsAroundDisabledPort: a switch port disabled after OpenSM came
// up (ibportstate disable, on a private net.island) keeps, under ibsim,
// PortState Active with PhysState Disabled; libibnetdisc follows only
// ports whose PhysState is LinkUp, so the discovering tools print the
// fabric without what lies behind it and exit 0, as ibscript must.
func TestToolsAroundDisabledPort(t *testing.T) {
	s, _ := privateSim(t, "../topologies/net.island")
	// From A: out of its port to S1, S1's port 4 to S2; S2's port 1 is C's.
	if r := cTool(t, s, "A", "ibportstate", "-D", "0,1,4", "1", "disable"); r.code != 0 {
		t.Fatalf("ibportstate -D 0,1,4 1 disable: status %d: %s", r.code, r.stderr)
	}
	if r := cTool(t, s, "A", "smpquery", "-D", "portinfo", "0,1,4", "1"); !strings.Contains(string(r.stdout), "PhysLinkState:...................Disabled") {
		t.Fatalf("S2 port 1 not disabled:\n%s", r.stdout)
	}
	for _, host := range []string{"A", "B"} {
		for _, c := range [][]string{
			{"ibnetdiscover", "-p"}, {"ibnetdiscover", "-l"}, {"ibnetdiscover", "-m", "-s"},
			{"iblinkinfo"}, {"iblinkinfo", "-n", "2"}, {"ibhosts"}, {"dump_lfts"},
			{"ibqueryerrors", "-c"},
		} {
			diffToolIBExit(t, s, host, c[0], c[1:]...)
		}
	}
}

// TestNameMapOddLines: a node-name-map read as rdma-core's
// node_name_map.c reads it, compared through the tools that print names:
// comments, blank lines, a GUID alone and with "" (no name), one GUID
// twice (the first counts), an unquoted name with its trailing blanks, an
// unterminated quote, '#' right after the GUID, a '%', UTF-8, a line of
// 255 bytes (one fgets buffer).
func TestNameMapOddLines(t *testing.T) {
	const host = "A"
	s := diagSim(t, "../topologies/net.island")
	ibnd := cTool(t, s, host, "ibnetdiscover")
	var guids []string
	for _, m := range nodeGUIDLine.FindAllStringSubmatch(string(ibnd.stdout), -1) {
		guids = append(guids, "0x"+m[1])
	}
	if len(guids) < 5 {
		t.Fatalf("%d nodes in ibnetdiscover's output:\n%s", len(guids), ibnd.stdout)
	}
	long := guids[4] + " \"" + strings.Repeat("c", 251-len(guids[4])) + "\"\n"
	text := "# odd map\n\n   \t\n" + guids[0] + "\n" + guids[0] + " \"\"\n" +
		guids[0] + " \"first %s name\"\n" + guids[0] + " \"second\"\n" +
		guids[1] + " unquoted  name  \n" + guids[2] + " \"open quote\n" +
		"  " + guids[3] + "\t\"caf\xc3\xa9\"  # comment\n" + long + "0x1#\"hash\"\n"
	if n := len(long); n != 255 {
		t.Fatalf("the long line is %d bytes, want 255", n)
	}
	nm := filepath.Join(t.TempDir(), "odd.map")
	if err := os.WriteFile(nm, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"ibnetdiscover", "-p"}, {"iblinkinfo"}, {"iblinkinfo", "-l"}, {"ibqueryerrors", "-r"}, {"dump_lfts"},
		{"ibtracert", "-D", "0", "0,1,4,1"}, {"saquery", "SWIR"}, {"smpquery", "-D", "nodedesc", "0,1"},
	} {
		r := diffToolIBExit(t, s, host, c[0], append(c[1:], "--node-name-map", nm)...)
		if c[0] == "iblinkinfo" && !strings.Contains(string(r.stdout), "first %s name") {
			t.Errorf("iblinkinfo did not name %s by the map:\n%s", guids[0], r.stdout)
		}
	}
}
