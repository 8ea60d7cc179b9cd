package bindings

import (
	"errors"
	"sort"
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
)

func saModule() Module {
	return Module{
		Name:    "sa",
		Summary: "subnet administration queries (saquery): records of the SM's SA, multi-packet answers over RMPP",
		Funcs: []Func{
			{"get_table", saGetTable, `get_table(record [, fields]) -> array of tables [, warning]: GetTable of an SA record ("NodeRecord", "PathRecord" ...); fields (snake_case keys) are matched and set the component mask. When the answer lacks records (a peer without RMPP, as OpenSM under ibsim, sends only its first MAD) the records that arrived come with a second value, a string saying what is missing`},
			{"get", saGet, `get(record, fields) -> table: Get of the one record matching fields; no match or several raise`},
			{"path", saPath, `path(src, dst) -> table: the PathRecord from LID src to LID dst ("lid:N" or a number)`},
			{"multipath", saMultiPath, `multipath(src_guids, dst_guids) -> array of tables [, warning]: PathRecords between every source and destination port GUID ("0x..." strings), one GetMulti(MultiPathRecord); a truncated answer (as OpenSM's under ibsim) gives the paths that arrived and a string saying what is missing`},
			{"records", saRecordNames, `records() -> array of strings: the SA record names get and get_table know`},
		},
	}
}

// checkAttr reads an SA record name.
func checkAttr(L *lua.LState, fn string, n int) *sa.Attr {
	name := L.CheckString(n)
	a, ok := sa.AttrByName(name)
	if !ok || a == &sa.ClassPortInfo || a == &sa.InformInfo || a == &sa.MultiPathRecord {
		raise(L, fn, "unknown SA record %q (sa.records() lists them)", name)
	}
	return a
}

// saTemplate builds the template record and component mask from a table of
// fields; unknown names and fields no component selects raise.
func saTemplate(L *lua.LState, fn string, a *sa.Attr, t *lua.LTable) ([]byte, uint64) {
	tmpl := make([]byte, a.Stride*8)
	var mask uint64
	if t == nil {
		return tmpl, 0
	}
	var keys []string
	t.ForEach(func(k, _ lua.LValue) { keys = append(keys, k.String()) })
	sort.Strings(keys)
	for _, k := range keys {
		f, c, ok := a.Field(k)
		if !ok || f.Key() != k {
			raise(L, fn, "%s has no field %q", a.Name(), k)
		}
		if c < 0 {
			raise(L, fn, "%s field %q is not a component of the query", a.Name(), k)
		}
		if err := putField(f, t.RawGetString(k), tmpl); err != nil {
			raise(L, fn, "%s field %q: %v", a.Name(), k, err)
		}
		mask |= 1 << uint(c)
	}
	return tmpl, mask
}

func (e *Env) saRecordTable(a *sa.Attr, rec []byte) lua.LValue {
	return e.layoutTable(a.Layout, rec)
}

func saGetTable(e *Env, L *lua.LState) int {
	const fn = "sa.get_table"
	a := checkAttr(L, fn, 1)
	tmpl, mask := saTemplate(L, fn, a, fieldsTable(L, 2, true))
	recs, err := e.sess.SAGetTable(L.Context(), a, mask, tmpl)
	if err != nil && !errors.Is(err, engine.ErrTruncated) {
		raise(L, fn, "%v", err)
	}
	out := L.CreateTable(len(recs), 0)
	for i, r := range recs {
		out.RawSetInt(i+1, e.saRecordTable(a, r))
	}
	L.Push(out)
	return pushWarning(L, err)
}

// pushWarning pushes err's text as a second result when it is a
// truncated SA answer.
func pushWarning(L *lua.LState, err error) int {
	if err == nil {
		return 1
	}
	L.Push(lua.LString(err.Error()))
	return 2
}

func saGet(e *Env, L *lua.LState) int {
	const fn = "sa.get"
	a := checkAttr(L, fn, 1)
	tmpl, mask := saTemplate(L, fn, a, fieldsTable(L, 2, false))
	rec, err := e.sess.SAGet(L.Context(), a, mask, tmpl)
	if err != nil {
		raise(L, fn, "%v", err)
	}
	L.Push(e.saRecordTable(a, rec))
	return 1
}

func checkLID(L *lua.LState, fn string, n int) uint16 {
	t := checkTarget(L, fn, n)
	if t.Kind != engine.ByLID {
		raise(L, fn, "argument #%d: a LID is needed, got %s", n, t)
	}
	return t.LID
}

func saPath(e *Env, L *lua.LState) int {
	const fn = "sa.path"
	src, dst := checkLID(L, fn, 1), checkLID(L, fn, 2)
	p, err := e.sess.PathRecord(L.Context(), src, dst)
	if err != nil {
		raise(L, fn, "lid %d -> lid %d: %v", src, dst, err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		raise(L, fn, "%v", err)
	}
	L.Push(e.layoutTable(&sa.PathRecordLayout, b))
	return 1
}

func saRecordNames(_ *Env, L *lua.LState) int {
	t := L.NewTable()
	for _, a := range sa.Attrs() {
		if a == &sa.ClassPortInfo || a == &sa.InformInfo || a == &sa.MultiPathRecord {
			continue
		}
		t.Append(lua.LString(a.Name()))
	}
	L.Push(t)
	return 1
}

// checkGUIDs reads an array of port GUID strings as GIDs with the local
// port's subnet prefix.
func checkGUIDs(e *Env, L *lua.LState, fn string, n int) []mad.GID {
	t := L.CheckTable(n)
	prefix := e.sess.Port().GIDPrefix
	var out []mad.GID
	for i := 1; i <= t.Len(); i++ {
		s, ok := t.RawGetInt(i).(lua.LString)
		if !ok {
			raise(L, fn, "argument #%d[%d]: port GUID string expected, got %s", n, i, t.RawGetInt(i).Type())
		}
		g, err := strconv.ParseUint(string(s), 0, 64)
		if err != nil {
			raise(L, fn, "argument #%d[%d]: %q is not a GUID", n, i, string(s))
		}
		out = append(out, mad.NewGID(prefix, g))
	}
	if len(out) == 0 {
		raise(L, fn, "argument #%d: no GUIDs", n)
	}
	return out
}

func saMultiPath(e *Env, L *lua.LState) int {
	const fn = "sa.multipath"
	src, dst := checkGUIDs(e, L, fn, 1), checkGUIDs(e, L, fn, 2)
	paths, err := e.sess.MultiPathRecords(L.Context(), src, dst)
	if err != nil && !errors.Is(err, engine.ErrTruncated) {
		raise(L, fn, "%v", err)
	}
	out := L.CreateTable(len(paths), 0)
	for i := range paths {
		b, err := paths[i].MarshalBinary()
		if err != nil {
			raise(L, fn, "%v", err)
		}
		out.RawSetInt(i+1, e.layoutTable(&sa.PathRecordLayout, b))
	}
	L.Push(out)
	return pushWarning(L, err)
}
