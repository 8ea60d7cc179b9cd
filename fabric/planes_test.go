package fabric

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"
)

// portsOnly is a Fabric that is not a Pairer.
type portsOnly []PortAttr

func (f portsOnly) Ports(context.Context) ([]PortAttr, error) { return f, nil }
func (f portsOnly) Open(context.Context, string, int) (Transport, error) {
	return nil, errors.ErrUnsupported
}
func (f portsOnly) Close() error { return nil }

// TestPairsWithoutPlanes: a Fabric that is not a Pairer has no planes:
// every CA (RoCE ones left out, as libibumad's pairing leaves them) is its
// own SMI and GSI, by name; PairOf takes the first port above Down in
// Ports order, in any state when CA and port are both given.
func TestPairsWithoutPlanes(t *testing.T) {
	f := portsOnly{
		{CAName: "sw0", PortNum: 0, State: 4},
		{CAName: "mlx5_1", PortNum: 1, State: 1},
		{CAName: "mlx5_1", PortNum: 2, State: 4},
		{CAName: "rxe0", PortNum: 1, State: 4, LinkLayer: "Ethernet"},
		{CAName: "mlx5_0", PortNum: 1, State: 4, CapMask: CapIsSMDisabled},
	}
	pairs, err := PairsOf(t.Context(), f)
	want := []PortPair{{SMIName: "mlx5_0", GSIName: "mlx5_0"}, {SMIName: "mlx5_1", GSIName: "mlx5_1"}, {SMIName: "sw0", GSIName: "sw0"}}
	if err != nil || !slices.Equal(pairs, want) {
		t.Errorf("PairsOf = %+v, %v; want %+v", pairs, err, want)
	}
	for _, tt := range []struct {
		ca      string
		port    int
		smi     bool
		want    PortPair
		wantErr bool
	}{
		{"", 0, false, PortPair{"sw0", 0, "sw0", 0}, false},
		{"mlx5_1", 0, false, PortPair{"mlx5_1", 2, "mlx5_1", 2}, false},
		{"mlx5_1", 1, false, PortPair{"mlx5_1", 1, "mlx5_1", 1}, false}, // named: any state
		{"", 1, false, PortPair{"mlx5_0", 1, "mlx5_0", 1}, false},
		{"", 1, true, PortPair{}, true}, // mlx5_1/1 is Down, mlx5_0/1 has IsSMDisabled
		{"rxe0", 1, false, PortPair{}, true},
		{"nope", 0, false, PortPair{}, true},
	} {
		got, err := PairOf(t.Context(), f, tt.ca, tt.port, tt.smi)
		if tt.wantErr {
			if !errors.Is(err, ErrNoDevice) || !errors.Is(err, syscall.ENODEV) {
				t.Errorf("PairOf(%q, %d, %v) = %+v, %v; want ErrNoDevice", tt.ca, tt.port, tt.smi, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("PairOf(%q, %d, %v) = %+v, %v; want %+v", tt.ca, tt.port, tt.smi, got, err, tt.want)
		}
	}
	if !(PortPair{SMIName: "a", GSIName: "b"}).Planarized() || (PortPair{SMIName: "a", GSIName: "a"}).Planarized() || (PortPair{GSIName: "b"}).Planarized() {
		t.Error("Planarized: two different names only")
	}
}
