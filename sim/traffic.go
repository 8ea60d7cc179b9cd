package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/ibscript/ibscript/mad/smp"
)

// Traffic is a deterministic background load the simulator's links carry,
// so that counters move as on a busy fabric (SetTraffic). Every active
// link direction sends at a fixed fraction of its data rate, chosen per
// port from its GUID and number (between Load/2 and 3·Load/2, at most 1);
// its PMA counters grow accordingly when read: data (in 4-byte words) and
// packets (2 KiB each, one in 64 multicast) at the sending port and the
// receiving one, PortXmitWait at the sending port (the ticks of one
// symbol time it waited: WaitFraction of its load), and one port in 32
// SymbolErrorCounter at ErrorRate per second. Counters saturate at their
// widths as the PMA's do.
type Traffic struct {
	// Load is the mean fraction of link capacity used, 0..1.
	Load float64
	// ErrorRate is the symbol errors per second of the ports that get
	// them; 0 means none.
	ErrorRate float64
	// Now is the clock the load follows; nil means time.Now. Tests give
	// their own to move time by hand.
	Now func() time.Time
}

// trafficState is the load being applied; f.mu guards it.
type trafficState struct {
	Traffic
	start time.Time
}

// trafficPacketBytes is the size of a packet of the background load.
const trafficPacketBytes = 2048

