package sa

import (
	"github.com/ibscript/ibscript/mad"
)

// Description returns the node description text.
func (n *NodeRec) Description() string { return string(mad.TrimNUL(n.NodeDescription[:])) }
