//go:build !linux

package main

// availableMemory is unknown off Linux: the default limit is then
// defaultMemoryLimitCap.
func availableMemory() uint64 { return 0 }
