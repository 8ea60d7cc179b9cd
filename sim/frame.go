package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// The forwarding path reads and writes a few header fields of every MAD at
// every hop. mad.Field's generic bit accessors cost more than the rest of
// a hop, so these fields are resolved once from the mad and mad/smp
// layouts into byte positions (the layouts remain the only source of the
// offsets; init checks the fields are byte aligned).
var (
	fMethod   byteField // common header: Method (R bit included)
	fStatus   byteField // common header: Status (16 bits; a DR SMP's D bit is its top bit)
	fHopPtr   byteField
	fHopCnt   byteField
	fDrSLID   byteField
	fDrDLID   byteField
	fInitPath byteField
	fRetPath  byteField
	fDBit     bitField
	fAttrID   byteField
	fAttrMod  byteField
	fSMPData  byteField
	fSMPMKey  byteField
)

// byteField is a byte-aligned field of whole bytes: bytes off..off+n.
type byteField struct{ off, n int }

func (f byteField) u8(b []byte) uint8        { return b[f.off] }
func (f byteField) set8(b []byte, v uint8)   { b[f.off] = v }
func (f byteField) u16(b []byte) uint16      { return binary.BigEndian.Uint16(b[f.off:]) }
func (f byteField) set16(b []byte, v uint16) { binary.BigEndian.PutUint16(b[f.off:], v) }
func (f byteField) u32(b []byte) uint32      { return binary.BigEndian.Uint32(b[f.off:]) }
func (f byteField) u64(b []byte) uint64      { return binary.BigEndian.Uint64(b[f.off:]) }
func (f byteField) bytes(b []byte) []byte    { return b[f.off : f.off+f.n : f.off+f.n] }

// bitField is a one-bit field.
type bitField struct {
	off  int
	mask byte
}

func (f bitField) get(b []byte) bool { return b[f.off]&f.mask != 0 }

func init() {
	var errs []error
	byteAligned := func(l *mad.Layout, name string, n int) byteField {
		fl, ok := l.Field(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("sim: layout %s has no field %s", l.Name, name))
		case fl.Bit%8 != 0 || fl.Width%8 != 0 || (n != 0 && fl.Width != 8*n):
			errs = append(errs, fmt.Errorf("sim: layout %s field %s is not %d whole bytes", l.Name, name, n))
		}
		return byteField{off: fl.Bit / 8, n: fl.Width / 8}
	}
	fMethod = byteAligned(mad.HeaderLayout(), "Method", 1)
	fStatus = byteAligned(mad.HeaderLayout(), "Status", 2)
	fAttrID = byteAligned(mad.HeaderLayout(), "AttributeID", 2)
	fAttrMod = byteAligned(mad.HeaderLayout(), "AttributeModifier", 4)
	fSMPData = byteAligned(smp.SMPLayout(), "Data", 64)
	fSMPMKey = byteAligned(smp.SMPLayout(), "M_Key", 8)
	fHopPtr = byteAligned(smp.DRSMPLayout(), "HopPointer", 1)
	fHopCnt = byteAligned(smp.DRSMPLayout(), "HopCount", 1)
	fDrSLID = byteAligned(smp.DRSMPLayout(), "DrSLID", 2)
	fDrDLID = byteAligned(smp.DRSMPLayout(), "DrDLID", 2)
	fInitPath = byteAligned(smp.DRSMPLayout(), "InitialPath", 0)
	fRetPath = byteAligned(smp.DRSMPLayout(), "ReturnPath", 0)
	if d, ok := smp.DRSMPLayout().Field("D"); !ok || d.Width != 1 {
		errs = append(errs, fmt.Errorf("sim: layout %s has no one-bit field D", smp.DRSMPLayout().Name))
	} else {
		fDBit = bitField{off: d.Bit / 8, mask: 0x80 >> (d.Bit % 8)}
		// The D bit must be the top bit of the common Status, as the
		// response status is written whole.
		if d.Bit != fStatus.off*8 {
			errs = append(errs, fmt.Errorf("sim: D bit is not the top bit of Status"))
		}
	}
	if fInitPath.n < smp.MaxHops+1 || fRetPath.n < smp.MaxHops+1 {
		errs = append(errs, fmt.Errorf("sim: DR path vectors shorter than %d entries", smp.MaxHops+1))
	}
	layoutErr = joinErr(layoutErr, errs)
}

// makeResp turns the request in b into its response in place, as an SMA
// does (smp.MakeGetResp, without decoding the header): method GetResp,
// status st, and for a directed-route SMP the D bit.
func makeResp(b []byte, st uint16) {
	fMethod.set8(b, mad.MethodGetResp)
	if mad.MgmtClassOf(b) == mad.ClassSubnDR {
		st = st&0x7fff | uint16(fDBit.mask)<<8
	}
	fStatus.set16(b, st)
}
