package bindings

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/sim/simtest"
)

// newTestState returns a Lua state on the bundled simulated fabric.
func newTestState(tb testing.TB) (*lua.LState, *Env, *strings.Builder) {
	tb.Helper()
	return newTestStateOpts(tb, &Options{})
}

// newTestStateOpts is newTestState with options; Session, Fabric and
// Stdout are filled in.
func newTestStateOpts(tb testing.TB, o *Options) (*lua.LState, *Env, *strings.Builder) {
	tb.Helper()
	f := simtest.Default(tb, nil)
	sess := simtest.Session(tb, f, nil)
	var out strings.Builder
	o.Session, o.Fabric, o.Stdout = sess, f, &out
	L, env, err := NewState(context.Background(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { env.Close(); L.Close() })
	return L, env, &out
}

// TestRegistrationTables keeps the tables the API reference is generated
// from consistent: unique names, and a doc line that starts with the
// function's own call form.
func TestRegistrationTables(t *testing.T) {
	mods := map[string]bool{}
	for _, m := range append(Modules(), SimModule()) {
		if mods[m.Name] || m.Summary == "" || len(m.Funcs) == 0 {
			t.Errorf("module %q: duplicate, or no summary or functions", m.Name)
		}
		mods[m.Name] = true
		names := map[string]bool{}
		for _, f := range m.Funcs {
			if names[f.Name] {
				t.Errorf("%s.%s registered twice", m.Name, f.Name)
			}
			names[f.Name] = true
			if !strings.HasPrefix(f.Doc, f.Name+"(") || !strings.Contains(f.Doc, "->") {
				t.Errorf("%s.%s: doc %q must read \"%s(args) -> result: ...\"", m.Name, f.Name, f.Doc, f.Name)
			}
			if f.Fn == nil {
				t.Errorf("%s.%s has no function", m.Name, f.Name)
			}
		}
	}
}

// TestErrorTexts pins the messages scripts see: they name the function,
// the argument or target, and the script's file:line.
func TestErrorTexts(t *testing.T) {
	checkChunkErrors(t, []chunkError{
		{`smp.nodeinfo()`, `^chunk:1: bad argument #1 to smp.nodeinfo \(target: target expected .*got nil\)$`},
		{`smp.nodeinfo("lid:x")`, `^chunk:1: smp.nodeinfo: .*"lid:x"`},
		{`smp.portinfo("lid:1", 300)`, `^chunk:1: bad argument #2 to smp.portinfo \(port: integer 0..255 expected, got 300\)$`},
		{`smp.switchinfo("lid:1")`, `^chunk:1: smp.switchinfo: .*SwitchInfo.*0x000c`},
		{"\n\nsmp.nodeinfo(\"lid:4000\")", `^chunk:3: smp.nodeinfo: .*timeout`},
		{`smp.get("lid:1", "PortInfoo")`, `^chunk:1: smp.get: unknown attribute "PortInfoo"$`},
		{`perf.portcounters({})`, `^chunk:1: bad argument #1 to perf.portcounters`},
		{`fabric.discover{max_hops = 0}`, `^chunk:1: fabric.discover: max_hops must be 1..63, got 0$`},
		{`fabric.discover{maxhops = 2}`, `^chunk:1: fabric.discover: unknown option "maxhops" \(did you mean max_hops\? known: `},
		{`fabric.format({})`, `^chunk:1: bad argument #1 to fabric.format \(f: a fabric from fabric.discover expected\)$`},
		{`umad.recv(1, 0)`, `^chunk:1: bad argument #1 to umad.recv \(port: umad.port expected, got number\)$`},
		{`local p = umad.open_port(); umad.recv(p, 0, 10)`, `^chunk:1: umad.recv: EINVAL: recv: length 10 is less than one MAD`},
		{`local p = umad.open_port(); umad.send(p, 7, string.rep("\0", 256), 10, 0)`, `^chunk:1: umad.send: EINVAL: `},
		{`umad.open_port("nosuchca")`, `^chunk:1: umad.open_port: .*"nosuchca"`},
		{`umad.send(umad.open_port(), 0, "short", 0, 0, {lid = 1, qkeey = 2})`, `^chunk:1: umad.send: unknown option "qkeey"`},
		{`bit.band(-1, 1)`, `^chunk:1: bad argument #1 to bit.band`},
		{`mad.new("PortInfoo")`, `^chunk:1: mad.new: unknown attribute "PortInfoo"`},
		{`mad.new("PortInfo", {targt = "lid:1"})`, `^chunk:1: mad.new: unknown option "targt"`},
		{`local r = mad.new("PortInfo", {target = "lid:1"}); r.attribute.widht = 1; mad.send(r)`, `^chunk:1: mad.send: request.attribute: PortInfo has no field "widht"$`},
		{`local r = mad.new("PortInfo", {target = "lid:1"}); r.attribute.port_state = 16; mad.send(r)`, `^chunk:1: mad.send: request.attribute: port_state: value 16 out of range \(max 15\)$`},
		{`local r = mad.new("PortInfo"); mad.send(r)`, `^chunk:1: mad.send: request.target: string expected`},
		{`local r = mad.new("PortInfo", {target = "lid:1", method = "Frob"}); mad.send(r)`, `^chunk:1: mad.send: request.method: "Frob" is not Get or Set$`},
		{`mad.decode("zz")`, `^chunk:1: mad.decode: argument #1 is neither a 256-byte MAD nor hex`},
		{`diag.linkinfo{hops = "x"}`, `^chunk:1: diag.linkinfo: hops: want a number, got string$`},
		{`diag.queryerrors{suppress = 5}`, `^chunk:1: diag.queryerrors: suppress: want a string or a list of strings, got number$`},
		{`diag.sminfo{sate = 1}`, `^chunk:1: diag.sminfo: unknown option "sate" \(did you mean state\? known: activity, modifier, priority, state, target\)$`},
		{`diag.sminfo{state = 16}`, `^chunk:1: diag.sminfo: state 16: want an integer 0..15$`},
		{`diag.sminfo{target = 1.5}`, `^chunk:1: diag.sminfo: target: target "1.5": LID 1.5 is not an integer`},
		{`diag.ibaddr{target = "guid:0x1234"}`, `^chunk:1: diag.ibaddr: target: SA PathRecord to port GUID 0x0000000000001234: .*ERR_NO_RECORDS`},
		// What the tool refuses before it reads an address comes first,
		// as on the command line.
		{`diag.sysstat{target = "guid:0x1234", op = "Host"}`, `^chunk:1: diag.sysstat: unknown op "Host": want ping, host or cpu$`},
		{`diag.sysstat{target = "guid:0x1234", op = "host"}`, `^chunk:1: diag.sysstat: target: SA PathRecord to port GUID 0x0000000000001234: .*ERR_NO_RECORDS`},
		{`diag.ibaddr{gid_show = 1}`, `^chunk:1: diag.ibaddr: option gid_show: boolean expected, got number$`},
		{`diag.queryerrors{suppress = "PortXmitWait,Nope"}`, `^chunk:1: diag.queryerrors: suppress: no PortCounters counter "Nope" \(known: PortSelect, `},
		{`diag.queryerrors{port_guid = 5}`, `^chunk:1: diag.queryerrors: port_guid: want a GUID string "0x...", got 5$`},
		{`diag.queryerrors{direct = "0,1", port_guid = "0x2"}`, `^chunk:1: diag.queryerrors: port_guid and direct: give one port$`},
		{`diag.queryerrors{fabric = {}}`, `^chunk:1: diag.queryerrors: fabric: a fabric from fabric.discover expected, got table$`},
		{`diag.queryerrors{fabric = 5}`, `^chunk:1: diag.queryerrors: fabric: a fabric from fabric.discover expected, got number$`},
		{`diag.queryerrors{fabric = fabric.discover(), direct = "0,1"}`, `^chunk:1: diag.queryerrors: fabric and port_guid or direct: give one$`},
		{`diag.queryerrors{skip_sl = true}`, `^chunk:1: diag.queryerrors: unknown option "skip_sl" \(known: ca, clear_counts, `},
		{`diag.portstate{target = 1}`, `^chunk:1: diag.portstate: port is required \(want <dest> and <portnum>\)$`},
		{`diag.portstate{target = 1, port = 1, opps = "query"}`, `^chunk:1: diag.portstate: unknown option "opps" \(did you mean ops\? known: ops, port, show_keys, target\)$`},
		{`os.execute("true")`, `attempt to call a non-function object`},
	})
}

func TestForgottenPortsAreClosed(t *testing.T) {
	L, env, _ := newTestState(t)
	if err := DoString(L, `p1 = umad.open_port(); p2 = umad.open_port(); p2:close()`); err != nil {
		t.Fatal(err)
	}
	if n := env.OpenResources(); n != 1 {
		t.Fatalf("open resources %d, want 1", n)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if n := env.OpenResources(); n != 0 {
		t.Fatalf("after Close: %d open", n)
	}
	if err := DoString(L, `assert(tostring(p1):find("closed"))`); err != nil {
		t.Fatal(err)
	}
}

func TestOSExit(t *testing.T) {
	L, _, _ := newTestState(t)
	err := DoString(L, `os.exit(3)`)
	if code, ok := AsExit(err); !ok || code != 3 {
		t.Fatalf("os.exit(3): %v (%d, %v)", err, code, ok)
	}
}

// BenchmarkLuaSMPRoundTrip measures SMP round trips issued from a Lua loop
// (NodeInfo of the SM's own switch... the node at LID 1) on the embedded
// simulator: the Lua boundary, target parsing, the engine and the sim.
func BenchmarkLuaSMPRoundTrip(b *testing.B) {
	benchLoop(b, `function loop(n) for i = 1, n do smp.nodeinfo("lid:1") end end`)
}

// benchLoop runs src's loop(n) for b.N SMPs and reports their rate.
func benchLoop(b *testing.B, src string) {
	L, _, _ := newTestState(b)
	if err := DoString(L, src); err != nil {
		b.Fatal(err)
	}
	loop := L.GetGlobal("loop")
	b.ReportAllocs()
	b.ResetTimer()
	if err := L.CallByParam(lua.P{Fn: loop, NRet: 0, Protect: true}, lua.LNumber(b.N)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "SMPs/s")
}

// BenchmarkLuaSMPRoundTripFields is BenchmarkLuaSMPRoundTrip reading
// three fields of each answer (records decode fields when read).
func BenchmarkLuaSMPRoundTripFields(b *testing.B) {
	benchLoop(b, `function loop(n)
		for i = 1, n do
			local ni = smp.nodeinfo("lid:1")
			local g, t, p = ni.node_guid, ni.node_type, ni.num_ports
		end
	end`)
}

// BenchmarkLuaFabricTable is fabric.discover's conversion of a discovery
// of tests/topologies/fattree-2000.net (2,000 nodes, ~8,000 ports) into
// Lua tables, without the sweep.
func BenchmarkLuaFabricTable(b *testing.B) {
	f := simtest.Load(b, "../tests/topologies/fattree-2000.net", nil)
	sess := simtest.Session(b, f, nil)
	L, env, err := NewState(context.Background(), &Options{Session: sess, Fabric: f, Stdout: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { env.Close(); L.Close() })
	d, err := sess.Discover(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		env.fabricTable(d)
	}
}

// TestDiscoverErrorsNameWhatWasThere: with a leaf switch dead, the
// errors of fabric.discover name the port each route leaves from and the
// switch the reference (a file, a fabric table, else the last discovery)
// had there.
func TestDiscoverErrorsNameWhatWasThere(t *testing.T) {
	L, _, out := newSimTestState(t)
	err := L.DoString(`
		local before = fabric.discover()
		sim.faults{dead = {"leaf03"}}
		for _, ref in ipairs({false, before, fabric.load("../sim/default.net")}) do
			local f = fabric.discover(ref and {reference = ref} or nil)
			assert(#f.errors > 0, "no errors with leaf03 dead")
			for _, e in ipairs(f.errors) do
				assert(e.where, e.path .. ": no where: " .. e.err)
				assert(e.err:find(e.where, 1, true), "err lacks where: " .. e.err)
				if e.where:match("^behind ") then
					assert(e.where:find('had "leaf03"', 1, true), e.where)
				end
			end
			print(f.errors[1].path .. ": " .. f.errors[1].where)
		end
	`)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	for _, c := range []string{`fabric.discover{reference = 3}`, `fabric.discover{reference = "/nonexistent.topo"}`, `fabric.discover{reference = {}}`} {
		if err := L.DoString(c); err == nil || !strings.Contains(err.Error(), "fabric.discover: reference") {
			t.Errorf("%s: %v, want an error naming the reference option", c, err)
		}
	}
}

// chunkError is a Lua chunk and the pattern its error must match.
type chunkError struct{ chunk, want string }

// checkChunkErrors runs each chunk (named "chunk") on a fresh test state
// and checks that it fails with an error matching its pattern.
func checkChunkErrors(t *testing.T, cases []chunkError) {
	t.Helper()
	for _, c := range cases {
		L, _, _ := newTestState(t)
		fn, err := L.Load(strings.NewReader(c.chunk), "chunk")
		if err != nil {
			t.Fatalf("%s: %v", c.chunk, err)
		}
		L.Push(fn)
		err = L.PCall(0, 0, nil)
		if err == nil {
			t.Errorf("%s: no error, want %s", c.chunk, c.want)
			continue
		}
		msg := err.(*lua.ApiError).Object.String()
		if !regexp.MustCompile(c.want).MatchString(msg) {
			t.Errorf("%s:\n got %q\nwant %s", c.chunk, msg, c.want)
		}
	}
}
