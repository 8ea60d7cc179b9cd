package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.ccquery{op=, target=, port=}: ibccquery's op (diag/ibccquery.go),
// with the session's CC_Key (a script never handles one).
func init() {
	registerDiag(Func{"ccquery", func(e *Env, L *lua.LState) int {
		const fn = "diag.ccquery"
		o := diagOptions(L, fn, "op", "target", "port")
		q, err := diag.CCQueryRun(L.Context(), e.diagEnv(), diag.CCQueryOptions{
			Op: lua.LVAsString(o.RawGetString("op")), Target: diagTarget(L, fn, o, true),
			Port: int(diagNum(L, fn, o, "port", 0, 255)),
		})
		return e.diagResult(L, fn, q, err)
	}, `ccquery({op = "CongestionInfo", target = "lid:1" | 1, port = nil}) -> {op, target, portid, blocks = {{entry, index, fields = {{name, value, text}, ...}}, ...}}: one ibccquery op (ClassPortInfo, CongestionInfo, CongestionKeyInfo, CongestionLog, SwitchCongestionSetting, SwitchPortCongestionSetting with an optional port, CACongestionSetting, CongestionControlTable, Timestamp, or their aliases CP CI CK CL SS SP CS CT TI), blocks and fields as ibccquery prints them; the CC_Key reads "<not displayed>"`},
		`local q = diag.ccquery{op = "CI", target = 1}
for _, f in ipairs(q.blocks[1].fields) do print(f.name, f.text) end`)
}
