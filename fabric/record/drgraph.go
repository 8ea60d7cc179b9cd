package record

import (
	"encoding/binary"

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
	niNodeGUID  = drData + 12
	niLocalPort = drData + 39
	attrNI      = 0x0011
)

type nodePort struct {
	guid uint64
	port uint8
}

// drGraph maps a node's egress port to the node and port beyond it; the
// local node is at the zero-hop path.
type drGraph struct {
	local    nodePort
	hasLocal bool
	edges    map[nodePort]nodePort
}

func isDRReq(d []byte) bool {
	return len(d) == mad.Size && d[1] == mad.ClassSubnDR && d[3]&0x80 == 0 && int(d[drHopCnt]) < 64
}

func path(d []byte) []byte { return d[drInitPath+1 : drInitPath+1+int(d[drHopCnt])] }

// learnDR builds the graph from NodeInfo Get requests and their answers.
func learnDR(events []Event) drGraph {
	g := drGraph{edges: map[nodePort]nodePort{}}
	paths := map[lowTID][]byte{}
	at := map[string]nodePort{}
	for _, e := range events {
		t, ok := tidOf(e.Data)
		if !ok {
			continue
		}
		lt := lowTID{e.Agent, t}
		switch e.Op {
		case OpSend:
			if isDRReq(e.Data) && binary.BigEndian.Uint16(e.Data[16:]) == attrNI {
				paths[lt] = append([]byte(nil), path(e.Data)...)
			}
		case OpRecv:
			p, ok := paths[lt]
			if !ok || len(e.Data) != mad.Size || e.Status != 0 {
				continue
			}
			delete(paths, lt)
			np := nodePort{binary.BigEndian.Uint64(e.Data[niNodeGUID:]), e.Data[niLocalPort]}
			at[string(p)] = np
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
			g.edges[nodePort{prev.guid, p[len(p)-1]}] = np
		}
	}
	return g
}

// canonKey is a DR request's key with its path replaced by the node and
// port it arrives at, when the graph resolves it.
func (g drGraph) canonKey(d []byte) (string, bool) {
	if !g.hasLocal || !isDRReq(d) {
		return "", false
	}
	cur := g.local
	for _, e := range path(d) {
		if len(path(d)) > 0 && e == 0 {
			return "", false
		}
		next, ok := g.edges[nodePort{cur.guid, e}]
		if !ok {
			return "", false
		}
		cur = next
	}
	b := binary.BigEndian.AppendUint64(nil, cur.guid)
	b = append(b, cur.port)
	b = append(b, d[:drHopPtr]...)
	b = append(b, d[tidEnd:drInitPath]...)
	return string(b), true
}
