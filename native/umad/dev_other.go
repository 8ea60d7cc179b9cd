//go:build !linux

package umad

import (
	"errors"
	"fmt"
	"runtime"
)

// OpenDev fails: umad devices exist only on Linux.
func OpenDev(path string) (Dev, error) {
	return nil, fmt.Errorf("umad: open %s: umad devices need Linux, this is %s: %w", path, runtime.GOOS, errors.ErrUnsupported)
}
