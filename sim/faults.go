package sim

import (
	"fmt"

	"github.com/ibscript/ibscript/mad/smp"
)

// Faults a topology file cannot express, planted by tests of validation
// plans: a port GUID shared by two ports, and extra subnet managers.

// SetPortGUID changes the GUID of a node's port (port 0 of a switch), as
// NodeInfo.PortGUID and GUIDInfo report it; a GUID already used elsewhere
// is allowed, which is the point (a duplicate GUID).
func (f *Fabric) SetPortGUID(node string, num int, guid uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.portLocked("set port GUID", node, num, false)
	if err != nil {
		return err
	}
	p.guid = guid
	return nil
}

// AddSM makes a node's port answer SMInfo as a subnet manager in the
// given state (smp.SMStateMaster, smp.SMStateStandby, ...) with the given
// priority, beside the fabric's own SM. The SM's GUID is the port's.
// The port's PortInfo.CapabilityMask gains IsSM.
func (f *Fabric) AddSM(node string, num int, state, priority uint8) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.portLocked("add SM", node, num, false)
	if err != nil {
		return err
	}
	if p == f.smPort && f.hasSM {
		return fmt.Errorf("sim: add SM %q port %d: the fabric's SM is already there", node, num)
	}
	if f.extraSMs == nil {
		f.extraSMs = map[*port]smp.SMInfo{}
	}
	f.extraSMs[p] = smp.SMInfo{GUID: p.guid, Priority: priority, SMState: state}
	p.put(piCapabilityMask, p.get(piCapabilityMask)|uint64(smp.CapIsSM))
	return nil
}

// extraSMInfo answers SMInfo for a port AddSM made an SM; f.mu is held.
func (f *Fabric) extraSMInfo(p *port, d []byte) bool {
	si, ok := f.extraSMs[p]
	if !ok {
		return false
	}
	si.ActCount = f.actCount
	f.actCount++
	clear(d)
	_, _ = si.AppendBinary(d[:0])
	return true
}
