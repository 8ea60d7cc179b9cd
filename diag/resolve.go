package diag

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// Address resolution, once for every tool, the command line and Lua:
// what infiniband-diags' resolve_portid_str does with an address
// argument and the -L (the default), -G and -D flags. A LID is read by
// strtol(s, NULL, 0) and must be unicast (IB_LID_VALID, 1..0xbfff); a
// GUID by strtoull(s, NULL, 0), non-zero, then resolved to its port's LID
// through the SA's PathRecord (resolve_guid, ib_path_query_via), the
// tools then addressing the port by LID; a directed route by libibmad's
// str2drpath, each comma-separated element read with atoi into a byte
// (300 is port 44, "x" is 0), the first (the local port's place) kept as
// typed. The C functions take the longest number at the front and ignore
// the rest ("2abc" is LID 2); Address.ReadAs says when that is not what
// was typed, for a warning.

// AddrKind is how an address text is read.
type AddrKind int

const (
	// AddrLID is -L, the C tools' default: a LID.
	AddrLID AddrKind = iota
	// AddrGUID is -G: a port GUID.
	AddrGUID
	// AddrDR is -D: a directed route from the local port, "0,1,3".
	AddrDR
	// AddrTarget is ibscript's target text, as Lua and engine.ParseTarget
	// take it: "lid:5" (or "5"), "dr:0,1", "guid:0x...", "gid:fd00::2",
	// read strictly (no C leniency).
	AddrTarget
)

// String is the flag the kind stands for.
func (k AddrKind) String() string {
	switch k {
	case AddrLID:
		return "lid"
	case AddrGUID:
		return "guid"
	case AddrDR:
		return "dr"
	}
	return "target"
}

// Address is an address text read as the C tools read it.
type Address struct {
	// Target is the port addressed: by LID, directed route, or (before
	// Resolve) GUID or GID.
	Target engine.Target
	// ReadAs, when not "", is how text that is not a clean number or
	// route was read ("lid 2" for "2abc", "route 0,44" for "0,300"): the
	// command line warns with it.
	ReadAs string
}

// ParseAddress reads s as kind, without the fabric: what
// resolve_portid_str refuses before it asks anything (a LID of 0 or
// past 0xbfff, a GUID of 0, an empty route or one of more than 63 hops)
// is an error.
func ParseAddress(kind AddrKind, s string) (Address, error) {
	switch kind {
	case AddrDR:
		return parseRoute(s)
	case AddrTarget:
		t, err := engine.ParseTarget(s)
		return Address{Target: t}, err
	}
	name := kind.String()
	t, err := engine.ParseTarget(name + ":" + strings.TrimSpace(s))
	c := cAddress(kind, s)
	if c == strings.TrimSpace(s) {
		return Address{Target: t}, err
	}
	// Not a clean number: read as the C tools read it, when that reads
	// otherwise, and said.
	ct, cerr := engine.ParseTarget(name + ":" + c)
	if err == nil && sameTarget(t, ct) {
		return Address{Target: t}, nil
	}
	if cerr != nil {
		return Address{}, cerr
	}
	return Address{Target: ct, ReadAs: name + " " + strings.TrimPrefix(ct.String(), name+":")}, nil
}

// parseRoute reads s as libibmad's str2drpath does, the first element
// kept as typed: libibmad sends it as the SMP's InitialPath[0], which
// SMAs skip, and prints it in the route ("DR path ...; 5,1"). An egress
// port 0 is sent as typed too: what it reaches is the fabric's answer,
// as for the C tools. A route is refused only where the C tool cannot
// send one: no element, or more hops than a directed route has.
func parseRoute(s string) (Address, error) {
	first, _, _ := strings.Cut(s, ",")
	elems := strings.Split(cAddress(AddrDR, s), ",")
	switch {
	case strings.TrimSpace(s) == "":
		return Address{}, fmt.Errorf("empty directed route")
	case len(elems)-1 > smp.MaxHops:
		return Address{}, fmt.Errorf("directed route %q: %d hops, a directed route has at most %d", s, len(elems)-1, smp.MaxHops)
	}
	path := make([]uint8, len(elems))
	path[0] = uint8(cAtoi(first))
	for i, e := range elems[1:] {
		v, _ := strconv.ParseUint(e, 10, 8)
		path[i+1] = uint8(v)
	}
	a := Address{Target: engine.Target{Kind: engine.ByDR, Path: path}}
	if shown := strings.TrimPrefix(a.Target.String(), "dr:"); shown != strings.TrimSpace(s) {
		a.ReadAs = "route " + shown
	}
	return a, nil
}

