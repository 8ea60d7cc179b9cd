// Package mad describes InfiniBand management datagrams (MADs) as tables of
// bit fields, and decodes and encodes the parts every class shares.
//
// # Purpose
//
// Every MAD structure has one [Layout]: the table of its fields ([Field]:
// name, bit offset, width, [Kind], a one-line doc), transcribed from the IBA
// tables. The attributes and records (ClassPortInfo here, those of mad/smp,
// mad/perf, mad/sa and mad/cc) are described once, in the schema of
// mad/internal/madgen; `go generate ./mad/` writes from it each one's
// layout, Go struct, zero-allocation codec ([Codec]), ID constant, each
// row's Lua key ([Field.LuaKey], by the [SnakeName] rule) and the
// packages' ID and name indexes (the attrs_gen.go files; a test fails when
// they are stale). Headers keep hand-written tables, their keys spelled
// out (TestLuaKeys checks every layout's keys against the rule). Generic
// code (pretty printers, Lua tables) walks the same rows with
// [Layout.Each], [Field.Format] and [Field.Key]. Offsets live in the
// tables and nowhere else (internal/archtest's TestNoHandOffsets fails on a
// hand-written one outside the wire layers).
//
// The schema also says what the C tools print: each row libibmad's field
// dump shows carries libibmad's name of it and its dumper ([Dump]), and
// the generated DumpRows of mad, mad/smp and mad/perf list them in
// libibmad's order ([DumpRow]); package diag prints from them. The port
// counters (perf.Counters) carry the exporter's series names too.
//
// Conventions, as in IBA: bit 0 is the most significant bit of byte 0,
// every field is big-endian, reserved fields are not listed and are written
// as zero. Typed values implement encoding.BinaryUnmarshaler,
// encoding.BinaryAppender and encoding.BinaryMarshaler; UnmarshalBinary
// decodes in place without allocating and never keeps a reference to its
// input.
//
// The package does no I/O, starts no goroutines and reads no clock.
//
// # Concurrency
//
// Layouts and fields are immutable values once the program runs; they and
// the pure functions of this package are safe for concurrent use. A decoded
// value such as a [Header] is owned by one goroutine at a time, like any Go
// struct. A [Writer] is owned by the encoder that made it.
//
// # Errors
//
// Decoders return an error wrapping [ErrTruncated] when their input is too
// short, with context such as "classportinfo: truncated (have 40, need 72)".
// Encoders return an error wrapping [ErrRange] when a value does not fit its
// field. Nothing panics on bad input, except the documented raw accessors
// ([Field.Get], [Field.Put], [Field.Slice]) whose callers check the length
// once per structure, as with a slice index.
package mad

//go:generate go run ./internal/madgen -root ..
