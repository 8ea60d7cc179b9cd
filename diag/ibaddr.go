package diag

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// IBAddrOptions are ibaddr's. Without a target it shows the local port.
// ShowGID is -g, ShowLID -l (hex), ShowLIDDec -L; none of them shows
// both GID and the hex LID range, as ibaddr does.
type IBAddrOptions struct {
	Target     *engine.Target `pos:"0" lua:"target"`
	Port       int            `pos:"1" lua:"port" max:"255"` // the [port] argument
	ShowGID    bool           `flag:"g,gid_show" help:"show gid address only" lua:"gid_show"`
	ShowLID    bool           `flag:"l,lid_show" help:"show lid range only" lua:"lid_show"`
	ShowLIDDec bool           `flag:"L,Lid_show" help:"show lid range (in decimal) only" lua:"lid_show_decimal"`
}

// ibAddrTool is ibaddr.
var ibAddrTool = NewTool(Tool{
	Name:    "ibaddr",
	Lua:     "ibaddr",
	Summary: "a port's GID and LID range",
	Args:    "[<lid|dr_path|guid>] [<port>]",
	Example: []string{"1"},
	LuaDoc: `ibaddr({target = nil | LID | "dr:0,1", port = 0, gid_show, lid_show, lid_show_decimal}) -> {gid, lid_start, lid_end}: ` +
		`a port's GID and LID range (the local port's without target)`,
	LuaExample: `local a = diag.ibaddr{target = 1}
print(a.gid, a.lid_start, a.lid_end)`,
}, IBAddrOptions{}, IBAddrRun, BuilderText(WriteIBAddr))

// IBAddr is a port's addresses: its GID and its LID range.
type IBAddr struct {
	GID      string `json:"gid"`
	LIDStart uint16 `json:"lid_start"`
	LIDEnd   uint16 `json:"lid_end"`
	// What the options asked to show.
	ShowGID bool `json:"-"`
	ShowLID int  `json:"-"` // 1 hex, -1 decimal, 0 none
}

// IBAddrRun reads the port's addresses as ibaddr does: NodeInfo for the
// port GUID, PortInfo for the GID prefix, LID and LMC.
func IBAddrRun(ctx context.Context, env *Env, o IBAddrOptions) (*IBAddr, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: ibaddr: no session")
	}
	s := env.Session
	r := &IBAddr{ShowGID: o.ShowGID}
	switch {
	case o.ShowLIDDec:
		r.ShowLID = -1
	case o.ShowLID:
		r.ShowLID = 1
	}
	if r.ShowLID == 0 && !r.ShowGID {
		r.ShowLID, r.ShowGID = 1, true
	}
	port := o.Port
	var t engine.Target
	if o.Target != nil {
		t = *o.Target
	} else {
		// ibaddr's resolve_self: the port's own LID, or where it has
		// none (no SM reached it) the directed route to itself.
		pa := s.Port()
		t, port = engine.LID(pa.LID), pa.PortNum
		if pa.LID == 0 {
			t = engine.DR()
		}
	}
	ni, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrNodeInfo, 0, nil)
	if err != nil {
		return nil, &ToolError{Msg: "can't resolve requested address", Err: err}
	}
	pi, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrPortInfo, uint32(port), nil)
	if err != nil {
		return nil, &ToolError{Msg: "can't resolve requested address", Err: err}
	}
	info := decode[smp.PortInfo](pi)
	r.LIDStart, r.LIDEnd = info.LID, info.LID+uint16(1)<<info.LMC-1
	r.GID = GIDString(info.GIDPrefix, decode[smp.NodeInfo](ni).PortGUID)
	return r, nil
}

// WriteIBAddr prints r as ibaddr does.
func WriteIBAddr(b *strings.Builder, r *IBAddr) {
	if r.ShowGID {
		fmt.Fprintf(b, "GID %s ", r.GID)
	}
	switch {
	case r.ShowLID > 0:
		fmt.Fprintf(b, "LID start 0x%x end 0x%x", r.LIDStart, r.LIDEnd)
	case r.ShowLID < 0:
		fmt.Fprintf(b, "LID start %d end %d", r.LIDStart, r.LIDEnd)
	}
	b.WriteByte('\n')
}

// GIDString formats a GID as glibc's inet_ntop(AF_INET6) does: the
// longest (first) run of two or more zero groups as "::", and the last 32
// bits as a dotted quad when the first 96 bits are zero (or ::ffff:).
func GIDString(prefix, guid uint64) string {
	var w [8]uint16
	for i := 0; i < 4; i++ {
		w[i] = uint16(prefix >> (48 - 16*i))
		w[4+i] = uint16(guid >> (48 - 16*i))
	}
	bestBase, bestLen := -1, 0
	for i := 0; i < 8; {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && w[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestBase, bestLen = i, j-i
		}
		i = j
	}
	if bestLen < 2 {
		bestBase = -1
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if bestBase != -1 && i >= bestBase && i < bestBase+bestLen {
			if i == bestBase {
				b.WriteByte(':')
			}
			continue
		}
		if i != 0 {
			b.WriteByte(':')
		}
		if i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && w[5] == 0xffff)) {
			fmt.Fprintf(&b, "%d.%d.%d.%d", w[6]>>8, w[6]&0xff, w[7]>>8, w[7]&0xff)
			return b.String()
		}
		fmt.Fprintf(&b, "%x", w[i])
	}
	if bestBase != -1 && bestBase+bestLen == 8 {
		b.WriteByte(':')
	}
	return b.String()
}
