package main

import (
	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/sim"
)

// simControl adapts the embedded simulator to bindings.Simulator, so
// scripts on a sim backend get the sim module (fault injection).
type simControl struct{ f *sim.Fabric }

// simulatorOf returns the fault-injection handle of a sim backend, nil
// for others.
func simulatorOf(fab fabric.Fabric) bindings.Simulator {
	if f, ok := fab.(*sim.Fabric); ok {
		return simControl{f}
	}
	return nil
}

func (s simControl) SetFaults(fl bindings.SimFaults) error {
	return s.f.SetFaults(sim.Faults{Seed: fl.Seed, Loss: fl.Loss, Duplicate: fl.Duplicate,
		Reorder: fl.Reorder, Corrupt: fl.Corrupt, Delay: fl.Delay, Jitter: fl.Jitter, DeadNodes: fl.DeadNodes})
}

func (s simControl) SetLink(node string, port int, up bool) error { return s.f.SetLink(node, port, up) }

func (s simControl) SetCounter(node string, port int, name string, v uint64) error {
	return s.f.SetCounter(node, port, name, v)
}

func (s simControl) SetLFT(node string, lid uint16, port uint8) error {
	return s.f.SetLFT(node, lid, port)
}

func (s simControl) FaultStats() map[string]uint64 {
	st := s.f.FaultStats()
	return map[string]uint64{"requests": st.Requests, "lost_requests": st.LostRequests,
		"lost_responses": st.LostResponses, "duplicated": st.Duplicated, "reordered": st.Reordered,
		"corrupted": st.Corrupted, "delayed": st.Delayed, "dead_drops": st.DeadDrops}
}
