package fabrictest

import (
	"errors"
	"net"
	"slices"
	"syscall"
	"testing"

	"github.com/ibscript/ibscript/fabric"
)

// TestFabric checks the Fabric half of the contract, libibumad's error
// and port rules, on f (which the caller closes):
//
//   - Open of a CA that does not exist, with port 0 or 1, and of a port
//     number no CA of the fabric has, fails with an error wrapping
//     syscall.ENODEV (fabric.ErrInvalid, or the kernel's errno) as
//     umad_get_port and umad_open_port return -ENODEV;
//   - every port Ports lists carries its P_Key table (PKeys, what
//     umad_get_port's pkeys holds), holding the default partition's key
//     (0xFFFF or 0x7FFF), and a Transport opened on that port reports the
//     same table;
//   - calls on a Transport after Close fail with errors wrapping
//     fabric.ErrInvalid: syscall.EINVAL ("-EINVAL invalid port handle")
//     and net.ErrClosed.
func TestFabric(t *testing.T, f fabric.Fabric) {
	ctx := t.Context()
	ports, err := f.Ports(ctx)
	if err != nil {
		t.Fatalf("Ports: %v", err)
	}
	if len(ports) == 0 {
		t.Fatal("Ports lists nothing")
	}
	for _, tc := range []struct {
		ca   string
		port int
	}{{"no-such-ca", 0}, {"no-such-ca", 1}, {ports[0].CAName, 99}} {
		tr, err := f.Open(ctx, tc.ca, tc.port)
		if err == nil {
			tr.Close()
			t.Errorf("Open(%q, %d) succeeded", tc.ca, tc.port)
			continue
		}
		if !errors.Is(err, syscall.ENODEV) {
			t.Errorf("Open(%q, %d) = %v, want an error wrapping ENODEV", tc.ca, tc.port, err)
		}
	}
	p := ports[0]
	if !slices.ContainsFunc(p.PKeys, func(k uint16) bool { return k&0x7fff == 0x7fff }) {
		t.Errorf("port %s/%d: P_Keys %#x hold no default partition key", p.CAName, p.PortNum, p.PKeys)
	}
	tr, err := f.Open(ctx, p.CAName, p.PortNum)
	if err != nil {
		t.Fatalf("Open(%q, %d): %v", p.CAName, p.PortNum, err)
	}
	if got := tr.Port().PKeys; !slices.Equal(got, p.PKeys) {
		t.Errorf("open port %s/%d: P_Keys %#x, Ports says %#x", p.CAName, p.PortNum, got, p.PKeys)
	}
	id, err := tr.Register(ctx, fabric.Agent{})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var pk fabric.Packet
	for name, err := range map[string]error{
		"Recv":     tr.Recv(ctx, &pk),
		"Send":     tr.Send(ctx, &fabric.Packet{Agent: id, Data: NewMAD(TestVersion, 0x01, 1)}),
		"Register": func() error { _, err := tr.Register(ctx, fabric.Agent{}); return err }(),
	} {
		if !errors.Is(err, syscall.EINVAL) || !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s on a closed port = %v, want an error wrapping EINVAL and net.ErrClosed", name, err)
		}
	}
}
