package diag

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/topo"
)

// Env is what every tool runs with: the engine session on the local port
// (-C/-P, --fabric), the node-name-map (--node-name-map) and the
// discovery options the common flags set. Tools never open a port or read
// a flag themselves.
type Env struct {
	// Session is the engine session on the local port. Required for tools
	// that talk to the fabric.
	Session *engine.Session
	// NodeNames is the node-name-map (topo.ParseNameMap), nil when none.
	NodeNames map[uint64]string
	// Progress, when set, receives the progress of long sweeps (nodes
	// found, queries outstanding), for a progress line on a terminal.
	Progress func(nodes, pending int)
	// Loaded, when set, is the topology the tools take instead of
	// discovering one (--load-cache: a fabric read from libibnetdisc's
	// cache file); no SMP is sent for it. The tools that query ports
	// (ibqueryerrors' counters) still need Session.
	Loaded *topo.Fabric
	// Ports, when set, lists the local ports of the backend the session
	// was opened on (fabric.Fabric.Ports): the tools that show the host's
	// CAs (ibstatus) read them.
	Ports func(ctx context.Context) ([]fabric.PortAttr, error)
	// PortSpeed, when set, is the backend's ibv_query_port_speed: a
	// local port's effective bandwidth in units of 100 Mb/s (current
	// ibstat's "Effective speed"); nil where the backend has none.
	PortSpeed func(ctx context.Context, ca string, port int) (uint64, error)
	// SysFS, when set, is the kernel's /sys/class/infiniband the tools
	// that read sysfs (ibstatus) read; nil is the host's on the kernel
	// backend, the simulated local port's elsewhere.
	SysFS fs.FS
	// CheckFile, when set, says whether a tool may read or write a file
	// it is named (ibcacheedit's): the Lua bindings' file rules
	// (docs/security.md); nil allows every file.
	CheckFile func(path string) error
	// WriteFile, when set, is how a tool writes a file: the Lua
	// bindings' (never the run's own --audit, --record or report file,
	// never through a symbolic link); nil writes as the C tool does.
	WriteFile func(path string, b []byte, perm fs.FileMode) error
	// Version is which infiniband-diags the tools behave as where
	// current rdma-core's and Debian's 44 differ (docs/diag.md lists
	// where): Version44, the default, or VersionCurrent.
	Version Version
	// Script marks a run from a Lua script: a tool refuses what scripts
	// never handle (ibccconfig's CongestionKeyInfo, which carries the
	// CC_Key; as cc.set refuses it).
	Script bool
}

// Version is an infiniband-diags version the tools can behave as.
type Version int

const (
	// Version44 is Debian bookworm's infiniband-diags 44 (rdma-core
	// 44), which the differential tests run: the default.
	Version44 Version = iota
	// VersionCurrent is current rdma-core's infiniband-diags (its
	// 2024-2026 changes: build_dr_path_to_lid in iblinkinfo -S/-G,
	// ibstat's effective speed, ...).
	VersionCurrent
)

// ParseVersion reads a version as the command line and Lua name it:
// "44" or "current".
func ParseVersion(s string) (Version, error) {
	switch s {
	case "44":
		return Version44, nil
	case "current":
		return VersionCurrent, nil
	}
	return 0, fmt.Errorf("diags version %q: want 44 or current", s)
}

func (v Version) String() string {
	if v == VersionCurrent {
		return "current"
	}
	return "44"
}

// current reports whether e asks for current rdma-core's behaviour.
func (e *Env) current() bool { return e != nil && e.Version == VersionCurrent }

// checkFile applies CheckFile.
func (e *Env) checkFile(path string) error {
	if e == nil || e.CheckFile == nil {
		return nil
	}
	return e.CheckFile(path)
}

// Discover sweeps the fabric from the local port with the engine's
// concurrent discovery. The nodes the node-name-map names carry those
// names as their descriptions, as the C tools print them. A node that
// could not be read is an error naming its route, unless partial is set
// (the tools that print what they found and say what they missed).
func (e *Env) Discover(ctx context.Context) (*engine.Discovery, error) {
	if e != nil && e.Loaded != nil {
		return &engine.Discovery{Fabric: e.Loaded}, nil
	}
	if e == nil || e.Session == nil {
		return nil, fmt.Errorf("diag: no session (the tool needs a fabric)")
	}
	// A duplicate node GUID is one node, as libibnetdisc takes it.
	d, err := e.Session.Discover(ctx, &engine.DiscoverOptions{Progress: e.Progress, MergeSameGUID: true})
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	return d, nil
}

// DiscoveryErrors is the error of a discovery that missed part of the
// fabric: one line per route that did not answer. The tools print what
// they found and fail with it (the C tools print what libibnetdisc found
// and warn).
type DiscoveryErrors []engine.TargetError

func (e DiscoveryErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "discovery missed %d route(s)", len(e))
	for i, te := range e {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e)-5)
			break
		}
		fmt.Fprintf(&b, "; %s", te)
	}
	return b.String()
}

// GUID is a 64-bit GUID as JSON and Lua carry it: a "0x%016x" string
// (a JSON number or a Lua number would lose its low bits).
type GUID uint64

// MarshalJSON writes "0x0002c90300001234".
func (g GUID) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`"0x%016x"`, uint64(g))), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (g *GUID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("GUID: want a string \"0x...\": %w", err)
	}
	var v uint64
	if _, err := fmt.Sscanf(s, "0x%x", &v); err != nil {
		return fmt.Errorf("GUID %q: want 0x and hex digits", s)
	}
	*g = GUID(v)
	return nil
}

func (g GUID) String() string { return fmt.Sprintf("0x%016x", uint64(g)) }

// WriteJSON writes v as the tools' --format json output: indented, one
// value, a newline at the end.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// nodeType is the name JSON gives a node type.
func nodeType(t topo.NodeType) string { return t.String() }
