// Package topotest holds what tests of topology loaders share: judging a
// fabric that went through a writer and a reader against the original.
package topotest

import (
	"fmt"

	"github.com/ibscript/ibscript/topo"
)

// SameByGUID reports how b differs from a, nodes matched by GUID (unique
// in both: the loaders refuse two nodes with one GUID): type, description,
// port count, and each port's GUID and peer; "" when they agree.
// topo.Diff matches nodes whose GUID is 0 by description instead, which
// need not be unique, so it cannot judge a round trip of such fabrics.
func SameByGUID(a, b *topo.Fabric) string {
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("%d nodes, then %d", len(a.Nodes), len(b.Nodes))
	}
	idx := make(map[uint64]*topo.Node, len(b.Nodes))
	for _, n := range b.Nodes {
		idx[n.GUID] = n
	}
	for _, n := range a.Nodes {
		m := idx[n.GUID]
		if m == nil || m.Type != n.Type || m.Desc != n.Desc || m.NumPorts != n.NumPorts || len(m.Ports) != len(n.Ports) {
			return fmt.Sprintf("node 0x%x %q differs", n.GUID, n.Desc)
		}
		for i, p := range n.Ports {
			if d := samePort(p, m.Ports[i]); d != "" {
				return fmt.Sprintf("node 0x%x port %d%s", n.GUID, i, d)
			}
		}
	}
	return ""
}

// samePort reports how q differs from p: its GUID and peer.
func samePort(p, q *topo.Port) string {
	switch {
	case (p == nil) != (q == nil):
		return ": present in one only"
	case p == nil:
		return ""
	case p.GUID != q.GUID || (p.Remote == nil) != (q.Remote == nil):
		return " differs"
	case p.Remote != nil && (p.Remote.Node.GUID != q.Remote.Node.GUID || p.Remote.Num != q.Remote.Num):
		return ": another peer"
	}
	return ""
}
