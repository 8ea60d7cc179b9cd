package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.smpdump{target=, attr=, mod=}: smpdump (diag/smpdump.go).
func init() {
	registerDiag(Func{"smpdump", func(e *Env, L *lua.LState) int {
		const fn = "diag.smpdump"
		o := diagOptions(L, fn, "target", "attr", "mod")
		if o.RawGetString("attr") == lua.LNil {
			raise(L, fn, "attr is required (an attribute ID, 0x11 for NodeInfo)")
		}
		r, err := diag.SMPDumpRun(L.Context(), e.diagEnv(), diag.SMPDumpOptions{Target: diagTarget(L, fn, o, true),
			Attr: uint16(diagNum(L, fn, o, "attr", 0, 0xffff)), Mod: uint32(diagNum(L, fn, o, "mod", 0, 0xffffffff))})
		return e.diagResult(L, fn, r, err)
	}, `smpdump({target = LID | "dr:0,1", attr = 0x11, mod = 0}) -> {target, attr, mod, data, status, timed_out}: one SMP Get, its 64 bytes of data in hex`},
		`print(diag.smpdump{target = 1, attr = 0x11}.data)`)
}
