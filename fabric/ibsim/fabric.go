package ibsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/ibscript/ibscript/fabric"
)

// Fabric is a fabric.Fabric on one ibsim: every Open attaches a new client
// (one of ibsim's 10 slots) with the Fabric's Options; Close closes the
// Transports still open. A Transport closed by its user is forgotten.
type Fabric struct {
	sock string
	opts Options

	mu     sync.Mutex
	closed bool
	open   []*Transport
}

var _ fabric.Fabric = (*Fabric)(nil)

// NewFabric returns a Fabric for the ibsim whose socket base name is sock
// (empty: DefaultSockName). It does not contact ibsim.
func NewFabric(sock string, opts *Options) *Fabric {
	if sock == "" {
		sock = DefaultSockName
	}
	f := &Fabric{sock: sock}
	if opts != nil {
		f.opts = *opts
	}
	return f
}

// Ports attaches briefly to learn the port an attachment gets (ibsim
// attaches to the node's first port) and lists it; with Options.Nodes,
// one port per node, named by the node.
func (f *Fabric) Ports(ctx context.Context) ([]fabric.PortAttr, error) {
	if len(f.opts.Nodes) == 0 {
		t, err := f.Open(ctx, "", 0)
		if err != nil {
			return nil, err
		}
		a := t.Port()
		return []fabric.PortAttr{a}, t.Close()
	}
	var out []fabric.PortAttr
	for _, n := range f.opts.Nodes {
		opts := f.opts
		opts.Node, opts.ISSM, opts.SetISSM = n, false, false // a probe: never take a node's issm
		t, err := Open(ctx, f.sock, &opts)
		if err != nil {
			return nil, err
		}
		a := t.Port()
		a.CAName = n
		out = append(out, a)
		if err := t.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nodeTransport is a Transport of a Fabric with Options.Nodes: its port
// carries the node's name as CA name, so Open(CAName) finds it again.
type nodeTransport struct {
	*Transport
	name string
}

func (t nodeTransport) Port() fabric.PortAttr {
	a := t.Transport.Port()
	a.CAName = t.name
	return a
}

// Open attaches a client. ca must be empty or CAName, or with
// Options.Nodes one of those nodes; port must be 0 or the attached port's
// number (ibsim cannot attach to another port), or with ca empty any
// number when the node is a switch (port 0, as libibumad resolves it). With Options.Nodes the
// default port (ca empty) is never issm.
func (f *Fabric) Open(ctx context.Context, ca string, port int) (fabric.Transport, error) {
	opts := f.opts
	name := ""
	switch {
	case len(f.opts.Nodes) > 0 && slices.Contains(f.opts.Nodes, ca):
		opts.Node, name = ca, ca
	case len(f.opts.Nodes) > 0 && (ca == "" || ca == CAName):
		// The default port serves the program's own session: it never
		// takes the issm a node's named endpoint will need.
		opts.ISSM, opts.SetISSM = false, false
		if opts.Node == "" {
			opts.Node = f.opts.Nodes[0]
		}
		name = opts.Node
	case ca != "" && ca != CAName:
		if len(f.opts.Nodes) > 0 {
			return nil, fabric.NoDevice("ibsim %q: no CA %q (this fabric's nodes: %s)", f.sock, ca, strings.Join(f.opts.Nodes, ", "))
		}
		return nil, fabric.NoDevice("ibsim %q: no CA %q (an ibsim attachment is CA %q)", f.sock, ca, CAName)
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("ibsim %q: open: %w", f.sock, net.ErrClosed)
	}
	t, err := Open(ctx, f.sock, &opts)
	if err != nil {
		return nil, err
	}
	// libibumad's default-port search (ca NULL, a port number as filter)
	// takes a switch at its port 0 whatever the number (resolve_ca_port).
	if port != 0 && port != t.Port().PortNum && !(ca == "" && t.Port().NodeType == 2) {
		t.Close()
		return nil, fabric.NoDevice("ibsim %q: node %q: port %d cannot be opened: ibsim attaches to the node's first port (%d)", f.sock, t.NodeID(), port, t.Port().PortNum)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		t.Close()
		return nil, fmt.Errorf("ibsim %q: open: %w", f.sock, net.ErrClosed)
	}
	f.open = append(f.open, t)
	forget := func() { f.forget(t) }
	t.c.onClose.Store(&forget)
	if name != "" {
		return nodeTransport{t, name}, nil
	}
	return t, nil
}

// forget drops a closed Transport from the open list: a Fabric that
// opens and closes ports for hours keeps only those still open.
func (f *Fabric) forget(t *Transport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.open, t); i >= 0 {
		f.open = slices.Delete(f.open, i, i+1)
	}
}

// Close closes every Transport opened from f (their slots are released).
// It is idempotent.
func (f *Fabric) Close() error {
	f.mu.Lock()
	ts := f.open
	f.open, f.closed = nil, true
	f.mu.Unlock()
	var errs []error
	for _, t := range ts {
		if err := t.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
