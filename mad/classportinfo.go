package mad

// AttrClassPortInfo is the attribute ID of ClassPortInfo in every GS class
// (SA, PerfMgt, DevMgt, CM ...).
const AttrClassPortInfo uint16 = 0x0001

// ClassPortInfo rows: mad-formats.md section 7, "ClassPortInfo (AttributeID
// 0x0001, any GS class), 72 bytes" (IBA vol. 1 table "ClassPortInfo").
var (
	cpiBaseVersion     = Field{Name: "BaseVersion", Bit: 0, Width: 8}
	cpiClassVersion    = Field{Name: "ClassVersion", Bit: 8, Width: 8}
	cpiCapabilityMask  = Field{Name: "CapabilityMask", Bit: 16, Width: 16, Kind: Hex}
	cpiCapabilityMask2 = Field{Name: "CapabilityMask2", Bit: 32, Width: 27, Kind: Hex}
	cpiRespTimeValue   = Field{Name: "RespTimeValue", Bit: 59, Width: 5}
	cpiRedirectGID     = Field{Name: "RedirectGID", Bit: 64, Width: 128, Kind: Bytes}
	cpiRedirectTC      = Field{Name: "RedirectTC", Bit: 192, Width: 8}
	cpiRedirectSL      = Field{Name: "RedirectSL", Bit: 200, Width: 4}
	cpiRedirectFL      = Field{Name: "RedirectFL", Bit: 204, Width: 20, Kind: Hex}
	cpiRedirectLID     = Field{Name: "RedirectLID", Bit: 224, Width: 16}
	cpiRedirectPKey    = Field{Name: "RedirectP_Key", Bit: 240, Width: 16, Kind: Hex}
	cpiRedirectQP      = Field{Name: "RedirectQP", Bit: 264, Width: 24, Kind: Hex}
	cpiRedirectQKey    = Field{Name: "RedirectQ_Key", Bit: 288, Width: 32, Kind: Hex}
	cpiTrapGID         = Field{Name: "TrapGID", Bit: 320, Width: 128, Kind: Bytes}
	cpiTrapTC          = Field{Name: "TrapTC", Bit: 448, Width: 8}
	cpiTrapSL          = Field{Name: "TrapSL", Bit: 456, Width: 4}
	cpiTrapFL          = Field{Name: "TrapFL", Bit: 460, Width: 20, Kind: Hex}
	cpiTrapLID         = Field{Name: "TrapLID", Bit: 480, Width: 16}
	cpiTrapPKey        = Field{Name: "TrapP_Key", Bit: 496, Width: 16, Kind: Hex}
	cpiTrapHL          = Field{Name: "TrapHL", Bit: 512, Width: 8}
	cpiTrapQP          = Field{Name: "TrapQP", Bit: 520, Width: 24, Kind: Hex}
	cpiTrapQKey        = Field{Name: "TrapQ_Key", Bit: 544, Width: 32, Kind: Hex}
)

// ClassPortInfoLayout is the ClassPortInfo attribute (72 bytes), the same in
// every GS class; its CapabilityMask bits 8-15 are class specific.
var ClassPortInfoLayout = Layout{
	Name: "ClassPortInfo",
	ID:   AttrClassPortInfo,
	Size: 72,
	Fields: []Field{
		cpiBaseVersion, cpiClassVersion, cpiCapabilityMask, cpiCapabilityMask2,
		cpiRespTimeValue, cpiRedirectGID, cpiRedirectTC, cpiRedirectSL,
		cpiRedirectFL, cpiRedirectLID, cpiRedirectPKey, cpiRedirectQP,
		cpiRedirectQKey, cpiTrapGID, cpiTrapTC, cpiTrapSL, cpiTrapFL,
		cpiTrapLID, cpiTrapPKey, cpiTrapHL, cpiTrapQP, cpiTrapQKey,
	},
}

// ClassPortInfo is the ClassPortInfo attribute of a GS class: its versions
// and capabilities, where to redirect requests and where traps go.
type ClassPortInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	CapabilityMask  uint16 // bits 0-7 generic, 8-15 class specific
	CapabilityMask2 uint32 // 27 bits
	RespTimeValue   uint8  // response time = 4.096 us * 2^RespTimeValue
	RedirectGID     GID
	RedirectTC      uint8
	RedirectSL      uint8
	RedirectFL      uint32 // flow label, 20 bits
	RedirectLID     uint16
	RedirectPKey    uint16
	RedirectQP      uint32 // 24 bits
	RedirectQKey    uint32
	TrapGID         GID
	TrapTC          uint8
	TrapSL          uint8
	TrapFL          uint32
	TrapLID         uint16
	TrapPKey        uint16
	TrapHL          uint8
	TrapQP          uint32
	TrapQKey        uint32
}

