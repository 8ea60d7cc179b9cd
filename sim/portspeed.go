package sim

import (
	"context"

	"github.com/ibscript/ibscript/fabric"
)

// PortSpeed is ibv_query_port_speed (rdma-core #1769) on the simulated
// fabric: the effective bandwidth of CA ca's port, in units of 100 Mb/s.
// A simulated port has no LAG and no PCIe link to limit it, so its
// effective bandwidth is its link's rate, the rate its sysfs file (and
// ibstat's Rate line) gives: 25 for 1x SDR, 1000 for 4x EDR, 8000 for 4x
// XDR. A port that is not there is fabric.NoDevice's error.
func (f *Fabric) PortSpeed(ctx context.Context, ca string, port int) (uint64, error) {
	ports, err := f.Ports(ctx)
	if err != nil {
		return 0, err
	}
	for _, p := range ports {
		if p.CAName != ca || p.PortNum != port {
			continue
		}
		if p.Rate == 2 { // 1x SDR: 2.5 Gb/s, the one rate that is not whole
			return 25, nil
		}
		return uint64(p.Rate) * 10, nil
	}
	return 0, fabric.NoDevice("sim: port speed of %q port %d: no such port", ca, port)
}
