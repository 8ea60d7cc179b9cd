package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.ping{target=, count=, flood=, oui=}: ibping's client
// (diag/ibping.go); the server (ibping -S) is the command line's.
func init() {
	registerDiag(Func{"ping", func(e *Env, L *lua.LState) int {
		const fn = "diag.ping"
		o := diagOptions(L, fn, "target", "count", "flood", "oui")
		r, err := diag.IBPingRun(L.Context(), e.diagEnv(), diag.IBPingOptions{Target: diagTarget(L, fn, o, true),
			Count: diagNum(L, fn, o, "count", 1, 1<<32), Flood: lua.LVAsBool(o.RawGetString("flood")),
			OUI: uint32(diagNum(L, fn, o, "oui", diag.PingOUI, 0xffffff))})
		return e.diagResult(L, fn, r, err)
	}, `ping({target = LID, count = 1, flood = false, oui = 0x001405}) -> {portid, host, pongs = {{host, rtt_ns}, ...}, transmitted, received, loss_percent, time_ns, rtt_min_ns, rtt_avg_ns, rtt_max_ns}: ibping to target's ibping server (count pings, one a second unless flood)`},
		`local p = diag.ping{target = 1, count = 1, flood = true}
print(p.transmitted, p.received)`)
}
