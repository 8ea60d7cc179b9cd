package sim

import (
	"github.com/ibscript/ibscript/mad/smp"
)

// The SMA attributes a current HCA or switch answers beyond ibsim's
// (Options.IbsimStrict turns them off): LedInfo and PortInfoExtended.
// PortInfo announces them on CA ports and switch port 0
// (IsLEDInfoSupported, and IsPortInfoExtendedSupported in
// CapabilityMask2, which smpquery and perfquery check before asking).

// smaExtended answers the attributes above (actDeliver for any other, or
// any under Options.IbsimStrict: the port's agents or the kernel answer).
func (f *Fabric) smaExtended(n *node, in *port, attr uint16, mod uint32, set bool, d []byte) (uint16, action) {
	switch {
	case f.strict:
	case attr == smp.AttrLedInfo:
		return f.ledInfo(n, in, mod, set, d), actRespond
	case attr == smp.AttrPortInfoExtended:
		return f.portInfoExtended(n, in, mod, set, d), actRespond
	}
	return 0, actDeliver
}

// FEC modes of PortInfoExtended.FECModeActive (IBA 14.2.5.22; OpenSM's
// IB_PORT_EXT_*_FEC_MODE_ACTIVE, perfquery's RS-FEC test reads 2 and 4).
// The Supported and Enabled masks of a speed have bit m set for mode m.
const (
	fecNone     = 0
	fecFireCode = 1
	fecRS       = 2 // RS-FEC (528,514)
	fecLLRS     = 3 // low-latency RS-FEC (271,257)
	fecRS544    = 4 // RS-FEC (544,514)

	// pieCapFECMode is PortInfoExtended.CapabilityMask's
	// IsFECModeSupported: the FEC fields are valid.
	pieCapFECMode = uint32(smp.PIECapFECModeSupported)
)

// fecSpeeds are the extended speeds PortInfoExtended has FEC fields for,
// in its order (FDR, EDR, HDR, NDR), as LinkSpeedExtActive bits, with
// the modes a port supports at each, most preferred first: the mode a
// link runs is the first both ends enable.
var fecSpeeds = [4]struct {
	ext   uint8
	modes []uint16
}{
	{1, []uint16{fecFireCode, fecNone}},                 // FDR
	{2, []uint16{fecRS, fecLLRS, fecFireCode, fecNone}}, // EDR
	{4, []uint16{fecRS544, fecLLRS}},                    // HDR
	{8, []uint16{fecRS544, fecLLRS}},                    // NDR
}

// fecMask is the Supported mask of FEC speed i.
func fecMask(i int) uint16 {
	var m uint16
	for _, mode := range fecSpeeds[i].modes {
		m |= 1 << mode
	}
	return m
}

// fecEnabled returns p's FEC Enabled masks: all it supports until a Set.
func (f *Fabric) fecEnabled(p *port) [4]uint16 {
	if t := f.portTabs[p]; t != nil && t.fecEn != nil {
		return *t.fecEn
	}
	var en [4]uint16
	for i := range en {
		en[i] = fecMask(i)
	}
	return en
}

// fecActive is the FEC mode p's link runs: none below FDR or without a
// link; RS-FEC (544,514) at XDR; else the most preferred mode of the
// active speed both ends enable (none when they have none in common).
func (f *Fabric) fecActive(p *port) uint16 {
	r := p.remote
	if r == nil || p.phys != smp.PhysStateLinkUp {
		return fecNone
	}
	ext := p.aggExtActive()
	if ext == extXDR {
		return fecRS544 // PortInfoExtended has no XDR fields: XDR runs RS-FEC (544,514)
	}
	for i, s := range fecSpeeds {
		if s.ext != ext {
			continue
		}
		common := f.fecEnabled(p)[i] & f.fecEnabled(r)[i]
		for _, m := range s.modes {
			if common&(1<<m) != 0 {
				return m
			}
		}
	}
	return fecNone
}

// portInfoExtended answers PortInfoExtended: the modifier is the port (0
// on a CA: the arrival port). A switch's port 0 has no link and no FEC
// fields (CapabilityMask 0). A Set changes the Enabled masks (0 leaves
// one as it is; a mode the port does not support is an invalid field),
// which takes effect at once, as a retrain.
func (f *Fabric) portInfoExtended(n *node, in *port, mod uint32, set bool, d []byte) uint16 {
	if mod > uint32(n.numPorts) {
		return stInvalid
	}
	num := int(mod)
	if num == 0 && n.typ != typeSwitch {
		num = in.num
	}
	p := n.ports[num]
	if n.typ != typeSwitch && set && p != in {
		return stInvalid // as PortInfo: a CA sets only the arrival port
	}
	var req smp.PortInfoExtended
	if set {
		if req.UnmarshalBinary(d) != nil {
			return stInvalid
		}
		if num == 0 && n.typ == typeSwitch {
			return stInvalid
		}
	}
	var pie smp.PortInfoExtended
	if num != 0 || n.typ != typeSwitch {
		en := f.fecEnabled(p)
		if set {
			for i, v := range [4]uint16{req.FDRFECModeEnabled, req.EDRFECModeEnabled, req.HDRFECModeEnabled, req.NDRFECModeEnabled} {
				if v&^fecMask(i) != 0 {
					return stInvalid
				}
				if v != 0 {
					en[i] = v
				}
			}
			t := f.tables(p)
			t.fecEn = &en
		}
		pie = smp.PortInfoExtended{
			CapabilityMask: pieCapFECMode, FECModeActive: f.fecActive(p),
			FDRFECModeSupported: fecMask(0), FDRFECModeEnabled: en[0],
			EDRFECModeSupported: fecMask(1), EDRFECModeEnabled: en[1],
			HDRFECModeSupported: fecMask(2), HDRFECModeEnabled: en[2],
			NDRFECModeSupported: fecMask(3), NDRFECModeEnabled: en[3],
		}
	}
	clear(d[:smp.PortInfoExtendedLayout().Size])
	_, _ = pie.AppendBinary(d[:0])
	return 0
}

// ledInfo answers LedInfo: the beacon LED of a CA port or of a switch
// (its port 0), off until a Set turns it on. The modifier must be 0.
func (f *Fabric) ledInfo(n *node, in *port, mod uint32, set bool, d []byte) uint16 {
	if mod != 0 {
		return stInvalid
	}
	p := n.endport(in)
	if set {
		var req smp.LedInfo
		if req.UnmarshalBinary(d) != nil {
			return stInvalid
		}
		f.tables(p).led = req.LedMask
	}
	li := smp.LedInfo{}
	if t := f.portTabs[p]; t != nil {
		li.LedMask = t.led
	}
	clear(d[:smp.LedInfoLayout().Size])
	_, _ = li.AppendBinary(d[:0])
	return 0
}

// announceExtras sets the PortInfo capability bits of the attributes
// above on a CA port or switch port 0 (not under Options.IbsimStrict).
// pi is its PortInfo (build's template for the port).
func (f *Fabric) announceExtras(pi []byte, typ uint8, num int) {
	if f.strict || (typ == typeSwitch && num != 0) {
		return
	}
	piCapabilityMask.Put(pi, piCapabilityMask.Get(pi)|uint64(smp.CapIsLEDInfoSupported))
	piCapabilityMask2.Put(pi, piCapabilityMask2.Get(pi)|uint64(smp.Cap2IsPortInfoExtendedSupported))
}