// ParseCombined reads s, smpquery -c's "<lid> <route>" (its two
// arguments joined by a space, as smpquery joins them), as
// resolve_portid_str reads an IB_DEST_DRSLID address: the LID by
// strtol(s, &end, 0), which must be unicast, then the route from the
// character after the next (str2drpath, as -D reads it).
func ParseCombined(s string) (Address, error) {
	mag, neg, rest, ok := topo.Strtoull(s)
	if !ok || neg || mag == 0 || mag > 0xbfff {
		return Address{}, fmt.Errorf("combined route %q: the LID is not unicast (1..0xbfff)", s)
	}
	if rest != "" {
		rest = rest[1:] // the separator, whatever it is
	}
	r, err := parseRoute(rest)
	if err != nil {
		return Address{}, fmt.Errorf("combined route %q: %w", s, err)
	}
	return Address{Target: engine.Combined(uint16(mag), r.Target.Path...)}, nil
}

// CombinedPortID is portid2str of a combined route sent from a port of
// LID self: "Lid 6 DR path slid 2; dlid 65535; 0,12", "Lid 6" for the
// LID's node itself (a route of no hop).
func CombinedPortID(t engine.Target, self uint16) string {
	if len(t.Path) <= 1 {
		return LIDAddress(t.LID)
	}
	if self == 0 {
		self = 0xffff
	}
	return LIDAddress(t.LID) + " " + DRAddress(t.Path, self, 0xffff)
}

// Resolve reads s as ParseAddress does and resolves a GUID to its
// port's LID through the SA's PathRecord, as resolve_portid_str does
// before the tool sends anything (the tools then print "Lid N"). Other
// addresses need no fabric. An error is the C tools' -1: the caller
// prints its own phrase ("can't resolve destination port ARG").
func (e *Env) Resolve(ctx context.Context, kind AddrKind, s string) (Address, error) {
	a, err := ParseAddress(kind, s)
	if err != nil {
		return a, err
	}
	a.Target, err = e.ResolveTarget(ctx, a.Target)
	return a, err
}

// ResolveTarget is Resolve's second step on a target already read: a
// GUID becomes its port's LID (the SA's PathRecord), anything else is
// returned as it is.
func (e *Env) ResolveTarget(ctx context.Context, t engine.Target) (engine.Target, error) {
	if t.Kind != engine.ByGUID {
		return t, nil
	}
	lid, err := LIDOfGUID(ctx, e, t.GUID)
	if err != nil {
		return engine.Target{}, err
	}
	return engine.LID(lid), nil
}

// sameTarget: a and b address the same port.
func sameTarget(a, b engine.Target) bool {
	return a.Kind == b.Kind && a.LID == b.LID && a.GUID == b.GUID && slices.Equal(a.Path, b.Path)
}

// cAddress is the address s of the given kind as the C tools read it,
// written so that engine.ParseTarget reads the same: a LID in decimal, a
// GUID in hex, a route with 0 first and each element as the byte atoi
// gives.
func cAddress(kind AddrKind, s string) string {
	switch kind {
	case AddrLID:
		v, neg, _, _ := topo.Strtoull(s)
		if neg {
			return "-" + strconv.FormatUint(v, 10)
		}
		return strconv.FormatUint(v, 10)
	case AddrGUID:
		v, neg, _, _ := topo.Strtoull(s)
		if neg {
			v = -v
		}
		return "0x" + strconv.FormatUint(v, 16)
	case AddrDR:
		// str2drpath: elements up to the end or a trailing comma; the
		// first is the local port's place.
		parts := strings.Split(s, ",")
		if len(parts) > 1 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		var b strings.Builder
		b.WriteByte('0')
		for _, p := range parts[1:] {
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(int(uint8(cAtoi(p)))))
		}
		return b.String()
	}
	return s
}

// cAtoi is glibc's atoi(s), (int)strtol(s, NULL, 10): blanks, a sign,
// decimal digits, 0 when none; past the range of a long it saturates
// (LONG_MAX, LONG_MIN), as strtol does.
func cAtoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v uint64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v > (1<<63-1-uint64(s[i]-'0'))/10 {
			v = 1<<63 - 1
			if neg {
				v = 1 << 63
			}
			continue
		}
		v = v*10 + uint64(s[i]-'0')
	}
	if neg {
		return -int64(v)
	}
	return int64(v)
}

// RouteAddress is the switch t as ibroute and dump_fts address it: a
// GUID resolved to its port's LID (ResolveTarget, as ibroute's
// resolve_portid_str), and the address text the table's header prints
// ("Lid 2", "DR path slid 65535; dlid 65535; 0,1").
func (e *Env) RouteAddress(ctx context.Context, t engine.Target) (engine.Target, string, error) {
	t, err := e.ResolveTarget(ctx, t)
	if err != nil {
		return t, "", err
	}
	switch t.Kind {
	case engine.ByLID:
		return t, LIDAddress(t.LID), nil
	case engine.ByDR:
		return t, DRAddress(t.Path, 0xffff, 0xffff), nil
	}
	return t, "", nil
}
