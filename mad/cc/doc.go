// Package cc decodes and encodes Congestion Control MADs (class 0x21,
// class version 2) and their attributes.
//
// # Purpose
//
// A CC MAD ([MADLayout], IBA vol. 1 Annex A10.4.1) is the common header,
// the 8-byte CC_Key at byte 24, then either 32 reserved bytes and 192
// bytes of management data from byte 64, or, for CongestionLog, 224
// bytes of log data from byte 32. The attributes ([CongestionInfo],
// [CongestionKeyInfo], [CongestionLog] and [CongestionLogCA],
// [SwitchCongestionSetting], [SwitchPortCongestionSetting],
// [CACongestionSetting], [CongestionControlTable], [Timestamp];
// ClassPortInfo is mad.ClassPortInfo) are described once in the schema of
// mad/internal/madgen, which generates attrs_gen.go: each one's layout,
// typed value, codec and ID constant, with their names as libibmad and
// ibccquery spell them. [Layouts], [LayoutByID], [LayoutByName],
// [NewCodec] and [CodecOf] give them to generic code. CongestionLog has
// two layouts under one ID: a switch answers LogType 1 ([CongestionLog]),
// a CA LogType 2 ([CongestionLogCA]); [LogLayout] picks one from the
// answer. [NewRequest] builds a request in a caller's buffer without
// allocating, and [Data] aliases the attribute bytes of a raw MAD.
//
// The CC_Key of the header and of CongestionKeyInfo is a secret
// (mad.KeyFieldNames()); mad.MaskKeys zeroes both.
//
// The package does no I/O, starts no goroutines and reads no clock.
//
// # Concurrency
//
// Layouts and the functions of this package are safe for concurrent use;
// layouts must not be modified. A decoded value is owned by one goroutine
// at a time.
//
// # Errors
//
// UnmarshalBinary returns an error wrapping mad.ErrTruncated when its input
// is shorter than the attribute; AppendBinary returns an error wrapping
// mad.ErrRange when a value does not fit its field. Nothing panics on bad
// input.
package cc
