package bindings

import (
	"regexp"
	"testing"
)

// TestRdmacmErrors pins the error texts of the rdmacm module.
func TestRdmacmErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`rdmacm.create_id(nil, "TCP")`, `^<string>:1: rdmacm.create_id: EINVAL: unknown port space "TCP"`},
		{`rdmacm.create_id(nil, 0x999)`, `^<string>:1: rdmacm.create_id: EINVAL: rdmacm: create_id: port space 0x0999: invalid argument`},
		{`rdmacm.bind_addr(rdmacm.create_id(nil), {lid = 77})`, `^<string>:1: rdmacm.bind_addr: EADDRNOTAVAIL: .*no local port has address lid:77:0`},
		{`rdmacm.bind_addr(rdmacm.create_id(nil), {lid = 1, gid = "zz"})`, `^<string>:1: rdmacm.bind_addr: EINVAL: gid "zz" is not 16 bytes of hex`},
		{`rdmacm.connect(rdmacm.create_id(nil), {privat_data = "x"})`, `^<string>:1: rdmacm.connect: unknown option "privat_data"`},
		{`rdmacm.connect(rdmacm.create_id(nil), {retry_count = 300})`, `^<string>:1: rdmacm.connect: EINVAL: retry_count: integer 0..255 expected, got 300`},
		{`rdmacm.connect(rdmacm.create_id(nil))`, `^<string>:1: rdmacm.connect: EINVAL: rdmacm: connect: id \d+ is idle, not route resolved: invalid argument`},
		{`rdmacm.accept(rdmacm.create_id(nil))`, `^<string>:1: rdmacm.accept: EINVAL: .*not a connect request`},
		{`rdmacm.disconnect(rdmacm.create_id(nil))`, `^<string>:1: rdmacm.disconnect: EINVAL: .*not connected`},
		{`rdmacm.migrate_id(rdmacm.create_id(nil), nil)`, `^<string>:1: rdmacm.migrate_id: EINVAL: .*already synchronous`},
		{`local c = rdmacm.create_event_channel(); rdmacm.create_id(c); c:close()`, `rdmacm.channel:close: EBUSY: .*1 ids still use the channel`},
		{`rdmacm.get_cm_event({})`, `bad argument #1 to .*rdmacm.channel expected, got table`},
		{`rdmacm.ack_cm_event({})`, `^<string>:1: rdmacm.ack_cm_event: EINVAL: not an event of get_cm_event, or acked already`},
		{`local i = rdmacm.create_id(nil); rdmacm.destroy_id(i); rdmacm.listen(i)`, `^<string>:1: rdmacm.listen: ENOENT: id is destroyed`},
		// rdma_migrate_id(3) "returns -1 on error ... errno": a destroyed id or channel.
		{`local i = rdmacm.create_id(nil); rdmacm.destroy_id(i); rdmacm.migrate_id(i, nil)`, `^<string>:1: rdmacm.migrate_id: ENOENT: id is destroyed`},
		{`local c = rdmacm.create_event_channel(); c:close(); rdmacm.migrate_id(rdmacm.create_id(nil), c)`, `^<string>:1: rdmacm.migrate_id: EINVAL: channel is destroyed`},
	} {
		t.Run(c.src, func(t *testing.T) {
			L, _, _ := newTestState(t)
			err := DoString(L, c.src)
			if err == nil {
				t.Fatal("no error")
			}
			if !regexp.MustCompile(c.want).MatchString(err.Error()) {
				t.Errorf("error %q does not match %q", err, c.want)
			}
		})
	}
}

// TestRdmacmForgotten: ids and channels a script forgets, with events
// fetched and not acked, are destroyed by Env.Close without waiting (the
// package's goleak check sees the CM's reader goroutines end).
func TestRdmacmForgotten(t *testing.T) {
	L, env, _ := newTestState(t)
	err := DoString(L, `
local ch = rdmacm.create_event_channel()
local server = rdmacm.create_id(ch)
rdmacm.bind_addr(server, {lid = 1, port = 5})
rdmacm.listen(server)
local client = rdmacm.create_id(ch)
rdmacm.resolve_addr(client, {lid = umad.get_port("node002", 1).base_lid}, {lid = 1, port = 5}, 2000)
rdmacm.get_cm_event(ch)                -- not acked
rdmacm.resolve_route(client, 2000)
assert(rdmacm.get_cm_event(ch, 1000))  -- ROUTE_RESOLVED, not acked
rdmacm.connect(client)
`)
	if err != nil {
		t.Fatal(err)
	}
	if n := env.OpenResources(); n != 1 {
		t.Fatalf("%d resources open, want 1 (the CM)", n)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if n := env.OpenResources(); n != 0 {
		t.Fatalf("%d resources open after Close", n)
	}
	// The module starts over after that.
	if err := DoString(L, `rdmacm.create_event_channel():close()`); err != nil {
		t.Fatal(err)
	}
}
