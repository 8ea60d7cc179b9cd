package sim

import (
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
)

// cctLimitRow is CongestionControlTable's CCTI_Limit row.
var cctLimitRow, _ = cc.CongestionControlTableLayout().Field("CCTI_Limit")

// The Congestion Control agent (class 0x21) of every switch and CA. ibsim
// has none: its dispatcher keys handlers on the class's low four bits, so
// a CC MAD reaches the SMA handler of the same attribute ID, which answers
// with the request's own data (zeros from ibccquery) and the SMA's status,
// or is dropped (ClassPortInfo, CongestionLog). The embedded fabric
// answers as IBA Annex A10 describes instead, with its reset values:
// every setting zero (congestion control off), CC_Key 0, empty logs.
// The values IBA leaves to the implementation are below. A Set stores the
// attribute it carries, whole (Control_Map does not select fields);
// state is kept per agent (a switch's, each CA port's) from the first
// Set, so a fabric that is only read costs nothing.
const (
	ccRespTime     = 18 // ClassPortInfo.RespTimeValue, as the PMA's
	ccCATableCap   = 2  // a CA's CongestionInfo.ControlTableCap: 128 CCT entries
	ccSwPortsBlock = 32 // SwitchPortCongestionSetting ports per block
	ccCCTBlock     = 64 // CongestionControlTable entries per block
)

// ccState is a node's CC agent state once a Set changed it.
type ccState struct {
	key        uint64
	protect    bool
	lease      uint16
	violations uint16
	swSetting  [76]byte             // SwitchCongestionSetting
	swPorts    map[uint32][128]byte // SwitchPortCongestionSetting by block
	caSetting  [132]byte            // CACongestionSetting
	cctLimit   uint16               // CongestionControlTable.CCTI_Limit
	cct        map[uint32][128]byte // CongestionControlTable entries by block
}

// ccOf returns the state of the CC agent at endport p (a switch's port
// 0, or a CA port: each port of a CA has its own), made on first use.
func (f *Fabric) ccOf(p *port) *ccState {
	if f.ccAgents == nil {
		f.ccAgents = make(map[*port]*ccState)
	}
	s := f.ccAgents[p]
	if s == nil {
		s = &ccState{key: f.ccKey}
		f.ccAgents[p] = s
	}
	return s
}

// ccTime is the agent's Timestamp: 1.024 us units since the fabric's first
// CC MAD, wrapping at 32 bits.
func (f *Fabric) ccTime() uint32 {
	if f.ccEpoch.IsZero() {
		f.ccEpoch = time.Now()
	}
	return uint32(time.Since(f.ccEpoch) / (1024 * time.Nanosecond))
}

// ccAgent answers a CC MAD at node n, received on port in. Routers have
// no agent (the MAD goes to the port's transports).
func (f *Fabric) ccAgent(n *node, in *port, b []byte) (uint16, action) {
	method := mad.MethodOf(b)
	if n.typ == typeRouter || (method != mad.MethodGet && method != mad.MethodSet) {
		return 0, actDeliver
	}
	set := method == mad.MethodSet
	st := f.ccAgents[in] // nil: reset values
	if st == nil && f.ccKey != 0 {
		st = f.ccOf(in) // the agent's CC_Key counts from the first MAD
	}
	keyOK := st == nil || st.key == 0 || cc.Key(b) == st.key
	if !keyOK && (set || st.protect) {
		// A wrong CC_Key: dropped, counted (IBA A10.4.1.1, as M_Key).
		if st.violations < 0xffff {
			st.violations++
		}
		return 0, actDrop
	}
	attr := mad.AttrIDOf(b)
	mod := mad.AttrModOf(b)
	d := cc.Data(b)
	in2 := [224]byte{}
	copy(in2[:], d) // the Set's attribute
	clear(d)
	sw := n.typ == typeSwitch
	if status, ok := f.ccReadOnly(attr, sw, set, d); ok {
		return status, actRespond
	}
	if attr == cc.AttrCongestionKeyInfo {
		f.ccKeyInfo(in, st, set, keyOK, &in2, d)
		return 0, actRespond
	}
	return f.ccSetting(n, in, attr, mod, set, &in2, d), actRespond
}

