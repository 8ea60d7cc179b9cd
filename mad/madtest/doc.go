// Package madtest holds the test helpers every MAD codec is checked with
// (STYLE.md section 3): layout consistency, walking ones, golden captures,
// round-trip fuzzing and allocation counts.
//
// # Purpose
//
// [CheckLayout] checks a table of fields; [WalkingOnes] proves a typed
// value reads and writes every row of its layout and that no two rows
// alias; [Golden] decodes a real capture (testdata/NAME.hex), compares a
// rendering of the decoded value with testdata/NAME.golden and re-encodes
// the capture byte for byte; [Fuzz] runs a round-trip fuzz target; and
// [ZeroAllocs] pins allocation-free decoding.
//
// Capture files are hex text: whitespace is ignored, and lines starting
// with '#' are comments that must say where the bytes come from. Running
// the tests with -update rewrites the .golden renderings, never the .hex
// captures. The package registers that -update flag, so a test binary that
// imports it must not define another flag named "update".
//
// The package imports only the standard library (internal/archtest keeps
// third-party modules out of mad/...); its diffs are line diffs in
// "(-want +got)" form.
//
// # Concurrency
//
// The helpers may be called from parallel tests; each call works on its own
// values and files.
//
// # Errors
//
// Helpers report through the testing.TB they are given (t.Errorf for
// mismatches, t.Fatalf when a capture cannot be read) and mark themselves
// with t.Helper.
package madtest
