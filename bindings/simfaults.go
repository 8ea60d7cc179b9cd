package bindings

import (
	"slices"

	lua "github.com/yuin/gopher-lua"
)

// Simulator is the fault-injection side of the embedded simulator, which
// the host passes in Options.Sim when the backend is one (bindings do not
// import sim). The Lua module "sim" exists only then.
type Simulator interface {
	SetFaults(SimFaults) error
	SetLink(node string, port int, up bool) error
	SetCounter(node string, port int, name string, v uint64) error
	SetLFT(node string, lid uint16, port uint8) error
	FaultStats() map[string]uint64
}

// SimFaults are the faults sim.faults{...} asks for; see sim.Faults.
type SimFaults struct {
	Seed                              uint64
	Loss, Duplicate, Reorder, Corrupt float64
	DeadNodes                         []string
}

// openSim registers the sim module: faults, link, counter, lft, stats.
func (e *Env) openSim(s Simulator) {
	m := Module{Name: "sim", Summary: "fault injection in the embedded simulator", Funcs: []Func{
		{"faults", func(e *Env, L *lua.LState) int {
			t := L.CheckTable(1)
			var fl SimFaults
			num := func(k string) float64 {
				v := t.RawGetString(k)
				if v == lua.LNil {
					return 0
				}
				n, ok := v.(lua.LNumber)
				if !ok {
					L.ArgError(1, k+": number expected, got "+v.Type().String())
				}
				return float64(n)
			}
			fl.Seed = uint64(num("seed"))
			fl.Loss, fl.Duplicate, fl.Reorder, fl.Corrupt = num("loss"), num("duplicate"), num("reorder"), num("corrupt")
			if d, ok := t.RawGetString("dead").(*lua.LTable); ok {
				d.ForEach(func(_, v lua.LValue) { fl.DeadNodes = append(fl.DeadNodes, v.String()) })
			}
			if err := s.SetFaults(fl); err != nil {
				L.RaiseError("sim.faults: %v", err)
			}
			return 0
		}, "faults{seed=, loss=, duplicate=, reorder=, corrupt=, dead={node...}}: inject faults ({} turns them off)"},
		{"link", func(e *Env, L *lua.LState) int {
			if err := s.SetLink(L.CheckString(1), int(checkUint(L, 2, 254)), L.CheckBool(3)); err != nil {
				L.RaiseError("sim.link: %v", err)
			}
			return 0
		}, "link(node, port, up): take a cable down (false) or back up (true)"},
		{"counter", func(e *Env, L *lua.LState) int {
			if err := s.SetCounter(L.CheckString(1), int(checkUint(L, 2, 254)), L.CheckString(3), uint64(checkUint(L, 4, 1<<53))); err != nil {
				L.RaiseError("sim.counter: %v", err)
			}
			return 0
		}, "counter(node, port, name, value): set a performance counter"},
		{"lft", func(e *Env, L *lua.LState) int {
			if err := s.SetLFT(L.CheckString(1), uint16(checkUint(L, 2, 0xbfff)), uint8(checkUint(L, 3, 255))); err != nil {
				L.RaiseError("sim.lft: %v", err)
			}
			return 0
		}, "lft(switch, lid, port): point a forwarding table entry at a port (255 drops)"},
		{"stats", func(e *Env, L *lua.LState) int {
			st := s.FaultStats()
			t := L.NewTable()
			keys := make([]string, 0, len(st))
			for k := range st {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				t.RawSetString(k, lua.LNumber(st[k]))
			}
			L.Push(t)
			return 1
		}, "stats() -> table: faults injected since the last sim.faults"},
	}}
	mod := e.moduleTable(m)
	e.L.PreloadModule(m.Name, func(L *lua.LState) int {
		L.Push(mod)
		return 1
	})
	e.L.SetGlobal(m.Name, mod)
}
