package ibsimdiff

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// routeTopologies are the fabrics the routing tools are compared on, with
// the node each side runs from.
var routeTopologies = []struct{ path, host string }{
	{"../topologies/net.mixed-router", "HcaX"},
	{"../topologies/net.mixed-3sw", "Host1"},
	{"../topologies/net.route-ring", "h2"},
	{"../topologies/net.chain36", "Multi"},
}

// runExit runs a C tool under umad2sim and returns its stdout, stderr and
// exit status (a failed exit is not a test failure here).
func runExit(t *testing.T, s *ibsimtest.Sim, node, tool string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	cmd, err := s.Command(t.Context(), node, tool, args...)
	if err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return o.Bytes(), e.Bytes(), code
}

// routeSim starts (or shares) ibsim with OpenSM on a routing topology and
// attaches a session to host.
func routeSim(t *testing.T, path, host string) (*ibsimtest.Sim, *engine.Session) {
	t.Helper()
	ibsimtest.Require(t)
	s := shared.Get(t, path, &ibsimtest.Options{InitPorts: initPorts(path)})
	sess, _ := session(t, s, host, nil, nil)
	return s, sess
}

// The C tools name themselves by argv[0] in their fatal errors: the
// harness runs them by absolute path.
const (
	ibroutePath   = "/usr/sbin/ibroute"
	ibtracertPath = "/usr/sbin/ibtracert"
)

// routeSimOwn is routeSim on an ibsim and OpenSM of the test's own: the
// tests that need OpenSM's SA answering do not share it with tests that
// may leave it unable to (in this package, TestCCMatchesIBCCQuery does,
// on the mixed fabrics).
func routeSimOwn(t *testing.T, path, host string) (*ibsimtest.Sim, *engine.Session) {
	t.Helper()
	s := privateInit(t, path)
	sess, _ := session(t, s, host, nil, nil)
	return s, sess
}

func topoName(p string) string { return filepath.Base(p) }

// eachRouteTopology runs fn on each of routeTopologies, a parallel
// subtest each (one ibsim per topology: the topologies run side by side,
// parallelTopologies), on the topology's ibsim (routeSim's; with own, one
// of the test's own: routeSimOwn) with a session from its host.
func eachRouteTopology(t *testing.T, own bool, fn func(t *testing.T, host string, s *ibsimtest.Sim, sess *engine.Session)) {
	open := routeSim
	if own {
		open = routeSimOwn
	}
	for _, rt := range routeTopologies {
		t.Run(topoName(rt.path), func(t *testing.T) {
			t.Parallel()
			s, sess := open(t, rt.path, rt.host)
			fn(t, rt.host, s, sess)
		})
	}
}

// privateDiscovered is an ibsim and OpenSM of the test's own on the
// topology at path (privateSM: the test changes its tables), a session
// from host, and its discovery.
func privateDiscovered(t *testing.T, path, host string) (*ibsimtest.Sim, *engine.Session, *engine.Discovery) {
	t.Helper()
	s := privateSM(t, path)
	sess, _ := session(t, s, host, nil, nil)
	d, err := sess.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, sess, d
}

func itoa(n uint16) string { return strconv.Itoa(int(n)) }