// UnmarshalBinary decodes c from the first 72 bytes of b without
// allocating. It returns an error wrapping ErrTruncated when b is shorter.
func (c *ClassPortInfo) UnmarshalBinary(b []byte) error {
	if err := ClassPortInfoLayout.Check(b); err != nil {
		return err
	}
	c.BaseVersion = uint8(cpiBaseVersion.Get(b))
	c.ClassVersion = uint8(cpiClassVersion.Get(b))
	c.CapabilityMask = uint16(cpiCapabilityMask.Get(b))
	c.CapabilityMask2 = uint32(cpiCapabilityMask2.Get(b))
	c.RespTimeValue = uint8(cpiRespTimeValue.Get(b))
	copy(c.RedirectGID[:], cpiRedirectGID.Slice(b))
	c.RedirectTC = uint8(cpiRedirectTC.Get(b))
	c.RedirectSL = uint8(cpiRedirectSL.Get(b))
	c.RedirectFL = uint32(cpiRedirectFL.Get(b))
	c.RedirectLID = uint16(cpiRedirectLID.Get(b))
	c.RedirectPKey = uint16(cpiRedirectPKey.Get(b))
	c.RedirectQP = uint32(cpiRedirectQP.Get(b))
	c.RedirectQKey = uint32(cpiRedirectQKey.Get(b))
	copy(c.TrapGID[:], cpiTrapGID.Slice(b))
	c.TrapTC = uint8(cpiTrapTC.Get(b))
	c.TrapSL = uint8(cpiTrapSL.Get(b))
	c.TrapFL = uint32(cpiTrapFL.Get(b))
	c.TrapLID = uint16(cpiTrapLID.Get(b))
	c.TrapPKey = uint16(cpiTrapPKey.Get(b))
	c.TrapHL = uint8(cpiTrapHL.Get(b))
	c.TrapQP = uint32(cpiTrapQP.Get(b))
	c.TrapQKey = uint32(cpiTrapQKey.Get(b))
	return nil
}

// AppendBinary appends the 72-byte attribute to b, reserved bits zero. It
// returns an error wrapping ErrRange, and b unchanged, when a value does not
// fit its field.
func (c *ClassPortInfo) AppendBinary(b []byte) ([]byte, error) {
	all, d := ClassPortInfoLayout.Append(b)
	w := Writer{Layout: &ClassPortInfoLayout, B: d}
	w.Uint(cpiBaseVersion, uint64(c.BaseVersion))
	w.Uint(cpiClassVersion, uint64(c.ClassVersion))
	w.Uint(cpiCapabilityMask, uint64(c.CapabilityMask))
	w.Uint(cpiCapabilityMask2, uint64(c.CapabilityMask2))
	w.Uint(cpiRespTimeValue, uint64(c.RespTimeValue))
	w.Bytes(cpiRedirectGID, c.RedirectGID[:])
	w.Uint(cpiRedirectTC, uint64(c.RedirectTC))
	w.Uint(cpiRedirectSL, uint64(c.RedirectSL))
	w.Uint(cpiRedirectFL, uint64(c.RedirectFL))
	w.Uint(cpiRedirectLID, uint64(c.RedirectLID))
	w.Uint(cpiRedirectPKey, uint64(c.RedirectPKey))
	w.Uint(cpiRedirectQP, uint64(c.RedirectQP))
	w.Uint(cpiRedirectQKey, uint64(c.RedirectQKey))
	w.Bytes(cpiTrapGID, c.TrapGID[:])
	w.Uint(cpiTrapTC, uint64(c.TrapTC))
	w.Uint(cpiTrapSL, uint64(c.TrapSL))
	w.Uint(cpiTrapFL, uint64(c.TrapFL))
	w.Uint(cpiTrapLID, uint64(c.TrapLID))
	w.Uint(cpiTrapPKey, uint64(c.TrapPKey))
	w.Uint(cpiTrapHL, uint64(c.TrapHL))
	w.Uint(cpiTrapQP, uint64(c.TrapQP))
	w.Uint(cpiTrapQKey, uint64(c.TrapQKey))
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 72-byte attribute.
func (c *ClassPortInfo) MarshalBinary() ([]byte, error) { return c.AppendBinary(nil) }
