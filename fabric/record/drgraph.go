package record

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/ibscript/ibscript/mad"
)

// Directed-route SMPs name their target by a path, and a concurrent sweep
// may reach a node by another path than the recorded run did. drGraph,
// learned from the recording's NodeInfo answers, resolves a path to the
// node and port it arrives at, so replay can answer a request on a new
// path with what the same node's SMA answered on another.

// DR SMP layout (IBA 14.2.1.2): hop pointer and count in the header,
// NodeInfo in the data, the initial path after it.
const (
	drHopPtr    = 6
	drHopCnt    = 7
	drData      = 64
	drInitPath  = 128
	niNodeType  = drData + 2
	niNodeGUID  = drData + 12
	niLocalPort = drData + 36
	attrNI      = 0x0011
	nodeSwitch  = 2
)

type nodePort struct {
	guid uint64
	port uint8
}

// drGraph maps a node's egress port to the node and port beyond it; the
// local node is at the zero-hop path. switchNI holds, by node GUID, a
// recorded NodeInfo answer of each switch: a switch's SMA gives the same
// NodeInfo on every port but for LocalPortNum (IBA 14.2.5.3).
type drGraph struct {
	local    nodePort
	hasLocal bool
	edges    map[nodePort]nodePort
	switchNI map[uint64]answer
}

func isDRReq(d []byte) bool {
	return len(d) == mad.Size && d[1] == mad.ClassSubnDR && d[3]&0x80 == 0 && int(d[drHopCnt]) < 64
}

func path(d []byte) []byte { return d[drInitPath+1 : drInitPath+1+int(d[drHopCnt])] }

// learnDR builds the graph from NodeInfo Get requests and their answers:
// a NodeInfo on path p answered by node N at port q says both that p's
// last hop leads to N port q and that N port q leads back to the node
// before it at that hop's port (a link is learned in both directions,
// whichever end the recorded sweep probed it from).
func learnDR(events []Event) drGraph {
	g := drGraph{edges: map[nodePort]nodePort{}, switchNI: map[uint64]answer{}}
	sent := map[lowTID]int64{}
	paths := map[lowTID][]byte{}
	at := map[string]nodePort{}
	for lt, e := range byTID(events) {
		switch e.Op {
		case OpSend:
			if isDRReq(e.Data) && binary.BigEndian.Uint16(e.Data[16:]) == attrNI {
				paths[lt] = append([]byte(nil), path(e.Data)...)
				sent[lt] = e.T
			}
		case OpRecv:
			p, ok := paths[lt]
			if !ok || len(e.Data) != mad.Size || e.Status != 0 {
				continue
			}
			delete(paths, lt)
			np := nodePort{binary.BigEndian.Uint64(e.Data[niNodeGUID:]), e.Data[niLocalPort]}
			at[string(p)] = np
			if _, ok := g.switchNI[np.guid]; !ok && e.Data[niNodeType] == nodeSwitch {
				g.switchNI[np.guid] = answer{e, time.Duration(max(e.T-sent[lt], 0))}
			}
			if len(p) == 0 {
				g.local, g.hasLocal = np, true
			}
		}
	}
	for p, np := range at {
		if len(p) == 0 {
			continue
		}
		if prev, ok := at[p[:len(p)-1]]; ok {
			out := nodePort{prev.guid, p[len(p)-1]}
			g.edges[out] = np
			if _, ok := g.edges[np]; !ok {
				g.edges[np] = out
			}
		}
	}
	return g
}

// dest is the node and port a DR request's path arrives at, when the
// graph resolves it.
func (g drGraph) dest(d []byte) (nodePort, bool) {
	if !g.hasLocal || !isDRReq(d) {
		return nodePort{}, false
	}
	cur := g.local
	for _, e := range path(d) {
		if e == 0 {
			return nodePort{}, false
		}
		next, ok := g.edges[nodePort{cur.guid, e}]
		if !ok {
			return nodePort{}, false
		}
		cur = next
	}
	return cur, true
}

// switchNodeInfo is the NodeInfo a switch's SMA answers a NodeInfo Get
// arriving at port np.port: a recorded answer of the same switch with
// that LocalPortNum. It serves a probe the recorded sweep never sent,
// across a link it probed from the other end only (which end a
// concurrent sweep probes a link from follows the order answers come in).
func (g drGraph) switchNodeInfo(d []byte) (answer, bool) {
	if !isDRReq(d) || binary.BigEndian.Uint16(d[16:]) != attrNI || d[3] != mad.MethodGet {
		return answer{}, false
	}
	np, ok := g.dest(d)
	if !ok {
		return answer{}, false
	}
	a, ok := g.switchNI[np.guid]
	if !ok {
		return answer{}, false
	}
	a.Data = slices.Clone(a.Data)
	a.Data[niLocalPort] = np.port
	return a, true
}

// canonKey is a DR request's key with its path replaced by the node and
// port it arrives at (a switch's port only for NodeInfo), when the graph
// resolves it.
func (g drGraph) canonKey(d []byte) (string, bool) {
	cur, ok := g.dest(d)
	if !ok {
		return "", false
	}
	// A switch answers alike on every port but for NodeInfo's
	// LocalPortNum (its PortInfo's attribute modifier names the port):
	// what reaches it on any port gets what reached it on another.
	if _, ok := g.switchNI[cur.guid]; ok && binary.BigEndian.Uint16(d[16:]) != attrNI {
		cur.port = 0
	}
	b := binary.BigEndian.AppendUint64(nil, cur.guid)
	b = append(b, cur.port)
	b = append(b, d[:drHopPtr]...)
	b = append(b, d[tidEnd:drInitPath]...)
	return string(b), true
}