// TestIBRouteMatchesCTool: diag.IBRoute prints, for every switch of each
// routing topology, what ibroute prints (unicast, -a, -n, a LID range,
// multicast with -M, -M -n, -M -a and an MLID range, by LID and by
// directed route), and refuses a CA with ibroute's error.
func TestIBRouteMatchesCTool(t *testing.T) {
	eachRouteTopology(t, false, func(t *testing.T, host string, s *ibsimtest.Sim, sess *engine.Session) {
		ctx := t.Context()
		d, err := sess.Discover(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range d.Fabric.Nodes {
			if n.Type != topo.Switch {
				continue
			}
			lid := n.Ports[0].LID
			path, _ := d.Path(n.GUID)
			dr := drArg(path)
			cases := []struct {
				args []string
				o    diag.RouteOptions
				dr   bool
			}{
				{[]string{itoa(lid)}, diag.RouteOptions{}, false},
				{[]string{"-a", itoa(lid)}, diag.RouteOptions{All: true}, false},
				{[]string{"-n", itoa(lid)}, diag.RouteOptions{NoDests: true}, false},
				{[]string{itoa(lid), "2", "0x5"}, diag.RouteOptions{StartLID: 2, EndLID: 5}, false},
				{[]string{"-a", itoa(lid), "3"}, diag.RouteOptions{All: true, StartLID: 3}, false},
				{[]string{"-M", itoa(lid)}, diag.RouteOptions{Multicast: true}, false},
				{[]string{"-M", "-n", itoa(lid)}, diag.RouteOptions{Multicast: true, NoDests: true}, false},
				{[]string{"-M", "-a", itoa(lid), "0xc000", "0xc003"}, diag.RouteOptions{Multicast: true, All: true, StartLID: 0xc000, EndLID: 0xc003}, false},
				{[]string{"-M", "-a", "-n", itoa(lid), "0xc01e", "0xc021"}, diag.RouteOptions{Multicast: true, All: true, NoDests: true, StartLID: 0xc01e, EndLID: 0xc021}, false},
				{[]string{"-D", dr}, diag.RouteOptions{}, true},
			}
			for _, c := range cases {
				var want []byte
				var got bytes.Buffer
				for try := 1; ; try++ {
					var code int
					want, _, code = runExit(t, s, host, "ibroute", c.args...)
					if code != 0 || !bytes.Contains(want, []byte("ids dumped \n")) {
						t.Fatalf("ibroute %v: exit %d", c.args, code)
					}
					tg, addr := engine.LID(lid), diag.LIDAddress(lid)
					if c.dr {
						tg, addr = engine.Target{Kind: engine.ByDR, Path: path}, diag.DRAddress(path, 0xffff, 0xffff)
					}
					o := c.o
					ft, err := diag.IBRoute(ctx, &diag.Env{Session: sess}, tg, addr, &o)
					if err != nil {
						t.Fatalf("ibroute %v: %v", c.args, err)
					}
					got.Reset()
					if err := diag.WriteIBRoute(&got, ft); err != nil {
						t.Fatal(err)
					}
					// ibroute names each LID's node with a NodeInfo
					// query: one that timed out on the loaded machine
					// prints "(unknown node and type)". Asked again.
					if got.String() == string(want) || try == loadTries {
						break
					}
					t.Logf("ibroute %v: differs; a query may have timed out on the loaded machine: both run again", c.args)
				}
				if got.String() != string(want) {
					t.Errorf("ibroute %v on %q:\n%s", c.args, n.Desc, lineDiff(string(want), got.String()))
				}
			}
		}
		// A CA is refused, as ibroute refuses it.
		checkedCA := false
		for _, n := range d.Fabric.Nodes {
			if n.Type != topo.CA {
				continue
			}
			p := n.Ports[1]
			if p == nil || p.LID == 0 {
				continue
			}
			want, _, code := runExit(t, s, host, "ibroute", itoa(p.LID))
			_, err := diag.IBRoute(ctx, &diag.Env{Session: sess}, engine.LID(p.LID), diag.LIDAddress(p.LID), nil)
			var got bytes.Buffer
			if err != nil {
				diag.WriteIBExit(&got, ibroutePath, "dump tables: "+err.Error())
			}
			if code != 255 || got.String() != string(want) || !errors.Is(err, diag.ErrNotSwitch) {
				t.Errorf("ibroute on CA LID %d: C exit %d %q; diag %v", p.LID, code, want, err)
			}
			checkedCA = true
			break
		}
		if !checkedCA {
			t.Error("no CA with a LID to refuse")
		}
	})
}

// TestDumpFTsMatchesCTool: diag.DumpFTs prints what dump_fts, dump_lfts
// and dump_mfts print on each routing topology.
func TestDumpFTsMatchesCTool(t *testing.T) {
	eachRouteTopology(t, false, func(t *testing.T, host string, s *ibsimtest.Sim, sess *engine.Session) {
		ctx := t.Context()
		cases := []struct {
			tool, script string
			args         []string
			o            diag.RouteOptions
		}{
			{"dump_fts", "", nil, diag.RouteOptions{}},
			{"dump_fts", "", []string{"-a"}, diag.RouteOptions{All: true}},
			{"dump_fts", "", []string{"-n", "2", "4"}, diag.RouteOptions{NoDests: true, StartLID: 2, EndLID: 4}},
			{"dump_fts", "", []string{"-M", "-a", "0xc000", "0xc002"}, diag.RouteOptions{Multicast: true, All: true, StartLID: 0xc000, EndLID: 0xc002}},
			{"dump_lfts", "dump_lfts", nil, diag.RouteOptions{}},
			{"dump_lfts", "dump_lfts", []string{"-n"}, diag.RouteOptions{NoDests: true}},
			{"dump_mfts", "dump_mfts", nil, diag.RouteOptions{Multicast: true}},
			{"dump_mfts", "dump_mfts", []string{"-n"}, diag.RouteOptions{Multicast: true, NoDests: true}},
		}
		for _, c := range cases {
			want, _, code := runExit(t, s, host, c.tool, c.args...)
			if code != 0 || bytes.Count(want, []byte("ids dumped \n")) < 2 {
				t.Fatalf("%s %v: exit %d", c.tool, c.args, code)
			}
			o := c.o
			fts, err := diag.DumpFTs(ctx, &diag.Env{Session: sess}, nil, &o)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := diag.WriteDumpFTs(&got, fts, c.script); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("%s %v:\n%s", c.tool, c.args, lineDiff(string(want), got.String()))
			}
		}
	})
}

// drArg is a directed route as the C tools' -D takes it.
func drArg(path []uint8) string {
	s := ""
	for i, p := range path {
		if i > 0 {
			s += ","
		}
		s += strconv.Itoa(int(p))
	}
	return s
}

