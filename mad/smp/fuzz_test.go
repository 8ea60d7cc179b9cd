package smp_test

import (
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/smp"
)

// seeds returns the attribute bytes of every capture of attribute id, plus
// the whole captures when id is 0.
func seeds(f *testing.F, id uint16) [][]byte {
	var out [][]byte
	for _, c := range madtest.Captures(f, "testdata/*.hex") {
		switch {
		case id == 0:
			out = append(out, c.Bytes)
		case len(c.Bytes) == mad.Size && mad.AttrIDOf(c.Bytes) == id:
			out = append(out, smp.Data(c.Bytes))
		case len(c.Bytes) < mad.Size && id == smp.AttrNotice:
			out = append(out, c.Bytes) // the bare Notice
		}
	}
	return out
}

func FuzzSMP(f *testing.F) {
	madtest.Fuzz(f, newSMP, seeds(f, 0)...)
}

func FuzzNodeInfo(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.NodeInfo) }, seeds(f, smp.AttrNodeInfo)...)
}

func FuzzNodeDescription(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.NodeDescription) }, seeds(f, smp.AttrNodeDescription)...)
}

func FuzzPortInfo(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.PortInfo) }, seeds(f, smp.AttrPortInfo)...)
}

func FuzzSwitchInfo(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.SwitchInfo) }, seeds(f, smp.AttrSwitchInfo)...)
}

func FuzzGUIDInfo(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.GUIDInfo) }, seeds(f, smp.AttrGUIDInfo)...)
}

func FuzzPKeyTable(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.PKeyTable) }, seeds(f, smp.AttrPKeyTable)...)
}

func FuzzLinearForwardingTable(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.LinearForwardingTable) }, seeds(f, smp.AttrLinearForwardingTable)...)
}

func FuzzSMInfo(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.SMInfo) }, seeds(f, smp.AttrSMInfo)...)
}

func FuzzNotice(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(smp.Notice) }, seeds(f, smp.AttrNotice)...)
}

// FuzzRawHelpers feeds arbitrary buffers to the raw-buffer helpers: they
// must not panic, whatever the length.
func FuzzRawHelpers(f *testing.F) {
	for _, s := range seeds(f, 0) {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, v uint8) {
		_ = smp.IsDR(b)
		_ = smp.Status(b)
		smp.SetHopPointer(b, smp.HopPointer(b)+v)
		smp.SetHopCount(b, smp.HopCount(b)^v)
		smp.SetDirection(b, !smp.Direction(b))
		smp.SetDrSLID(b, smp.DrSLID(b)+uint16(v))
		smp.SetDrDLID(b, smp.DrDLID(b))
		smp.SetMKey(b, smp.MKey(b))
		if p := smp.InitialPath(b); p != nil {
			smp.ReturnPath(b)[v%64] = p[v%64]
		}
		_ = smp.Data(b)
		smp.MakeGetResp(b, uint16(v))
	})
}
