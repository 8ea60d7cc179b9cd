// Package scripts holds the example plans of this directory, embedded, so
// that a test binary run where the repository is not (the real-kernel
// stage's guest, tests/kernelvm) can run them as they are.
package scripts

import "embed"

// FS holds scripts/*.lua and scripts/checks/*.lua.
//
//go:embed *.lua checks/*.lua
var FS embed.FS
