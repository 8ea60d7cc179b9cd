package bindings

import (
	"errors"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
)

// diag.tracert: the route between two ports as ibtracert walks it
// (diag/ibtracert.go).
func init() {
	registerDiag(Func{"tracert", func(e *Env, L *lua.LState) int {
		const fn = "diag.tracert"
		env := e.diagEnv()
		var lids [2]uint16
		for i := range lids {
			t := checkTarget(L, fn, i+1)
			if t.Kind == engine.ByGUID {
				var err error
				if t, err = env.ResolveTarget(L.Context(), t); err != nil {
					raise(L, fn, "%v", err)
				}
			}
			switch t.Kind {
			case engine.ByLID:
				lids[i] = t.LID
			default:
				raise(L, fn, "bad argument #%d: a LID or \"guid:0x...\" (ibtracert takes no directed route)", i+1)
			}
		}
		L.Remove(1)
		L.Remove(1)
		opts := diagOptions(L, fn, "no_info", "force", "mlid")
		o := diag.TracertOptions{NoInfo: optBool(L, fn, opts, "no_info"), Force: optBool(L, fn, opts, "force")}
		if opts.RawGetString("mlid") != lua.LNil {
			o.Multicast, o.MLID = true, int(optField(L, fn, opts, "mlid", 0xffff))
		}
		tr, err := diag.Tracert(L.Context(), env, lids[0], lids[1], &o)
		if errors.Is(err, diag.ErrNoRoute) {
			// A route that fails is data: the trace so far, and why.
			e.diagResult(L, fn, tr, nil)
			L.Push(lua.LString(err.Error() + ": " + joinWarnings(tr.Warnings)))
			return 2
		}
		return e.diagResult(L, fn, tr, err)
	}, "tracert(src, dst [, {no_info, force, mlid}]) -> {from, hops = {{out_port, type, guid, port, lid, lid_end, name}, ...}, to} [, failure]: the route between two LIDs (or \"guid:...\") through the switches' forwarding tables, as ibtracert walks it (mlid: the multicast tree's path, as ibtracert -m); a route that fails returns what was walked (no to) and why"},
		`local tr = diag.tracert(1, 16)
for _, h in ipairs(tr.hops) do print(h.out_port, h.type, h.name) end
print("to", tr.to.name)`)
}

func joinWarnings(ws []string) string {
	s := ""
	for i, w := range ws {
		if i > 0 {
			s += "; "
		}
		s += w
	}
	return s
}
