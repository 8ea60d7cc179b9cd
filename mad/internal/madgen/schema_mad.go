package main

import "github.com/ibscript/ibscript/mad"

// The attributes every GS class shares (package mad).
func madAttrs() []*Attr {
	return []*Attr{{
		Pkg: "mad", Name: "ClassPortInfo", ID: 0x0001, Size: 72, Prefix: "cpi", Type: "ClassPortInfo",
		Mod: "none (0)",
		Doc: "ClassPortInfo is the ClassPortInfo attribute of a GS class: its versions and capabilities, where to redirect requests and where traps go (IBA vol. 1 table \"ClassPortInfo\", mad-formats.md section 7); the same 72 bytes in every class, CapabilityMask bits 8-15 class specific.",
		Fields: []Field{
			{Name: "BaseVersion", Bit: 0, Width: 8, Dump: mad.DumpUint},
			{Name: "ClassVersion", Bit: 8, Width: 8, Dump: mad.DumpUint},
			{Name: "CapabilityMask", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex, Doc: "bits 0-7 generic, 8-15 class specific"},
			{Name: "CapabilityMask2", Bit: 32, Width: 27, Dump: mad.DumpHex, Kind: mad.Hex, Doc: "27 bits"},
			{Name: "RespTimeValue", Bit: 59, Width: 5, Dump: mad.DumpUint, IB: "RespTimeVal", Doc: "response time = 4.096 us * 2^RespTimeValue"},
			{Name: "RedirectGID", Bit: 64, Width: 128, Kind: mad.Bytes},
			{Name: "RedirectTC", Bit: 192, Width: 8, Dump: mad.DumpHex},
			{Name: "RedirectSL", Bit: 200, Width: 4, Dump: mad.DumpUint},
			{Name: "RedirectFL", Bit: 204, Width: 20, Dump: mad.DumpHex, Kind: mad.Hex, Doc: "flow label, 20 bits"},
			{Name: "RedirectLID", Bit: 224, Width: 16, Dump: mad.DumpUint},
			{Name: "RedirectP_Key", Bit: 240, Width: 16, Dump: mad.DumpHex, IB: "RedirectPKey", Kind: mad.Hex},
			{Name: "RedirectQP", Bit: 264, Width: 24, Dump: mad.DumpHex, Kind: mad.Hex, Doc: "24 bits"},
			{Name: "RedirectQ_Key", Bit: 288, Width: 32, Dump: mad.DumpHex, IB: "RedirectQKey", Kind: mad.Hex},
			{Name: "TrapGID", Bit: 320, Width: 128, Kind: mad.Bytes},
			{Name: "TrapTC", Bit: 448, Width: 8, Dump: mad.DumpHex},
			{Name: "TrapSL", Bit: 456, Width: 4, Dump: mad.DumpUint},
			{Name: "TrapFL", Bit: 460, Width: 20, Dump: mad.DumpHex, Kind: mad.Hex},
			{Name: "TrapLID", Bit: 480, Width: 16, Dump: mad.DumpUint},
			{Name: "TrapP_Key", Bit: 496, Width: 16, Dump: mad.DumpHex, IB: "TrapPKey", Kind: mad.Hex},
			{Name: "TrapHL", Bit: 512, Width: 8, Dump: mad.DumpUint},
			{Name: "TrapQP", Bit: 520, Width: 24, Dump: mad.DumpHex, Kind: mad.Hex},
			{Name: "TrapQ_Key", Bit: 544, Width: 32, Dump: mad.DumpHex, IB: "TrapQKey", Kind: mad.Hex},
		},
	}}
}
