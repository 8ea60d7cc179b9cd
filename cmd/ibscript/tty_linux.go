package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTTY reports whether f is a terminal, as isatty(3) says it: the
// terminal ioctl TCGETS succeeds on it. /dev/null and other character
// devices are not terminals (the mode bit alone said they were, and
// "ibscript < /dev/null" opened the interactive REPL).
func isTTY(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var terr error
	if err := rc.Control(func(fd uintptr) { _, terr = unix.IoctlGetTermios(int(fd), unix.TCGETS) }); err != nil {
		return false
	}
	return terr == nil
}
