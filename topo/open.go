package topo

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// errEmptyName is the error of an empty file name; it matches
// fs.ErrNotExist, as os.Open's does.
var errEmptyName = fmt.Errorf("an empty file name: %w", fs.ErrNotExist)

// OpenFile opens path for reading as ibscript's loaders do (topologies,
// snapshots, node-name maps, threshold files, caches, scripts, reports):
// without blocking (O_NONBLOCK: a FIFO with no writer does not hang the
// open, and reads as empty), and only when it is a regular file, a FIFO
// (a shell's <(...)) or the null device (empty, as the C tools read it);
// another device (/dev/zero, which never ends), a directory or a socket
// is an error naming what it is.
func OpenFile(path string) (*os.File, error) {
	if path == "" {
		// os.Open says "open : no such file or directory", naming nothing.
		return nil, &fs.PathError{Op: "open", Path: `""`, Err: errEmptyName}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m := st.Mode(); !m.IsRegular() && m&os.ModeNamedPipe == 0 && !isDevNull(st) {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file but %s", path, fileKind(m))
	}
	return f, nil
}

// isDevNull reports whether st is the null device's.
func isDevNull(st os.FileInfo) bool {
	if st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(st, null)
}
