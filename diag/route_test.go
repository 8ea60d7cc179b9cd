package diag_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// simEnv is a diag environment on the embedded simulator's bundled
// fabric (node001's port; LIDs: node001 1, leaf01 2, spine02 9, leaf03 4,
// node010 16), with the fabric to inject faults into.
func simEnv(t *testing.T) (*diag.Env, *sim.Fabric) {
	t.Helper()
	f, err := sim.Default(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &diag.Env{Session: attachSession(t, f, "", &engine.Options{Timeout: 50 * time.Millisecond, Retries: 1})}, f
}

// attachSession is a Session on port 1 of node of f ("": the default
// port), closed when the test ends.
func attachSession(t *testing.T, f *sim.Fabric, node string, o *engine.Options) *engine.Session {
	t.Helper()
	var tr fabric.Transport
	var err error
	if node == "" {
		tr, err = f.Open(context.Background(), "", 0)
	} else {
		tr, err = f.Attach(node, 1)
	}
	if err != nil {
		t.Fatal(err)
	}
	sess, err := engine.New(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func traceText(t *testing.T, tr *diag.Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := diag.WriteTracert(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTracertFaults: ibtracert's failures, injected into the simulator,
// end the trace where ibtracert ends it, with its reason: an LFT entry
// past the switch's ports (bad forwarding table entry), a forwarding
// loop (the directed route grows past its limit), a cable down on the
// way (the next hop cannot be reached), a LID no port has. A query
// nobody answered is warned of first as libibmad's mad_rpc warns, naming
// the target as ibtracert's own warnings name it.
func TestTracertFaults(t *testing.T) {
	ctx := t.Context()
	// From node010 (LID 16) to node003 (LID 8): node010 -> leaf03 ->
	// [33] spine01 -> [1] leaf01 -> node003. The faults are in spine01's
	// entry for LID 8, which the local port's (node001's) own LID routes
	// do not use: ibtracert reaches both ends and fails on the way.
	cases := []struct {
		name   string
		fault  func(f *sim.Fabric) error
		hops   int    // hops printed before the failure
		reason string // the warning that says why
		rpc    string // libibmad's warning before it, if any
	}{
		{"bad LFT entry", func(f *sim.Fabric) error { return f.SetLFT("spine01", 8, 0xff) }, 1,
			`find_route: Bad forwarding table entry found at: node "spine01" lid entry 8 is 255 (top `, ""},
		{"loop", func(f *sim.Fabric) error { return f.SetLFT("spine01", 8, 3) }, 60, "find_route: Direct path too long!", ""},
		{"uncabled port", func(f *sim.Fabric) error { return f.SetLFT("spine01", 8, 30) }, 2, "find_route: can't reach port at DR path slid 0; dlid 0; 0,1,34,3,33,30",
			"mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1,34,3,33,30)"},
		{"no such LID", func(*sim.Fabric) error { return nil }, -1, "find_route: can't reach to/from ports",
			"mad_rpc: _do_madrpc failed; dport (Lid 999)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, f := simEnv(t)
			if err := c.fault(f); err != nil {
				t.Fatal(err)
			}
			dst := uint16(8)
			if c.hops < 0 {
				dst = 999
			}
			tr, err := diag.Tracert(ctx, env, 16, dst, nil)
			if !errors.Is(err, diag.ErrNoRoute) || tr.To != nil || tr.Error == "" {
				t.Fatalf("error %v, to %v: want ErrNoRoute and no destination\n%s", err, tr.To, traceText(t, tr))
			}
			if c.hops >= 0 && (tr.From == nil || len(tr.Hops) != c.hops) {
				t.Errorf("%d hops printed, want %d:\n%s", len(tr.Hops), c.hops, traceText(t, tr))
			}
			w := tr.Warnings
			if c.rpc != "" {
				if len(w) == 0 || w[0] != c.rpc {
					t.Errorf("warnings %q, want %q first", tr.Warnings, c.rpc)
				} else {
					w = w[1:]
				}
			}
			if len(w) == 0 || !strings.HasPrefix(w[0], c.reason) {
				t.Errorf("warnings %q, want %q first", tr.Warnings, c.reason)
			}
			if last := tr.Warnings[len(tr.Warnings)-1]; last != "get_route: can't find a route from src to dest" {
				t.Errorf("last warning %q", last)
			}
		})
	}
}

// TestIBRouteFaults: ibroute's refusals and a switch whose LFT cannot be
// read all through: a CA (not a switch), a LID no node has (NodeInfo
// fails), and a dropped entry shown only with -a.
func TestIBRouteFaults(t *testing.T) {
	ctx := t.Context()
	env, f := simEnv(t)
	if _, err := diag.IBRoute(ctx, env, engine.LID(1), diag.LIDAddress(1), nil); !errors.Is(err, diag.ErrNotSwitch) {
		t.Errorf("CA: %v, want ErrNotSwitch", err)
	}
	if _, err := diag.IBRoute(ctx, env, engine.LID(999), diag.LIDAddress(999), nil); err == nil || !strings.HasPrefix(err.Error(), "node info failed: valid addr?") {
		t.Errorf("no such LID: %v", err)
	}
	if err := f.SetLFT("leaf01", 16, 0xff); err != nil {
		t.Fatal(err)
	}
	valid, err := diag.IBRoute(ctx, env, engine.LID(2), diag.LIDAddress(2), nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := diag.IBRoute(ctx, env, engine.LID(2), diag.LIDAddress(2), &diag.RouteOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	find := func(ft *diag.ForwardingTable) *diag.LFTEntry {
		for i := range ft.LIDs {
			if ft.LIDs[i].LID == 16 {
				return &ft.LIDs[i]
			}
		}
		return nil
	}
	if e := find(valid); e != nil {
		t.Errorf("dropped LID 16 listed without -a: %+v", e)
	}
	if e := find(all); e == nil || e.Port != 255 || e.Valid || e.Info != ": (illegal port)" {
		t.Errorf("dropped LID 16 with -a: %+v, want port 255 \"(illegal port)\"", e)
	}
	if len(all.LIDs) != len(valid.LIDs)+2 { // LID 0 and LID 16
		t.Errorf("-a lists %d LIDs, without %d: want 2 more", len(all.LIDs), len(valid.LIDs))
	}
}

// TestSAQueryFailures: saquery's failures as its exit statuses: a name
// no NodeRecord has (ENONET), a LID out of range (EINVAL), an unknown
// query name (EINVAL), a LID/port argument without its LID (EINVAL).
func TestSAQueryFailures(t *testing.T) {
	ctx := t.Context()
	env, _ := simEnv(t)
	for _, c := range []struct {
		args []string
		qt   string
		exit int
		msg  string
	}{
		{[]string{"NR", "nosuchnode"}, "", 64, `Failed to find lid for "nosuchnode"`},
		{[]string{"NR", "0x10000"}, "", 22, `Invalid lid specified: "0x10000"`},
		// A LID/port argument with no LID (parse_lid_and_ports' get_lid
		// of "" reads 0).
		{[]string{"/1"}, "PIR", 22, `Invalid lid specified: ""`},
		{[]string{"", "1/1"}, "LR", 22, `Invalid lid specified: ""`},
		{nil, "NoSuchQuery", 22, "Unknown query type NoSuchQuery"},
	} {
		o := diag.NewSAQueryOptions()
		o.Args, o.QueryType = c.args, c.qt
		res, err := diag.SAQuery(ctx, env, o)
		var se *diag.SAError
		if !errors.As(err, &se) || se.Exit != c.exit || res.Exit != c.exit || !strings.HasPrefix(se.Msg, c.msg) {
			t.Errorf("saquery %q %q: %v (exit %d), want exit %d %q", c.qt, c.args, err, res.Exit, c.exit, c.msg)
		}
	}
	// A name found: the node's LID selects its records.
	o := diag.NewSAQueryOptions()
	o.Args = []string{"leaf01"}
	res, err := diag.SAQuery(ctx, env, o)
	if err != nil || len(res.Sections) != 1 || len(res.Sections[0].Records) != 1 || res.Sections[0].Records[0].Fields["lid"] != uint64(2) {
		t.Errorf("saquery leaf01: %v, %+v", err, res)
	}
}

// TestSAQueryIsSMOnSimulator: saquery -s on the simulator lists the SM's
// port under "IsSM ports" (its SA matches any of the template's
// CapabilityMask bits when the attribute modifier is 1<<31, as OpenSM
// does) and none under "IsSMdisabled ports".
func TestSAQueryIsSMOnSimulator(t *testing.T) {
	env, _ := simEnv(t)
	o := diag.NewSAQueryOptions()
	o.Command = diag.SAIsSM
	res, err := diag.SAQuery(t.Context(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sections) != 2 || len(res.Sections[0].Records) != 1 || len(res.Sections[1].Records) != 0 {
		t.Fatalf("sections %+v: want the SM's port, then none", res.Sections)
	}
	f := res.Sections[0].Records[0].Fields
	if f["endport_lid"] != uint64(1) || f["capability_mask"].(uint64)&2 == 0 {
		t.Errorf("IsSM port %v: want LID 1 with IsSM (0x2)", f)
	}
	var b bytes.Buffer
	if err := diag.WriteSAQuery(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "IsSM ports\nPortInfoRecord dump:\n\t\tEndPortLid..............1\n") || !strings.HasSuffix(b.String(), "\n\nIsSMdisabled ports\n") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestLIDOfGUID: -G resolves a port GUID with one SA PathRecord query, as
// the C tools do (no discovery); a CA's node GUID, which has no
// PathRecord, is no port's: not found, as the C tools do not find it.
func TestLIDOfGUID(t *testing.T) {
	env, _ := simEnv(t)
	ctx := t.Context()
	lid, err := diag.LIDOfGUID(ctx, env, 0x0002c90300f00000) // leaf01
	if err != nil || lid != 2 {
		t.Fatalf("leaf01: LID %d, %v; want 2", lid, err)
	}
	if env.Session.LastDiscovery() != nil {
		t.Error("a port GUID was resolved by discovery, not by the SA")
	}
	defer func() {
		if env.Session.LastDiscovery() != nil {
			t.Error("a GUID was looked for by discovery")
		}
	}()
	if lid, err := diag.LIDOfGUID(ctx, env, 0x0002c90300a00012); err == nil { // node010's node GUID
		t.Errorf("node010's node GUID resolved to LID %d", lid)
	}
	lid, err = diag.LIDOfGUID(ctx, env, 0x0002c90300a00013) // its port 1
	if err != nil || lid != 16 {
		t.Fatalf("node010's port 1: LID %d, %v; want 16", lid, err)
	}
	if _, err := diag.LIDOfGUID(ctx, env, 0x1234); err == nil {
		t.Error("an unknown GUID resolved")
	}
}

func linkinfoText(t *testing.T, e *diag.Env, o diag.LinkinfoOptions) (string, []string) {
	t.Helper()
	li, err := diag.LinkinfoOf(t.Context(), e, o)
	if missed := (diag.DiscoveryErrors)(nil); err != nil && !errors.As(err, &missed) {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := diag.WriteLinkinfo(&b, &b, li); err != nil {
		t.Fatal(err)
	}
	return b.String(), li.ToolWarnings()
}

// TestLinkinfoCurrentStart: with current rdma-core's behaviour,
// iblinkinfo -S/-G starts its partial scan from the directed route
// build_dr_path_to_lid builds to the port's LID (rdma-core #1755,
// iblinkinfo.c's main): it prints what -D with that route prints (44's
// -D, which tests/ibsimdiff compares with the C tool), where 44's -S
// starts from the LID; when no route is found, rdma-core's two ibwarn
// lines and 44's LID-routed scan.
func TestLinkinfoCurrentStart(t *testing.T) {
	env, f := simEnv(t)
	cur := *env
	cur.Version = diag.VersionCurrent
	ctx := t.Context()
	d, err := env.Session.Discover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, n := range d.Fabric.Nodes {
		p := n.Ports[0]
		if n.Type != topo.Switch {
			p = n.Ports[1]
		}
		route, err := env.Session.DRPathToLID(ctx, nil, p.LID)
		if err != nil {
			t.Fatalf("%s: %v", n.Desc, err)
		}
		for _, all := range []bool{false, true} {
			got, warn := linkinfoText(t, &cur, diag.LinkinfoOptions{PortGUID: p.GUID, All: all})
			want, _ := linkinfoText(t, env, diag.LinkinfoOptions{Path: route, All: all})
			if got != want || warn != nil {
				t.Errorf("%s (-a %v): current -S 0x%x (warnings %q):\n%s\nwant -D %v's:\n%s", n.Desc, all, p.GUID, warn, got, route, want)
			}
			if old, _ := linkinfoText(t, env, diag.LinkinfoOptions{PortGUID: p.GUID, All: all}); old != got {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("no -S prints differently from a directed-route start: the test shows nothing")
	}
	// No route: the spine the LFTs take node016's LID through has died
	// (the SA, which walks the same LFTs, still resolves the GUID).
	var port *topo.Port
	for _, n := range d.Fabric.Nodes {
		if n.Desc == "node016 HCA-1" {
			port = n.Ports[1]
		}
	}
	route, err := env.Session.DRPathToLID(ctx, nil, port.LID)
	if err != nil {
		t.Fatal(err)
	}
	spine, err := env.Session.SMP(ctx, engine.Target{Kind: engine.ByDR, Path: route[:3]}, 1, smp.AttrNodeDescription, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetFaults(sim.Faults{DeadNodes: []string{strings.TrimRight(string(spine), "\x00")}}); err != nil {
		t.Fatal(err)
	}
	guid := port.GUID
	got, warn := linkinfoText(t, &cur, diag.LinkinfoOptions{PortGUID: guid, PortText: "node016's"})
	want, _ := linkinfoText(t, env, diag.LinkinfoOptions{PortGUID: guid})
	wantWarn := []string{
		fmt.Sprintf("build_dr_path_to_lid: can't reach port at DR path slid 0; dlid 0; 0,%d,%d", route[1], route[2]),
		fmt.Sprintf("main: DR path to lid %d (node016's) failed; using resolved portid", port.LID),
	}
	if got != want || !slices.Equal(warn, wantWarn) {
		t.Errorf("no route: warnings %q, want %q; text:\n%s\nwant 44's:\n%s", warn, wantWarn, got, want)
	}
}
