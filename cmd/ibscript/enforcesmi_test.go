package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// noSMIHost is the fake kernel with a port whose SMPs have no SMI device
// to go through: mlx5_0 port 1 (LID 1) is IsSMDisabled, a lone GSI side
// (planarized: false, unique GUID), or (planarized: true) the GSI side of
// a planarized HCA whose SMI device mlx5_2 (LID 3) cannot be opened;
// mlx5_1 port 1 (LID 2) is the peer (pkeyPeer).
func noSMIHost(planarized bool) *umadtest.Host {
	const guid = 0x0002c90300000101
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5, GUID: guid,
		CapMask: 0x2659e848 | umadtest.IsSMDisabled})
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 2, State: 4, PhysState: 5})
	if planarized {
		h.AddCA("mlx5_2", 1, 0x0002c90300003000, umadtest.HostPort{Num: 1, LID: 3, State: 4, PhysState: 5, GUID: guid})
		h.Deny(umad.DevDir + "/umad2")
	}
	return h
}

// smiReason matches our reason for refusing a port with no SMI side (not
// an SMInfo in a tool's error).
var smiReason = regexp.MustCompile(`SMI/GSI pair|SMI side`)

// TestEnforceSMI: under --diags-version current each tool opens its port
// as current rdma-core's does (smiMode): the tools whose
// mad_rpc_open_port2 (or libibnetdisc's ibnd_discover_fabric) passes
// enforce_smi 1 end as their source ends when it returns NULL on a port
// without an SMI side, the others run with SMPs on the GSI side; under 44
// (mad_rpc_open_port, no pairs) every tool runs. The goldens are from
// infiniband-diags/*.c at rdma-core 691953d8d: IBEXIT("Failed to open
// '%s' port '%d'") (smpquery.c, sminfo.c, ibaddr.c, ibroute.c,
// ibtracert.c, ibportstate.c), iblinkinfo.c's fprintf and exit(1),
// ibnetdiscover.c's IBEXIT("discover failed\n"), dump_fts.c's "Failed to
// discover fabric" (rc -1) and ibqueryerrors.c's "discover failed" after
// its own open (enforce_smi 0) succeeded (rc -1).
func TestEnforceSMI(t *testing.T) {
	const failed = "Failed to open 'mlx5_0' port '1'\n"
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // the end of stdout under current
		stderr string // the end of stderr under current
		runs44 bool   // under 44 it reaches the peer and exits 0
	}{
		{args: []string{"smpquery", "nodedesc", "2"}, code: exitIBExit, stdout: "smpquery: iberror: failed: " + failed, runs44: true},
		{args: []string{"sminfo", "2"}, code: exitIBExit, stdout: "sminfo: iberror: failed: " + failed},
		{args: []string{"ibaddr", "2"}, code: exitIBExit, stdout: "ibaddr: iberror: failed: " + failed},
		{args: []string{"ibroute", "2"}, code: exitIBExit, stdout: "ibroute: iberror: failed: " + failed},
		{args: []string{"ibtracert", "1", "2"}, code: exitIBExit, stdout: "ibtracert: iberror: failed: " + failed},
		{args: []string{"ibportstate", "2", "1"}, code: exitIBExit, stdout: "ibportstate: iberror: failed: " + failed},
		{args: []string{"iblinkinfo"}, code: exitFailed, stderr: "Failed to open mlx5_0 port 1\n"},
		{args: []string{"ibnetdiscover"}, code: exitIBExit, stdout: "ibnetdiscover: iberror: failed: discover failed\n\n"},
		{args: []string{"ibswitches"}, code: exitIBExit, stdout: "/usr/sbin/ibnetdiscover: iberror: failed: discover failed\n"},
		{args: []string{"dump_fts"}, code: exitIBExit, stderr: "Failed to discover fabric\n"},
		{args: []string{"ibqueryerrors", "--skip-sl"}, code: exitIBExit, stderr: "discover failed\n"},
		{args: []string{"perfquery", "2", "1"}, code: exitOK, runs44: true},
	} {
		for _, planarized := range []bool{false, true} {
			h := noSMIHost(planarized)
			newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassSubnLID, Version: 1}.WithMethods(mad.MethodGet))
			newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassPerf, Version: 1}.WithMethods(mad.MethodGet))
			args := append([]string{tc.args[0], "--fabric", "umad:", "-C", "mlx5_0", "-P", "1"}, tc.args[1:]...)
			name := strings.Join(tc.args, " ")
			if planarized {
				name += " (planarized, SMI device denied)"
			}
			code, stdout, stderr := runFakeTool(t.Context(), t, h, nil, append(args, "--diags-version", "current")...)
			if code != tc.code || !strings.HasSuffix(stdout, tc.stdout) || !strings.HasSuffix(stderr, tc.stderr) {
				t.Errorf("%s under current: status %d, stdout %q, stderr %q; want %d, stdout ending %q, stderr ending %q",
					name, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			// Our reason comes first: no SMI side, or the SMI device
			// that could not be opened.
			if code != exitOK && !smiReason.MatchString(stderr) {
				t.Errorf("%s under current: stderr %q does not say why (the SMI side)", name, stderr)
			}
			if !tc.runs44 {
				// The port opens; the SMPs then find nobody to
				// answer them: time out soon.
				args = append(args, "-t", "20")
			}
			code, stdout, stderr = runFakeTool(t.Context(), t, h, nil, args...)
			if smiReason.MatchString(stderr) {
				t.Errorf("%s under 44: status %d, stdout %q, stderr %q; want the port opened (44 opens the port named)", name, code, stdout, stderr)
			}
			if tc.runs44 && code != exitOK {
				t.Errorf("%s under 44: status %d, stderr %q; want 0", name, code, stderr)
			}
		}
	}
}

