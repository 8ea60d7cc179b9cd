package bindings

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// Building MADs by hand, Scapy style: mad.new makes a request as a table,
// the script sets fields, mad.send sends it and returns the response in the
// same shape, mad.show prints them side by side.
//
// A request table: {target = "lid:2", method = "Get", name = "PortInfo",
// modifier = 1, attribute = {<snake_case fields>}}.

// attrByName finds an SMP, PerfMgt or Congestion Control attribute
// layout and says its class (mad.ClassSubnLID for an SMP).
func attrByName(name string) (l *mad.Layout, class uint8) {
	for _, c := range []struct {
		layouts []*mad.Layout
		class   uint8
	}{{smp.Layouts(), mad.ClassSubnLID}, {perf.Layouts(), mad.ClassPerf}, {cc.Layouts(), mad.ClassCC}} {
		for _, l := range c.layouts {
			if strings.EqualFold(l.Name, name) {
				return l, c.class
			}
		}
	}
	return nil, 0
}

var methodsByName = map[string]uint8{"Get": mad.MethodGet, "Set": mad.MethodSet}

func madNew(e *Env, L *lua.LState) int {
	name := L.CheckString(1)
	l, _ := attrByName(name)
	if l == nil {
		raise(L, "mad.new", "unknown attribute %q (mad.attributes() lists them)", name)
	}
	opts := L.OptTable(2, L.NewTable())
	checkOptions(L, "mad.new", opts, map[string]bool{"target": true, "modifier": true, "method": true})
	req := L.CreateTable(0, 6)
	req.RawSetString("name", lua.LString(l.Name))
	req.RawSetString("method", lua.LString("Get"))
	req.RawSetString("modifier", lua.LNumber(0))
	opts.ForEach(func(k, v lua.LValue) { req.RawSetString(k.String(), v) })
	req.RawSetString("attribute", e.layoutTable(l, make([]byte, l.Size)))
	L.Push(req)
	return 1
}

func madSend(e *Env, L *lua.LState) int {
	req := L.CheckTable(1)
	name := lua.LVAsString(req.RawGetString("name"))
	l, class := attrByName(name)
	if l == nil {
		raise(L, "mad.send", "request.name: unknown attribute %q", name)
	}
	tv, ok := req.RawGetString("target").(lua.LString)
	if !ok {
		raise(L, "mad.send", "request.target: string expected (\"lid:N\", \"dr:0,1\", ...)")
	}
	t, _, err := luaTarget(tv)
	if err != nil {
		raise(L, "mad.send", "request.target: %v", err)
	}
	mname := lua.LVAsString(req.RawGetString("method"))
	method, ok := methodsByName[mname]
	if !ok {
		raise(L, "mad.send", "request.method: %q is not Get or Set", mname)
	}
	if class == mad.ClassCC && method == mad.MethodSet && l.ID == cc.AttrCongestionKeyInfo {
		raise(L, "mad.send", "%s", ccKeyInfoRefused)
	}
	modv, _ := req.RawGetString("modifier").(lua.LNumber)
	attrT := asFields(L, req.RawGetString("attribute"))
	var data []byte
	if method != mad.MethodGet || attrT != nil {
		data = make([]byte, l.Size)
		if attrT != nil {
			if err := encodeTable(l, attrT, data); err != nil {
				raise(L, "mad.send", "request.attribute: %v", err)
			}
		}
	}
	var resp []byte
	switch class {
	case mad.ClassPerf:
		resp, err = e.sess.Perf(L.Context(), t, method, l.ID, uint8(modv), data)
	case mad.ClassCC:
		resp, err = e.sess.CC(L.Context(), t, method, l.ID, uint32(modv), data)
	default:
		resp, err = e.sess.SMP(L.Context(), t, method, l.ID, uint32(modv), data)
	}
	if class == mad.ClassCC && l.ID == cc.AttrCongestionLog {
		if ll, lerr := cc.LogLayout(resp); lerr == nil {
			l = ll // the layout its LogType says
		}
	}
	var se *engine.StatusError
	status := 0
	switch {
	case err == nil:
	case errors.As(err, &se):
		status = int(se.Status)
	default:
		raise(L, "mad.send", "%v", err)
	}
	out := L.CreateTable(0, 6)
	out.RawSetString("name", lua.LString(l.Name))
	out.RawSetString("method", lua.LString(mad.MethodName(mad.MethodGetResp))) // Get and Set are both answered by GetResp
	out.RawSetString("target", tv)
	out.RawSetString("modifier", modv)
	out.RawSetString("status", lua.LNumber(status))
	out.RawSetString("attribute", e.layoutTable(l, resp))
	L.Push(out)
	return 1
}

