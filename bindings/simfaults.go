package bindings

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Simulator is the fault-injection side of the embedded simulator, which
// the host passes in Options.Sim when the backend is one: simmod.Of(f) for
// a *sim.Fabric (bindings do not import sim). The Lua module "sim" exists only then.
type Simulator interface {
	SetFaults(SimFaults) error
	SetLink(node string, port int, up bool) error
	SetCounter(node string, port int, name string, v uint64) error
	SetLFT(node string, lid uint16, port uint8) error
	FaultStats() map[string]uint64
	// SetIPoIB gives a CA port its IPoIB addresses (sim.Fabric.SetIPoIB).
	SetIPoIB(node string, port int, ips ...netip.Addr) error
}

// SimFaults are the faults sim.faults{...} asks for; see sim.Faults.
type SimFaults struct {
	Seed                              uint64
	Loss, Duplicate, Reorder, Corrupt float64
	Delay, Jitter                     time.Duration
	DeadNodes                         []string
}

// SimModule is the registration table of the sim module, which Open adds
// only when Options.Sim is set; the API reference lists it apart.
func SimModule() Module { return simModule(nil) }

var simFaultKeys = map[string]bool{"seed": true, "loss": true, "duplicate": true, "reorder": true,
	"corrupt": true, "delay": true, "jitter": true, "dead": true}

// simModule is the sim module on s: faults, link, counter, lft, stats.
func simModule(s Simulator) Module {
	return Module{Name: "sim", Summary: "fault injection in the embedded simulator (only on `sim:` backends)", Funcs: []Func{
		{"faults", func(e *Env, L *lua.LState) int {
			t := L.CheckTable(1)
			checkOptions(L, "sim.faults", t, simFaultKeys)
			fl, err := simFaults(t)
			if err == nil {
				err = s.SetFaults(fl)
			}
			if err != nil {
				raiseSim(L, "sim.faults", err)
			}
			return 0
		}, "faults({seed=, loss=, duplicate=, reorder=, corrupt=, delay=, jitter=, dead={node...}}) -> nil: replaces the injected faults ({} turns them off); " +
			"loss (each way), duplicate, reorder and corrupt are probabilities per MAD; delay and jitter are milliseconds (a number) " +
			"or a duration string (\"1.5ms\", \"2s\"), each answer arriving delay ± jitter late; dead nodes answer and forward nothing; " +
			"the same seed replays the same faults"},
		{"link", func(e *Env, L *lua.LState) int {
			if err := s.SetLink(L.CheckString(1), int(checkUint(L, 2, 254)), L.CheckBool(3)); err != nil {
				raiseSim(L, "sim.link", err)
			}
			return 0
		}, "link(node, port, up) -> nil: takes a cable down (false) or brings it back up (true); both ends change state"},
		{"counter", func(e *Env, L *lua.LState) int {
			if err := s.SetCounter(L.CheckString(1), int(checkUint(L, 2, 254)), L.CheckString(3), uint64(checkUint(L, 4, 1<<53))); err != nil {
				raiseSim(L, "sim.counter", err)
			}
			return 0
		}, "counter(node, port, name, value) -> nil: sets a PortCounters or PortCountersExtended counter of a port, named as in IBA (\"SymbolErrorCounter\") or as its snake_case key, or one of PortXmitDataSL/PortRcvDataSL (\"PortXmitDataSL3\"), PortExtendedSpeedsCounters (\"PortFECCorrectableBlockCounter\") or the congestion counters (\"PortXmitTimeCong\"); values saturate at the counter's width"},
		{"lft", func(e *Env, L *lua.LState) int {
			if err := s.SetLFT(L.CheckString(1), uint16(checkUint(L, 2, 0xbfff)), uint8(checkUint(L, 3, 255))); err != nil {
				raiseSim(L, "sim.lft", err)
			}
			return 0
		}, "lft(switch, lid, port) -> nil: points a switch's forwarding table entry for lid at a port (255 drops), as a buggy SM might"},
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
		}, "stats() -> table: counts of the faults injected since the last sim.faults (requests, lost_requests, lost_responses, duplicated, reordered, corrupted, delayed, dead_drops)"},
		{"ipoib", func(e *Env, L *lua.LState) int {
			node, port := L.CheckString(1), int(checkUint(L, 2, 254))
			var ips []netip.Addr
			for n := 3; n <= L.GetTop(); n++ {
				v := L.CheckString(n)
				ip, err := netip.ParseAddr(v)
				if err != nil {
					L.ArgError(n, fmt.Sprintf("%q is not an IPv4 or IPv6 address", v))
				}
				ips = append(ips, ip)
			}
			if err := s.SetIPoIB(node, port, ips...); err != nil {
				raiseSim(L, "sim.ipoib", err)
			}
			return 0
		}, "ipoib(node, port, ip...) -> nil: gives a CA port the IP addresses of its IPoIB interface (replacing those it had, which the topology's `# ipoib \"node\"[port] 10.0.0.1 fd00::1` lines set; none removes them): the RDMA CM resolves them to that port, as IPoIB would"},
	}}
}