// endLIDs are the LIDs of a discovered fabric's ports: every CA and
// router port with one, and each switch's port 0.
func endLIDs(t *testing.T, sess *engine.Session) []uint16 {
	t.Helper()
	d, err := sess.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var lids []uint16
	for _, n := range d.Fabric.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 && (n.Type != topo.Switch || p.Num == 0) {
				lids = append(lids, p.LID)
			}
		}
	}
	return lids
}

// TestTracertMatchesCTool: diag.Tracert prints what ibtracert prints, and
// fails where it fails (exit 255, the same stdout before the failure),
// for every pair of LIDs of each routing topology (switches, CA ports,
// routers' ports, which OpenSM leaves in Init: a bad port state), in the
// full and the -n format, plus LIDs no port has.
func TestTracertMatchesCTool(t *testing.T) {
	eachRouteTopology(t, false, func(t *testing.T, host string, s *ibsimtest.Sim, sess *engine.Session) {
		lids := endLIDs(t, sess)
		maxLID := uint16(0)
		for _, l := range lids {
			maxLID = max(maxLID, l)
		}
		type pair struct{ src, dst uint16 }
		var pairs []pair
		for _, a := range lids {
			for _, b := range lids {
				pairs = append(pairs, pair{a, b})
			}
		}
		pairs = append(pairs, pair{lids[0], maxLID + 3}, pair{maxLID + 3, lids[0]})
		failed, ok := 0, 0
		for i, p := range pairs {
			for _, brief := range []bool{false, true} {
				if brief && i%5 != 0 {
					continue
				}
				args := []string{itoa(p.src), itoa(p.dst)}
				if brief {
					args = append([]string{"-n"}, args...)
				}
				if _, err := diffTracert(t, s, host, args, &diag.Env{Session: sess}, p.src, p.dst, &diag.TracertOptions{NoInfo: brief}, nil); err != nil {
					failed++
				} else {
					ok++
				}
			}
		}
		if ok == 0 || failed == 0 {
			t.Errorf("%d traces found, %d failed: both kinds expected", ok, failed)
		}
	})
}

