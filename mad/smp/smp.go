package smp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/mad"
)

// Version is the class version of SubnMgmt (both 0x01 and 0x81).
const Version uint8 = 1

// PermissiveLID is the DrSLID/DrDLID of a purely directed route.
const PermissiveLID uint16 = 0xFFFF

// MaxHops is the largest HopCount of a directed-route SMP.
const MaxHops = 63

// SMP framing rows: mad-formats.md section 6, tables "LID-routed SMP
// (class 0x01)" and "Directed-route SMP (class 0x81)". The common header
// rows come from mad.HeaderLayout(); the DR table splits its Status into the D
// bit and a 15-bit status and its ClassSpecific into HopPointer and
// HopCount.
var (
	smpMKey = mad.Field{Name: "M_Key", LuaKey: "m_key", Bit: 192, Width: 64, Kind: mad.Hex}
	smpData = mad.Field{Name: "Data", LuaKey: "data", Bit: 512, Width: 512, Kind: mad.Bytes}

	drD           = mad.Field{Name: "D", LuaKey: "d", Bit: 32, Width: 1}
	drStatus      = mad.Field{Name: "Status", LuaKey: "status", Bit: 33, Width: 15, Kind: mad.Hex}
	drHopPointer  = mad.Field{Name: "HopPointer", LuaKey: "hop_pointer", Bit: 48, Width: 8}
	drHopCount    = mad.Field{Name: "HopCount", LuaKey: "hop_count", Bit: 56, Width: 8}
	drSLID        = mad.Field{Name: "DrSLID", LuaKey: "dr_slid", Bit: 256, Width: 16}
	drDLID        = mad.Field{Name: "DrDLID", LuaKey: "dr_dlid", Bit: 272, Width: 16}
	drInitialPath = mad.Field{Name: "InitialPath", LuaKey: "initial_path", Bit: 1024, Width: 512, Kind: mad.Bytes}
	drReturnPath  = mad.Field{Name: "ReturnPath", LuaKey: "return_path", Bit: 1536, Width: 512, Kind: mad.Bytes}
)

// SMPLayout returns a whole LID-routed SMP (class 0x01, 256 bytes): the common
// header, M_Key and the 64 bytes of attribute data at byte 64.
// It is shared and must not be modified.
func SMPLayout() *mad.Layout { return &layoutSMP }

var layoutSMP = mad.Layout{
	Name:   "SMP",
	Size:   mad.Size,
	Fields: frameFields(nil, smpMKey, smpData),
}

// DRSMPLayout returns a whole directed-route SMP (class 0x81, 256 bytes): the
// common header with the D bit, 15-bit status, HopPointer and HopCount in
// place of Status and ClassSpecific, then M_Key, DrSLID, DrDLID, the data at
// byte 64 and the InitialPath and ReturnPath vectors at bytes 128 and 192.
// It is shared and must not be modified.
func DRSMPLayout() *mad.Layout { return &layoutDRSMP }

var layoutDRSMP = mad.Layout{
	Name: "DRSMP",
	Size: mad.Size,
	Fields: frameFields([]string{"Status", "ClassSpecific"},
		drD, drStatus, drHopPointer, drHopCount, smpMKey, drSLID, drDLID,
		smpData, drInitialPath, drReturnPath),
}

// frameFields returns the common header rows, minus those named in drop,
// merged with rows in bit order.
func frameFields(drop []string, rows ...mad.Field) []mad.Field {
	var fs []mad.Field
	for _, f := range mad.HeaderLayout().Fields {
		if !slices.Contains(drop, f.Name) {
			fs = append(fs, f)
		}
	}
	fs = append(fs, rows...)
	slices.SortStableFunc(fs, func(a, b mad.Field) int { return a.Bit - b.Bit })
	return fs
}

