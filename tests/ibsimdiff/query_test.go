package ibsimdiff

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// dotted parses the "Key:.....value" lines infiniband-diags prints.
func dotted(out []byte) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		m[strings.TrimSpace(k)] = strings.TrimLeft(v, ".")
	}
	return m
}

// compare checks every key of want (engine values, as numbers) against the
// tool's text: numbers in decimal or 0x-hex.
func compare(t *testing.T, what string, tool map[string]string, want map[string]uint64) {
	t.Helper()
	for k, w := range want {
		s, ok := tool[k]
		if !ok {
			t.Errorf("%s: the tool printed no %s", what, k)
			continue
		}
		g, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
		if err != nil {
			t.Errorf("%s: %s = %q: not a number", what, k, s)
			continue
		}
		if g != w {
			t.Errorf("%s: %s: tool %#x (%q), engine %#x", what, k, g, s, w)
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

var linkStates = map[string]uint8{"Down": 1, "Initialize": 2, "Armed": 3, "Active": 4}
var nodeTypes = map[string]uint8{"Channel Adapter": 1, "Switch": 2, "Router": 3}

// fabricNodes discovers the fabric from node and returns the nodes with a
// LID on their first port (port 0 for switches).
func fabricNodes(t *testing.T, sess *engine.Session) []*topo.Node {
	t.Helper()
	d, err := sess.Discover(t.Context(), nil)
	if err != nil || len(d.Errors) > 0 {
		t.Fatalf("discover: %v %v", err, d.Errors)
	}
	return d.Fabric.Nodes
}

func nodeLID(n *topo.Node) uint16 {
	for _, p := range n.Ports {
		if p != nil && p.LID != 0 {
			return p.LID
		}
	}
	return 0
}

// TestSMPMatchesSMPQuery compares the engine's NodeInfo, NodeDescription,
// SwitchInfo and PortInfo of every node and linked port with smpquery's on
// the same live fabric (LID-routed, from Hca1 for both).
func TestSMPMatchesSMPQuery(t *testing.T) {
	tps := []struct{ path, host string }{{topo2sw, "Hca1"}, {topo2sw2p, "Hca1"}}
	tps = append(tps, mixedTopologies...)
	for _, tp := range tps {
		t.Run(tp.path[strings.LastIndex(tp.path, "/")+1:], func(t *testing.T) {
			s := shared.Get(t, tp.path, &ibsimtest.Options{InitPorts: initPorts(tp.path)})
			sess, _ := session(t, s, tp.host, nil, nil)
			ctx := t.Context()
			for _, n := range fabricNodes(t, sess) {
				lid := nodeLID(n)
				if lid == 0 && n.Type == topo.Router {
					continue // OpenSM gives a router no LID (its links stay in Init)
				}
				if lid == 0 {
					t.Fatalf("node %q has no LID", n.Desc)
				}
				ls := strconv.Itoa(int(lid))
				what := fmt.Sprintf("%s (lid %d)", n.Desc, lid)
				ni, err := sess.NodeInfo(ctx, engine.LID(lid))
				if err != nil {
					t.Fatal(err)
				}
				out := run(t, s, tp.host, "smpquery", "nodeinfo", ls)
				tool := dotted(out)
				if nodeTypes[tool["NodeType"]] != ni.NodeType {
					t.Errorf("%s NodeInfo: NodeType tool %q, engine %d", what, tool["NodeType"], ni.NodeType)
				}
				compare(t, what+" NodeInfo", tool, map[string]uint64{
					"BaseVers": uint64(ni.BaseVersion), "ClassVers": uint64(ni.ClassVersion), "NumPorts": uint64(ni.NumPorts),
					"SystemGuid": ni.SystemImageGUID, "Guid": ni.NodeGUID, "PortGuid": ni.PortGUID, "PartCap": uint64(ni.PartitionCap),
					"DevId": uint64(ni.DeviceID), "Revision": uint64(ni.Revision), "LocalPort": uint64(ni.LocalPortNum), "VendorId": uint64(ni.VendorID),
				})
				nd, err := sess.NodeDesc(ctx, engine.LID(lid))
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSpace(dotted(run(t, s, tp.host, "smpquery", "nodedesc", ls))["Node Description"]); got != nd.NodeString {
					t.Errorf("%s NodeDescription: tool %q, engine %q", what, got, nd.NodeString)
				}
				ports := []uint8{}
				if ni.NodeType == smp.NodeTypeSwitch {
					si, err := sess.SwitchInfo(ctx, engine.LID(lid))
					if err != nil {
						t.Fatal(err)
					}
					compare(t, what+" SwitchInfo", dotted(run(t, s, tp.host, "smpquery", "switchinfo", ls)), map[string]uint64{
						"LinearFdbCap": uint64(si.LinearFDBCap), "RandomFdbCap": uint64(si.RandomFDBCap), "McastFdbCap": uint64(si.MulticastFDBCap),
						"LinearFdbTop": uint64(si.LinearFDBTop), "DefPort": uint64(si.DefaultPort), "LifeTime": uint64(si.LifeTimeValue),
						"StateChange": b2u(si.PortStateChange), "LidsPerPort": uint64(si.LIDsPerPort), "PartEnforceCap": uint64(si.PartitionEnforcementCap),
						"InboundPartEnf": b2u(si.InboundEnforcementCap), "OutboundPartEnf": b2u(si.OutboundEnforcementCap),
						"FilterRawInbound": b2u(si.FilterRawInboundCap), "FilterRawOutbound": b2u(si.FilterRawOutboundCap),
						"EnhancedPort0": b2u(si.EnhancedPort0), "MulticastFDBTop": uint64(si.MulticastFDBTop),
					})
					ports = append(ports, 0)
				}
				for i, p := range n.Ports {
					if p != nil && p.Remote != nil && i > 0 {
						ports = append(ports, uint8(i))
					}
				}
				for _, port := range ports {
					pi, err := sess.PortInfo(ctx, engine.LID(lid), port)
					if err != nil {
						t.Fatal(err)
					}
					tool := dotted(run(t, s, tp.host, "smpquery", "portinfo", ls, strconv.Itoa(int(port))))
					pw := fmt.Sprintf("%s PortInfo port %d", what, port)
					if linkStates[tool["LinkState"]] != pi.PortState {
						t.Errorf("%s: LinkState tool %q, engine %d", pw, tool["LinkState"], pi.PortState)
					}
					compare(t, pw, tool, map[string]uint64{
						"GidPrefix": pi.GIDPrefix, "Lid": uint64(pi.LID), "SMLid": uint64(pi.MasterSMLID), "CapMask": uint64(pi.CapabilityMask),
						"DiagCode": uint64(pi.DiagCode), "MkeyLeasePeriod": uint64(pi.MKeyLeasePeriod), "LocalPort": uint64(pi.LocalPortNum),
						"LMC": uint64(pi.LMC), "SMSL": uint64(pi.MasterSMSL), "VLHighLimit": uint64(pi.VLHighLimit),
						"VLArbHighCap": uint64(pi.VLArbitrationHighCap), "VLArbLowCap": uint64(pi.VLArbitrationLowCap),
						"VLStallCount": uint64(pi.VLStallCount), "HoqLife": uint64(pi.HOQLife),
						"MkeyViolations": uint64(pi.MKeyViolations), "PkeyViolations": uint64(pi.PKeyViolations), "QkeyViolations": uint64(pi.QKeyViolations),
						"GuidCap": uint64(pi.GUIDCap), "SubnetTimeout": uint64(pi.SubnetTimeOut), "RespTimeVal": uint64(pi.RespTimeValue),
						"LocalPhysErr": uint64(pi.LocalPhyErrors), "OverrunErr": uint64(pi.OverrunErrors), "MaxCreditHint": uint64(pi.MaxCreditHint),
						"RoundTrip": uint64(pi.LinkRoundTripLatency), "CapabilityMask2": uint64(pi.CapabilityMask2),
					})
				}
			}
		})
	}
}

func run(t *testing.T, s *ibsimtest.Sim, node, tool string, args ...string) []byte {
	t.Helper()
	out, err := s.Run(t.Context(), node, tool, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var lftLine = regexp.MustCompile(`(?m)^0x([0-9a-f]{4}) (\d{3}) :`)

// TestLFTMatchesIBRoute compares every switch's LFT, read block by block
// through the engine, with ibroute's dump.
func TestLFTMatchesIBRoute(t *testing.T) {
	for _, tp := range []string{topo2sw, topoFat500} {
		t.Run(tp[strings.LastIndex(tp, "/")+1:], func(t *testing.T) {
			s := shared.Get(t, tp, nil)
			sess, _ := session(t, s, "", nil, nil)
			ctx := t.Context()
			nodes := fabricNodes(t, sess)
			checked := 0
			for _, n := range nodes {
				if n.Type != topo.Switch {
					continue
				}
				if checked++; checked > 6 {
					break // a sample of a big fabric's switches is enough
				}
				lid := nodeLID(n)
				tool := map[uint16]uint8{}
				for _, m := range lftLine.FindAllStringSubmatch(string(run(t, s, "", "ibroute", strconv.Itoa(int(lid)))), -1) {
					l, _ := strconv.ParseUint(m[1], 16, 16)
					p, _ := strconv.ParseUint(m[2], 10, 8)
					tool[uint16(l)] = uint8(p)
				}
				si, err := sess.SwitchInfo(ctx, engine.LID(lid))
				if err != nil {
					t.Fatal(err)
				}
				eng := map[uint16]uint8{}
				for b := uint32(0); b <= uint32(si.LinearFDBTop)/64; b++ {
					blk, err := sess.LFTBlock(ctx, engine.LID(lid), b)
					if err != nil {
						t.Fatal(err)
					}
					for i, p := range blk.Ports {
						l := uint16(b*64) + uint16(i)
						if p != 0xff && l <= si.LinearFDBTop {
							eng[l] = p
						}
					}
				}
				if len(tool) == 0 || len(tool) != len(eng) {
					t.Errorf("switch %s (lid %d): ibroute lists %d LIDs, engine %d", n.Desc, lid, len(tool), len(eng))
				}
				for l, p := range tool {
					if eng[l] != p {
						t.Errorf("switch %s (lid %d): LID %d: ibroute port %d, engine %d", n.Desc, lid, l, p, eng[l])
					}
				}
			}
		})
	}
}

// TestPerfMatchesPerfQuery compares PortCounters with perfquery's, after
// forcing counters with the ibsim console's PerformanceSet. ibsim counts
// every MAD hop itself, so the traffic counters only have to grow between
// perfquery's read and the engine's; the error counters must be equal.
func TestPerfMatchesPerfQuery(t *testing.T) {
	s := shared.Get(t, topo2sw, nil)
	sess, _ := session(t, s, "Hca3", nil, nil)
	ctx := t.Context()
	console(t, s,
		`PerformanceSet "Hca1"[1] PortCounters.SymbolErrorCounter=42`,
		`PerformanceSet "Hca1"[1] PortCounters.LinkDownedCounter=7`,
		`PerformanceSet "Hca1"[1] PortCounters.PortRcvErrors=1234`,
		`PerformanceSet "Switch2"[3] PortCounters.PortXmitDiscards=99`)
	hca1 := portLID(t, sess, "Hca1")
	sw2 := portLID(t, sess, "Switch2")
	for _, c := range []struct {
		lid  uint16
		port uint8
		want map[string]uint64 // forced values
	}{
		{hca1, 1, map[string]uint64{"SymbolErrorCounter": 42, "LinkDownedCounter": 7, "PortRcvErrors": 1234}},
		{sw2, 3, map[string]uint64{"PortXmitDiscards": 99}},
		{sw2, 1, nil},
	} {
		what := fmt.Sprintf("lid %d port %d", c.lid, c.port)
		tool := dotted(run(t, s, "Hca3", "perfquery", strconv.Itoa(int(c.lid)), strconv.Itoa(int(c.port))))
		pc, err := sess.PortCounters(ctx, engine.LID(c.lid), c.port)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, what+" (forced)", tool, c.want)
		errs := map[string]uint64{
			"PortSelect": uint64(pc.PortSelect), "SymbolErrorCounter": uint64(pc.SymbolErrorCounter),
			"LinkErrorRecoveryCounter": uint64(pc.LinkErrorRecoveryCounter), "LinkDownedCounter": uint64(pc.LinkDownedCounter),
			"PortRcvErrors": uint64(pc.PortRcvErrors), "PortRcvRemotePhysicalErrors": uint64(pc.PortRcvRemotePhysicalErrors),
			"PortRcvSwitchRelayErrors": uint64(pc.PortRcvSwitchRelayErrors), "PortXmitDiscards": uint64(pc.PortXmitDiscards),
			"PortXmitConstraintErrors": uint64(pc.PortXmitConstraintErrors), "PortRcvConstraintErrors": uint64(pc.PortRcvConstraintErrors),
			"LocalLinkIntegrityErrors": uint64(pc.LocalLinkIntegrityErrors), "ExcessiveBufferOverrunErrors": uint64(pc.ExcessiveBufferOverrunErrors),
			"QP1Dropped": uint64(pc.QP1Dropped), "VL15Dropped": uint64(pc.VL15Dropped), "PortXmitWait": uint64(pc.PortXmitWait),
		}
		compare(t, what, tool, errs)
		for k, v := range map[string]uint32{"PortXmitData": pc.PortXmitData, "PortRcvData": pc.PortRcvData, "PortXmitPkts": pc.PortXmitPkts, "PortRcvPkts": pc.PortRcvPkts} {
			g, err := strconv.ParseUint(strings.TrimSpace(tool[k]), 0, 64)
			if err != nil || uint64(v) < g || g == 0 {
				t.Errorf("%s %s: perfquery %q, engine (read after it) %d: want 0 < perfquery <= engine", what, k, tool[k], v)
			}
		}
	}
	// Reset by the engine is seen by perfquery (ibsim resets on Set).
	if _, err := sess.Perf(ctx, engine.LID(hca1), 0x02 /* Set */, perf.AttrPortCounters, 1, resetAll(1)); err != nil {
		t.Fatal(err)
	}
	tool := dotted(run(t, s, "Hca3", "perfquery", strconv.Itoa(int(hca1)), "1"))
	compare(t, "after reset", tool, map[string]uint64{"SymbolErrorCounter": 0, "LinkDownedCounter": 0, "PortRcvErrors": 0})
}

// resetAll is a PortCounters Set body clearing every counter of port.
func resetAll(port uint8) []byte {
	b := make([]byte, 64)
	b[1] = port
	b[2], b[3] = 0xff, 0xff
	return b
}

func portLID(t *testing.T, sess *engine.Session, desc string) uint16 {
	t.Helper()
	d := sess.LastDiscovery()
	if d == nil {
		var err error
		if d, err = sess.Discover(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range d.Fabric.Nodes {
		if n.Desc == desc {
			return nodeLID(n)
		}
	}
	t.Fatalf("no node %q", desc)
	return 0
}

// console runs ibsim console commands, each of which must succeed.
func console(t *testing.T, s *ibsimtest.Sim, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if _, err := s.Console(t.Context(), c); err != nil {
			t.Fatalf("ibsim console %q: %v", c, err)
		}
	}
}
