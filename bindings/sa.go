package bindings

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
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
			{"subscribe", saSubscribe, `subscribe([{traps={64, 65, 128}, lid_begin=N, lid_end=N, buffer=N, planes=BOOL}]) -> subscription: asks the SA for traps (one Set(InformInfo) per trap number; no traps: every generic trap; lid_begin/lid_end: issuers in that LID range) and returns an object whose :next([timeout_ms]) returns the next trap as a table (trap, name, type, generic, producer, issuer_lid, issuer_gid, gid and guid of traps 64-67, lid of 128-131/144/145/256, port of 129-131, notice: every Notice field, from_lid) or nil when timeout_ms passes (absent: wait), :dropped() the traps lost to a full buffer (default 64), :close() unsubscribes (also done when the script ends). Each Report is answered with a ReportResp as IBA requires. planes=true, on a planarized CA's port, subscribes at every plane's SM (each plane is a subnet with its own SM, which forwards its own plane's traps only; docs/planes.md); on any other port it changes nothing`},
		},
	}
}

// checkAttr reads an SA record name.
func checkAttr(L *lua.LState, fn string, n int) *sa.Attr {
	name := L.CheckString(n)
	a, ok := sa.AttrByName(name)
	if !ok || a == sa.ClassPortInfo() || a == sa.InformInfo() || a == sa.MultiPathRecord() {
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
	L.Push(e.layoutTable(sa.PathRecordLayout(), b))
	return 1
}

func saRecordNames(_ *Env, L *lua.LState) int {
	t := L.NewTable()
	for _, a := range sa.Attrs() {
		if a == sa.ClassPortInfo() || a == sa.InformInfo() || a == sa.MultiPathRecord() {
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
		out.RawSetInt(i+1, e.layoutTable(sa.PathRecordLayout(), b))
	}
	L.Push(out)
	return pushWarning(L, err)
}

const saSubscriptionType = "sa.subscription"

// saSubscription is the userdata behind sa.subscribe's object.
type saSubscription struct {
	sub    *engine.Subscription
	env    *Env
	closed bool
}

func (u *saSubscription) Close() error {
	if u.closed {
		return nil
	}
	u.closed = true
	u.env.Release(u)
	return u.sub.Close()
}

func registerSATypes(L *lua.LState) {
	mt := L.NewTypeMetatable(saSubscriptionType)
	mt.RawSetString("__index", namedMethods(L, saSubscriptionType, map[string]lua.LGFunction{
		"next": func(L *lua.LState) int {
			u := checkSubscription(L, "next")
			ctx, cancel := timeoutCtx(L, 2, 0)
			defer cancel()
			r, err := u.sub.Next(ctx)
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) && L.Context().Err() == nil {
					L.Push(lua.LNil)
					return 1
				}
				raise(L, "sa.subscription:next", "%v", err)
			}
			L.Push(reportTable(u.env, L, &r))
			return 1
		},
		"dropped": func(L *lua.LState) int {
			L.Push(lua.LNumber(checkSubscription(L, "dropped").sub.Dropped()))
			return 1
		},
		"close": func(L *lua.LState) int {
			if err := checkSubscription(L, "close").Close(); err != nil {
				raise(L, "sa.subscription:close", "%v", err)
			}
			return 0
		},
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		u := checkSubscription(L, "tostring")
		state := "open"
		if u.closed {
			state = "closed"
		}
		L.Push(lua.LString("sa.subscription(" + state + ")"))
		return 1
	}))
}

// checkSubscription reads the subscription argument of a method; a closed
// one is an error but for close and tostring.
func checkSubscription(L *lua.LState, fn string) *saSubscription {
	ud, ok := L.Get(1).(*lua.LUserData)
	var u *saSubscription
	if ok {
		u, ok = ud.Value.(*saSubscription)
	}
	if !ok {
		L.ArgError(1, fmt.Sprintf("%s expected (call it as sub:%s()), got %s", saSubscriptionType, fn, L.Get(1).Type()))
	}
	if u.closed && fn != "close" && fn != "tostring" {
		raise(L, "sa.subscription:"+fn, "the subscription is closed")
	}
	return u
}

