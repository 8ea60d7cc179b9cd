package engine_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/sim"
)

// TestUMADPortErrno: the seed pages' error contract at the Go API. An
// unknown CA or port is ENODEV (umad_get_port, umad_open_port); every call
// on a closed port is EINVAL ("-EINVAL invalid port handle"), also
// net.ErrClosed, with a message naming the call.
func TestUMADPortErrno(t *testing.T) {
	f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := t.Context()
	for _, c := range []struct {
		ca   string
		port int
	}{{"NoSuchCA", 0}, {"NoSuchCA", 1}, {"Hca1", 9}} {
		if _, err := engine.OpenUMADPort(ctx, f, c.ca, c.port); !errors.Is(err, syscall.ENODEV) {
			t.Errorf("OpenUMADPort(%q, %d) = %v, want ENODEV", c.ca, c.port, err)
		}
	}
	p, err := engine.OpenUMADPort(ctx, f, "Hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := p.Register(ctx, 0x01, 1, 0, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, recvErr := p.Recv(ctx, 256, 0)
	_, regErr := p.Register(ctx, 0x81, 1, 0, [2]uint64{})
	for name, err := range map[string]error{
		"poll":       p.Poll(ctx, 0),
		"recv":       recvErr,
		"send":       p.Send(ctx, agent, make([]byte, 256), fabric.Addr{LID: 1}, 100, 0),
		"register":   regErr,
		"unregister": p.Unregister(ctx, agent),
	} {
		if !errors.Is(err, syscall.EINVAL) || !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s on a closed port = %v, want EINVAL and net.ErrClosed", name, err)
		}
	}
}
