package ibsimdiff

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

// The option matrix: each query tool's documented options (its -h and
// man page, infiniband-diags 44) that the other tests of this package
// do not compare on the command line, `ibscript TOOL ARGS` against the
// C tool by diffCommandLine, on net.mixed-3sw from Host1 (OpenSM on
// Core: nothing that sets or resets goes there).

const matrixTopology = "../topologies/net.mixed-3sw"

// matrixFabric is what a matrix's command lines name: LIDs and GUIDs
// (text as typed) of the fabric's nodes by description, and a node name
// map naming Leaf1.
type matrixFabric struct {
	s       *ibsimtest.Sim
	lid     map[string]string // the node's LID (port 0's on a switch, port 1's on a CA)
	lid2    map[string]string // a CA's port 2 LID
	guid    map[string]string // the node GUID
	pguid   map[string]string // port 1's GUID on a CA, port 0's on a switch
	nameMap string
}

// matrixSetup discovers s from Host1 and returns what the command lines
// name.
func matrixSetup(t *testing.T, s *ibsimtest.Sim) *matrixFabric {
	t.Helper()
	sess, _ := session(t, s, "Host1", nil, nil)
	f := &matrixFabric{s: s, lid: map[string]string{}, lid2: map[string]string{}, guid: map[string]string{}, pguid: map[string]string{}}
	for _, mp := range mixedPorts(t, sess) {
		n := mp.node
		f.guid[n.Desc] = fmt.Sprintf("%#x", n.GUID)
		switch {
		case n.Type == topo.Switch && mp.num == 0:
			f.lid[n.Desc] = itoa(mp.lid)
			f.pguid[n.Desc] = fmt.Sprintf("%#x", n.GUID)
		case n.Type != topo.Switch && mp.num == 1:
			f.lid[n.Desc] = itoa(mp.lid)
			f.pguid[n.Desc] = fmt.Sprintf("%#x", n.Ports[1].GUID)
		case n.Type != topo.Switch && mp.num == 2:
			f.lid2[n.Desc] = itoa(mp.lid)
		}
	}
	for _, d := range []string{"Core", "Leaf1", "Leaf2", "Host1", "Host2", "Host3"} {
		if f.lid[d] == "" {
			t.Fatalf("%s has no LID", d)
		}
	}
	f.nameMap = filepath.Join(t.TempDir(), "names")
	if err := os.WriteFile(f.nameMap, []byte(fmt.Sprintf("0x%016x \"mapped leaf\"\n", mustGUID(t, f.guid["Leaf1"]))), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func mustGUID(t *testing.T, s string) uint64 {
	t.Helper()
	var g uint64
	if _, err := fmt.Sscanf(s, "0x%x", &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// run compares each command line from Host1.
func (f *matrixFabric) run(t *testing.T, cmds [][]string) {
	t.Helper()
	for _, c := range cmds {
		diffCommandLine(t, f.s, "Host1", c)
	}
	t.Logf("%d command lines compared", len(cmds))
}

// TestOptMatrixSMPQuery: every smpquery op by its name, alias and
// another case, LID-, GUID-, directed- and combined-routed, -x, -e, -K,
// --node-name-map, and ports past the node's.
func TestOptMatrixSMPQuery(t *testing.T) {
	t.Parallel()
	f := matrixSetup(t, diagSim(t, matrixTopology))
	sw, ca, ca2 := f.lid["Leaf1"], f.lid["Host2"], f.lid2["Host2"]
	var cmds [][]string
	for _, op := range [][]string{{"NodeInfo", "NI", "nodeinfo"}, {"NodeDesc", "ND", "NODEDESC"}, {"PortInfo", "PI", "portinfo"},
		{"PortInfoExtended", "PIE", "portinfoextended"}, {"SwitchInfo", "SI", "switchinfo"}, {"PKeyTable", "PKeys", "pkeytable"},
		{"SL2VLTable", "SL2VL", "sl2vltable"}, {"VLArbitration", "VLArb", "vlarbitration"}, {"GUIDInfo", "GI", "guidinfo"},
		{"MlnxExtPortInfo", "MEPI", "mlnxextportinfo"}} {
		cmds = append(cmds, []string{"smpquery", op[0], sw}, []string{"smpquery", op[1], ca2}, []string{"smpquery", "-D", op[2], "0,1,6"})
	}
	for _, op := range []string{"PI", "SL2VL", "VLArb"} {
		cmds = append(cmds, []string{"smpquery", "-G", op, f.pguid["Leaf1"]}, []string{"smpquery", "-c", op, sw, "0,6"})
	}
	for _, op := range []string{"PI", "PIE", "PKeys", "SL2VL", "VLArb", "MEPI"} {
		// Leaf1 has 8 ports; Host2 2.
		cmds = append(cmds, []string{"smpquery", op, sw, "9"}, []string{"smpquery", op, ca, "3"})
	}
	cmds = append(cmds, []string{"smpquery", "PI", sw, "256"}, []string{"smpquery", "PKeys", sw, "8"},
		[]string{"smpquery", "-K", "PI", ca}, []string{"smpquery", "-K", "PI", sw, "0"}, []string{"smpquery", "-K", "PI", sw, "3"},
		[]string{"smpquery", "--show_keys", "-x", "PI", ca2, "2"}, []string{"smpquery", "-K", "NI", sw})
	cmds = append(cmds, []string{"smpquery", "-c", "nodeinfo", "0", "0,1"}, []string{"smpquery", "-c", "nodedesc", sw, "0"},
		[]string{"smpquery", "-c", "portinfo", f.lid["Core"], "0,1", "2"}, []string{"smpquery", "-c", "nodeinfo", sw},
		[]string{"smpquery", "--combined", "nodedesc", ca, "0,1"},
		[]string{"smpquery", "--node-name-map", f.nameMap, "nodedesc", sw}, []string{"smpquery", "--node-name-map", f.nameMap, "-D", "nodedesc", "0,1"},
		[]string{"smpquery", "--node-name-map", f.nameMap, "nodeinfo", sw}, []string{"smpquery", "--node-name-map", f.nameMap, "-G", "ND", f.pguid["Leaf1"]},
		[]string{"smpquery", "-e", "nodeinfo", sw}, []string{"smpquery", "-x", "portinfo", ca, "1"}, []string{"smpquery", "-L", "GI", f.lid["Core"]},
		[]string{"smpquery", "-s", f.lid["Core"], "-G", "nodedesc", f.pguid["Host2"]},
		[]string{"smpquery", "-x", "portinfoextended", sw, "1"}, []string{"smpquery", "nodeinfo"}, []string{"smpquery"},
		[]string{"smpquery", "pi", sw, "1", "extra"}, []string{"smpquery", "nodeinfo", sw, "extra"})
	cmds = append(cmds, []string{"smpquery", "-D", "-x", "PI", "0,1,6", "1"}, []string{"smpquery", "-x", "PI", ca, "0"},
		[]string{"smpquery", "--node-name-map", f.nameMap, "-c", "ND", sw, "0,6"})
	f.run(t, cmds)
}

// TestOptMatrixSAQuery: every saquery record type with and without its
// arguments, every selection option, the name lookups (-L -l -G -O -U
// -D), -K, the PathRecord and MCMemberRecord options and the GID forms.
func TestOptMatrixSAQuery(t *testing.T) {
	t.Parallel()
	f := matrixSetup(t, diagSim(t, matrixTopology))
	sw, ca, ca2 := f.lid["Leaf1"], f.lid["Host2"], f.lid["Host3"]
	gid := func(d string) string { return "fe80::" + colonGUID(mustGUID(t, f.pguid[d])) }
	var cmds [][]string
	for _, r := range [][]string{{"ClassPortInfo", "CPI"}, {"NodeRecord", "NR"}, {"PortInfoRecord", "PIR"}, {"SL2VLTableRecord", "SL2VL"},
		{"PKeyTableRecord", "PKTR"}, {"VLArbitrationTableRecord", "VLAR"}, {"InformInfoRecord", "IIR"}, {"LinkRecord", "LR"},
		{"ServiceRecord", "SR"}, {"PathRecord", "PR"}, {"MCMemberRecord", "MCMR"}, {"LFTRecord", "LFTR"}, {"MFTRecord", "MFTR"},
		{"GUIDInfoRecord", "GIR"}, {"SwitchInfoRecord", "SWIR"}, {"SMInfoRecord", "SMIR"}} {
		if r[1] == "SL2VL" || r[1] == "PR" {
			// More records than one MAD holds: ibsim's OpenSM sends the
			// first MAD alone, and saquery prints its stale buffer
			// after them (docs/diag.md).
			continue
		}
		cmds = append(cmds, []string{"saquery", r[len(cmds)%2]})
	}
	cmds = append(cmds,
		[]string{"saquery", "NR", sw}, []string{"saquery", "NR", "Host2"}, []string{"saquery", "NR", f.guid["Host2"]},
		[]string{"saquery", "PIR", ca + "/1"}, []string{"saquery", "PIR", sw + "/6"}, []string{"saquery", "PIR", "/1"},
		[]string{"saquery", "PIR", sw + "//2"}, []string{"saquery", "SL2VL", sw + "/1/6"}, []string{"saquery", "SL2VL", sw + "//6"},
		[]string{"saquery", "PKTR", ca + "/1/0"}, []string{"saquery", "PKTR", sw + "/0"}, []string{"saquery", "VLAR", ca + "/1/1"},
		[]string{"saquery", "VLAR", sw + "/6"}, []string{"saquery", "LR", sw + "/6"}, []string{"saquery", "LR", sw + "/6", f.lid["Leaf2"] + "/6"},
		[]string{"saquery", "LR", "", f.lid["Core"] + "/1"}, []string{"saquery", "LFTR", sw}, []string{"saquery", "LFTR", sw + "/1"},
		[]string{"saquery", "MFTR", "0xc000"}, []string{"saquery", "MFTR", "0xc000/0/0"}, []string{"saquery", "MFTR", "/0"},
		[]string{"saquery", "GIR", ca}, []string{"saquery", "GIR", ca + "/0"}, []string{"saquery", "SWIR", f.lid["Core"]},
		[]string{"saquery", "SMIR", f.lid["Core"]}, []string{"saquery", "IIR", gid("Host1")},
		[]string{"saquery", "-N"}, []string{"saquery", "-N", "Host2"}, []string{"saquery", "-N", ca},
		[]string{"saquery", "-L", "Host2"}, []string{"saquery", "-l", "Host2"}, []string{"saquery", "-G", "Host2"},
		[]string{"saquery", "-O", ca}, []string{"saquery", "-O", sw}, []string{"saquery", "-U", f.pguid["Host2"]}, []string{"saquery", "-U", f.guid["Leaf1"]},
		[]string{"saquery", "-L", "Leaf1"}, []string{"saquery", "-l", "nosuch"}, []string{"saquery", "-D"}, []string{"saquery", "-D", "Host3"},
		[]string{"saquery", "-S"}, []string{"saquery", "-x"}, []string{"saquery", "-x", sw}, []string{"saquery", "-s"},
		[]string{"saquery", "-g"}, []string{"saquery", "-m"}, []string{"saquery", "-m", "0xc001"}, []string{"saquery", "-c"}, []string{"saquery", "-I"},
		[]string{"saquery", "-e", "-c"}, []string{"saquery", "-K", "PIR", ca + "/1"}, []string{"saquery", "-K", "SR"},
		[]string{"saquery", "--show_keys", "IIR"}, []string{"saquery", "-K", "-c"}, []string{"saquery", "-K", "SMIR"}, []string{"saquery", "-K", "-s"},
		[]string{"saquery", "--node-name-map", f.nameMap}, []string{"saquery", "--node-name-map", f.nameMap, "-N", sw},
		[]string{"saquery", "--node-name-map", f.nameMap, "-O", sw}, []string{"saquery", "--node-name-map", f.nameMap, "-x"},
		[]string{"saquery", "--node-name-map", f.nameMap, "-s"}, []string{"saquery", "--node-name-map", f.nameMap, "-L", "mapped leaf"},
		[]string{"saquery", "--src-to-dst", ca + ":" + ca2}, []string{"saquery", "--src-to-dst", "Host2:Host3"},
		[]string{"saquery", "--src-to-dst", "Host2:" + sw}, []string{"saquery", "--src-to-dst", "nosuch:Host3"},
		[]string{"saquery", "--sgid-to-dgid", gid("Host2") + "-" + gid("Host3")}, []string{"saquery", "--sgid-to-dgid", gid("Host2")},
		[]string{"saquery", "PR", "--sgid", gid("Host2"), "--dgid", gid("Host3")}, []string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "-n", "2"},
		[]string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "-F", "0x12", "--service_id", "0x1000"},
		[]string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "--pkey", "0x7fff"}, []string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "-M", "5"},
		[]string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "-R", "0x86"}, []string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "--sl", "3"},
		[]string{"saquery", "MCMR", "--mgid", "ff12:401b:ffff::1"}, []string{"saquery", "MCMR", "--gid", gid("Host1")},
		[]string{"saquery", "MCMR", "--scope", "2"}, []string{"saquery", "MCMR", "-X", "0"}, []string{"saquery", "MCMR", "-q", "0"},
		[]string{"saquery", "MCMR", "-M", "0x84", "-R", "0x83", "-T", "0", "-F", "0", "-H", "0", "--pkt_lifetime", "0"},
		[]string{"saquery", "-m", "--mlid", "0xc000"})
	cmds = append(cmds, []string{"saquery", "-p", "--src-to-dst", "Host2:Host3"}, []string{"saquery", "NR", "Leaf1"},
		[]string{"saquery", "-L", "Host1"}, []string{"saquery", "-l", "Host1"}, []string{"saquery", "-G", "Leaf1"},
		[]string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "-Q", "1"}, []string{"saquery", "PR", "--slid", ca, "--dlid", ca2, "-r", "0"})
	for _, c := range [][]string{{"-U", f.guid["Leaf1"]}, {"-g"}, {"-m"}, {"NR", sw}, {"-D"}, {"SWIR"}, {"LR", sw}, {"-I"}, {"-x", sw}} {
		cmds = append(cmds, append([]string{"saquery", "--node-name-map", f.nameMap}, c...))
	}
	f.run(t, cmds)
}

