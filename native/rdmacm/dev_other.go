//go:build !linux

package rdmacm

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
)

// DevicePath is the rdma_cm misc device.
const DevicePath = "/dev/infiniband/rdma_cm"

// Open fails: the rdma_cm device exists only on Linux.
func Open(path string) (*Channel, error) {
	return nil, fmt.Errorf("rdmacm: open %s: rdma_cm needs Linux, this is %s: %w", path, runtime.GOOS, errors.ErrUnsupported)
}

// ReadABIVersion fails off Linux.
func ReadABIVersion(fs.FS) (int, error) {
	return 0, fmt.Errorf("rdmacm: abi_version: %w", errors.ErrUnsupported)
}
