package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.ibaddr{target=, port=}: ibaddr (diag/ibaddr.go).
func init() {
	registerDiag(Func{"ibaddr", func(e *Env, L *lua.LState) int {
		const fn = "diag.ibaddr"
		o := diagOptions(L, fn, "target", "port")
		r, err := diag.IBAddrRun(L.Context(), e.diagEnv(), diag.IBAddrOptions{Target: diagTargetPtr(L, fn, o), Port: int(diagNum(L, fn, o, "port", 0, 255))})
		return e.diagResult(L, fn, r, err)
	}, `ibaddr({target = nil | LID | "dr:0,1", port = 0}) -> {gid, lid_start, lid_end}: a port's GID and LID range (the local port's without target)`},
		`local a = diag.ibaddr{target = 1}
print(a.gid, a.lid_start, a.lid_end)`)
}