// simFaults reads the table of sim.faults.
func simFaults(t *lua.LTable) (SimFaults, error) {
	var fl SimFaults
	var err error
	num := func(k string) float64 {
		v := t.RawGetString(k)
		if v == lua.LNil || err != nil {
			return 0
		}
		n, ok := v.(lua.LNumber)
		if !ok {
			err = fmt.Errorf("%s: number expected, got %s", k, v.Type())
		}
		return float64(n)
	}
	dur := func(k string) time.Duration {
		v := t.RawGetString(k)
		if v == lua.LNil || err != nil {
			return 0
		}
		switch v := v.(type) {
		case lua.LNumber:
			ms := float64(v)
			if math.IsNaN(ms) || math.Abs(ms) > float64(math.MaxInt64/int64(time.Millisecond)) {
				err = fmt.Errorf("%s %v: out of range", k, ms)
				return 0
			}
			return time.Duration(ms * float64(time.Millisecond))
		case lua.LString:
			d, perr := time.ParseDuration(string(v))
			if perr != nil {
				err = fmt.Errorf("%s %q: want milliseconds or a duration such as \"5ms\"", k, string(v))
			}
			return d
		}
		err = fmt.Errorf("%s: milliseconds or a duration string expected, got %s", k, v.Type())
		return 0
	}
	seed := num("seed")
	if err == nil && (seed < 0 || seed >= 1<<53 || seed != math.Trunc(seed)) {
		err = fmt.Errorf("seed %v: want an integer from 0 to 2^53-1", seed)
	}
	fl.Seed = uint64(seed)
	fl.Loss, fl.Duplicate, fl.Reorder, fl.Corrupt = num("loss"), num("duplicate"), num("reorder"), num("corrupt")
	fl.Delay, fl.Jitter = dur("delay"), dur("jitter")
	switch d := t.RawGetString("dead").(type) {
	case *lua.LTable:
		d.ForEach(func(_, v lua.LValue) {
			if s, ok := v.(lua.LString); ok {
				fl.DeadNodes = append(fl.DeadNodes, string(s))
			} else if err == nil {
				err = fmt.Errorf("dead: node names expected, got %s", v.Type())
			}
		})
	case *lua.LNilType:
	default:
		if err == nil {
			err = fmt.Errorf("dead: table of node names expected, got %s", d.Type())
		}
	}
	return fl, err
}

// openSim registers the sim module on s.
func (e *Env) openSim(s Simulator) {
	m := simModule(s)
	e.hasSim = true
	mod := e.moduleTable(m)
	e.L.PreloadModule(m.Name, func(L *lua.LState) int {
		L.Push(mod)
		return 1
	})
	e.L.SetGlobal(m.Name, mod)
}

// raiseSim raises a simulator error under the Lua function's name, without
// the "sim: set faults: " that would say it a second time.
func raiseSim(L *lua.LState, fn string, err error) {
	msg := strings.TrimPrefix(ErrorText(err), "sim: ")
	msg = strings.TrimPrefix(msg, "set faults: ")
	raise(L, fn, "%s", msg)
}