// TestSAQueryMatchesCTool: diag.SAQuery prints what saquery prints, with
// the same exit status, for each record option and selector on each
// routing topology. Through ibsim (no RMPP) a multi-record answer
// arrives cut to its first MAD: both sides print the records that fit in
// it, ibscript warns (Warnings).
func TestSAQueryMatchesCTool(t *testing.T) {
	eachRouteTopology(t, true, func(t *testing.T, host string, s *ibsimtest.Sim, sess *engine.Session) {
		ctx := t.Context()
		d, err := sess.Discover(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var swLID, caLID, ca2LID uint16
		var caName, swName string
		var caGUID uint64
		prefix := sess.Port().GIDPrefix
		var gids []string
		for _, n := range d.Fabric.Nodes {
			switch {
			case n.Type == topo.Switch && swLID == 0:
				swLID, swName = n.Ports[0].LID, n.Desc
			case n.Type == topo.CA && n.Ports[1] != nil && n.Ports[1].LID != 0:
				if caLID == 0 {
					caLID, caName, caGUID = n.Ports[1].LID, n.Desc, n.Ports[1].GUID
				} else if ca2LID == 0 {
					ca2LID = n.Ports[1].LID
				}
				gids = append(gids, inetGID(prefix, n.Ports[1].GUID))
			}
		}
		// Through ibsim the NodeRecord table holds its first record
		// only: name lookups find that node's name and no other.
		first, _ := sess.SAGetTable(ctx, sa.NodeRecord(), 0, nil)
		if len(first) == 0 {
			t.Fatal("no NodeRecord")
		}
		var nr sa.NodeRec
		if err := nr.UnmarshalBinary(first[0]); err != nil {
			t.Fatal(err)
		}
		firstName, firstLID := nr.Description(), itoa(nr.LID)
		cases := [][]string{
			{firstName}, {"NR", firstName}, {"-L", firstName}, {"-l", firstName}, {"-G", firstName}, {"-N", firstName},
			{"-O", firstLID}, {"-U", "0x" + strconv.FormatUint(nr.NodeInfo.PortGUID, 16)}, {"--src-to-dst", firstName + ":" + itoa(caLID)},
			{"NR", itoa(caLID)}, {"NodeRecord", itoa(swLID)}, {itoa(caLID)}, {swName}, {caName},
			{"-O", itoa(caLID)}, {"-U", strconv.FormatUint(caGUID, 10)}, {"-U", "0x" + strconv.FormatUint(caGUID, 16)},
			{"-c"}, {"CPI"}, {"-s"}, {"-g"}, {"-m"}, {"-m", "0xc000"}, {"-m", "0x1c000"}, {"MCMR"}, {"-S"}, {"SR"}, {"IIR"}, {"SMIR"}, {"SMIR", itoa(d.Fabric.Origin.Node.Ports[1].LID)},
			{"SWIR", itoa(swLID)}, {"SWIR"}, {"LFTR", itoa(swLID)}, {"LFTR", itoa(swLID) + "/0"}, {"MFTR", itoa(swLID)}, {"MFTR", itoa(swLID) + "/0/0"},
			{"GIR", itoa(caLID)}, {"GIR", itoa(caLID) + "/0"}, {"SL2VL", itoa(caLID)}, {"SL2VL", itoa(swLID) + "/1/2"}, {"VLAR", itoa(caLID)}, {"VLAR", itoa(swLID) + "/1/1"},
			{"PKTR", itoa(caLID)}, {"PKTR", itoa(swLID) + "/1/0"}, {"-x", itoa(caLID)}, {"LR", itoa(swLID) + "/1"}, {"LR", itoa(swLID), itoa(caLID)},
			{"-p", "--src-to-dst", itoa(caLID) + ":" + itoa(ca2LID)}, {"--src-to-dst", caName + ":" + itoa(swLID)}, {"PR", "--slid", itoa(caLID), "--dlid", itoa(ca2LID)},
			{"--sgid-to-dgid", gids[0] + "-" + gids[1]}, {"-p", "--sgid", gids[1], "--dgid", gids[0], "--numb_path", "1"},
			{"PIR", itoa(caLID)}, {"PIR", itoa(swLID) + "/1"}, {"PortInfoRecord", itoa(swLID) + "/0"}, {"PIR", itoa(swLID) + "//0"}, {"PIR"},
			{"NR", "no-such-node"}, {"NR", "0x10000"}, {"-L", caName}, {"-l", caName}, {"-G", caName}, {"-D"},
		}
		for _, args := range cases {
			var (
				want, stderr  []byte
				code, gotCode int
				got           bytes.Buffer
				err           error
				res           *diag.SAResult
			)
			for try := 1; ; try++ {
				want, stderr, code = runExit(t, s, host, "saquery", args...)
				o, perr := saqueryOptions(args)
				if perr != nil {
					t.Fatalf("saquery %q: %v", args, perr)
				}
				res, err = diag.SAQuery(ctx, &diag.Env{Session: sess}, o)
				got.Reset()
				if werr := diag.WriteSAQuery(&got, res); werr != nil {
					t.Fatal(werr)
				}
				gotCode = res.Exit
				if err != nil && gotCode == 0 {
					t.Fatalf("saquery %q: error %v with exit 0", args, err)
				}
				// saquery's one try of 1 s (exit 110, "Connection
				// timed out") can miss OpenSM on the loaded machine
				// where the engine's retries did not: asked again.
				if (code == gotCode && got.String() == string(want)) || try == loadTries || (code == 0 && gotCode == 0) {
					break
				}
				t.Logf("saquery %q: exit %d, diag %d: one side may have timed out on the loaded machine: both run again", args, code, gotCode)
			}
			t.Logf("saquery %q: exit %d, %d bytes, %d warnings", args, code, len(want), len(res.Warnings))
			if code != gotCode || got.String() != string(want) {
				t.Errorf("saquery %q: exit %d (stderr %q), diag %d (%v):\n%s", args, code, stderr, gotCode, err, lineDiff(string(want), got.String()))
			}
		}
	})
}

// inetGID is a port GID in IPv6 text.
func inetGID(prefix, guid uint64) string {
	var b [16]byte
	for i := range 8 {
		b[i], b[8+i] = byte(prefix>>(56-8*i)), byte(guid>>(56-8*i))
	}
	return netip.AddrFrom16(b).String()
}

// saqueryOptions reads the saquery options the differential cases use
// (the command line parser is cmd/ibscript's).
func saqueryOptions(args []string) (*diag.SAQueryOptions, error) {
	o := diag.NewSAQueryOptions()
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() string { i++; return args[i] }
		switch a {
		case "-N":
			o.Command = diag.SANodeRecords
		case "-O":
			o.Command, o.NodePrint = diag.SANodeRecords, diag.SANodeNameOfLID
		case "-U":
			o.Command, o.NodePrint = diag.SANodeRecords, diag.SANodeNameOfGUID
		case "-L":
			o.Command, o.NodePrint = diag.SANodeRecords, diag.SANodeLIDOnly
		case "-l":
			o.Command, o.NodePrint = diag.SANodeRecords, diag.SANodeUniqueLID
		case "-G":
			o.Command, o.NodePrint = diag.SANodeRecords, diag.SANodeGUIDOnly
		case "-D":
			o.Command, o.NodePrint = diag.SANodeRecords, diag.SANodeAllDesc
		case "-c":
			o.Command = diag.SAClassPortInfo
		case "-s":
			o.Command = diag.SAIsSM
		case "-g":
			o.Command = diag.SAMCGroups
		case "-m":
			o.Command = diag.SAMCMembers
		case "-S":
			o.QueryType = "ServiceRecord"
		case "-I":
			o.QueryType = "InformInfoRecord"
		case "-x":
			o.QueryType = "LinkRecord"
		case "-p":
			o.QueryType = "PathRecord"
		case "--src-to-dst":
			o.SrcToDst = val()
		case "--sgid-to-dgid":
			o.SGIDToDGID = val()
		case "--slid", "--dlid":
			v, err := strconv.ParseUint(val(), 0, 16)
			if err != nil {
				return nil, err
			}
			if a == "--slid" {
				o.SLID = uint16(v)
			} else {
				o.DLID = uint16(v)
			}
		case "--sgid", "--dgid":
			g, err := netip.ParseAddr(val())
			if err != nil {
				return nil, err
			}
			if a == "--sgid" {
				o.SGID = g.As16()
			} else {
				o.DGID = g.As16()
			}
		case "--numb_path":
			v, err := strconv.Atoi(val())
			if err != nil {
				return nil, err
			}
			o.NumbPath = v
		default:
			if strings.HasPrefix(a, "-") {
				return nil, fmt.Errorf("option %s not handled by the test", a)
			}
			o.Args = append(o.Args, a)
		}
	}
	return o, nil
}

