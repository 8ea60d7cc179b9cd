package engine

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/fabric"
)

// TargetKind says how a Target addresses its node.
type TargetKind uint8

// Target kinds.
const (
	ByLID  TargetKind = iota + 1 // LID-routed
	ByDR                         // directed route from the local port (or, with a LID, from that LID's node)
	ByGUID                       // node or port GUID, resolved through discovery
	ByGID                        // port GID: GMPs with a GRH (RoCE ports, IB global routing)
)

// maxHops is the longest directed route (IBA: HopCount 0..63).
const maxHops = 63

// Target names the node (or port) a MAD is for. Make one with ParseTarget,
// LID, DR or GUID.
type Target struct {
	Kind TargetKind
	LID  uint16
	// Path is a directed route in the smpquery -D convention: Path[0]
	// stands for the local port, Path[i] is the egress port at hop i. {0}
	// is the local port's own node. Path[0] is 0 as ParseTarget reads it;
	// another value (the C tools' -D 5,1) goes out as the SMP's
	// InitialPath[0], which SMAs skip, as libibmad sends it.
	Path []uint8
	// LID of a ByDR target, when not 0, makes it libibmad's combined
	// route (smpquery -c): the SMP is LID-routed to LID, then directed
	// along Path from there, with DrSLID the local port's LID (the
	// responder LID-routes its answer back to it) and DrDLID permissive.
	GUID uint64
	// GID is a ByGID target's port GID. GMPs to it carry a GRH; on
	// InfiniBand they are LID-routed to the port whose GUID is the GID's
	// interface ID (LID is filled in by the Session), on RoCE the GID is
	// the whole address.
	GID [16]byte

	// Via, when not nil, is the local port a ByDR target's route starts
	// from when that is not the session's: a merged planarized
	// discovery's Target for a node of another plane sets it to that
	// plane's SMI port. The Session sends such a target's SMPs from a
	// session of its own on that port, opened for the call.
	Via *Via
}

// Via is a local port of Fabric (port PortNum of CA CAName) a directed
// route starts from (Target.Via).
type Via struct {
	Fabric  fabric.Fabric
	CAName  string
	PortNum int
}

// LID returns a LID-routed target.
func LID(lid uint16) Target { return Target{Kind: ByLID, LID: lid} }

// DR returns a directed-route target through the given egress ports; DR()
// is the local node ("dr:0").
func DR(ports ...uint8) Target {
	return Target{Kind: ByDR, Path: append([]uint8{0}, ports...)}
}

// Combined returns a combined route: LID-routed to lid, then directed
// through path (smpquery -c's "6 0,12": path[0] is 0, the LID's port's
// place). Combined(lid, 0) is the LID's node, by a DR SMP.
func Combined(lid uint16, path ...uint8) Target {
	return Target{Kind: ByDR, LID: lid, Path: path}
}

// GUID returns a target named by node or port GUID.
func GUID(guid uint64) Target { return Target{Kind: ByGUID, GUID: guid} }

// GID returns a target named by port GID ("gid:fd00::2").
func GID(gid [16]byte) Target { return Target{Kind: ByGID, GID: gid} }

// String formats t as ParseTarget reads it: "lid:5", "dr:0,1,3",
// "lid:5+dr:0,3" (combined), "guid:0x0002c90300001234".
func (t Target) String() string {
	switch t.Kind {
	case ByLID:
		return "lid:" + strconv.Itoa(int(t.LID))
	case ByDR:
		var sb strings.Builder
		if t.LID != 0 {
			sb.WriteString("lid:" + strconv.Itoa(int(t.LID)) + "+")
		}
		sb.WriteString("dr:")
		for i, p := range t.Path {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(int(p)))
		}
		if t.Via != nil {
			fmt.Fprintf(&sb, " from %s port %d", t.Via.CAName, t.Via.PortNum)
		}
		return sb.String()
	case ByGUID:
		return fmt.Sprintf("guid:0x%016x", t.GUID)
	case ByGID:
		return "gid:" + netip.AddrFrom16(t.GID).String()
	}
	return "invalid target"
}

// ErrBadTarget is wrapped by ParseTarget's errors.
var ErrBadTarget = errors.New("bad target")

