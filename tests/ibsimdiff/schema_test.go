package ibsimdiff

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// The generated fabrics of issue 18: multi-port CAs cabled to different
// switches, a router, unused switch ports, links of mixed widths and
// speeds (FDR and EDR on the second). host is the CA the tools and the
// engine run on.
var mixedTopologies = []struct{ path, host string }{
	{"../topologies/net.mixed-router", "HcaX"},
	{"../topologies/net.mixed-3sw", "Host1"},
}

// initPorts is how many ports OpenSM leaves in Init on a topology: a
// router's two links, both ends; a generated topology (internal/randtopo)
// says it in its "# InitPorts: N" line.
func initPorts(path string) int {
	if m := initPortsLine.FindSubmatch(readHead(path)); m != nil {
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	if strings.Contains(path, "net.mixed-") || strings.Contains(path, "net.chain36") {
		return 4
	}
	if strings.Contains(path, "net.island") {
		return 4 // the links no SM reaches: Island-I1, P1-P2
	}
	if strings.Contains(path, "net.chassis") || strings.Contains(path, "net.2sw2path4hca-faulty") {
		return 2 // the router's link: OpenSM leaves it in Init (its node GUID is 0)
	}
	return 0
}

// initPortsLine is a generated topology's count of ports left in Init.
var initPortsLine = regexp.MustCompile(`(?m)^# InitPorts: (\d+)$`)

// readHead is the first KiB of a file (nil when it cannot be read).
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 1024)
	n, _ := io.ReadFull(f, b)
	return b[:n]
}

var (
	sl2vlRow   = regexp.MustCompile(`(?m)^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|\s*$`)
	vlarbVL    = regexp.MustCompile(`(?m)^VL\s*:\s*\|(.*)\|\s*$`)
	vlarbWt    = regexp.MustCompile(`(?m)^WEIGHT\s*:\s*\|(.*)\|\s*$`)
	perfqNames = map[string]string{"PortMalformedPacketErrors": "PortMalformedPktErrors"}
)

// cells parses "| 0| 1|0x4 |" cells as numbers.
func cells(t *testing.T, s string) []uint64 {
	t.Helper()
	var out []uint64
	for _, c := range strings.Split(s, "|") {
		v, err := strconv.ParseUint(strings.TrimSpace(c), 0, 64)
		if err != nil {
			t.Fatalf("cell %q of %q: %v", c, s, err)
		}
		out = append(out, v)
	}
	return out
}

// layoutValues is a decoded attribute's rows by IBA name.
func layoutValues(l *mad.Layout, data []byte) map[string]uint64 {
	m := map[string]uint64{}
	_ = l.Each(data, func(f mad.Field, v uint64, _ []byte) { m[f.Name] = v })
	return m
}

type mixedPort struct {
	node *topo.Node
	lid  uint16 // the LID that reaches the port's node (a CA port's own)
	num  int
}

// mixedPorts lists every port worth asking about: each switch port, used
// or not (and port 0), each Active CA and router port with a LID (OpenSM
// leaves a router's links in Init, where LID-routed MADs do not pass).
func mixedPorts(t *testing.T, sess *engine.Session) []mixedPort {
	var out []mixedPort
	for _, n := range fabricNodes(t, sess) {
		for i, p := range n.Ports {
			switch {
			case n.Type == topo.Switch && (p != nil || i <= n.NumPorts):
				out = append(out, mixedPort{n, nodeLID(n), i})
			case n.Type != topo.Switch && p != nil && p.LID != 0 && p.State == smp.PortStateActive:
				out = append(out, mixedPort{n, p.LID, i})
			}
		}
	}
	return out
}

