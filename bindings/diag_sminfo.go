package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.sminfo{target=}: sminfo's query (diag/sminfo.go). Its Set form is
// not offered here: smp.set does Sets.
func init() {
	registerDiag(Func{"sminfo", func(e *Env, L *lua.LState) int {
		const fn = "diag.sminfo"
		o := diagOptions(L, fn, "target")
		r, err := diag.SMInfoRun(L.Context(), e.diagEnv(), diag.SMInfoOptions{Target: diagTargetPtr(L, fn, o)})
		return e.diagResult(L, fn, r, err)
	}, `sminfo({target = nil | LID | "dr:0"}) -> {lid, guid, activity, priority, state, state_name}: the SMInfo of the SM the local port names, or of target`},
		`local sm = diag.sminfo()
print(sm.lid, sm.state_name)`)
}
