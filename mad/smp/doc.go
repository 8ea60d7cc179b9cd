// Package smp decodes and encodes subnet management packets (SMPs, classes
// 0x01 and 0x81) and the SMP attributes.
//
// # Purpose
//
// Each attribute is described once, in the schema of mad/internal/madgen,
// which generates attrs_gen.go: its exported layout (mad.Field rows, the
// modifier's meaning, docs), its typed value ([NodeInfo], [PortInfo], ...)
// with a zero-allocation codec, and its ID constant. [Layouts],
// [LayoutByID], [LayoutByName] and [NewCodec] hand the same layouts and
// values to generic code (printers, Lua tables), which walks them with
// mad.Layout.Each.
//
// [SMP] is a whole 256-byte packet, LID-routed or directed-route
// ([SMPLayout], [DRSMPLayout]). Hot paths that route or answer packets
// without decoding them use the helpers on raw buffers instead: [NewGet]
// and [NewRequest] build a request in a caller's buffer, [MakeGetResp]
// turns it into a response, [HopPointer], [HopCount], [Direction],
// [InitialPath], [ReturnPath] and [Data] read and write a packet in place.
// None of them allocates.
//
// Directed routes are written as smpquery -D writes them: "0,1,3" means
// InitialPath[1]=1, InitialPath[2]=3, HopCount=2; entry 0 stands for the
// local port ([ParsePath], [FormatPath]).
//
// The name functions ([PortStateName], [WidthName], [LinkText], ...) give
// the texts of smpquery and ibnetdiscover.
//
// The package does no I/O, starts no goroutines and reads no clock.
//
// # Concurrency
//
// Layouts and the functions of this package are safe for concurrent use;
// layouts must not be modified. A decoded value is owned by one goroutine
// at a time. The raw-buffer helpers work on the caller's buffer and are as
// safe as the caller's ownership of it.
//
// # Errors
//
// UnmarshalBinary returns an error wrapping mad.ErrTruncated when its input
// is shorter than the attribute, e.g. "portinfo: truncated (have 40, need
// 64)". AppendBinary and MarshalBinary return an error wrapping
// mad.ErrRange when a value does not fit its field. The raw-buffer getters
// return zero values on a buffer shorter than a MAD, and the setters do
// nothing; nothing panics on bad input.
package smp
