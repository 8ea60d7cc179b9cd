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

// rawLaneRates is the rate of one lane by speedText in bits per second,
// as treydock/infiniband_exporter 0.10.0 serves it in
// *_raw_rate_bytes_per_second (collectors/ibnetdiscover.go's laneRates,
// first column): the signalling rate before 8b/10b or 64b/66b coding up
// to EDR, and for HDR and NDR the same 50 and 100 Gb/s as its data rate
// (not the 53.125 and 106.25 Gb/s ibnetdiscover prints). XDR is 200 Gb/s
// where its table says 250 (in both columns): a 4x XDR port is 800 Gb/s,
// and ibscript's port_rate_bytes_per_second gives XDR 200 too.
var rawLaneRates = map[string]float64{
	"SDR": 2.5e9, "DDR": 5e9, "QDR": 10e9, "FDR10": 10.3125e9, "FDR": 14.0625e9,
	"EDR": 25.78125e9, "HDR": 50e9, "NDR": 100e9, "XDR": 200e9,
}

// rawRateBytes is the port's raw rate in bytes per second (lanes times
// rawLaneRates, over 8), as treydock/infiniband_exporter's
// raw_rate_bytes_per_second; 0 when unknown.
func rawRateBytes(p *topo.Port) float64 {
	return float64(smp.WidthLanes(p.WidthActive)) * rawLaneRates[speedText(p)] / 8
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
