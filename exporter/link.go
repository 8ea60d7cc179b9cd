package exporter

import (
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// fdr10LaneRate is FDR10's data rate on one lane in bits per second:
// 10.3125 Gb/s signalling, 64/66 coded (treydock/infiniband_exporter's
// 10 Gb/s effective).
const fdr10LaneRate = 10.3125e9 * 64 / 66

// laneDataRate is the data rate of one lane of the port's active speed in
// bits per second (smp.LaneDataRate; FDR10's where MlnxExtPortInfo has it
// active), 0 when unknown.
func laneDataRate(p *topo.Port) float64 {
	if p.FDR10Active() {
		return fdr10LaneRate
	}
	return smp.LaneDataRate(p.SpeedActive, p.SpeedExtActive)
}

// rateBytes is the port's data rate in bytes per second (lanes times the
// lane data rate, over 8), as treydock/infiniband_exporter's
// rate_bytes_per_second; 0 when unknown.
func rateBytes(p *topo.Port) float64 {
	return float64(smp.WidthLanes(p.WidthActive)) * laneDataRate(p) / 8
}

// symbolTime is the time one byte takes on one lane of the port, in
// seconds (4 ns at SDR): the unit of PortXmitWait's tick. 0 when unknown.
func symbolTime(p *topo.Port) float64 {
	r := laneDataRate(p)
	if r == 0 {
		return 0
	}
	return 8 / r
}

// speedText names the port's active speed as ibnetdiscover -p does ("SDR"
// .. "NDR", "FDR10"), the text treydock/infiniband_exporter reads; ""
// when unknown.
func speedText(p *topo.Port) string {
	switch {
	case laneDataRate(p) == 0:
		return ""
	case p.FDR10Active():
		return "FDR10"
	}
	return smp.LinkSpeedText(p.SpeedActive, p.SpeedExtActive)
}
