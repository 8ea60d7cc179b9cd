// Package perf decodes and encodes performance management MADs (PerfMgt,
// class 0x04) and the port counter attributes.
//
// # Purpose
//
// [MAD] is a whole PerfMgt MAD ([MADLayout]): the common header, 40
// reserved bytes and 192 bytes of attribute data from byte 64. The
// attributes ([PortCounters], [PortCountersExtended] with the additional
// counters, ...) are described once in the schema of mad/internal/madgen,
// which generates attrs_gen.go: each one's layout, typed value, codec and ID
// constant; ClassPortInfo is mad.ClassPortInfo. [Layouts], [LayoutByID],
// [LayoutByName] and [NewCodec] give them to generic code. [NewGet] and [NewRequest] build a request in a caller's buffer
// without allocating, and [Data] aliases the attribute bytes of a raw MAD.
//
// Counter fields are plain numbers: error counters saturate at their
// maximum, and the data counters count 4-byte words.
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
// is shorter than the attribute, e.g. "portcounters: truncated (have 40,
// need 44)". AppendBinary returns an error wrapping mad.ErrRange when a
// value does not fit its field. Nothing panics on bad input.
package perf
