package bindings

import (
	"encoding/hex"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// The mad module works on MADs as bytes: decode one captured elsewhere,
// list an attribute's fields.
func madModule() Module {
	return Module{
		Name:    "mad",
		Summary: "MADs as bytes: decode a captured MAD, list an attribute's fields",
		Funcs: []Func{
			{"decode", madDecode, "decode(mad) -> table: a 256-byte MAD (binary string, or hex with any spaces, colons or newlines) decoded into header, the SMP, PerfMgt or Congestion Control fields and the attribute"},
			{"fields", madFields, "fields(attribute) -> array: the fields of an attribute (\"PortInfo\") as {name, key, bit, width}, in wire order"},
			{"attributes", madAttributes, "attributes() -> array: the names of the attributes ibscript decodes"},
			{"new", madNew, "new(attribute [, {target=, method=, modifier=}]) -> request: a Get (or Set) of an SMP, PerfMgt or Congestion Control attribute as a table whose attribute fields can be set one by one"},
			{"send", madSend, "send(request) -> response: sends a request from mad.new and returns the response in the same shape, with its status (not raised)"},
			{"show", madShow, "show(request [, response]) -> nil: prints a request and its response side by side, differing fields marked *"},
		},
	}
}

// madBytes reads a MAD argument: binary as is, or hex text.
func madBytes(L *lua.LState, fn string, n int) []byte {
	s := L.CheckString(n)
	if len(s) == mad.Size {
		return []byte(s)
	}
	clean := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r', ':', '-':
			return -1
		}
		return r
	}, strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	b, err := hex.DecodeString(clean)
	if err != nil {
		raise(L, fn, "argument #%d is neither a 256-byte MAD nor hex: %v", n, err)
	}
	if len(b) < mad.HeaderSize {
		raise(L, fn, "MAD of %d bytes is shorter than its 24-byte header", len(b))
	}
	if len(b) < mad.Size {
		b = append(b, make([]byte, mad.Size-len(b))...)
	}
	return b
}

func madDecode(e *Env, L *lua.LState) int {
	b := madBytes(L, "mad.decode", 1)
	t := L.CreateTable(0, 4)
	var attr *mad.Layout
	var data []byte
	switch class := mad.MgmtClassOf(b); class {
	case mad.ClassSubnLID, mad.ClassSubnDR:
		frame := smp.SMPLayout()
		if class == mad.ClassSubnDR {
			frame = smp.DRSMPLayout()
		}
		hdr := e.layoutTable(frame, b)
		if f, ok := frame.Field("Data"); ok {
			// The frame's raw data would show the keys PortInfo and
			// SMInfo carry: shown with them zeroed.
			m := append([]byte(nil), b...)
			mad.MaskKeys(m)
			asView(hdr).store(L, lua.LString(f.Key()), fieldValue(f, m))
		}
		t.RawSetString("header", hdr)
		attr, data = smp.LayoutByID(mad.AttrIDOf(b)), smp.Data(b)
	case mad.ClassPerf:
		t.RawSetString("header", e.layoutTable(mad.HeaderLayout(), b))
		attr, data = perf.LayoutByID(mad.AttrIDOf(b)), perf.Data(b)
	case mad.ClassCC:
		frame := cc.MADLayout()
		if mad.AttrIDOf(b) == cc.AttrCongestionLog {
			frame = cc.LogMADLayout()
		}
		t.RawSetString("header", e.layoutTable(frame, b)) // its CC_Key masked
		attr, data = cc.LayoutByID(mad.AttrIDOf(b)), cc.Data(b)
		if attr == cc.CongestionLogLayout() {
			if l, err := cc.LogLayout(data); err == nil {
				attr = l
			}
		}
	default:
		t.RawSetString("header", e.layoutTable(mad.HeaderLayout(), b))
		data = b[mad.HeaderSize:]
	}
	t.RawSetString("class", lua.LString(mad.ClassName(mad.MgmtClassOf(b))))
	t.RawSetString("method", lua.LString(mad.MethodName(mad.MethodOf(b))))
	if attr != nil {
		t.RawSetString("attribute", e.layoutTable(attr, data))
		t.RawSetString("name", lua.LString(attr.Name))
	} else {
		m := append([]byte(nil), b...)
		mad.MaskKeys(m) // an SA, BM or CC MAD's keys
		t.RawSetString("data", lua.LString(hex.EncodeToString(m[len(b)-len(data):])))
		t.RawSetString("name", lua.LString(fmt.Sprintf("0x%04x", mad.AttrIDOf(b))))
	}
	L.Push(t)
	return 1
}

// attributeLayouts is every attribute layout by name, SMP first.
func attributeLayouts() []*mad.Layout {
	ls := append(smp.Layouts(), perf.Layouts()...)
	ls = append(ls, cc.Layouts()...)
	return append(ls, mad.ClassPortInfoLayout(), mad.HeaderLayout(), smp.SMPLayout(), smp.DRSMPLayout())
}

func findLayout(name string) *mad.Layout {
	for _, l := range attributeLayouts() {
		if strings.EqualFold(l.Name, name) {
			return l
		}
	}
	return nil
}

func madFields(e *Env, L *lua.LState) int {
	name := L.CheckString(1)
	l := findLayout(name)
	if l == nil {
		raise(L, "mad.fields", "unknown attribute %q (mad.attributes() lists them)", name)
	}
	arr := L.CreateTable(len(l.Fields), 0)
	for _, f := range l.Fields {
		ft := L.CreateTable(0, 4)
		ft.RawSetString("name", lua.LString(f.Name))
		ft.RawSetString("key", lua.LString(f.Key()))
		ft.RawSetString("bit", lua.LNumber(f.Bit))
		ft.RawSetString("width", lua.LNumber(f.Width))
		arr.Append(ft)
	}
	L.Push(arr)
	return 1
}

func madAttributes(_ *Env, L *lua.LState) int {
	arr := L.NewTable()
	seen := map[string]bool{}
	for _, l := range attributeLayouts() {
		if !seen[l.Name] {
			seen[l.Name] = true
			arr.Append(lua.LString(l.Name))
		}
	}
	L.Push(arr)
	return 1
}