func saSubscribe(e *Env, L *lua.LState) int {
	const fn = "sa.subscribe"
	var o engine.SubscribeOptions
	planes := false
	if t := L.OptTable(1, nil); t != nil {
		t.ForEach(func(k, v lua.LValue) {
			switch k.String() {
			case "traps":
				tt, ok := v.(*lua.LTable)
				if !ok {
					raise(L, fn, "traps: an array of trap numbers expected, got %s", v.Type())
				}
				for i := 1; i <= tt.Len(); i++ {
					n, ok := tt.RawGetInt(i).(lua.LNumber)
					if !ok || n < 0 || n > 0xFFFE || n != lua.LNumber(int(n)) {
						raise(L, fn, "traps[%d]: a trap number 0-65534 expected, got %s", i, tt.RawGetInt(i).String())
					}
					o.Traps = append(o.Traps, uint16(n))
				}
			case "lid_begin", "lid_end", "buffer":
				n, ok := v.(lua.LNumber)
				limit := lua.LNumber(0xFFFF)
				if k.String() == "buffer" {
					limit = 1 << 20
				}
				if !ok || n < 0 || n > limit || n != lua.LNumber(int(n)) {
					raise(L, fn, "%s: an integer 0-%d expected, got %s", k.String(), int(limit), v.String())
				}
				switch k.String() {
				case "lid_begin":
					o.LIDBegin = uint16(n)
				case "lid_end":
					o.LIDEnd = uint16(n)
				default:
					o.Buffer = int(n)
				}
			case "planes":
				b, ok := v.(lua.LBool)
				if !ok {
					raise(L, fn, "planes must be a boolean, got %s", v.Type())
				}
				planes = bool(b)
			default:
				raise(L, fn, "unknown option %q (traps, lid_begin, lid_end, buffer, planes)", k.String())
			}
		})
	}
	if planes {
		lids, err := e.sess.PlaneSMLIDs(L.Context(), e.fab)
		if err != nil {
			raise(L, fn, "%v", err)
		}
		o.SMLIDs = lids
	}
	sub, err := e.sess.Subscribe(L.Context(), o)
	if err != nil {
		raise(L, fn, "%v", err)
	}
	u := &saSubscription{sub: sub, env: e}
	e.Own(u)
	ud := L.NewUserData()
	ud.Value = u
	L.SetMetatable(ud, L.GetTypeMetatable(saSubscriptionType))
	L.Push(ud)
	return 1
}

// reportTable is one trap as sub:next returns it.
func reportTable(e *Env, L *lua.LState, r *engine.Report) *lua.LTable {
	n := &r.Notice
	t := L.NewTable()
	t.RawSetString("trap", lua.LNumber(n.TrapNumber))
	if name := smp.TrapName(n.TrapNumber); name != "" && n.IsGeneric {
		t.RawSetString("name", lua.LString(name))
	}
	t.RawSetString("type", lua.LNumber(n.Type))
	t.RawSetString("generic", lua.LBool(n.IsGeneric))
	t.RawSetString("producer", lua.LNumber(n.ProducerType))
	t.RawSetString("issuer_lid", lua.LNumber(n.IssuerLID))
	t.RawSetString("issuer_gid", lua.LString(n.IssuerGID.String()))
	if g, ok := n.DetailsGID(); ok {
		t.RawSetString("gid", lua.LString(g.String()))
		t.RawSetString("guid", lua.LString(fmt.Sprintf("0x%016x", g.GUID())))
	}
	if lid, ok := n.DetailsLID(); ok {
		t.RawSetString("lid", lua.LNumber(lid))
	}
	if port, ok := n.DetailsPort(); ok {
		t.RawSetString("port", lua.LNumber(port))
	}
	b, _ := n.MarshalBinary()
	t.RawSetString("notice", e.layoutTable(smp.NoticeLayout(), b))
	t.RawSetString("from_lid", lua.LNumber(r.From.LID))
	return t
}
