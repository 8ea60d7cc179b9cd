package ibsimtest

import "syscall"

// childAttr makes a child die with the test process (a test killed by
// -timeout leaves no ibsim or OpenSM behind).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