// SetTraffic starts the background load t, or stops it when t is nil. The
// counters keep what they counted so far. It fails on a Load outside 0..1
// or a negative ErrorRate.
func (f *Fabric) SetTraffic(t *Traffic) error {
	if t != nil && (t.Load < 0 || t.Load > 1 || math.IsNaN(t.Load) || t.ErrorRate < 0 || math.IsNaN(t.ErrorRate)) {
		return fmt.Errorf("sim: set traffic: load %v, error rate %v: want a load in 0..1 and a rate >= 0", t.Load, t.ErrorRate)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.traffic != nil {
		// Bring every port up to now under the old load.
		for _, n := range f.nodes {
			for _, p := range n.ports {
				if p != nil {
					f.accrueLocked(p)
				}
			}
		}
	}
	if t == nil {
		f.traffic = nil
		return nil
	}
	ts := &trafficState{Traffic: *t}
	if ts.Now == nil {
		ts.Now = time.Now
	}
	ts.start = ts.Now()
	f.traffic = ts
	for _, n := range f.nodes {
		for _, p := range n.ports {
			if p != nil {
				p.accrued = 0
			}
		}
	}
	return nil
}

// waitBuffer is the receive buffer of a link's far end in packets of the
// background load (32 KiB of 2 KiB packets) for WaitFraction.
const waitBuffer = 16

// WaitFraction is the fraction of the time a port sending at load (a
// fraction of its link's capacity) has data to send and no credit: the
// time its link partner's receive buffer is full, load^16 for a buffer of
// 16 packets filled as a queue whose occupancy falls off geometrically
// with the load (a finite M/M/1 buffer's blocking, to first order).
// Below half the link's capacity a sender almost never waits (0.45:
// 2.9e-6 of the time, 250 million 4X QDR ticks a day, far from
// PortXmitWait's 2^32), above it waiting grows steeply (0.9: 19% of the
// time, the 32-bit counter full within 23 seconds at 4X QDR) as on a
// congested link. It was a quarter of load squared, which filled
// PortXmitWait within minutes at the demo's load (5% of the time at
// 0.45: 10 of the default fabric's 32 switch ports saturated after 2.5
// minutes).
func WaitFraction(load float64) float64 {
	return math.Pow(load, waitBuffer)
}

// portHash spreads ports over 0..1 deterministically.
func portHash(p *port) float64 {
	h := p.node.guid*0x9E3779B97F4A7C15 ^ uint64(p.num)*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	return float64(h%1_000_000) / 1_000_000
}

// load is the fraction of its capacity port p sends at.
func (ts *trafficState) load(p *port) float64 {
	return min(ts.Load*(0.5+portHash(p)), 1)
}

// linkRate is the data rate of p's link in bytes per second, 0 when the
// link does not carry data (down, or not Active at either end).
func linkRate(p *port) float64 {
	r := p.remote
	if r == nil || p.state != smp.PortStateActive || r.state != smp.PortStateActive {
		return 0
	}
	lanes := smp.WidthLanes(uint8(p.get(piWidthActive)))
	return float64(lanes) * smp.LaneDataRate(uint8(p.get(piSpeedActive)), p.aggExtActive()) / 8
}

// accrueLocked adds to p's counters what the load moved through it since
// they were last brought up to date: what p sent, at its own load, and
// what its link partner sent to it. f.mu is held. The amounts are whole
// units counted from the load's start (floor(rate × t) at both ends of
// the interval), so no fraction is lost or counted twice however often
// the counters are read.
func (f *Fabric) accrueLocked(p *port) {
	if ts := f.traffic; ts != nil {
		f.accrueTo(p, ts.Now())
	}
}

// accrueTo is accrueLocked up to the time until of the load's clock
// (nothing when p is already past it).
func (f *Fabric) accrueTo(p *port, until time.Time) {
	ts := f.traffic
	if ts == nil || p == nil || p.remote == nil {
		return
	}
	now := until.Sub(ts.start)
	if now <= p.accrued {
		return
	}
	was := p.accrued
	p.accrued = now
	rate := linkRate(p)
	if rate == 0 {
		return
	}
	t0, t1 := was.Seconds(), now.Seconds()
	units := func(perSec float64) uint64 {
		return uint64(math.Floor(perSec*t1)) - uint64(math.Floor(perSec*t0))
	}
	in, out := ts.load(p.remote)*rate, ts.load(p)*rate
	for _, d := range [...]struct {
		bps        float64
		data, pkts int
		ext        [3]int // data, packets, unicast packets
		mcast      int
		sl0        *uint32 // the load's SL: 0
	}{
		{out, pcXmitData, pcXmitPkts, [3]int{pceXmitData, pceXmitPkts, pceUnicastXmitPkts}, pceMulticastXmitPkts, &p.pc.perSL().xmit[0]},
		{in, pcRcvData, pcRcvPkts, [3]int{pceRcvData, pceRcvPkts, pceUnicastRcvPkts}, pceMulticastRcvPkts, &p.pc.perSL().rcv[0]},
	} {
		words, pkts, mcast := units(d.bps/4), units(d.bps/trafficPacketBytes), units(d.bps/trafficPacketBytes/64)
		p.pc.add(d.data, uint32(min(words, math.MaxUint32)))
		p.pc.add(d.pkts, uint32(min(pkts, math.MaxUint32)))
		p.pc.addExt(d.ext[0], words)
		p.pc.addExt(d.ext[1], pkts)
		p.pc.addExt(d.ext[2], pkts-min(mcast, pkts))
		p.pc.addExt(d.mcast, mcast)
		addSL(d.sl0, words)
	}
	// Waiting: WaitFraction of the time, in ticks of one symbol time
	// (8/lane data rate; rate is per link, the tick per lane).
	if l := ts.load(p); l > 0 {
		lane := smp.LaneDataRate(uint8(p.get(piSpeedActive)), p.aggExtActive())
		ticks := units(WaitFraction(l) * lane / 8)
		p.pc.add(pcXmitWait, uint32(min(ticks, math.MaxUint32)))
	}
	if ts.ErrorRate > 0 && portHash(p) < 1.0/32 {
		p.pc.add(pcSymbolError, uint32(min(units(ts.ErrorRate), math.MaxUint32)))
	}
}

// TrafficLoad is the fraction of its link's capacity a port sends at under
// the background load (0 when there is none, or the port is not cabled):
// what tests compare the counters' growth with. node is a node id or
// description.
func (f *Fabric) TrafficLoad(node string, port int) (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.portLocked("traffic load", node, port, true)
	if err != nil {
		return 0, err
	}
	if f.traffic == nil || p.remote == nil {
		return 0, nil
	}
	return f.traffic.load(p), nil
}
