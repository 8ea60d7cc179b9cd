// Package simmod connects the Lua sim module (bindings.Options.Sim) to the
// embedded simulator: an embedder running scripts on a *sim.Fabric passes
// Of(f), as cmd/ibscript does. The bindings do not import the simulator
// (they work on every backend); this package is the one place that knows
// both.
package simmod

import (
	"net/netip"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/sim"
)

// Of returns the fault-injection side of f for bindings.Options.Sim.
func Of(f *sim.Fabric) bindings.Simulator { return control{f} }

type control struct{ f *sim.Fabric }

func (c control) SetFaults(fl bindings.SimFaults) error {
	return c.f.SetFaults(sim.Faults{Seed: fl.Seed, Loss: fl.Loss, Duplicate: fl.Duplicate,
		Reorder: fl.Reorder, Corrupt: fl.Corrupt, Delay: fl.Delay, Jitter: fl.Jitter, DeadNodes: fl.DeadNodes})
}

func (c control) SetLink(node string, port int, up bool) error { return c.f.SetLink(node, port, up) }

func (c control) SetCounter(node string, port int, name string, v uint64) error {
	return c.f.SetCounter(node, port, name, v)
}

func (c control) SetLFT(node string, lid uint16, port uint8) error {
	return c.f.SetLFT(node, lid, port)
}

func (c control) SetIPoIB(node string, port int, ips ...netip.Addr) error {
	return c.f.SetIPoIB(node, port, ips...)
}

func (c control) FaultStats() map[string]uint64 {
	st := c.f.FaultStats()
	return map[string]uint64{"requests": st.Requests, "lost_requests": st.LostRequests,
		"lost_responses": st.LostResponses, "duplicated": st.Duplicated, "reordered": st.Reordered,
		"corrupted": st.Corrupted, "delayed": st.Delayed, "dead_drops": st.DeadDrops}
}
