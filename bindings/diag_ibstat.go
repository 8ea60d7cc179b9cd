package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.stat{ca=, port=}: ibstat's data (diag/ibstat.go).
func init() {
	registerDiag(Func{"stat", func(e *Env, L *lua.LState) int {
		const fn = "diag.stat"
		o := diagOptions(L, fn, "ca", "port")
		opts := diag.IBStatOptions{Port: -1}
		if v := o.RawGetString("ca"); v != lua.LNil {
			s, ok := v.(lua.LString)
			if !ok {
				raise(L, fn, "ca: want a string, got %s", v.Type())
			}
			opts.CA = string(s)
		}
		if o.RawGetString("port") != lua.LNil {
			opts.Port = int(diagNum(L, fn, o, "port", 0, 254))
		}
		all, err := e.needFabric(L, fn).Ports(L.Context())
		if err != nil {
			raise(L, fn, "%v", err)
		}
		r, err := diag.IBStatOf(diag.LocalPorts(all, e.sess.Port(), e.sess.Production()), opts)
		return e.diagResult(L, fn, r, err)
	}, `stat({ca = NAME, port = N}) -> {cas = {{name, type, ca_type, num_ports, firmware_version, hardware_version, node_guid, system_image_guid, ports = {{port, state, physical_state, rate, base_lid, lmc, sm_lid, capability_mask, port_guid, link_layer}, ...}}, ...}}: the local CAs and their ports, as ibstat shows them (ca: that CA only; port: that port only)`},
		`local s = diag.stat()
print(s.cas[1].name, s.cas[1].ports[1].state)`)
}