// SMP is a whole subnet management packet, LID-routed (MgmtClass 0x01) or
// directed-route (MgmtClass 0x81), decoded from its 256 bytes.
//
// For a directed-route SMP, Header.Status holds the 15-bit status and the D
// bit is Direction; Header.ClassSpecific is not used (HopPointer and
// HopCount replace it) and decodes as 0. For a LID-routed SMP the DR fields
// decode as zero and are not encoded.
type SMP struct {
	mad.Header
	MKey uint64

	// Directed route only: D bit, hop fields, DR LIDs.
	Direction  bool // the D bit: false outbound (request), true returning
	HopPointer uint8
	HopCount   uint8
	DrSLID     uint16
	DrDLID     uint16

	Data [64]byte // the attribute

	// Directed route only: the path vectors.
	InitialPath [64]byte // [0] unused; [1..HopCount] egress ports
	ReturnPath  [64]byte // [0] unused; arrival ports, filled in on the way
}

// IsDR reports whether s is a directed-route SMP.
func (s *SMP) IsDR() bool { return s.MgmtClass == mad.ClassSubnDR }

// Layout returns DRSMPLayout or SMPLayout, whichever describes s.
func (s *SMP) Layout() *mad.Layout {
	if s.IsDR() {
		return &layoutDRSMP
	}
	return &layoutSMP
}

// UnmarshalBinary decodes the 256-byte SMP in b without allocating. The
// class byte chooses the framing: 0x81 is directed route, anything else is
// decoded as LID-routed. It returns an error wrapping mad.ErrTruncated when
// b is shorter than 256 bytes.
func (s *SMP) UnmarshalBinary(b []byte) error {
	if err := layoutSMP.Check(b); err != nil {
		return err
	}
	if err := s.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	s.MKey = smpMKey.Get(b)
	copy(s.Data[:], smpData.Slice(b))
	if !s.IsDR() {
		s.Direction, s.HopPointer, s.HopCount, s.DrSLID, s.DrDLID = false, 0, 0, 0, 0
		s.InitialPath, s.ReturnPath = [64]byte{}, [64]byte{}
		return nil
	}
	s.Status = uint16(drStatus.Get(b))
	s.ClassSpecific = 0
	s.Direction = drD.Get(b) != 0
	s.HopPointer = uint8(drHopPointer.Get(b))
	s.HopCount = uint8(drHopCount.Get(b))
	s.DrSLID = uint16(drSLID.Get(b))
	s.DrDLID = uint16(drDLID.Get(b))
	copy(s.InitialPath[:], drInitialPath.Slice(b))
	copy(s.ReturnPath[:], drReturnPath.Slice(b))
	return nil
}

