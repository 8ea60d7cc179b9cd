package engine_test

import (
	"sync"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// fakeSMA is a fabrictest.Responder that answers SMPs for a topo.Fabric:
// directed routes are walked hop by hop from the root port, LID-routed SMPs
// go to the port holding the LID. It is the engine tests' stand-in for an
// SMA on every node; sim/ is the real one.
type fakeSMA struct {
	f        *topo.Fabric
	root     *topo.Node
	rootPort int

	mu sync.Mutex // guards the hooks' state and lids
	// drop, when set, makes the node silent.
	drop func(n *topo.Node) bool
	// seen is called for every request that reaches its node.
	seen func(n *topo.Node, req []byte)
	lids map[uint16]*topo.Port
}

func loadFake(t testing.TB, path, root string, rootPort int) *fakeSMA {
	t.Helper()
	f, err := topo.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeSMA{f: f, root: f.NodeByID(root), rootPort: rootPort, lids: map[uint16]*topo.Port{}}
	if s.root == nil {
		t.Fatalf("no node %q in %s", root, path)
	}
	lid := uint16(1)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || (n.Type == topo.Switch && p.Num != 0) {
				continue
			}
			p.LID = lid
			s.lids[lid] = p
			lid++
		}
	}
	return s
}

// walk follows the directed route of the DR SMP b from the root.
func (s *fakeSMA) walk(b []byte) (*topo.Node, int, bool) {
	hc := int(smp.HopCount(b))
	ip := smp.InitialPath(b)
	cur, arrival := s.root, s.rootPort
	if cur.Type == topo.Switch {
		arrival = 0
	}
	for i := 1; i <= hc; i++ {
		p := int(ip[i])
		if i > 1 && cur.Type != topo.Switch {
			return nil, 0, false
		}
		if i == 1 && cur.Type != topo.Switch && p != s.rootPort {
			return nil, 0, false
		}
		if p >= len(cur.Ports) || cur.Ports[p] == nil || cur.Ports[p].Remote == nil {
			return nil, 0, false
		}
		r := cur.Ports[p].Remote
		cur, arrival = r.Node, r.Num
	}
	return cur, arrival, true
}

// respond is a fabrictest.PacketResponder: p.Addr is where the engine sent
// the SMP.
func (s *fakeSMA) respond(p *fabric.Packet) ([]byte, bool) {
	req := p.Data
	if len(req) < mad.Size || mad.IsResponse(req) {
		return nil, false
	}
	var (
		n       *topo.Node
		arrival int
	)
	switch mad.MgmtClassOf(req) {
	case mad.ClassSubnDR:
		var ok bool
		if n, arrival, ok = s.walk(req); !ok {
			return nil, false
		}
	case mad.ClassPerf:
		port := s.lids[p.Addr.LID]
		if port == nil || mad.AttrIDOf(req) != perf.AttrPortCounters {
			return nil, false
		}
		b := append([]byte(nil), req...)
		var pc perf.PortCounters
		pc.UnmarshalBinary(perf.Data(b))
		pc.PortXmitData = uint32(port.Node.GUID) + uint32(pc.PortSelect)
		pc.AppendBinary(perf.Data(b)[:0])
		b[3] = mad.MethodGetResp
		return b, true
	case mad.ClassSubnLID:
		port := s.lids[p.Addr.LID]
		if port == nil {
			return nil, false
		}
		n, arrival = port.Node, port.Num
	default:
		return nil, false
	}
	s.mu.Lock()
	drop, seen := s.drop, s.seen
	s.mu.Unlock()
	if drop != nil && drop(n) {
		return nil, false
	}
	if seen != nil {
		seen(n, req)
	}
	return s.answer(req, n, arrival), true
}

func (s *fakeSMA) answer(req []byte, n *topo.Node, arrival int) []byte {
	b := append([]byte(nil), req...)
	var status uint16
	data := smp.Data(b)[:0]
	mod := mad.AttrModOf(req)
	switch mad.AttrIDOf(req) {
	case smp.AttrNodeInfo:
		ni := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: uint8(n.Type), NumPorts: uint8(n.NumPorts),
			SystemImageGUID: n.SysGUID, NodeGUID: n.GUID, PortGUID: n.Ports[arrival].GUID, PartitionCap: 32,
			DeviceID: n.DeviceID, VendorID: n.VendorID, LocalPortNum: uint8(arrival)}
		ni.AppendBinary(data)
	case smp.AttrNodeDescription:
		nd := smp.NodeDescription{NodeString: n.Desc}
		nd.AppendBinary(data)
	case smp.AttrSwitchInfo:
		if n.Type != topo.Switch {
			status = mad.StatusMethodAttrUnsup
			break
		}
		si := smp.SwitchInfo{LinearFDBCap: 0xc000, LinearFDBTop: 64, EnhancedPort0: true}
		si.AppendBinary(data)
	case smp.AttrPortInfo:
		pn := int(mod)
		if pn == 0 && n.Type != topo.Switch {
			pn = arrival
		}
		if pn >= len(n.Ports) || n.Ports[pn] == nil {
			status = mad.StatusInvalidField
			break
		}
		p := n.Ports[pn]
		pi := smp.PortInfo{LocalPortNum: uint8(arrival), LinkWidthEnabled: 3, LinkWidthSupported: 3,
			LinkSpeedSupported: 1, LinkSpeedEnabled: 1, PortState: smp.PortStateDown, PortPhysicalState: smp.PhysStatePolling}
		pi.LID = n.EndPort(pn).LID
		if p.Remote != nil || pn == 0 {
			pi.PortState, pi.PortPhysicalState = smp.PortStateActive, smp.PhysStateLinkUp
			pi.LinkWidthActive, pi.LinkSpeedActive = 2, 1
		}
		if pn == 0 && n.Type == topo.Switch {
			pi.PortPhysicalState = 0
		}
		pi.AppendBinary(data)
	default:
		status = mad.StatusMethodAttrUnsup
	}
	smp.MakeGetResp(b, status)
	return b
}