// encodeTable writes the fields of t (snake_case keys, as decoded) into b
// through layout l. Unknown keys and values that do not fit are errors
// naming the field.
func encodeTable(l *mad.Layout, t *lua.LTable, b []byte) error {
	byKey := make(map[string]mad.Field, len(l.Fields))
	for _, f := range l.Fields {
		byKey[f.Key()] = f
	}
	var err error
	t.ForEach(func(k, v lua.LValue) {
		if err != nil {
			return
		}
		key := k.String()
		f, ok := byKey[key]
		if !ok {
			err = fmt.Errorf("%s has no field %q", l.Name, key)
			return
		}
		err = putField(f, v, b)
		if err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		}
	})
	return err
}

func putField(f mad.Field, v lua.LValue, b []byte) error {
	switch {
	case f.Kind == mad.String:
		s, ok := v.(lua.LString)
		if !ok {
			return fmt.Errorf("string expected, got %s", v.Type())
		}
		dst := f.Slice(b)
		if len(s) > len(dst) {
			return fmt.Errorf("%d bytes do not fit in %d", len(s), len(dst))
		}
		clear(dst)
		copy(dst, s)
		return nil
	case !f.Numeric():
		s, ok := v.(lua.LString)
		if !ok {
			return fmt.Errorf("hex string expected, got %s", v.Type())
		}
		raw, err := hex.DecodeString(strings.TrimPrefix(string(s), "0x"))
		dst := f.Slice(b)
		if err != nil || len(raw) != len(dst) {
			return fmt.Errorf("%d bytes of hex expected, got %q", len(dst), string(s))
		}
		copy(dst, raw)
		return nil
	}
	var n uint64
	switch v := v.(type) {
	case lua.LNumber:
		if v < 0 || float64(v) != float64(uint64(v)) {
			return fmt.Errorf("non-negative integer expected, got %v", v)
		}
		n = uint64(v)
	case lua.LString:
		var err error
		if n, err = strconv.ParseUint(string(v), 0, 64); err != nil {
			return fmt.Errorf("number expected, got %q", string(v))
		}
	default:
		return fmt.Errorf("number expected, got %s", v.Type())
	}
	if n > f.Max() {
		return fmt.Errorf("value %d out of range (max %d)", n, f.Max())
	}
	f.Put(b, n)
	return nil
}

// madShow prints a request and its response side by side, fields that
// differ marked with '*'.
func madShow(e *Env, L *lua.LState) int {
	a := L.CheckTable(1)
	b := L.OptTable(2, nil)
	writeSideBySide(e.stdout, L, a, b)
	return 0
}

func writeSideBySide(w io.Writer, L *lua.LState, a, b *lua.LTable) {
	l, _ := attrByName(lua.LVAsString(a.RawGetString("name")))
	at := asFields(L, a.RawGetString("attribute"))
	if l == nil || at == nil {
		fmt.Fprintln(w, L.ToStringMeta(a).String())
		return
	}
	var bt *lua.LTable
	if b != nil {
		bt = asFields(L, b.RawGetString("attribute"))
	}
	width := 0
	for _, f := range l.Fields {
		width = max(width, len(f.Key()))
	}
	head := func(t *lua.LTable) string {
		if t == nil {
			return ""
		}
		s := lua.LVAsString(t.RawGetString("method")) + " " + lua.LVAsString(t.RawGetString("target"))
		if st, ok := t.RawGetString("status").(lua.LNumber); ok && st != 0 {
			s += " status " + mad.StatusText(uint16(st))
		}
		return s
	}
	fmt.Fprintf(w, "%s  %-*s  %-24s %s\n", " ", width, l.Name, head(a), head(b))
	for _, f := range l.Fields {
		k := f.Key()
		av := L.ToStringMeta(at.RawGetString(k)).String()
		bv, mark := "", " "
		if bt != nil {
			bv = L.ToStringMeta(bt.RawGetString(k)).String()
			if bv != av {
				mark = "*"
			}
		}
		if secretKeys[k] {
			av, bv = "<not displayed>", "<not displayed>"
		}
		fmt.Fprintf(w, "%s  %-*s  %-24s %s\n", mark, width, k, av, bv)
	}
}