// TestEnforceSMIDefaultPort: with no -C/-P, current rdma-core's tools
// take the first SMI/GSI pair with a port above Down
// (umad_get_smi_gsi_pair_by_ca_name(NULL, 0, ..., enforce_smi)), and an
// enforcing tool passes over the lone GSI port mlx5_0 for mlx5_1; 44
// opens umad_open_port's default, mlx5_0, for every tool.
func TestEnforceSMIDefaultPort(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		current    bool
		opened     string
	}{
		{"smpquery", "nodedesc 2", true, "mlx5_1 port 1 (LID 0x2)"},
		{"perfquery", "2 1", true, "mlx5_0 port 1 (LID 0x1)"},
		{"smpquery", "nodedesc 2", false, "mlx5_0 port 1 (LID 0x1)"},
		{"perfquery", "2 1", false, "mlx5_0 port 1 (LID 0x1)"},
	} {
		h := noSMIHost(false)
		newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassSubnLID, Version: 1}.WithMethods(mad.MethodGet))
		newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassPerf, Version: 1}.WithMethods(mad.MethodGet))
		args := append([]string{tc.tool, "--fabric", "umad:", "-t", "20"}, strings.Fields(tc.args)...)
		if tc.current {
			args = append(args, "--diags-version", "current")
		}
		_, _, stderr := runFakeTool(t.Context(), t, h, nil, args...)
		if want := "ibscript: using " + tc.opened + "\n"; !strings.HasPrefix(stderr, want) {
			t.Errorf("%s: stderr %q; want it to start %q", strings.Join(args, " "), stderr, want)
		}
	}
}

// TestToolsOnPlanes: on the kernel backend, a planarized HCA as
// libibumad pairs it (umadtest.AddPlanarized: GSI device mlx5_2, LID 1;
// SMI device mlx5_3 with a umad device per plane, LIDs 11-14), a tool
// run on plane P (-C mlx5_3 -P P) sends its SMPs through plane P's SMI
// device and its PerfMgt through the GSI device, under 44 and current
// alike: the peer (mlx5_1, LID 2) sees smpquery's SMP from LID 10+P and
// perfquery's GMPs from LID 1. Named by its GSI device (-C mlx5_2), the
// tool's SMPs take the pair's first SMI port above Down, plane 1; with
// -P 3 alone, the first device with a port 3 is the SMI device (plane 3).
func TestToolsOnPlanes(t *testing.T) {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 2, State: 4, PhysState: 5})
	h.AddPlanarized("mlx5_2", "mlx5_3", 0x0002c90300003000, 0x0002c90300003100, 1, 11, 12, 13, 14)
	smps := newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassSubnLID, Version: 1}.WithMethods(mad.MethodGet))
	gmps := newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassPerf, Version: 1}.WithMethods(mad.MethodGet))
	type run struct {
		ca    string
		plane int
	}
	runs := []run{{"mlx5_2", 1}, {"", 3}}
	for p := 1; p <= 4; p++ {
		runs = append(runs, run{"mlx5_3", p})
	}
	for _, r := range runs {
		for _, ver := range []string{"44", "current"} {
			sel := []string{"--fabric", "umad:", "-P", strconv.Itoa(r.plane), "--diags-version", ver}
			if r.ca != "" {
				sel = append(sel, "-C", r.ca)
			}
			smpquery := append([]string{"smpquery"}, append(sel, "nodedesc", "2")...)
			perfquery := append([]string{"perfquery"}, append(sel, "2", "1")...)
			for _, tc := range []struct {
				cmd  []string
				peer *pkeyPeer
				from uint16
			}{{smpquery, smps, uint16(10 + r.plane)}, {perfquery, gmps, 1}} {
				code, _, stderr := runFakeTool(t.Context(), t, h, nil, tc.cmd...)
				if code != exitOK {
					t.Errorf("%s: status %d: %s", strings.Join(tc.cmd, " "), code, stderr)
				}
				checkSources(t, tc.cmd, tc.peer, tc.from)
			}
		}
	}
}