// AppendBinary appends the 256-byte SMP to b, reserved bytes zero. For a
// directed-route SMP it returns an error wrapping mad.ErrRange (and b
// unchanged) when Status does not fit in 15 bits.
func (s *SMP) AppendBinary(b []byte) ([]byte, error) {
	all, d := layoutSMP.Append(b)
	s.Header.Put(d)
	w := mad.Writer{Layout: s.Layout(), B: d}
	w.Uint(smpMKey, s.MKey)
	w.Bytes(smpData, s.Data[:])
	if s.IsDR() {
		w.Bool(drD, s.Direction)
		w.Uint(drStatus, uint64(s.Status))
		w.Uint(drHopPointer, uint64(s.HopPointer))
		w.Uint(drHopCount, uint64(s.HopCount))
		w.Uint(drSLID, uint64(s.DrSLID))
		w.Uint(drDLID, uint64(s.DrDLID))
		w.Bytes(drInitialPath, s.InitialPath[:])
		w.Bytes(drReturnPath, s.ReturnPath[:])
	}
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 256-byte SMP.
func (s *SMP) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// Helpers on raw SMPs.
//
// They work in place on a whole MAD b (len(b) >= mad.Size) and never
// allocate, for the hot paths of the simulator and the engine. With a
// shorter b the getters return zero values or nil and the setters do
// nothing, so a caller checks the length once (SMPLayout.Check). The
// slice helpers alias b and their capacity ends with their field, so
// appending to them never overwrites the next field: encode an attribute in
// place with pi.AppendBinary(smp.Data(b)[:0]).

func whole(b []byte) bool { return len(b) >= mad.Size }

func field(f mad.Field, b []byte) uint64 {
	if !whole(b) {
		return 0
	}
	return f.Get(b)
}

func setField(f mad.Field, b []byte, v uint64) {
	if whole(b) {
		f.Put(b, v)
	}
}

func slice(f mad.Field, b []byte) []byte {
	if !whole(b) {
		return nil
	}
	s := f.Slice(b)
	return s[:len(s):len(s)]
}

// IsDR reports whether the MAD in b is a directed-route SMP (class 0x81).
func IsDR(b []byte) bool { return whole(b) && mad.MgmtClassOf(b) == mad.ClassSubnDR }

// Direction returns the D bit of the DR SMP in b: true when returning.
func Direction(b []byte) bool { return field(drD, b) != 0 }

// SetDirection sets or clears the D bit of the DR SMP in b.
func SetDirection(b []byte, returning bool) {
	var v uint64
	if returning {
		v = 1
	}
	setField(drD, b, v)
}

// Status returns the status of the SMP in b: the low 15 bits for a DR SMP
// (without the D bit), the whole 16-bit field otherwise.
func Status(b []byte) uint16 {
	if IsDR(b) {
		return uint16(drStatus.Get(b))
	}
	if !whole(b) {
		return 0
	}
	return mad.StatusOf(b)
}

// HopPointer returns the hop pointer of the DR SMP in b.
func HopPointer(b []byte) uint8 { return uint8(field(drHopPointer, b)) }

// SetHopPointer stores the hop pointer of the DR SMP in b.
func SetHopPointer(b []byte, hp uint8) { setField(drHopPointer, b, uint64(hp)) }

// HopCount returns the hop count of the DR SMP in b.
func HopCount(b []byte) uint8 { return uint8(field(drHopCount, b)) }

// SetHopCount stores the hop count of the DR SMP in b.
func SetHopCount(b []byte, hc uint8) { setField(drHopCount, b, uint64(hc)) }

// DrSLID returns the DrSLID of the DR SMP in b.
func DrSLID(b []byte) uint16 { return uint16(field(drSLID, b)) }

// SetDrSLID stores the DrSLID of the DR SMP in b.
func SetDrSLID(b []byte, lid uint16) { setField(drSLID, b, uint64(lid)) }

// DrDLID returns the DrDLID of the DR SMP in b.
func DrDLID(b []byte) uint16 { return uint16(field(drDLID, b)) }

// SetDrDLID stores the DrDLID of the DR SMP in b.
func SetDrDLID(b []byte, lid uint16) { setField(drDLID, b, uint64(lid)) }

// MKey returns the M_Key of the SMP in b.
func MKey(b []byte) uint64 { return field(smpMKey, b) }

// SetMKey stores the M_Key of the SMP in b.
func SetMKey(b []byte, key uint64) { setField(smpMKey, b, key) }

// Data returns the 64 attribute bytes of the SMP in b (bytes 64..128),
// aliasing b.
func Data(b []byte) []byte { return slice(smpData, b) }

// InitialPath returns the 64-entry initial path vector of the DR SMP in b,
// aliasing b. Entry 0 is unused; entry i is the egress port at hop i.
func InitialPath(b []byte) []byte { return slice(drInitialPath, b) }

// ReturnPath returns the 64-entry return path vector of the DR SMP in b,
// aliasing b. Entry 0 is unused; entry i is the port the SMP entered hop i
// through.
func ReturnPath(b []byte) []byte { return slice(drReturnPath, b) }

// NewRequest builds an SMP request into buf[:256] without allocating and
// returns that slice. With a nil or empty path it is LID-routed (class
// 0x01): the caller sends it to the target's LID. Otherwise it is a purely
// directed-route SMP (class 0x81) following path in the smpquery -D
// convention: path[0] stands for the local port and is not copied, path[i]
// is the egress port at hop i, HopCount is len(path)-1 (so path "0" is the
// local port's own SMA), HopPointer 0, D 0 and DrSLID = DrDLID =
// PermissiveLID. M_Key and the data are zero; fill them in with SetMKey and
// Data.
//
// It returns an error wrapping mad.ErrTruncated when cap(buf) < 256, and one
// wrapping mad.ErrRange when path has more than MaxHops hops.
func NewRequest(buf []byte, method uint8, tid uint64, attr uint16, mod uint32, path []uint8) ([]byte, error) {
	if cap(buf) < mad.Size {
		return nil, fmt.Errorf("smp: request buffer: %w (have %d, need %d)", mad.ErrTruncated, cap(buf), mad.Size)
	}
	if len(path) > MaxHops+1 {
		return nil, fmt.Errorf("smp: path: %w (%d hops > %d)", mad.ErrRange, len(path)-1, MaxHops)
	}
	b := buf[:mad.Size]
	h := mad.Header{
		BaseVersion:  1,
		MgmtClass:    mad.ClassSubnLID,
		ClassVersion: Version,
		Method:       method,
		TID:          tid,
		AttrID:       attr,
		AttrMod:      mod,
	}
	if len(path) > 0 {
		h.MgmtClass = mad.ClassSubnDR
	}
	clear(b)
	h.Put(b)
	if len(path) > 0 {
		drHopCount.Put(b, uint64(len(path)-1))
		drSLID.Put(b, uint64(PermissiveLID))
		drDLID.Put(b, uint64(PermissiveLID))
		// InitialPath[0] is the local port's place, which SMAs skip;
		// it goes as given, as libibmad sends str2drpath's first
		// element.
		copy(drInitialPath.Slice(b), path)
	}
	return b, nil
}

// NewGet builds a SubnGet request; see NewRequest.
func NewGet(buf []byte, tid uint64, attr uint16, mod uint32, path []uint8) ([]byte, error) {
	return NewRequest(buf, mad.MethodGet, tid, attr, mod, path)
}

// MakeGetResp turns the request in b into its response in place, as an SMA
// does: the method becomes GetResp (the answer to Get and Set alike), the
// status becomes status and, for a DR SMP, the D bit is set. Paths, hop
// fields and TID are kept; the caller writes the attribute into Data(b).
func MakeGetResp(b []byte, status uint16) {
	if !whole(b) {
		return
	}
	b2 := b[:mad.Size]
	var h mad.Header
	_ = h.UnmarshalBinary(b2)
	h.Method = mad.MethodGetResp
	h.Status = status
	dr := h.MgmtClass == mad.ClassSubnDR
	h.Put(b2)
	if dr {
		drD.Put(b2, 1)
		drStatus.Put(b2, uint64(status))
	}
}

// ParsePath parses a directed route written as smpquery -D writes it,
// "0,1,3": a comma-separated list of port numbers whose first entry stands
// for the local port. It returns the ports (here [0 1 3], two hops).
func ParsePath(s string) ([]uint8, error) {
	parts := strings.Split(s, ",")
	if len(parts) > MaxHops+1 {
		return nil, fmt.Errorf("smp: path %q: %w (%d hops > %d)", s, mad.ErrRange, len(parts)-1, MaxHops)
	}
	path := make([]uint8, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 0, 8)
		if err != nil {
			return nil, fmt.Errorf("smp: path %q: bad port %q: %w", s, p, err)
		}
		path[i] = uint8(n)
	}
	return path, nil
}

// FormatPath formats a directed route as ParsePath reads it, e.g. "0,1,3".
func FormatPath(path []uint8) string {
	var sb strings.Builder
	for i, p := range path {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(int(p)))
	}
	return sb.String()
}