// ccReadOnly answers the CC attributes that hold no state (ClassPortInfo,
// CongestionInfo, CongestionLog, Timestamp) into d; ok is false for the
// others.
func (f *Fabric) ccReadOnly(attr uint16, sw, set bool, d []byte) (status uint16, ok bool) {
	switch attr {
	case cc.AttrClassPortInfo:
		cpi := mad.ClassPortInfo{BaseVersion: 1, ClassVersion: cc.Version, RespTimeValue: ccRespTime}
		_, _ = cpi.AppendBinary(d[:0])
		return readOnly(set), true
	case cc.AttrCongestionInfo:
		ci := cc.CongestionInfo{}
		if !sw {
			ci.ControlTableCap = ccCATableCap
		}
		_, _ = ci.AppendBinary(d[:0])
		return readOnly(set), true
	case cc.AttrCongestionLog:
		t := f.ccTime()
		if sw {
			l := cc.CongestionLog{LogType: cc.LogTypeSwitch, CurrentTimeStamp: t}
			_, _ = l.AppendBinary(d[:0])
		} else {
			l := cc.CongestionLogCA{LogType: cc.LogTypeCA, CurrentTimeStamp: t}
			_, _ = l.AppendBinary(d[:0])
		}
		return readOnly(set), true
	case cc.AttrTimestamp:
		ts := cc.Timestamp{Time: f.ccTime()}
		_, _ = ts.AppendBinary(d[:0])
		return readOnly(set), true
	}
	return 0, false
}

// ccKeyInfo answers CongestionKeyInfo into d, a Set storing in2's key,
// protect bit, lease and violations first; st is the port's state (nil:
// reset values) and keyOK whether the MAD carried the key.
func (f *Fabric) ccKeyInfo(in *port, st *ccState, set, keyOK bool, in2 *[224]byte, d []byte) {
	if set {
		var ki cc.CongestionKeyInfo
		_ = ki.UnmarshalBinary(in2[:])
		st = f.ccOf(in)
		st.key, st.protect, st.lease, st.violations = ki.CCKey, ki.CCKeyProtectBit, ki.CCKeyLeasePeriod, ki.CCKeyViolations
		keyOK = true
	}
	var ki cc.CongestionKeyInfo
	if st != nil {
		ki = cc.CongestionKeyInfo{CCKey: st.key, CCKeyProtectBit: st.protect, CCKeyLeasePeriod: st.lease, CCKeyViolations: st.violations}
	}
	if !keyOK {
		ki.CCKey = 0 // unprotected: readable, but not the key itself
	}
	_, _ = ki.AppendBinary(d[:0])
}

// ccSetting answers the stored CC settings and tables at node n's port in
// (the Set's attribute is in2) into d, and returns the MAD status.
func (f *Fabric) ccSetting(n *node, in *port, attr uint16, mod uint32, set bool, in2 *[224]byte, d []byte) uint16 {
	sw := n.typ == typeSwitch
	switch attr {
	case cc.AttrSwitchCongestionSetting:
		if !sw {
			return stUnsupported
		}
		if set {
			f.ccOf(in).swSetting = [76]byte(in2[:76])
		}
		if st := f.ccAgents[in]; st != nil {
			copy(d, st.swSetting[:])
		}
		return 0
	case cc.AttrSwitchPortCongestionSetting:
		if !sw {
			return stUnsupported
		}
		if int(mod) > n.numPorts/ccSwPortsBlock {
			return stInvalid
		}
		if set {
			s := f.ccOf(in)
			if s.swPorts == nil {
				s.swPorts = make(map[uint32][128]byte)
			}
			s.swPorts[mod] = [128]byte(in2[:128])
		}
		if st := f.ccAgents[in]; st != nil {
			v := st.swPorts[mod]
			copy(d, v[:])
		}
		return 0
	case cc.AttrCACongestionSetting:
		if sw {
			return stUnsupported
		}
		if set {
			f.ccOf(in).caSetting = [132]byte(in2[:132])
		}
		if st := f.ccAgents[in]; st != nil {
			copy(d, st.caSetting[:])
		}
		return 0
	case cc.AttrCongestionControlTable:
		if sw {
			return stUnsupported
		}
		if mod >= ccCATableCap {
			return stInvalid
		}
		if set {
			s := f.ccOf(in)
			if s.cct == nil {
				s.cct = make(map[uint32][128]byte)
			}
			s.cctLimit = uint16(cctLimitRow.Get(in2[:]))
			s.cct[mod] = [128]byte(in2[4:132])
		}
		if st := f.ccAgents[in]; st != nil {
			cctLimitRow.Put(d, uint64(st.cctLimit))
			v := st.cct[mod]
			copy(d[4:], v[:])
		}
		return 0
	}
	return stUnsupported
}

// readOnly is the status of a method on a read-only attribute: a Set is
// unsupported (answered with the attribute as a Get).
func readOnly(set bool) uint16 {
	if set {
		return stUnsupported
	}
	return 0
}
