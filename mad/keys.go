package mad

import (
	"encoding/binary"
	"slices"
)

// Key fields: the management keys that authenticate a requester to a
// manager (IBA 14.2.4 M_Key, 15.2.1.1 SM_Key, 16.1.3 B_Key, A10.4.1
// CC_Key). They are secrets of the fabric's operator: ibscript never
// shows, records or hands them to a script. KeyFieldNames is the one
// list of their field names (as the layouts spell them); MaskKeys is the
// one place that knows where they sit in a MAD.
func KeyFieldNames() []string { return slices.Clone(keyFieldNames) }

// KeyFieldKeys returns the Lua keys of KeyFieldNames, in the same order.
func KeyFieldKeys() []string { return slices.Clone(keyFieldKeys) }

var (
	keyFieldNames = []string{"M_Key", "SM_Key", "B_Key", "CC_Key"}
	keyFieldKeys  = []string{"m_key", "sm_key", "b_key", "cc_key"}
)

// IsKeyField reports whether a layout field named name holds a key.
func IsKeyField(name string) bool {
	for _, k := range keyFieldNames {
		if name == k {
			return true
		}
	}
	return false
}

// Where the keys sit (mad-formats.md sections 4, 6 and 8; IBA 16.1.3,
// A10.4.1): byte offsets in the MAD, and in the records that embed them.
const (
	smpMKeyOff    = 24 // SMP header, LID-routed and directed route
	saSMKeyOff    = 36 // SA class header
	bmBKeyOff     = 24 // BM class header
	ccCCKeyOff    = 24 // CC class header
	ccDataOff     = 64 // CC management data
	saDataOff     = 56 // SA data: records
	saSegmentData = Size - saDataOff

	attrSMInfo           = 0x0020
	ccAttrKeyInfo        = 0x0012 // CongestionKeyInfo: CC_Key at 0
	attrPortInfo         = 0x0015
	saAttrPortInfoRecord = 0x0012 // EndportLID, PortNum, Options, then PortInfo at 4
	saAttrSMInfoRecord   = 0x0018 // LID, reserved, then SMInfo at 4

	piMKeyOff  = 0 // in PortInfo
	smiKeyOff  = 8 // SM_Key in SMInfo
	keyLen     = 8
	recordBase = 4 // PortInfo / SMInfo in their SA records
)

// MaskAttrKeys zeroes the keys in the data of attribute attr of
// management class class, in place, and reports whether it changed a
// byte: the M_Key of PortInfo and the SM_Key of SMInfo in an SMP's 64
// bytes of data (either SMP class), the CC_Key of CongestionKeyInfo in a
// CC MAD's data. data is the attribute alone (smpdump's bytes, a
// reassembled SMP's data), not a whole MAD: MaskKeys is for those, and
// masks the data through this same rule. Short data is masked as far as
// it goes.
func MaskAttrKeys(class uint8, attr uint16, data []byte) bool {
	off := -1
	switch class {
	case ClassSubnLID, ClassSubnDR:
		switch attr {
		case attrPortInfo:
			off = piMKeyOff
		case attrSMInfo:
			off = smiKeyOff
		}
	case ClassCC:
		if attr == ccAttrKeyInfo {
			off = 0
		}
	}
	return zeroKey(data, off)
}

// zeroKey zeroes the key at b[off:off+8] (as much of it as b holds) and
// reports whether a byte changed; off < 0 is no key.
func zeroKey(b []byte, off int) bool {
	changed := false
	if off < 0 {
		return false
	}
	for i := off; i < min(off+keyLen, len(b)); i++ {
		if b[i] != 0 {
			b[i] = 0
			changed = true
		}
	}
	return changed
}

// MaskKeys zeroes every key b carries, in place, and reports whether it
// changed a byte: the M_Key of an SMP and of the PortInfo it carries,
// the SM_Key of SMInfo, the SM_Key of an SA header and of the PortInfo
// and SMInfo in SA records (in a single MAD, an RMPP segment or a
// reassembled message longer than 256 bytes), the B_Key of a BM MAD and
// the CC_Key of a CC MAD and of the CongestionKeyInfo it carries. It never panics on short or malformed input.
func MaskKeys(b []byte) bool {
	if len(b) < HeaderSize {
		return false
	}
	changed := false
	zero := func(off int) {
		if zeroKey(b, off) {
			changed = true
		}
	}
	data := func(off int) []byte {
		if off >= len(b) {
			return nil
		}
		return b[off:]
	}
	attr := binary.BigEndian.Uint16(b[16:18])
	switch b[1] {
	case ClassSubnLID, ClassSubnDR:
		zero(smpMKeyOff)
		if MaskAttrKeys(b[1], attr, data(SMPDataOff)) {
			changed = true
		}
	case ClassBM:
		zero(bmBKeyOff)
	case ClassCC:
		zero(ccCCKeyOff)
		if MaskAttrKeys(b[1], attr, data(ccDataOff)) {
			changed = true
		}
	case ClassSubnAdm:
		zero(saSMKeyOff)
		var keyOff int
		switch attr {
		case saAttrPortInfoRecord:
			keyOff = recordBase + piMKeyOff
		case saAttrSMInfoRecord:
			keyOff = recordBase + smiKeyOff
		default:
			return changed
		}
		if len(b) <= saDataOff {
			return changed
		}
		// The payload offset of this MAD's first data byte: segment N of
		// an RMPP DATA transfer carries payload bytes from (N-1)*200; a
		// single MAD and a reassembled message start at 0.
		base := 0
		const rmppActive, rmppData = 0x01, 1
		if len(b) <= Size && b[26]&rmppActive != 0 && b[25] == rmppData {
			if seg := binary.BigEndian.Uint32(b[28:32]); seg > 1 && seg < 1<<24 {
				base = int(seg-1) * saSegmentData
			}
		}
		stride := int(binary.BigEndian.Uint16(b[44:46])) * 8
		end := base + len(b) - saDataOff // payload bytes [base, end) are here
		if stride == 0 {
			if base == 0 {
				zero(saDataOff + keyOff)
			}
			return changed
		}
		// Records whose key overlaps [base, end).
		first := max(0, (base-keyOff-keyLen)/stride)
		for r := first; r*stride+keyOff < end; r++ {
			k := r*stride + keyOff
			if k+keyLen <= base {
				continue
			}
			for i := max(k, base); i < min(k+keyLen, end); i++ {
				j := saDataOff + i - base
				if b[j] != 0 {
					b[j] = 0
					changed = true
				}
			}
		}
	}
	return changed
}