// colonGUID is a GUID as the low half of an IPv6 address.
func colonGUID(g uint64) string {
	return fmt.Sprintf("%x:%x:%x:%x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// TestOptMatrixPerfQuery: perfquery's per-attribute options, the
// samples control, the resets and their masks, on the ports of a leaf
// switch and a CA that are not OpenSM's, on a private fabric (the
// resets change counters).
func TestOptMatrixPerfQuery(t *testing.T) {
	t.Parallel()
	f := matrixSetup(t, privateInit(t, matrixTopology))
	sw, ca := f.lid["Leaf1"], f.lid["Host2"]
	var cmds [][]string
	for _, o := range []string{"-X", "-S", "-D", "-E", "-T", "-c", "--oprcvcounters", "--flowctlcounters", "--vloppackets", "--vlopdata",
		"--vlxmitflowctlerrors", "--vlxmitcounters", "--swportvlcong", "--rcvcc", "--slrcvfecn", "--slrcvbecn", "--xmitcc", "--vlxmittimecc"} {
		cmds = append(cmds, []string{"perfquery", o, sw, "1"}, []string{"perfquery", o, ca, "1"}, []string{"perfquery", o, "-a", sw},
			[]string{"perfquery", o, "-l", sw, "1-2"}, []string{"perfquery", o}, []string{"perfquery", "-x", o, ca, "1"})
	}
	cmds = append(cmds, []string{"perfquery", "-e", sw, "1"}, []string{"perfquery", "-x", "-l", sw}, []string{"perfquery", "-x", "-a", sw, "1,3"},
		[]string{"perfquery", "-G", f.pguid["Leaf1"], "2"}, []string{"perfquery", "-G", "-x", f.pguid["Host2"]},
		[]string{"perfquery", "-s", f.lid["Core"], "-G", f.pguid["Host2"], "1"}, []string{"perfquery", "-L", sw, "255"},
		[]string{"perfquery", sw, "9"}, []string{"perfquery", ca, "3"}, []string{"perfquery", sw, "0"}, []string{"perfquery", "-a", sw, "2-1"},
		[]string{"perfquery", "-l", sw, "1,9"}, []string{"perfquery", "-R", sw, "1"}, []string{"perfquery", "-R", "-x", sw, "2"},
		[]string{"perfquery", "-R", sw, "3", "0x0fff"}, []string{"perfquery", "-R", sw, "3", "0xf000"}, []string{"perfquery", "-R", "-a", sw},
		[]string{"perfquery", "-R", "-l", sw, "1-3"}, []string{"perfquery", "-R", ca, "1"}, []string{"perfquery", "-R"},
		[]string{"perfquery", "-R", "-X", ca, "1"}, []string{"perfquery", "-R", "-E", ca, "1"}, []string{"perfquery", "-R", "-c", ca, "1"})
	cmds = append(cmds, []string{"perfquery", "-x", "-a", ca}, []string{"perfquery", "-l", ca}, []string{"perfquery", "-a", "-l", sw, "1-3"})
	f.run(t, cmds)
}

// TestOptMatrixAddrTools: sminfo, smpdump and ibaddr by each address
// form and option (sminfo's Set only to a CA: a modifier makes it one),
// ibportstate's queries with -K.
func TestOptMatrixAddrTools(t *testing.T) {
	t.Parallel()
	f := matrixSetup(t, diagSim(t, matrixTopology))
	sw, ca, core := f.lid["Leaf1"], f.lid["Host2"], f.lid["Core"]
	f.run(t, [][]string{
		{"sminfo", core}, {"sminfo", "-L", core}, {"sminfo", "-G", f.pguid["Core"]}, {"sminfo", "-D", "0,1"}, {"sminfo", core, "0"},
		// A modifier makes sminfo a Set: never to OpenSM's Core.
		{"sminfo", "-p", "3", "-s", "2", ca, "1"}, {"sminfo", "-e"}, {"sminfo", ca}, {"sminfo", "-D", "0,1,6"}, {"sminfo", "-G", f.pguid["Host2"]}, {"sminfo", "-s", "3"},
		{"smpdump", sw, "0x10"}, {"smpdump", "-s", sw, "0x10"}, {"smpdump", "-L", ca, "0x15", "1"}, {"smpdump", "-D", "0,1,6", "0x11"},
		{"smpdump", "-s", "-D", "0,1", "0x10"}, {"smpdump", sw, "0x12"}, {"smpdump", sw, "0x16", "1"}, {"smpdump", sw, "0x17", "0x00010001"},
		{"smpdump", sw, "0x18", "0"}, {"smpdump", sw, "0x19", "0"}, {"smpdump", ca, "0x14"}, {"smpdump", sw, "0x20"}, {"smpdump", sw, "0xffff"},
		{"smpdump", "-e", sw, "0x11"}, {"smpdump", sw, "17"}, {"smpdump", sw}, {"smpdump"},
		{"ibaddr", "-G", f.pguid["Host2"]}, {"ibaddr", "-G", f.pguid["Leaf1"]}, {"ibaddr", "-g", sw}, {"ibaddr", "-l", sw}, {"ibaddr", "-L", sw},
		{"ibaddr", "-g", "-l", ca}, {"ibaddr", "-gL", ca}, {"ibaddr", "-lL", ca}, {"ibaddr", "-D", "0,1,6"}, {"ibaddr", "-D", "-g", "0,1"},
		{"ibaddr", "-s", core, "-G", f.pguid["Host3"]}, {"ibaddr", "-e", ca}, {"ibaddr", "-L"}, {"ibaddr", f.lid2["Host2"]},
		{"ibaddr", "-G", f.guid["Leaf1"]},
		{"ibportstate", "-K", ca, "1"}, {"ibportstate", "-K", sw, "0"}, {"ibportstate", "-K", "-D", "0,1", "3"}, {"ibportstate", "--show_keys", "-D", "0", "1"},
	})
}

// TestOptMatrixRouteTools: ibroute's -a -n -M and their mixtures on a
// switch by each address form, and ibtracert's -m -f -n and
// --node-name-map between CAs and switches.
func TestOptMatrixRouteTools(t *testing.T) {
	t.Parallel()
	f := matrixSetup(t, diagSim(t, matrixTopology))
	sw, ca, ca2, core := f.lid["Leaf1"], f.lid["Host2"], f.lid["Host3"], f.lid["Core"]
	cmds := [][]string{
		{"ibroute", "-a", "-n", sw}, {"ibroute", "-M", "-a", sw}, {"ibroute", "-M", "-n", sw}, {"ibroute", "-M", "-a", "-n", sw},
		{"ibroute", "-M", sw, "0xc000", "0xc000"}, {"ibroute", "-M", sw, "0xc001"}, {"ibroute", "-a", sw, "2", "5"},
		{"ibroute", "-n", sw, "0x3"}, {"ibroute", "--node-name-map", f.nameMap, sw}, {"ibroute", "--node-name-map", f.nameMap, core},
		{"ibroute", "--node-name-map", f.nameMap, "-M", sw}, {"ibroute", "-L", core}, {"ibroute", "-G", f.guid["Leaf2"]},
		{"ibroute", "-D", "0,1,6"}, {"ibroute", "-M", "-D", "0"}, {"ibroute", "-s", core, "-G", f.guid["Leaf1"]}, {"ibroute", "-e", sw},
		{"ibroute"}, {"ibroute", "-M", ca}, {"ibroute", sw, "0"}, {"ibroute", sw, "5", "2"}, {"ibroute", "-M", sw, "0xc000", "0xbfff"},
		{"ibroute", "-a", sw, "0xbfff", "0xc002"},
	}
	for _, pair := range [][2]string{{ca, ca2}, {ca, sw}, {sw, ca2}, {core, sw}, {ca, f.lid2["Host2"]}, {f.lid["Host1"], ca}} {
		cmds = append(cmds, []string{"ibtracert", pair[0], pair[1]}, []string{"ibtracert", "-n", pair[0], pair[1]},
			[]string{"ibtracert", "-f", pair[0], pair[1]}, []string{"ibtracert", "-m", "0xc000", pair[0], pair[1]},
			[]string{"ibtracert", "-n", "-m", "0xc000", pair[0], pair[1]}, []string{"ibtracert", "--node-name-map", f.nameMap, pair[0], pair[1]},
			[]string{"ibtracert", "--node-name-map", f.nameMap, "-m", "0xc000", pair[0], pair[1]})
	}
	cmds = append(cmds, []string{"ibtracert", "-m", "0xc001", ca, ca2}, []string{"ibtracert", "-m", "0xc000", "-f", ca, ca2},
		[]string{"ibtracert", "-G", "-m", "0xc000", f.pguid["Host2"], f.pguid["Host3"]}, []string{"ibtracert", "-e", ca, ca2},
		[]string{"ibtracert", "-s", core, "-G", f.pguid["Host2"], f.pguid["Host3"]}, []string{"ibtracert", "-m", "0x10", ca, ca2},
		[]string{"ibtracert", "-m", "0xc000", ca}, []string{"ibtracert", ca})
	cmds = append(cmds, []string{"ibtracert", "-n", "--node-name-map", f.nameMap, ca, ca2}, []string{"ibtracert", "-f", "-n", sw, ca2},
		[]string{"ibroute", "-n", "--node-name-map", f.nameMap, core}, []string{"ibaddr", "-l", "-G", f.pguid["Leaf1"]})
	f.run(t, cmds)
}
