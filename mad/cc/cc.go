package cc

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ibscript/ibscript/mad"
)

// Version is the class version of Congestion Control.
const Version uint8 = 2

// AttrClassPortInfo is the ClassPortInfo of the CC class (mad.ClassPortInfo).
const AttrClassPortInfo = mad.AttrClassPortInfo

// Offsets of a CC MAD (IBA vol. 1 A10.4.1; libibmad mad.h IB_CC_*): the
// CC_Key after the common header, the log data of CongestionLog and the
// management data of every other attribute.
const (
	KeyOff     = 24
	LogDataOff = 32
	DataOff    = 64
)

// CC MAD rows.
var (
	ccKey     = mad.Field{Name: "CC_Key", LuaKey: "cc_key", Bit: 8 * KeyOff, Width: 64, Kind: mad.Hex}
	ccLogData = mad.Field{Name: "LogData", LuaKey: "log_data", Bit: 8 * LogDataOff, Width: 8 * (mad.Size - LogDataOff), Kind: mad.Bytes}
	ccData    = mad.Field{Name: "Data", LuaKey: "data", Bit: 8 * DataOff, Width: 8 * (mad.Size - DataOff), Kind: mad.Bytes}
)

// MADLayout returns a whole CC MAD (class 0x21, 256 bytes) of any attribute but
// CongestionLog: the common header, CC_Key, 32 reserved bytes and 192
// bytes of management data.
// It is shared and must not be modified.
func MADLayout() *mad.Layout { return &layoutMAD }

var layoutMAD = mad.Layout{
	Name:   "CongestionControlMAD",
	Size:   mad.Size,
	Fields: slices.Concat(mad.HeaderLayout().Fields, []mad.Field{ccKey, ccData}),
}

// LogMADLayout returns a CC MAD of CongestionLog: the common header, CC_Key and
// 224 bytes of log data.
// It is shared and must not be modified.
func LogMADLayout() *mad.Layout { return &layoutLogMAD }

var layoutLogMAD = mad.Layout{
	Name:   "CongestionControlLogMAD",
	Size:   mad.Size,
	Fields: slices.Concat(mad.HeaderLayout().Fields, []mad.Field{ccKey, ccLogData}),
}

// DataOffset returns where attribute attr's data starts in a CC MAD: 32
// for CongestionLog, 64 for the others.
func DataOffset(attr uint16) int {
	if attr == AttrCongestionLog {
		return LogDataOff
	}
	return DataOff
}

// Data returns the attribute data of the 256-byte CC MAD b (its attribute
// ID says where it starts), aliasing b; nil when b is shorter.
func Data(b []byte) []byte {
	if len(b) < mad.Size {
		return nil
	}
	d := b[DataOffset(mad.AttrIDOf(b)):mad.Size]
	return d[:len(d):len(d)]
}

// Key returns the CC_Key of the CC MAD b (0 when b is shorter than 32
// bytes).
func Key(b []byte) uint64 {
	if len(b) < KeyOff+8 {
		return 0
	}
	return binary.BigEndian.Uint64(b[KeyOff:])
}

// SetKey puts key into the CC_Key of the CC MAD b (nothing when b is
// shorter than 32 bytes).
func SetKey(b []byte, key uint64) {
	if len(b) >= KeyOff+8 {
		binary.BigEndian.PutUint64(b[KeyOff:], key)
	}
}

// NewRequest builds a CC request into buf[:256] without allocating and
// returns that slice: the header with method, tid, attr and modifier mod,
// and the CC_Key key. The data is zero; for a Set, encode the attribute
// into Data(b).
//
// It returns an error wrapping mad.ErrTruncated when cap(buf) < 256.
func NewRequest(buf []byte, method uint8, tid uint64, attr uint16, mod uint32, key uint64) ([]byte, error) {
	if cap(buf) < mad.Size {
		return nil, fmt.Errorf("cc: request buffer: %w (have %d, need %d)", mad.ErrTruncated, cap(buf), mad.Size)
	}
	b := buf[:mad.Size]
	clear(b)
	h := mad.Header{
		BaseVersion:  1,
		MgmtClass:    mad.ClassCC,
		ClassVersion: Version,
		Method:       method,
		TID:          tid,
		AttrID:       attr,
		AttrMod:      mod,
	}
	h.Put(b)
	SetKey(b, key)
	return b, nil
}

// Log types of CongestionLog (its LogType row).
const (
	LogTypeSwitch uint8 = 1
	LogTypeCA     uint8 = 2
)

// LogLayout returns the layout of the CongestionLog data d by its LogType,
// as ibccquery chooses: CongestionLogLayout for a switch (1),
// CongestionLogCALayout for a CA (2). Another LogType is an error naming
// it.
func LogLayout(d []byte) (*mad.Layout, error) {
	if len(d) == 0 {
		return nil, fmt.Errorf("cc: CongestionLog: %w (have 0, need 1)", mad.ErrTruncated)
	}
	switch d[0] {
	case LogTypeSwitch:
		return &layoutCongestionLog, nil
	case LogTypeCA:
		return &layoutCongestionLogCA, nil
	}
	return nil, fmt.Errorf("cc: CongestionLog: unrecognized LogType %d (1 switch, 2 CA)", d[0])
}
