package bindings

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

// planarFabric is the default simulated fabric reporting a planarized
// HCA through fabric.Pairer, as the kernel backend does from sysfs; it
// records the arguments Pair gets.
type planarFabric struct {
	fabric.Fabric
	args []string
}

func (f *planarFabric) Pairs(context.Context) ([]fabric.PortPair, error) {
	return []fabric.PortPair{{SMIName: "mlx5_1", GSIName: "mlx5_0"}, {GSIName: "mlx5_5"}}, nil
}

func (f *planarFabric) Pair(_ context.Context, ca string, port int, enforceSMI bool) (fabric.PortPair, error) {
	f.args = append(f.args, fmt.Sprintf("%q %d %v", ca, port, enforceSMI))
	if ca == "nope" {
		return fabric.PortPair{}, fmt.Errorf("kernel: umad: no SMI/GSI pair for nope port 0: %w", fabric.ErrNoDevice)
	}
	return fabric.PortPair{SMIName: "mlx5_1", SMIPort: 1, GSIName: "mlx5_0", GSIPort: 2}, nil
}

// TestUMADPairs: umad.get_smi_gsi_pairs and
// umad.get_smi_gsi_pair_by_ca_name give the Fabric's pairs as tables
// named after struct umad_ca_pair's fields, pass CA, port and
// enforce_smi on, and raise ENODEV for no match.
func TestUMADPairs(t *testing.T) {
	f := &planarFabric{Fabric: simtest.Default(t, nil)}
	L, env, err := NewState(context.Background(), &Options{Session: simtest.Session(t, f.Fabric, nil), Fabric: f, Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { env.Close(); L.Close() }()
	err = DoString(L, `
		local ps = umad.get_smi_gsi_pairs()
		assert(#ps == 2, #ps)
		assert(ps[1].smi_name == "mlx5_1" and ps[1].gsi_name == "mlx5_0" and ps[1].smi_preferred_port == 0 and ps[1].gsi_preferred_port == 0)
		assert(ps[2].smi_name == "" and ps[2].gsi_name == "mlx5_5")
		local p = umad.get_smi_gsi_pair_by_ca_name("mlx5_0", 1, true)
		assert(p.smi_name == "mlx5_1" and p.smi_preferred_port == 1 and p.gsi_name == "mlx5_0" and p.gsi_preferred_port == 2)
		umad.get_smi_gsi_pair_by_ca_name()
	`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`"mlx5_0" 1 true`, `"" 0 false`}; fmt.Sprint(f.args) != fmt.Sprint(want) {
		t.Errorf("Pair got %v, want %v", f.args, want)
	}
	err = DoString(L, `umad.get_smi_gsi_pair_by_ca_name("nope")`)
	if err == nil || !regexp.MustCompile(`umad\.get_smi_gsi_pair_by_ca_name: ENODEV: .*no SMI/GSI pair for nope`).MatchString(err.Error()) {
		t.Errorf("unknown CA: %v", err)
	}
	err = DoString(L, `umad.get_smi_gsi_pair_by_ca_name("mlx5_0", 1, "yes")`)
	if err == nil || !regexp.MustCompile(`bad argument #3 to .*boolean expected, got string`).MatchString(err.Error()) {
		t.Errorf("enforce_smi not a boolean: %v", err)
	}
}

// TestDiscoverPlanes: fabric.discover{planes=true} from a planarized
// host's plane port finds every plane of fattree-xdr-4planes.net (8 hosts,
// 4 planes of 4 switches), each host planarized with its ports on their
// planes; without planes it finds the port's plane alone, as before.
func TestDiscoverPlanes(t *testing.T) {
	L := planesState(t)
	err := DoString(L, `
		local one = fabric.discover()
		assert(#one.nodes == 12, #one.nodes)
		for _, n in ipairs(one.nodes) do assert(not n.planarized, n.desc) end
		local f = fabric.discover{planes = true}
		assert(#f.errors == 0, #f.errors)
		assert(#f.nodes == 24, #f.nodes)
		local hosts, planes = 0, {}
		for _, n in ipairs(f.nodes) do
			if n.type == "CA" then
				assert(n.planarized, n.desc)
				hosts = hosts + 1
				for num, p in pairs(n.ports) do assert(p.plane == num, n.desc .. " port " .. num .. " plane " .. tostring(p.plane)) end
			else
				assert(not n.planarized)
				local pl = n.desc:match("^p(%d)-")
				for _, p in pairs(n.ports) do
					assert(p.plane == tonumber(pl), n.desc .. " plane " .. tostring(p.plane))
					planes[p.plane] = true
				end
			end
		end
		assert(hosts == 8, hosts)
		assert(planes[1] and planes[2] and planes[3] and planes[4])
		local ok, err = pcall(fabric.discover, {planes = 1})
		assert(not ok and err:match("planes must be a boolean"), err)
	`)
	if err != nil {
		t.Fatal(err)
	}
}

// planesState is a Lua state on h000-01's plane-2 port of the bundled
// planarized XDR fat tree (4 planes; docs/planes.md), given the
// simulator as its fabric, closed when the test ends.
func planesState(t *testing.T) *lua.LState {
	t.Helper()
	L, _ := planesStateSim(t)
	return L
}

// planesStateSim is planesState and its simulator.
func planesStateSim(t *testing.T) (*lua.LState, *sim.Fabric) {
	t.Helper()
	f := simtest.Load(t, "../tests/topologies/fattree-xdr-4planes.net", nil)
	L, env, err := NewState(context.Background(), &Options{Session: simtest.PortSession(t, f, "h000-01", 2, nil), Fabric: f, Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close(); L.Close() })
	return L, f
}

// TestPerfSnapshotPlanes: perf.snapshot{planes = true} on a planarized
// port sweeps every plane as ibscript exporter does: 64 switch ports, 16
// on each plane, each series with its plane label (the last label), the
// switch's; without it, plane 2's 16 ports and no plane label.
func TestPerfSnapshotPlanes(t *testing.T) {
	err := DoString(planesState(t), `
		local one = perf.snapshot().infiniband_switch_port_transmit_data_bytes_total
		assert(#one.series == 16 and #one.labels == 2, #one.series)
		local f = perf.snapshot{planes = true}.infiniband_switch_port_transmit_data_bytes_total
		assert(#f.series == 64 and f.labels[3] == "plane", #f.series)
		local by = {}
		for _, sr in ipairs(f.series) do
			by[sr.labels.plane] = (by[sr.labels.plane] or 0) + 1
		end
		for p = 1, 4 do assert(by[tostring(p)] == 16, p) end
	`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestSweepPlanes: fabric.sweep over every port of fabric.discover{planes
// = true} reads each through its plane: a switch of another plane by its
// directed route from that plane's port (its LID is not routed on the
// session's plane), a planarized host's ports by the route from the
// session's; every PortInfo is read and is the port's (its LID the one
// the discovery found). Before the merged discovery kept routes, the
// other planes' switches timed out.
func TestSweepPlanes(t *testing.T) {
	err := DoString(planesState(t), `
		local f = fabric.discover{planes = true}
		local ports, planes = {}, {}
		for _, n in ipairs(f.nodes) do
			for num, p in pairs(n.ports) do
				if p.remote then
					ports[#ports + 1] = p
					planes[p.plane] = true
				end
			end
		end
		assert(planes[1] and planes[2] and planes[3] and planes[4])
		local res = fabric.sweep("portinfo", ports)
		assert(#res == #ports, #res)
		for i, r in ipairs(res) do
			local p = r.port
			local what = p.node.desc .. " port " .. p.num .. " (plane " .. tostring(p.plane) .. ")"
			assert(not r.err, what .. ": " .. tostring(r.err))
			if p.node.type == "CA" then
				assert(r.value.lid == p.lid, what .. " LID " .. r.value.lid .. ", want " .. p.lid)
			end
		end
	`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestRoutesPlanes: fabric.routes on a discovery of every plane reads
// every plane's tables from that one discovery and follows each plane's
// switches to its own LIDs (16 switches, 48 LIDs, each plane 4 switches
// to 12 LIDs); an LFT hole on plane 3 is a problem with plane 3; a plane-3
// switch that stops answering after the discovery is an error with its
// plane and its switch, the routes through it unknown. fabric.sweep's
// PerfMgt queries of every plane's ports (by their LIDs, through the GSI
// side) read each plane port's own counters.
func TestRoutesPlanes(t *testing.T) {
	L, f := planesStateSim(t)
	if err := f.SetCounter("p3-leaf001", 4, "symbol_error_counter", 9); err != nil {
		t.Fatal(err)
	}
	err := DoString(L, `
		F = fabric.discover{planes = true}
		local rt = fabric.routes(F)
		assert(rt.switches == 16 and rt.lids == 48 and rt.routes == 192 and rt.count == 0 and #rt.errors == 0,
			rt.switches .. " " .. rt.lids .. " " .. rt.routes .. " " .. rt.count .. " " .. #rt.errors)
		local sw, ports = {}, {}
		for _, n in ipairs(F.nodes) do
			if n.type == "Switch" then sw[n.desc] = n end
			for _, p in pairs(n.ports) do
				if p.remote and p.plane == 3 then ports[#ports + 1] = p end
			end
		end
		local hit = 0
		for _, r in ipairs(fabric.sweep("portcounters", ports, {fields = {"symbol_error_counter"}})) do
			assert(not r.err, r.port.node.desc .. " port " .. r.port.num .. ": " .. tostring(r.err))
			local want = (r.port.node.desc == "p3-leaf001" and r.port.num == 4) and 9 or 0
			assert(r.value.symbol_error_counter == want, r.port.node.desc .. " port " .. r.port.num)
			if want == 9 then hit = hit + 1 end
		end
		assert(hit == 1 and #ports == 24, hit .. " " .. #ports)
		HOLE = sw["p3-leaf001"].ports[4].remote.lid -- h001-03's plane-3 LID
	`)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetLFT("p3-leaf000", uint16(lua.LVAsNumber(L.GetGlobal("HOLE"))), 0xff); err != nil {
		t.Fatal(err)
	}
	if err := f.SetFaults(sim.Faults{DeadNodes: []string{"p3-spine001"}}); err != nil {
		t.Fatal(err)
	}
	err = DoString(L, `
		local rt = fabric.routes(F)
		assert(rt.switches == 15 and rt.unknown > 0, rt.switches .. " " .. rt.unknown)
		assert(#rt.problems == 1, #rt.problems)
		local p = rt.problems[1]
		assert(p.plane == 3 and p.switch.desc == "p3-leaf000" and p.lid == HOLE and p.kind == "drop", p.msg)
		assert(p.msg:find("^plane 3: LID " .. HOLE .. " is dropped"), p.msg)
		assert(#rt.errors == 1, #rt.errors)
		local e = rt.errors[1]
		assert(e.plane == 3 and e.switch.desc == "p3-spine001" and e.path:find("^plane 3: "), e.path .. ": " .. e.err)
	`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestSubscribePlanes: sa.subscribe{planes = true} on a planarized port
// (h000-01 plane 2) subscribes at every plane's SM: a plane-3 link coming
// back up brings trap 128 from plane 3's SM (h000-00's port 3), which a
// subscription at the port's own SM alone never gets (the SA sends no
// Report).
func TestSubscribePlanes(t *testing.T) {
	L, f := planesStateSim(t)
	ports, err := f.Ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var sm3 uint16
	for _, p := range ports {
		if p.CAName == "h000-00" && p.PortNum == 3 {
			sm3 = p.LID
		}
	}
	if err := DoString(L, `own = sa.subscribe{traps = {128}}`); err != nil {
		t.Fatal(err)
	}
	if err := f.SetLink("p3-leaf001", 3, false); err != nil {
		t.Fatal(err)
	}
	if st := f.ReportStats(); st.Subs != 1 || st.Sent != 0 {
		t.Errorf("at plane 2's SM alone: %d subscriptions, %d Reports; want 1 and 0", st.Subs, st.Sent)
	}
	if err := DoString(L, `own:close() all = sa.subscribe{traps = {128}, planes = true}`); err != nil {
		t.Fatal(err)
	}
	if st := f.ReportStats(); st.Subs != 4 {
		t.Errorf("planes = true: %d subscriptions, want 4 (one per plane's SM)", st.Subs)
	}
	if err := f.SetLink("p3-leaf001", 3, true); err != nil {
		t.Fatal(err)
	}
	err = DoString(L, fmt.Sprintf(`
		local r = all:next(60000)
		assert(r and r.trap == 128 and r.from_lid == %d, r and r.from_lid)
		all:close()
	`, sm3))
	if err != nil {
		t.Fatal(err)
	}
}
