package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/fabric/kernel"
)

// openUMAD opens the "umad:" backend: the kernel's /dev/infiniband/umadN
// devices. rest is what follows "umad:": "CA/PORT", "CA" (that CA's best
// port), or empty (libibumad's default port: the first Active IB port in
// sysfs directory order). Opening needs read-write access to the device
// node: root, or a member of the group the udev rules give it (rdma).
func openUMAD(ctx context.Context, c *config, rest string, stderr io.Writer) (*backend, error) {
	return openUMADWith(ctx, c, rest, stderr, nil)
}

// parseUMAD splits "CA/PORT", "CA" or "" into a CA name and port number.
func parseUMAD(rest string) (string, int, error) {
	ca, p, hasPort := strings.Cut(rest, "/")
	if strings.ContainsAny(ca, "?&=") {
		return "", 0, fmt.Errorf("bad CA name %q (want umad:CA/PORT, umad:CA or umad:)", ca)
	}
	if !hasPort {
		return ca, 0, nil
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 254 {
		return "", 0, fmt.Errorf("bad port %q (want 0..254)", p)
	}
	if ca == "" && port != 0 {
		// umad:/2 is libibumad's NULL CA with port 2 as a filter.
		return "", port, nil
	}
	return ca, port, nil
}

// openUMADWith is openUMAD on the sysfs tree and devices of o (nil: the
// real system).
func openUMADWith(ctx context.Context, c *config, rest string, stderr io.Writer, o *kernel.Options) (*backend, error) {
	ca, port, err := parseUMAD(rest)
	if err != nil {
		return nil, fmt.Errorf("--fabric %s: %v", c.fabricURI, err)
	}
	f := kernel.New(o)
	b := &backend{fab: f}
	b.tr, err = f.Open(ctx, ca, port)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("--fabric %s: %w", c.fabricURI, err)
	}
	a := b.tr.Port()
	if ca == "" || port == 0 {
		fmt.Fprintf(stderr, "ibscript: using %s port %d (LID 0x%x)\n", a.CAName, a.PortNum, a.LID)
	}
	err = c.newSession(b)
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}
