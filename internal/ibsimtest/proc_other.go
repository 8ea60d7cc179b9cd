//go:build !linux

package ibsimtest

import "syscall"

// childAttr: ibsim runs on Linux only; elsewhere the harness still builds
// and Require skips.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
