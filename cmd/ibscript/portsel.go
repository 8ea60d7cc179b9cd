package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/host"
)

// portSel is the local port -C and -P select, as the C tools read them
// (ibd_ca, ibd_ca_port): CA "" is libibumad's NULL (the first CA), port 0
// its default port (the first Active one).
type portSel struct {
	ca   string
	port int
}

// caName is the CA as the C tools print it: "(null)" when -C was not
// given.
func (s portSel) caName() string {
	if s.ca == "" {
		return "(null)"
	}
	return s.ca
}

// parsePortSel reads -C and -P: -P as strtoul(optarg, NULL, 0) stored in
// an int, as ibdiag_common does ("-P x" is port 0; "-P -1" is -1, which
// libibumad's resolve_ca_port takes as 0: the default port).
func parsePortSel(ca, port string, hasPort bool) portSel {
	s := portSel{ca: ca}
	if hasPort {
		v, _ := cStrtoul(port)
		s.port = int(int32(uint32(v)))
	}
	return s
}

// uri is the umad backend's --fabric for s; ok is false when no umad port
// can have s's number.
func (s portSel) uri() (uri string, ok bool) {
	if s.port > 254 {
		return "", false
	}
	if s.port <= 0 {
		return "umad:" + s.ca, true
	}
	return "umad:" + s.ca + "/" + strconv.Itoa(s.port), true
}

// matches says whether a, the port a backend other than the kernel's opened
// (ibsim's, the simulator's, a recording's), is one -C/-P may name, as
// libibumad decides for the C tools under umad2sim: -C its CA's name; -P 0
// or less (the default port) or a port of that CA; without -C, any -P on
// a switch (resolve_ca_port takes a switch's port 0 whatever was asked),
// with -C none but 0 there (its umad device has port 0 alone).
func (s portSel) matches(a fabric.PortAttr) bool {
	if s.ca != "" && s.ca != a.CAName {
		return false
	}
	if s.port <= 0 {
		return true
	}
	if a.NodeType == 2 {
		return s.ca == ""
	}
	return s.port <= a.CANumPorts
}

// portOpenError is a tool's local port that could not be opened as -C and
// -P (or --fabric umad:CA/PORT) select: each tool reports it as the C tool
// reports mad_rpc_open_port failing (Tool.OpenFail).
type portOpenError struct {
	sel portSel
	err error
}

func (e *portOpenError) Error() string { return e.err.Error() }
func (e *portOpenError) Unwrap() error { return e.err }

// checkPortSel is Env's check of the port a non-kernel backend opened
// against -C/-P.
func checkPortSel(s *portSel, a fabric.PortAttr, uri string) error {
	if s == nil || s.matches(a) {
		return nil
	}
	var given []string // a mismatch has -C or a -P above 0
	if s.ca != "" {
		given = append(given, fmt.Sprintf("-C %q", s.ca))
	}
	if s.port > 0 {
		given = append(given, fmt.Sprintf("-P %d", s.port))
	}
	return &portOpenError{sel: *s, err: fmt.Errorf("%s: --fabric %s opened %s port %d (of %d); -C/-P name that CA and 0 or one of its ports",
		strings.Join(given, " "), uri, a.CAName, a.PortNum, a.CANumPorts)}
}

// umadSel is the port --fabric umad:REST selects, for its open error.
func umadSel(uri string) portSel {
	rest, _ := strings.CutPrefix(uri, "umad:")
	ca, port, err := host.ParseUMAD(rest)
	if err != nil {
		ca, _, _ = strings.Cut(rest, "/")
	}
	return portSel{ca: ca, port: port}
}

// openFailed ends a tool whose local port could not be opened: our reason
// on stderr, then what the C tool prints and its status (Tool.OpenFail, or
// IBEXIT's "Failed to open 'CA' port 'N'").
func (inv *Invocation) openFailed(pe *portOpenError) int {
	inv.Errorf("%s", hinted(pe.err))
	if inv.Tool.OpenFail != nil {
		return inv.Tool.OpenFail(inv, pe.sel)
	}
	return ibExit(inv, fmt.Sprintf("Failed to open '%s' port '%d'", pe.sel.caName(), pe.sel.port))
}

// openEnvError is what Env returns when opening the backend failed: on the
// kernel's umad devices a portOpenError (the C tools' mad_rpc_open_port
// failing), else err as it is.
func openEnvError(c *config, err error) error {
	if errors.Is(err, context.Canceled) || !strings.HasPrefix(c.fabricURI, "umad:") {
		return err
	}
	s := umadSel(c.fabricURI)
	if c.portSel != nil {
		s = *c.portSel
	}
	return &portOpenError{sel: s, err: err}
}

// smiMode is how current rdma-core's tool opens its port on the kernel's
// devices (infiniband-diags/*.c at rdma-core 691953d8d):
//   - SMIEnforce: mad_rpc_open_port2(..., 1) in smpquery, sminfo, ibaddr,
//     ibportstate, ibroute, ibtracert, iblinkinfo and dump_fts, and in
//     libibnetdisc's ibnd_discover_fabric, so in ibnetdiscover, the
//     scripts that run it (ibhosts, ibswitches, ibrouters, ibnodes,
//     ibidsverify.pl) and ibfindnodesusing.pl (ibnetdiscover, ibroute);
//   - SMIPairs: mad_rpc_open_port2(..., 0) in perfquery, saquery
//     (ibdiag_sa.c), ibping, ibsysstat, ibccquery, ibccconfig and
//     ibqueryerrors (whose discovery, ibnd_discover_fabric, enforces:
//     queryErrorsNeedSMI);
//   - SMIAny for the rest: smpdump opens umad_open_port (no pair), ibstat,
//     ibstatus and ibcacheedit send no MAD.
func smiMode(tool string) host.SMIMode {
	switch tool {
	case "smpquery", "sminfo", "ibaddr", "ibportstate", "ibroute", "ibtracert", "iblinkinfo",
		"dump_fts", "dump_lfts", "dump_mfts", "ibnetdiscover", "ibhosts", "ibswitches", "ibrouters",
		"ibnodes", "ibidsverify", "ibfindnodesusing":
		return host.SMIEnforce
	case "perfquery", "saquery", "ibping", "ibsysstat", "ibccquery", "ibccconfig", "ibqueryerrors":
		return host.SMIPairs
	}
	return host.SMIAny
}

// noSMISide says whether a, the port a tool opened, sends its SMPs through
// a port without an SMA: IsSMDisabled in its capability mask and no SMI
// device paired with it (a lone GSI side, or one whose SMI side could not
// be opened), where current libibmad's enforce_smi refuses to run.
func noSMISide(a fabric.PortAttr) bool {
	return a.CapMask&fabric.CapIsSMDisabled != 0 && (a.SMIName == "" || a.SMIName == a.CAName)
}
