package sim

import (
	"fmt"

	"github.com/ibscript/ibscript/mad"
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
//
// As ibsim when a client sets IsSM on a port (SET_ISSM), a port whose
// CapabilityMask has IsCapabilityMaskNoticeSupported traps 144 with its
// new CapabilityMask, which the SM forwards to its subscribers.
func (f *Fabric) AddSM(node string, num int, state, priority uint8) error {
	f.mu.Lock()
	err := f.addSMLocked(node, num, state, priority)
	out := f.saTake()
	f.mu.Unlock()
	saFlush(out)
	return err
}

func (f *Fabric) addSMLocked(node string, num int, state, priority uint8) error {
	p, err := f.portLocked("add SM", node, num, false)
	if err != nil {
		return err
	}
	if f.hasSM && f.isSMPort(p) {
		return fmt.Errorf("sim: add SM %q port %d: the fabric's SM is already there", node, num)
	}
	if f.extraSMs == nil {
		f.extraSMs = map[*port]smp.SMInfo{}
	}
	f.extraSMs[p] = smp.SMInfo{GUID: p.guid, Priority: priority, SMState: state}
	old := uint32(p.get(piCapabilityMask))
	p.put(piCapabilityMask, uint64(old|smp.CapIsSM))
	f.capMaskTrap(p, old)
	return nil
}

// capMaskTrap raises trap 144 for port p whose CapabilityMask was old, as
// ibsim's set_issm: when the mask changed, the port says it sends traps
// (IsNoticeSupported or IsTrapSupported) and capability mask notices, and
// it holds a LID. The SM forwards it with the port's GUID as IssuerGID.
// f.mu is held.
func (f *Fabric) capMaskTrap(p *port, old uint32) {
	now := uint32(p.get(piCapabilityMask))
	if !f.hasSM || now == old || now&(smp.CapIsNoticeSupported|smp.CapIsTrapSupported) == 0 ||
		now&smp.CapIsCapabilityMaskNoticeSupported == 0 || p.lid == 0 {
		return
	}
	n := smp.Notice{IsGeneric: true, Type: smp.NoticeInformation, ProducerType: uint32(p.node.typ),
		TrapNumber: smp.TrapLocalChanges, IssuerLID: p.lid, IssuerGID: mad.NewGID(gidPrefix, p.guid)}
	n.SetDetailsLID(p.lid)
	n.SetDetailsCapabilityMask(now)
	f.report(&n, f.smFor(p))
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
