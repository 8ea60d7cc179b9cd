// Package umad will mirror the kernel's umad ABI (/dev/infiniband/umadN,
// ib_user_mad.h) with libibumad's semantics, using only the standard
// library and golang.org/x/sys. It knows nothing of the fabric contract,
// MAD codecs or Lua; fabric/kernel adapts it to fabric.Transport.
//
// Not implemented yet: the kernel backend is its own issue. Until then
// `--fabric umad:` reports that the kernel backend is unavailable.
package umad