// ParseTarget parses a target, the one place targets are read:
//
//	lid:5, lid:0x5, 5, 0x5   LID-routed (1..0xbfff, unicast)
//	dr:0,1,3                 directed route, smpquery -D style: a leading
//	                         0 (the local port), then one egress port per
//	                         hop; "dr:0" is the local port's node
//	guid:0x0002c90300001234  node or port GUID, resolved by discovery
//	gid:fd00::2              port GID (IPv6 text): GMPs go with a GRH,
//	                         as RoCE ports need; not for SMPs
//	lid:6+dr:0,12            combined route (smpquery -c): LID-routed to
//	                         LID 6, then directed from there; SMPs only
//
// Errors wrap ErrBadTarget and quote the input.
func ParseTarget(s string) (Target, error) {
	bad := func(why string, args ...any) (Target, error) {
		return Target{}, fmt.Errorf("target %q: %s: %w", s, fmt.Sprintf(why, args...), ErrBadTarget)
	}
	if l, r, ok := strings.Cut(strings.TrimSpace(s), "+"); ok {
		lt, err := ParseTarget(l)
		if err != nil || lt.Kind != ByLID {
			return bad("a combined route is lid:N+dr:PATH")
		}
		rt, err := ParseTarget(r)
		if err != nil || rt.Kind != ByDR || rt.LID != 0 {
			return bad("a combined route is lid:N+dr:PATH")
		}
		return Combined(lt.LID, rt.Path...), nil
	}
	kind, rest, found := strings.Cut(strings.TrimSpace(s), ":")
	if !found {
		kind, rest = "lid", kind
	}
	switch strings.ToLower(kind) {
	case "lid":
		v, err := strconv.ParseUint(rest, 0, 16)
		if err != nil {
			return bad("LID %q is not a number of 16 bits", rest)
		}
		if v == 0 || v > 0xbfff {
			return bad("LID %#x is not a unicast LID (1..0xbfff)", v)
		}
		return LID(uint16(v)), nil
	case "dr":
		if rest == "" {
			return bad("empty path")
		}
		parts := strings.Split(rest, ",")
		if len(parts)-1 > maxHops {
			return bad("%d hops, at most %d", len(parts)-1, maxHops)
		}
		path := make([]uint8, len(parts))
		for i, p := range parts {
			v, err := strconv.ParseUint(strings.TrimSpace(p), 0, 8)
			if err != nil {
				return bad("port %q is not a number 0..255", p)
			}
			if i == 0 && v != 0 {
				return bad("a path starts with 0, the local port (smpquery -D convention)")
			}
			if i > 0 && v == 0 {
				return bad("hop %d: egress port 0", i)
			}
			path[i] = uint8(v)
		}
		return Target{Kind: ByDR, Path: path}, nil
	case "guid":
		v, err := strconv.ParseUint(rest, 0, 64)
		if err != nil {
			return bad("GUID %q is not a 64-bit number", rest)
		}
		if v == 0 {
			return bad("GUID 0")
		}
		return GUID(v), nil
	case "gid":
		a, err := netip.ParseAddr(rest)
		if err != nil || a.Zone() != "" {
			return bad("GID %q is not IPv6 text (fd00::2, fe80::2:c903:a0:1)", rest)
		}
		if a.IsUnspecified() {
			return bad("GID ::")
		}
		return GID(a.As16()), nil
	}
	return bad("unknown kind %q (want lid:, dr:, guid: or gid:)", kind)
}

// destKey names a destination node for the scheduler without allocating:
// the DLID, the node GUID, or a 64-bit hash of the directed route. Two
// routes that hash alike only share a queue (their SMPs go one at a time),
// which costs parallelism, never correctness.
type destKey uint64

func (t Target) key() destKey {
	switch t.Kind {
	case ByLID:
		return destKey(uint64(ByLID)<<56 | uint64(t.LID))
	case ByDR:
		// FNV-1a over the route, with the kind in the top byte.
		h := uint64(14695981039346656037) ^ uint64(t.LID)
		for _, b := range t.Path {
			h ^= uint64(b)
			h *= 1099511628211
		}
		return destKey(uint64(ByDR)<<56 | h&(1<<56-1))
	case ByGID:
		h := uint64(14695981039346656037)
		for _, b := range t.GID {
			h ^= uint64(b)
			h *= 1099511628211
		}
		return destKey(uint64(ByGID)<<56 | h&(1<<56-1))
	}
	return guidKey(t.GUID)
}

// guidKey keys a node by GUID. GUIDs are 64 bits; folding the top byte
// into the kind keeps the key one word (a clash is a shared queue).
func guidKey(guid uint64) destKey { return destKey(uint64(ByGUID)<<56 ^ guid) }
