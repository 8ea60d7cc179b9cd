package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.portstate{target=, port=, ops=}: ibportstate (diag/ibportstate.go);
// any op but "query" is a Set, gated and audited by the engine.
func init() {
	registerDiag(Func{"portstate", func(e *Env, L *lua.LState) int {
		const fn = "diag.portstate"
		o := diagOptions(L, fn, "target", "port", "ops")
		r, err := diag.IBPortStateRun(L.Context(), e.diagEnv(), diag.IBPortStateOptions{Target: diagTarget(L, fn, o, true),
			Port: int(diagNum(L, fn, o, "port", 0, 255)), Ops: diagStrings(L, fn, o, "ops")})
		return e.diagResult(L, fn, r, err)
	}, `portstate({target = LID | "dr:0", port = 1, ops = {"query"} | {"speed", "1"} | "disable"}) -> {blocks = {{heading, portid, port, attribute, fields}, ...}, notes, warnings}: ibportstate; ops other than query are PortInfo Sets`},
		`local ps = diag.portstate{target = 1, port = 1}
for _, f in ipairs(ps.blocks[1].fields) do print(f.name, f.text) end`)
}
