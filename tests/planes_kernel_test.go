package tests

import (
	"context"
	"testing"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// planesLua runs on the kernel backend over umadtest's model of a host
// with a planarized HCA (mlx5_0 the GSI side, IsSMDisabled, LID 1;
// mlx5_1 the SMI side, LID 3; one port GUID) and a normal CA (mlx5_9,
// LID 2): the pairs as libibumad gives them, get_port of each side, and
// a port opened on the GSI side sending its SMP through the SMI device
// and its PerfMgt MAD through the GSI device (the far port, mlx5_9,
// sees them come from LID 3 and LID 1).
const planesLua = `
local function mad(class)
  return string.char(1, class, 1, 0x01) .. string.rep("\0", 12) .. string.char(0x00, 0x11) .. string.rep("\0", 256 - 18)
end
local ps = umad.get_smi_gsi_pairs()
assert(#ps == 2, #ps .. " pairs")
assert(ps[1].smi_name == "mlx5_1" and ps[1].gsi_name == "mlx5_0" and ps[1].smi_preferred_port == 0, ps[1].smi_name)
assert(ps[2].smi_name == "mlx5_9" and ps[2].gsi_name == "mlx5_9", ps[2].smi_name)
local p = umad.get_smi_gsi_pair_by_ca_name("mlx5_1", 1, true)
assert(p.smi_name == "mlx5_1" and p.smi_preferred_port == 1 and p.gsi_name == "mlx5_0" and p.gsi_preferred_port == 1)
local ok, err = pcall(umad.get_smi_gsi_pair_by_ca_name, "mlx5_7")
assert(not ok and err:find("ENODEV", 1, true), err)

local smi, gsi = umad.get_port("mlx5_1", 1), umad.get_port("mlx5_0", 1)
assert(smi.ca_name == "mlx5_1" and smi.base_lid == 3 and smi.smi_name == nil, smi.ca_name)
assert(gsi.ca_name == "mlx5_0" and gsi.base_lid == 1 and gsi.smi_name == "mlx5_1" and gsi.smi_portnum == 1, gsi.ca_name)
assert(smi.port_guid == gsi.port_guid)
assert(umad.get_port().smi_name == "mlx5_1")

local far = umad.open_port("mlx5_9", 1)
umad.register_agent(far, 0x01, 1, 0, {0x01})
umad.register_agent(far, 0x04, 1, 0, {0x01})
local port = umad.open_port("mlx5_0", 1)
assert(port:info().smi_name == "mlx5_1")
local sa, pa = umad.register_agent(port, 0x01, 1), umad.register_agent(port, 0x04, 1)
umad.send(port, sa, mad(0x01), 0, 0, {lid = 2})
local m, _, _, addr = umad.recv(far, 1000)
assert(m and m:byte(2) == 0x01 and addr.lid == 3, "SMP from lid " .. tostring(addr and addr.lid))
umad.send(port, pa, mad(0x04), 0, 0, {lid = 2})
m, _, _, addr = umad.recv(far, 1000)
assert(m and m:byte(2) == 0x04 and addr.lid == 1, "PerfMgt MAD from lid " .. tostring(addr and addr.lid))
port:close()
far:close()
`

func TestLuaPlanesOnKernel(t *testing.T) {
	h := umadtest.NewHost(umadtest.New(nil))
	const guid = 0x0002c903000a0001
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5, GUID: guid, CapMask: 0x2659e848 | umadtest.IsSMDisabled})
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 3, State: 4, PhysState: 5, GUID: guid})
	h.AddCA("mlx5_9", 1, 0x0002c90300009000, umadtest.HostPort{Num: 1, LID: 2, State: 4, PhysState: 5})
	f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open})
	defer f.Close()
	ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
	defer cancel()
	L, _, done := planState(t, ctx, f, nil, bindings.Options{})
	defer done()
	if err := bindings.DoString(L, planesLua); err != nil {
		t.Fatal(err)
	}
}