// TestSchemaAttributesMatchCTools decodes, on live ibsim + OpenSM and on
// each generated fabric, every attribute and record of issue 18's schema
// coverage that ibsim and OpenSM answer, field for field as the C tools
// print them: SLtoVLMappingTable (every input/output pair smpquery sl2vl
// prints, switch port 0 and unused ports included), VLArbitrationTable
// (low and high), MlnxExtPortInfo, the PMA groups perfquery -E, -D,
// --oprcvcounters, --flowctlcounters, --vloppackets, --vlopdata,
// --vlxmitflowctlerrors and --vlxmitcounters read, and saquery SMIR. The
// tables then get Sets of uneven values through the engine, which
// smpquery (ibroute -M for a switch's MulticastForwardingTable) must read
// back as the engine encoded them, and the embedded
// simulator must answer the same values as ibsim on the same file.
func TestSchemaAttributesMatchCTools(t *testing.T) {
	ibsimtest.Require(t)
	for _, mt := range mixedTopologies {
		t.Run(filepath.Base(mt.path), func(t *testing.T) {
			t.Parallel() // one ibsim per topology: the topologies run side by side (parallelTopologies)
			src, err := os.ReadFile(mt.path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			tp := filepath.Join(dir, filepath.Base(mt.path)) // private: the test Sets tables
			if err := os.WriteFile(tp, src, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := ibsimtest.Start(t.Context(), dir, tp, &ibsimtest.Options{InitPorts: initPorts(tp)})
			t.Cleanup(s.Stop) // after the session's cleanup, which gives the slot back
			if err != nil {
				t.Fatal(err)
			}
			sess, _ := session(t, s, mt.host, nil, nil)
			ctx := t.Context()
			tool := func(args ...string) []byte { return run(t, s, mt.host, args[0], args[1:]...) }
			ports := mixedPorts(t, sess)
			if len(ports) < 20 {
				t.Fatalf("%d ports", len(ports))
			}
			compared := map[string]int{}
			for _, mp := range ports {
				ls, ps := strconv.Itoa(int(mp.lid)), strconv.Itoa(mp.num)
				what := fmt.Sprintf("%s port %d (lid %d)", mp.node.Desc, mp.num, mp.lid)
				sw := mp.node.Type == topo.Switch

				// SLtoVL: a switch's rows for this output port, a CA's one row.
				args := []string{"smpquery", "sl2vl", ls}
				if sw {
					args = append(args, ps)
				}
				rows := sl2vlRow.FindAllStringSubmatch(string(tool(args...)), -1)
				if len(rows) == 0 {
					t.Fatalf("%s: smpquery sl2vl printed no table", what)
				}
				for _, r := range rows {
					in, _ := strconv.Atoi(r[1])
					out, _ := strconv.Atoi(r[2])
					mod := uint32(0)
					if sw {
						mod = uint32(in<<8 | out)
					}
					got, err := engine.Get[smp.SLtoVLMappingTable](ctx, sess, engine.LID(mp.lid), mod)
					if err != nil {
						t.Fatalf("%s SLtoVL in %d out %d: %v", what, in, out, err)
					}
					for sl, v := range cells(t, r[3]) {
						if uint64(got.VL[sl]) != v {
							t.Errorf("%s SLtoVL in %d out %d SL%d: smpquery %d, engine %d", what, in, out, sl, v, got.VL[sl])
						}
					}
					compared["SLtoVLMappingTable"]++
				}

				// VL arbitration: smpquery skips switch port 0 (not enhanced).
				if !(sw && mp.num == 0) {
					out := string(tool("smpquery", "vlarb", ls, ps))
					vls, wts := vlarbVL.FindAllStringSubmatch(out, -1), vlarbWt.FindAllStringSubmatch(out, -1)
					if len(vls) != 2 || len(wts) != 2 {
						t.Fatalf("%s: smpquery vlarb printed %d VL and %d weight lines:\n%s", what, len(vls), len(wts), out)
					}
					for i, blk := range []uint32{1, 3} { // low, then high
						got, err := engine.Get[smp.VLArbitrationTable](ctx, sess, engine.LID(mp.lid), blk<<16|uint32(mp.num))
						if err != nil {
							t.Fatalf("%s VLArbitration block %d: %v", what, blk, err)
						}
						wv := cells(t, wts[i][1])
						for e, vl := range cells(t, vls[i][1]) {
							if uint64(got.VL[e]) != vl || uint64(got.Weight[e]) != wv[e] {
								t.Errorf("%s VLArb block %d entry %d: smpquery VL %d weight %d, engine %d %d", what, blk, e, vl, wv[e], got.VL[e], got.Weight[e])
							}
						}
						compared["VLArbitrationTable"]++
					}
				}

				ext, err := sess.SMP(ctx, engine.LID(mp.lid), mad.MethodGet, smp.AttrMlnxExtPortInfo, uint32(mp.num), nil)
				if err != nil {
					t.Fatalf("%s MlnxExtPortInfo: %v", what, err)
				}
				compare(t, what+" MlnxExtPortInfo", dotted(tool("smpquery", "mlnxextportinfo", ls, ps)),
					layoutValues(smp.MlnxExtPortInfoLayout(), ext))
				compared["MlnxExtPortInfo"]++

				// PMA groups, on ports that have a PMA answer (a CA's own,
				// any switch port).
				for _, g := range []struct {
					flag string
					id   uint16
				}{
					{"-E", perf.AttrPortRcvErrorDetails}, {"-D", perf.AttrPortXmitDiscardDetails},
					{"--oprcvcounters", perf.AttrPortOpRcvCounters}, {"--flowctlcounters", perf.AttrPortFlowCtlCounters},
					{"--vloppackets", perf.AttrPortVLOpPackets}, {"--vlopdata", perf.AttrPortVLOpData},
					{"--vlxmitflowctlerrors", perf.AttrPortVLXmitFlowCtlUpdateErrors}, {"--vlxmitcounters", perf.AttrPortVLXmitWaitCounters},
				} {
					if sw && mp.num == 0 {
						continue
					}
					l := perf.LayoutByID(g.id)
					data, err := sess.Perf(ctx, engine.LID(mp.lid), mad.MethodGet, g.id, uint8(mp.num), nil)
					if err != nil {
						t.Fatalf("%s %s: %v", what, l.Name, err)
					}
					want := map[string]uint64{}
					for k, v := range layoutValues(l, data) {
						if k == "OpCode" {
							continue // perfquery does not print it
						}
						if n, ok := perfqNames[k]; ok {
							k = n
						}
						want[k] = v
					}
					compare(t, what+" "+l.Name, dotted(tool("perfquery", g.flag, ls, ps)), want)
					compared[l.Name]++
				}
			}

			// saquery SMIR: OpenSM's own record (ActCount moves on). OpenSM
			// under umad2sim answers a GetTable with one MAD whose RMPP
			// PayloadLength is 0; saquery counts the records from the
			// datagram's length, and so does the engine (ibsim passes the
			// length on): one record, complete, none of OpenSM's stale
			// buffer after it.
			recs, err := sess.SAGetTable(ctx, sa.SMInfoRecord(), 0, nil)
			if err != nil || len(recs) != 1 {
				t.Fatalf("SMInfoRecord: %d records, %v; want the one saquery lists", len(recs), err)
			}
			smir := saqueryFields(tool("saquery", "SMIR"))
			got := layoutValues(sa.SMInfoRecord().Layout, recs[0])
			compare(t, "SMInfoRecord", smir, map[string]uint64{"LID": got["LID"], "GUID": got["GUID"],
				"SM_Key": got["SM_Key"], "Priority": got["Priority"], "SMState": got["SMState"]})
			compared["SMInfoRecord"]++
			t.Logf("compared with the C tools: %v", compared)

			setAndReadBack(t, sess, tool, ports)
			embeddedAgrees(t, mt.path, sess, ports)
		})
	}
}

// setAndReadBack writes uneven SLtoVL, VL arbitration and MlnxExtPortInfo
// values through the engine on a switch port and a CA port; smpquery must
// print what was encoded.
func setAndReadBack(t *testing.T, sess *engine.Session, tool func(...string) []byte, ports []mixedPort) {
	ctx := t.Context()
	var swp, cap mixedPort
	for _, mp := range ports {
		if mp.node.Type == topo.Switch && mp.num == 2 && swp.node == nil {
			swp = mp
		}
		if mp.node.Type == topo.CA && cap.node == nil {
			cap = mp
		}
	}
	for _, mp := range []mixedPort{swp, cap} {
		what := fmt.Sprintf("%s port %d", mp.node.Desc, mp.num)
		ls := strconv.Itoa(int(mp.lid))
		sl := smp.SLtoVLMappingTable{VL: [16]uint8{3, 14, 1, 0, 15, 9, 2, 6, 5, 13, 4, 12, 11, 7, 10, 8}}
		mod := uint32(0)
		args := []string{"smpquery", "sl2vl", ls}
		if mp.node.Type == topo.Switch {
			mod = uint32(1<<8 | mp.num)
			args = append(args, strconv.Itoa(mp.num))
		}
		if _, err := engine.Set(ctx, sess, engine.LID(mp.lid), mod, &sl); err != nil {
			t.Fatalf("%s: Set SLtoVL: %v", what, err)
		}
		found := false
		for _, r := range sl2vlRow.FindAllStringSubmatch(string(tool(args...)), -1) {
			if in, _ := strconv.Atoi(r[1]); mp.node.Type == topo.Switch && in != 1 {
				continue
			}
			found = true
			for i, v := range cells(t, r[3]) {
				if uint64(sl.VL[i]) != v {
					t.Errorf("%s after Set: smpquery SL%d on VL %d, set %d", what, i, v, sl.VL[i])
				}
			}
		}
		if !found {
			t.Errorf("%s: smpquery printed no row for the pair set", what)
		}

		var va smp.VLArbitrationTable
		for e := range 8 {
			va.VL[e], va.Weight[e] = uint8(7-e), uint8(0x11*e+3)
		}
		if _, err := engine.Set(ctx, sess, engine.LID(mp.lid), 1<<16|uint32(mp.num), &va); err != nil {
			t.Fatalf("%s: Set VLArb: %v", what, err)
		}
		out := string(tool("smpquery", "vlarb", ls, strconv.Itoa(mp.num)))
		vls, wts := vlarbVL.FindAllStringSubmatch(out, -1), vlarbWt.FindAllStringSubmatch(out, -1)
		if len(vls) < 1 || len(wts) < 1 {
			t.Fatalf("%s: smpquery vlarb:\n%s", what, out)
		}
		wv := cells(t, wts[0][1])
		for e, vl := range cells(t, vls[0][1]) {
			if uint64(va.VL[e]) != vl || uint64(va.Weight[e]) != wv[e] {
				t.Errorf("%s VLArb after Set entry %d: smpquery VL %d weight %d, set %d %d", what, e, vl, wv[e], va.VL[e], va.Weight[e])
			}
		}

		if mp.node.Type == topo.Switch {
			mftReadBack(t, sess, tool, mp)
		}

		ext := smp.MlnxExtPortInfo{StateChangeEnable: 0x5a, LinkSpeedSupported: 0x81, LinkSpeedEnabled: 0x01, LinkSpeedActive: 0xc3}
		if _, err := engine.Set(ctx, sess, engine.LID(mp.lid), uint32(mp.num), &ext); err != nil {
			t.Fatalf("%s: Set MlnxExtPortInfo: %v", what, err)
		}
		compare(t, what+" MlnxExtPortInfo after Set", dotted(tool("smpquery", "mlnxextportinfo", ls, strconv.Itoa(mp.num))),
			map[string]uint64{"StateChangeEnable": 0x5a, "LinkSpeedSupported": 0x81, "LinkSpeedEnabled": 0x01, "LinkSpeedActive": 0xc3})
	}
}

// embeddedAgrees asks the embedded simulator, loaded from the same file,
// the same queries and requires ibsim's answers (read before the Sets of
// setAndReadBack changed them: the defaults), port by port, nodes matched
// by GUID. sess is ibsim's; its tables were Set on two ports, which are
// skipped.
func embeddedAgrees(t *testing.T, path string, isess *engine.Session, iports []mixedPort) {
	ctx := t.Context()
	esess := embeddedSession(t, path)
	type key struct {
		guid uint64
		num  int
	}
	eports := map[key]mixedPort{}
	for _, mp := range mixedPorts(t, esess) {
		eports[key{mp.node.GUID, mp.num}] = mp
	}
	n := 0
	for _, ip := range iports {
		if ip.num == 2 || ip.node.Type == topo.CA {
			continue // possibly Set by setAndReadBack
		}
		ep, ok := eports[key{ip.node.GUID, ip.num}]
		if !ok {
			t.Errorf("%s port %d: not in the embedded simulator", ip.node.Desc, ip.num)
			continue
		}
		what := fmt.Sprintf("%s port %d", ip.node.Desc, ip.num)
		for _, q := range []struct {
			id  uint16
			mod uint32
		}{
			{smp.AttrSLtoVLMappingTable, uint32(3<<8 | ip.num)}, {smp.AttrVLArbitrationTable, 1<<16 | uint32(ip.num)},
			{smp.AttrVLArbitrationTable, 3<<16 | uint32(ip.num)}, {smp.AttrMlnxExtPortInfo, uint32(ip.num)},
			{smp.AttrMulticastForwardingTable, uint32(ip.num)%31 + 1}, {smp.AttrMulticastForwardingTable, 1<<28 | 31}, // block 0 was Set on ibsim
			{smp.AttrMulticastForwardingTable, 32},
		} {
			if q.id == smp.AttrSLtoVLMappingTable && ip.node.Type != topo.Switch {
				q.mod = 0
			}
			if q.id == smp.AttrMulticastForwardingTable && ip.node.Type != topo.Switch {
				continue
			}
			want, werr := isess.SMP(ctx, engine.LID(ip.lid), mad.MethodGet, q.id, q.mod, nil)
			got, gerr := esess.SMP(ctx, engine.LID(ep.lid), mad.MethodGet, q.id, q.mod, nil)
			if (werr == nil) != (gerr == nil) || string(want) != string(got) {
				t.Errorf("%s %s mod %#x: embedded %x (%v), ibsim %x (%v)", what, smp.LayoutByID(q.id).Name, q.mod, got, gerr, want, werr)
			}
			n++
		}
		if ip.node.Type == topo.Switch && ip.num == 0 {
			continue
		}
		for _, id := range []uint16{perf.AttrPortRcvErrorDetails, perf.AttrPortVLXmitWaitCounters, perf.AttrPortFlowCtlCounters} {
			want, werr := isess.Perf(ctx, engine.LID(ip.lid), mad.MethodGet, id, uint8(ip.num), nil)
			got, gerr := esess.Perf(ctx, engine.LID(ep.lid), mad.MethodGet, id, uint8(ip.num), nil)
			if (werr == nil) != (gerr == nil) || string(want) != string(got) {
				t.Errorf("%s %s: embedded %x (%v), ibsim %x (%v)", what, perf.LayoutByID(id).Name, got, gerr, want, werr)
			}
			n++
		}
	}
	t.Logf("embedded simulator agreed with ibsim on %d queries", n)
}

var mlidLine = regexp.MustCompile(`(?m)^\s*0x(c[0-9a-f]{3})\s+(.*)$`)

// mftReadBack Sets two MLIDs of a switch's MulticastForwardingTable
// through the engine and requires ibroute -M to list exactly those MLIDs
// with the ports set (it prints an x in each member port's column).
func mftReadBack(t *testing.T, sess *engine.Session, tool func(...string) []byte, mp mixedPort) {
	var mft smp.MulticastForwardingTable
	mft.PortMask[0] = 1<<1 | 1<<3 // MLID 0xc000: ports 1 and 3
	mft.PortMask[5] = 1<<0 | 1<<2 // MLID 0xc005: ports 0 and 2
	if _, err := engine.Set(t.Context(), sess, engine.LID(mp.lid), 0, &mft); err != nil {
		t.Fatalf("%s: Set MFT: %v", mp.node.Desc, err)
	}
	out := string(tool("ibroute", "-M", strconv.Itoa(int(mp.lid))))
	if !strings.Contains(out, "2 valid mlids dumped") {
		t.Fatalf("%s: ibroute -M after the Set:\n%s", mp.node.Desc, out)
	}
	want := map[string]int{"c000": 2, "c005": 2}
	for _, m := range mlidLine.FindAllStringSubmatch(out, -1) {
		if n, ok := want[m[1]]; !ok || strings.Count(m[2], "x") != n {
			t.Errorf("%s: ibroute -M line 0x%s %q, want %d ports", mp.node.Desc, m[1], m[2], n)
		}
		delete(want, m[1])
	}
	if len(want) != 0 {
		t.Errorf("%s: ibroute -M does not list %v:\n%s", mp.node.Desc, want, out)
	}
}