// diffToolIBExit is diffTool for runs that may end in IBEXIT, whose
// message starts with argv[0]: the harness runs the C tool by absolute
// path; `ibscript TOOL` names itself TOOL, as the C tool typed by its
// name does; the rest must be equal.
func diffToolIBExit(t *testing.T, s *ibsimtest.Sim, host, tool string, args ...string) toolResult {
	t.Helper()
	want := cTool(t, s, host, tool, args...)
	got := ibscriptTool(t, s, host, tool, args...)
	wantOut := bytes.ReplaceAll(want.stdout, []byte("/usr/sbin/"+tool+": iberror:"), []byte(tool+": iberror:"))
	what := tool + " " + strings.Join(args, " ")
	// ibnetdiscover's "generated on" line is the second each ran.
	if w, g := normDate(string(wantOut)), normDate(string(got.stdout)); w != g {
		t.Errorf("%s: stdout differs:\n%s", what, lineDiff(w, g))
	}
	if want.code != got.code {
		t.Errorf("%s: exit status %d, the C tool's %d (ibscript's stderr: %s)", what, got.code, want.code, got.stderr)
	}
	return want
}

// TestRouteToolsCommandLine: `ibscript ibroute|dump_fts|dump_lfts|
// dump_mfts|ibtracert|saquery ...` print what the C tools print and
// exit as they do, their options parsed by the tools' command line (LID,
// -G GUID and -D route addresses, ranges, -n/-a/-M, failures).
func TestRouteToolsCommandLine(t *testing.T) {
	eachRouteTopology(t, true, func(t *testing.T, host string, s *ibsimtest.Sim, sess *engine.Session) {
		d, err := sess.Discover(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var sw, ca, ca2 *topo.Node
		for _, n := range d.Fabric.Nodes {
			switch {
			case n.Type == topo.Switch && sw == nil:
				sw = n
			case n.Type == topo.CA && n.Ports[1] != nil && n.Ports[1].LID != 0:
				if ca == nil {
					ca = n
				} else if ca2 == nil {
					ca2 = n
				}
			}
		}
		swLID, caLID, ca2LID := itoa(sw.Ports[0].LID), itoa(ca.Ports[1].LID), itoa(ca2.Ports[1].LID)
		swPath, _ := d.Path(sw.GUID)
		hex := func(g uint64) string { return "0x" + strconv.FormatUint(g, 16) }
		for _, c := range [][]string{
			{"ibroute", swLID}, {"ibroute", "-a", "-n", swLID, "1", "0x4"}, {"ibroute", "-M", swLID}, {"ibroute", "-Ma", swLID, "0xc000", "0xc001"},
			{"ibroute", "-G", hex(sw.GUID)}, {"ibroute", "-D", drArg(swPath)}, {"ibroute", caLID}, {"ibroute", "--all", "--no_dests", swLID}, {"ibroute", "-t", "200", "999"}, {"ibroute", "abc"}, {"ibroute", swLID + "x"}, {"ibroute", swLID, "1", "3", "extra"},
			{"ibtracert", caLID, ca2LID, "extra"},
			{"dump_fts"}, {"dump_fts", "-a", "1", "3"}, {"dump_lfts"}, {"dump_lfts", "-n"}, {"dump_mfts"}, {"dump_fts", "-M", "-n"},
			// LIDs as strtoul reads them, extra arguments ignored; the
			// scripts print their notice and exit 0 whatever dump_fts
			// did (a bad option too).
			{"dump_fts", "a", "b"}, {"dump_fts", "1", "2", "3"}, {"ibroute", swLID, "a", "b"}, {"ibroute", swLID, "2abc"},
			{"dump_lfts", "1", "2", "3"}, {"dump_lfts", "-D", "0"}, {"dump_mfts", "-x"}, {"dump_mfts", "-n", "0xc000", "zz"},
			{"ibtracert", caLID, ca2LID}, {"ibtracert", "-n", ca2LID, swLID}, {"ibtracert", "-G", hex(ca.Ports[1].GUID), hex(ca2.Ports[1].GUID)},
			{"ibtracert", caLID, "999"}, {"ibtracert", "--force", caLID, ca2LID}, {"ibtracert", "-v", ca2LID, swLID}, {"ibroute", "-v", "-M", swLID}, {"dump_mfts", "-v"},
			{"saquery"}, {"saquery", "-c"}, {"saquery", "NR", caLID}, {"saquery", "-p", "--src-to-dst", caLID + ":" + ca2LID},
			{"saquery", "SWIR", swLID}, {"saquery", "-x", swLID}, {"saquery", "-s"}, {"saquery", "LFTR", swLID + "/0"}, {"saquery", "NR", "nosuchnode"},
			{"saquery", "MCMR", "--mlid", "0xc000"}, {"saquery", "MCMR", "--mlid", "0xc000", "--pkey", "0xffff", "-J", "1", "--sl", "0"},
			{"saquery", "-m", "0xc000"}, {"saquery", "-g"}, {"saquery", "-I"},
			{"saquery", "-p", "--slid", caLID, "--dlid", ca2LID, "--sl", "0", "-r", "1", "--pkey", "0xffff", "-Q", "0"},
			{"saquery", "PR", "--slid", caLID, "--dlid", ca2LID, "--mtu", "0x84", "--rate", "0x83", "--pkt_lifetime", "0x92", "-T", "0", "-H", "0"},
			{"saquery", "--smkey", "1", "SMIR"}, {"saquery", "--smkey", "2", "-t", "300", "SMIR"}, // OpenSM ignores a wrong SM_Key: a timeout
		} {
			out := diffToolIBExit(t, s, host, c[0], c[1:]...)
			if len(c) > 2 && c[1] == "--smkey" && c[2] == "2" && out.code != 110 {
				t.Errorf("saquery with a wrong SM_Key: C status %d, want 110 (ETIMEDOUT)", out.code)
			}
		}
		// --ports-file: pairs, comments and blank lines, then a pair
		// that fails (ibtracert stops there and names the line).
		ports := filepath.Join(t.TempDir(), "pairs")
		good := fmt.Sprintf("# pairs\n%s %s\n\n   \n%s\t%s\n", caLID, ca2LID, ca2LID, swLID)
		if err := os.WriteFile(ports, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
		if out := diffToolIBExit(t, s, host, "ibtracert", "--ports-file", ports); !bytes.Contains(out.stdout, []byte("2 lid/guid pairs processed from")) {
			t.Errorf("ibtracert --ports-file:\n%s", out.stdout)
		}
		if err := os.WriteFile(ports, []byte(good+caLID+" 999\n"+caLID+" "+swLID+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		diffToolIBExit(t, s, host, "ibtracert", "-n", "--ports-file", ports)
		// A node-name-map renames the switch and the CA everywhere
		// the tools print a node's name.
		nameMap := filepath.Join(t.TempDir(), "names")
		// The CA's name in UTF-8 and with a tab: the C tools print a
		// map's bytes as they are.
		text := fmt.Sprintf("# test map\n0x%016x \"sw-renamed\"\n0x%016x \"ca r\u00e9named\twith tab\"\n", sw.GUID, ca.GUID)
		if err := os.WriteFile(nameMap, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range [][]string{
			{"ibroute", swLID}, {"dump_lfts"}, {"dump_mfts", "-a", "0xc000", "0xc000"}, {"ibtracert", caLID, swLID}, {"ibtracert", ca2LID, caLID},
			{"saquery", "NR", caLID}, {"saquery", "-D"}, {"saquery", "-O", caLID},
		} {
			out := diffToolIBExit(t, s, host, c[0], append(c[1:], "--node-name-map", nameMap)...)
			if c[0] == "ibroute" && !bytes.Contains(out.stdout, []byte("(sw-renamed)")) {
				t.Errorf("ibroute --node-name-map: the switch not renamed:\n%s", out.stdout)
			}
		}
	})
}

// TestTracertMulticastMatchesCTool: ibtracert -m walks an MLID's tree as
// ibtracert does. On an ibsim of its own (the MFTs it sets must not
// reach other tests), with MLID 0xc001 flooded to every linked port of
// every switch (the ring makes circles, which ibtracert reports as it
// finds them), 0xc002 on the first switch's ports only, and 0xc003 on
// none: the same stdout and status for every pair of CA ports and from a
// switch, in both formats.
func TestTracertMulticastMatchesCTool(t *testing.T) {
	const path, host = "../topologies/net.route-ring", "h2"
	s, sess, d := privateDiscovered(t, path, host)
	ctx := t.Context()
	var cas []uint16
	var firstSw *topo.Node
	for _, n := range d.Fabric.Nodes {
		if n.Type == topo.CA {
			for _, p := range n.Ports {
				if p != nil && p.LID != 0 {
					cas = append(cas, p.LID)
				}
			}
			continue
		}
		if n.Type != topo.Switch {
			continue
		}
		if firstSw == nil {
			firstSw = n
		}
		for set := 0; set <= n.NumPorts/16; set++ {
			var mft smp.MulticastForwardingTable
			for pn, p := range n.Ports {
				if pn/16 != set || (pn != 0 && (p == nil || p.Remote == nil)) {
					continue
				}
				mft.PortMask[1] |= 1 << (pn % 16) // 0xc001: every linked port
				if n == firstSw {
					mft.PortMask[2] |= 1 << (pn % 16) // 0xc002: the first switch only
				}
			}
			if _, err := engine.Set(ctx, sess, engine.LID(n.Ports[0].LID), uint32(set)<<28, &mft); err != nil {
				t.Fatalf("%s: Set MFT set %d: %v", n.Desc, set, err)
			}
		}
	}
	found := 0
	env := &diag.Env{Session: sess}
	for _, mlid := range []uint16{0xc001, 0xc002, 0xc003} {
		for _, src := range append([]uint16{firstSw.Ports[0].LID}, cas...) {
			for _, dst := range cas {
				for _, brief := range []bool{false, true} {
					args := []string{"-m", "0x" + strconv.FormatUint(uint64(mlid), 16), itoa(src), itoa(dst)}
					if brief {
						args = append([]string{"-n"}, args...)
					}
					if _, err := diffTracert(t, s, host, args, env, src, dst, &diag.TracertOptions{NoInfo: brief, Multicast: true, MLID: int(mlid)}, nil); err == nil {
						found++
					}
				}
			}
		}
	}
	if found == 0 {
		t.Error("no multicast route found: the MFTs were not set?")
	}
	// The command line's -m.
	diffToolIBExit(t, s, host, "ibtracert", "-m", "0xc001", itoa(cas[0]), itoa(cas[len(cas)-1]))
	diffToolIBExit(t, s, host, "ibtracert", "-n", "--mlid", "0xc002", itoa(cas[0]), itoa(cas[1]))
	// -v prints the walk from the local port to the source first, as
	// unicast -v does (the source the farthest CA, so the walk has hops).
	for _, src := range []uint16{cas[len(cas)-1], firstSw.Ports[0].LID} {
		for _, brief := range []bool{false, true} {
			args := []string{"-v", "-m", "0xc001", itoa(src), itoa(cas[0])}
			if brief {
				args = append([]string{"-n"}, args...)
			}
			tr, _ := diffTracert(t, s, host, args, env, src, cas[0], &diag.TracertOptions{NoInfo: brief, Multicast: true, MLID: 0xc001, Verbose: true}, withoutTracertDebug)
			if len(tr.Approach) == 0 {
				t.Errorf("ibtracert %v: no walk to the source recorded", args)
			}
		}
	}
	// -m as strtoul reads it into ibtracert's int: "abc" is 0 (below
	// 0xc000), "0xc001x" is 0xc001, 0x1c001 is past every switch's table.
	diffToolIBExit(t, s, host, "ibtracert", "-m", "abc", itoa(cas[0]), itoa(cas[len(cas)-1]))
	diffToolIBExit(t, s, host, "ibtracert", "-m", "0xc001x", itoa(cas[0]), itoa(cas[len(cas)-1]))
	diffToolIBExit(t, s, host, "ibtracert", "-m", "0x1c001", itoa(cas[0]), itoa(cas[len(cas)-1]))
}

// tracertDebug are the lines ibtracert -v prints on stdout as
// find_mcpath walks (libibmad's DEBUG with the tool's pid and its heap
// addresses, and its "processing", "new remote" and "found target"
// notes): not output anyone can compare, ibscript does not print them.
var tracertDebug = regexp.MustCompile(`^(\[[0-9]+\] [a-z_]+: |processing \{|new remote \{|found target \{)`)

func withoutTracertDebug(out []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if !tracertDebug.MatchString(l) {
			b.WriteString(l)
		}
	}
	return b.Bytes()
}

// TestRouteToolsWithLMC: with OpenSM giving every port two LIDs (--lmc
// 1), the tools print each LMC range as the C tools do: ibroute's and
// dump_fts' "path #n out of m" entries, ibtracert's "lid 7-8" ranges and
// traces to a port's second LID, saquery's records of both LIDs.
func TestRouteToolsWithLMC(t *testing.T) {
	const path, host = "../topologies/net.route-ring", "h2"
	ibsimtest.Require(t)
	s, err := ibsimtest.Start(t.Context(), t.TempDir(), path, &ibsimtest.Options{OSMArgs: []string{"--lmc", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	sess, _ := session(t, s, host, nil, nil)
	d, err := sess.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var swLIDs, caLIDs, caGUIDs []string
	for _, n := range d.Fabric.Nodes {
		for _, p := range n.Ports {
			switch {
			case p == nil || p.LID == 0:
			case n.Type == topo.Switch && p.Num == 0:
				swLIDs = append(swLIDs, itoa(p.LID))
			case n.Type == topo.CA:
				if p.LMC != 1 {
					t.Fatalf("%s port %d: LMC %d, want 1 (OpenSM --lmc 1)", n.Desc, p.Num, p.LMC)
				}
				caLIDs = append(caLIDs, itoa(p.LID), itoa(p.LID+1))
				caGUIDs = append(caGUIDs, fmt.Sprintf("0x%x", p.GUID))
			}
		}
	}
	out := diffToolIBExit(t, s, host, "ibroute", swLIDs[0])
	if !bytes.Contains(out.stdout, []byte("(path #2 out of 2")) {
		t.Errorf("ibroute shows no LMC range:\n%s", out.stdout)
	}
	for _, c := range [][]string{
		{"ibroute", "-a", swLIDs[1]}, {"dump_lfts"}, {"dump_fts", "-a", "1", "0x10"},
		{"ibtracert", caLIDs[0], caLIDs[len(caLIDs)-1]}, {"ibtracert", caLIDs[1], swLIDs[2]}, {"ibtracert", "-n", caLIDs[3], caLIDs[4]},
		{"saquery", "NR", caLIDs[0]}, {"saquery", "-p", "--src-to-dst", caLIDs[1] + ":" + caLIDs[len(caLIDs)-2]},
		// -G: the SA's one PathRecord (a Get) from the port to itself,
		// where a GetTable lists every pair of the two LMC ranges (four
		// records: more than one MAD holds under ibsim).
		{"ibtracert", "-G", caGUIDs[0], caGUIDs[len(caGUIDs)-1]}, {"smpquery", "-G", "nodeinfo", caGUIDs[1]},
		{"perfquery", "-G", caGUIDs[2]}, {"ibaddr", "-G", caGUIDs[3]}, {"iblinkinfo", "-G", caGUIDs[0]},
	} {
		diffToolIBExit(t, s, host, c[0], c[1:]...)
	}
}

// TestTracertFaultsMatchCTool: with switches' LFT entries corrupted
// through the engine on an ibsim of its own (an entry dropped, one sent
// to an unused port, two switches sending a LID to each other), ibtracert
// and ibscript fail the same way for every pair of LIDs: the same route
// printed up to the failure, the same status; and ibroute, dump_lfts
// show the corrupted tables alike.
func TestTracertFaultsMatchCTool(t *testing.T) {
	const path, host = "../topologies/net.route-ring", "h2"
	s, sess, d := privateDiscovered(t, path, host)
	ctx := t.Context()
	byName := map[string]*topo.Node{}
	var lids []uint16
	for _, n := range d.Fabric.Nodes {
		byName[n.Desc] = n
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 && (n.Type != topo.Switch || p.Num == 0) {
				lids = append(lids, p.LID)
			}
		}
	}
	lidOf := func(desc string, port int) uint16 { return byName[desc].Ports[port].LID }
	setLFT := func(sw string, lid uint16, port uint8) {
		t.Helper()
		n := byName[sw]
		swLID := engine.LID(n.Ports[0].LID)
		blk, err := sess.LFTBlock(ctx, swLID, uint32(lid/64))
		if err != nil {
			t.Fatal(err)
		}
		blk.Ports[lid%64] = port
		if _, err := engine.Set(ctx, sess, swLID, uint32(lid/64), &blk); err != nil {
			t.Fatalf("%s: Set LFT block %d: %v", sw, lid/64, err)
		}
	}
	setLFT("ring-C", lidOf("h3 with  two spaces", 1), 0xff) // dropped
	setLFT("ring-D", lidOf("host no.1 (one)", 2), 7)        // an unused port
	setLFT("ring-B", lidOf("h4", 1), 4)                     // ring-B -> ring-C ...
	setLFT("ring-C", lidOf("h4", 1), 4)                     // ... -> ring-B: a loop
	failed := 0
	env := &diag.Env{Session: sess}
	for _, src := range lids {
		for _, dst := range lids {
			args := []string{itoa(src), itoa(dst)}
			if _, err := diffTracert(t, s, host, args, env, src, dst, nil, nil); err != nil {
				failed++
			}
		}
	}
	t.Logf("%d of %d traces failed", failed, len(lids)*len(lids))
	if failed == 0 {
		t.Error("no trace failed: the LFT faults did not take")
	}
	for _, c := range [][]string{{"ibroute", "-a", itoa(lidOf("ring-C", 0))}, {"ibroute", itoa(lidOf("ring-D", 0))}, {"dump_lfts"}} {
		diffToolIBExit(t, s, host, c[0], c[1:]...)
	}
}

// diffTracert runs the C ibtracert with args on host and diag.Tracert
// from src to dst with o, and fails t unless diag's text (its IBEXIT line
// after a failure, status 255) is the C tool's stdout (through filter,
// when not nil) with its exit status. It returns diag's trace and error.
func diffTracert(t *testing.T, s *ibsimtest.Sim, host string, args []string, env *diag.Env, src, dst uint16, o *diag.TracertOptions, filter func([]byte) []byte) (*diag.Trace, error) {
	t.Helper()
	want, _, code := runExit(t, s, host, "ibtracert", args...)
	if filter != nil {
		want = filter(want)
	}
	tr, err := diag.Tracert(t.Context(), env, src, dst, o)
	var got bytes.Buffer
	if werr := diag.WriteTracert(&got, tr); werr != nil {
		t.Fatal(werr)
	}
	gotCode := 0
	if err != nil {
		diag.WriteIBExit(&got, ibtracertPath, err.Error())
		gotCode = 255
	}
	if code != gotCode || got.String() != string(want) {
		t.Errorf("ibtracert %v: exit %d, diag %d (%v, %q):\n%s", args, code, gotCode, err, tr.Warnings, lineDiff(string(want), got.String()))
	}
	return tr, err
}
