//go:build !linux

package main

// keepOffACPU is Linux's only: elsewhere GOMAXPROCS (leaveACore) is all
// that leaves ibsim a CPU.
func keepOffACPU() (undo func()) { return nil }
