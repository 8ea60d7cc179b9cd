package main

import (
	"strings"
	"testing"
)

// TestSimFaultsModule drives fault injection from Lua: a lossy sweep
// still finds the 22 nodes of the default fabric, a dead leaf cuts off
// what is behind it, and a bad probability raises an error.
func TestSimFaultsModule(t *testing.T) {
	code, out, errOut := ibscript(t, "--fabric", "sim:", "-e", `
		sim.faults{seed=1, loss=0.05, duplicate=0.01, reorder=0.02}
		local f = fabric.discover()
		local s = sim.stats()
		print(#f.nodes, s.requests > 0, s.lost_requests + s.lost_responses > 0)
		sim.faults{dead={"leaf01"}}
		f = fabric.discover()
		print(#f.nodes, #f.errors > 0)
		sim.faults{}
		sim.link("node002", 1, false)
		print(#fabric.discover().nodes)
		sim.link("node002", 1, true)
		print(#fabric.discover().nodes)
		print(pcall(sim.faults, {loss=3}))`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "22\ttrue\ttrue\n1\ttrue\n21\n22\nfalse\t"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "not a probability") {
		t.Errorf("output %q, want prefix %q and 'not a probability'", out, want)
	}
}

// TestSimModulePresent: a sim backend gets the sim module (run.go sets
// bindings.Options.Sim only for one).
func TestSimModulePresent(t *testing.T) {
	code, out, _ := ibscript(t, "--fabric", "sim:", "-e", `print(type(sim))`)
	if code != 0 || strings.TrimSpace(out) != "table" {
		t.Errorf("exit %d, output %q", code, out)
	}
}

// TestSimFaultsDelay: delay and jitter from Lua, in milliseconds or as a
// duration string. Responses 35-45 ms late against a 10 ms MAD timeout
// make SMPs go out again (the late answer completes them: the TID is the
// same), and discovery still finds all 22 nodes; bad values name the
// option. (The exact retransmission count is pinned on a fake clock in
// engine's TestDiscoverDelayed.)
func TestSimFaultsDelay(t *testing.T) {
	// --retries 30: the late answers complete the SMPs whenever they
	// come; with 5 (60 ms in all) one that a loaded machine delayed past
	// the last try was a discovery error.
	code, out, errOut := ibscript(t, "--fabric", "sim:", "--timeout", "10ms", "--retries", "30", "-e", `
		sim.faults{seed=2, delay=0.001}
		fabric.discover()
		local once = sim.stats().requests
		sim.faults{seed=2, delay=40, jitter="5ms"}
		local f = fabric.discover()
		local s = sim.stats()
		print(#f.nodes, #f.errors, s.delayed == s.requests, s.requests > once)
		sim.faults{}
		print(pcall(sim.faults, {delay="soon"}))
		print(pcall(sim.faults, {delay=-1}))
		print(pcall(sim.faults, {jitter={}}))
		print(pcall(sim.faults, {dealy=5}))`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || lines[0] != "22\t0\ttrue\ttrue" {
		t.Fatalf("output %q, want 22 nodes, no errors, every request delayed, retransmissions", out)
	}
	for i, want := range []string{
		`sim.faults: delay "soon": want milliseconds or a duration such as "5ms"`,
		`sim.faults: delay -1ms jitter 0s: negative`,
		`sim.faults: jitter: milliseconds or a duration string expected, got table`,
		`sim.faults: unknown option "dealy"`,
	} {
		if l := lines[i+1]; !strings.HasPrefix(l, "false\t") || !strings.Contains(l, want) {
			t.Errorf("line %d: %q, want false and %q", i+2, l, want)
		}
	}
}

// TestSubscribeLua: a script subscribed with sa.subscribe receives, when
// sim.link takes Hca1's cable down and up, Switch1's trap 128 and the SM's
// 65 then 64 naming Hca1's port, as OpenSM sends them (the ibsim
// differential TestTrapsMatchOpenSM checks the same traps on live ibsim
// and OpenSM); :close() leaves the SA no subscription.
func TestSubscribeLua(t *testing.T) {
	code, out, errOut := ibscript(t, "--fabric", "sim:../../tests/topologies/net.2sw2path4hca?node=Hca3&port=1", "-e", `
		local hca1 = sa.get("NodeRecord", {node_description = "Hca1"})
		local sw1 = sa.get("NodeRecord", {node_description = "Switch1"})
		local sub = sa.subscribe{traps = {64, 65, 128}}
		for _, up in ipairs({false, true}) do
			sim.link("Hca1", 1, up)
			local got = {}
			for _ = 1, 2 do
				local r = assert(sub:next(5000), "no trap")
				local what = r.guid == hca1.port_guid and "hca1" or r.lid == sw1.lid and "switch1" or "?"
				got[#got + 1] = r.trap .. ":" .. what
			end
			table.sort(got)
			print(table.concat(got, " "))
		end
		print(sub:next(0), sub:dropped())
		sub:close()
		print(#sa.get_table("InformInfoRecord"))`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "128:switch1 65:hca1\n128:switch1 64:hca1\nnil\t0\n0\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
}