// TestMoreToolsOnPlanes: the other tools current rdma-core moved to
// mad_rpc_open_port2 (#1541: sminfo, ibaddr, ibportstate, ibroute,
// ibccquery; #1641: saquery's sa_get_handle) and smpdump send as
// smpquery and perfquery do on a planarized HCA: run on plane 3 (-C mlx5_3
// -P 3), their SMPs reach the peer from plane 3's SMI port (LID 13) and
// their SA (at the SM LID, 1, the GSI device's own) and CC MADs from the
// GSI device (LID 1), under 44 and current.
// The peer echoes each request back as its answer, so what a tool prints
// of it does not matter here: only where its MADs came from.
func TestMoreToolsOnPlanes(t *testing.T) {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 2, State: 4, PhysState: 5})
	h.AddPlanarized("mlx5_2", "mlx5_3", 0x0002c90300003000, 0x0002c90300003100, 1, 11, 12, 13, 14)
	smps := newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassSubnLID, Version: 1}.WithMethods(mad.MethodGet))
	// The SA is at the port's SM LID, 1: the GSI device's own LID, where a
	// request sent from the SMI side would come from LID 13.
	sas := newPeerOn(t, h, "mlx5_2", fabric.Agent{Class: mad.ClassSubnAdm, Version: 2}.WithMethods(mad.MethodGet))
	ccs := newPKeyPeer(t, h, fabric.Agent{Class: mad.ClassCC, Version: 2}.WithMethods(mad.MethodGet))
	for _, ver := range []string{"44", "current"} {
		sel := []string{"--fabric", "umad:", "-C", "mlx5_3", "-P", "3", "--diags-version", ver}
		for _, tc := range []struct {
			tool []string
			peer *pkeyPeer
			from uint16
		}{
			{[]string{"sminfo", "2"}, smps, 13},
			{[]string{"ibaddr", "2"}, smps, 13},
			{[]string{"ibportstate", "2", "1"}, smps, 13},
			{[]string{"ibroute", "2"}, smps, 13},
			{[]string{"smpdump", "2", "0x15", "1"}, smps, 13},
			{[]string{"saquery", "CPI"}, sas, 1},
			{[]string{"ibccquery", "CongestionInfo", "2"}, ccs, 1},
		} {
			cmd := append(append([]string{tc.tool[0]}, sel...), tc.tool[1:]...)
			runFakeTool(t.Context(), t, h, nil, cmd...)
			checkSources(t, cmd, tc.peer, tc.from)
		}
	}
}

// checkSources checks that the peer saw cmd's requests, every one from
// LID from.
func checkSources(t *testing.T, cmd []string, peer *pkeyPeer, from uint16) {
	t.Helper()
	got := peer.sources()
	if len(got) == 0 {
		t.Errorf("%s: the peer saw nothing", strings.Join(cmd, " "))
	}
	for _, s := range got {
		if !strings.HasSuffix(s, fmt.Sprintf(" from LID %d", from)) {
			t.Errorf("%s: the peer saw %q; want every request from LID %d", strings.Join(cmd, " "), got, from)
			return
		}
	}
}
