// Command ibscript is a Lua-scriptable host for InfiniBand management
// datagrams: it runs fabric validation plans, one-line chunks and an
// interactive REPL against real HCAs, ibsim, or a fabric simulated inside
// the process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/exporter"
	"github.com/ibscript/ibscript/host"
	"github.com/ibscript/ibscript/topo"
	"github.com/prometheus/common/promslog"
)

// Exit codes (DESIGN.md "Output").
const (
	exitOK     = 0 // everything passed
	exitFailed = 1 // a check failed
	exitError  = 2 // the run itself failed: bad script, bad flags, unreachable fabric
)

// version is ibscript's release (CHANGELOG.md); a release build may set
// it with -ldflags "-X main.version=...". --version adds the commit and
// the Go version the binary was built from (versionLine).
var version = "0.1.0"

func main() {
	argv := toolArgv(os.Args)
	if len(os.Args) > 0 && tools[filepath.Base(os.Args[0])] != nil {
		linkedTool = true
	}
	os.Exit(run(argv, os.Stdin, os.Stdout, os.Stderr))
}

// linkedTool is set when the binary runs through a link named like a tool
// (argv[0] "iblinkinfo"): its messages then start with the tool's name.
var linkedTool bool

// config is what the command line says, whatever the order of its flags.
type config struct {
	given     []string // the flags the command line set (flagsApply)
	fabricURI string
	portSel   *portSel // -C/-P of a tool, checked against the port the backend opens
	chunk     string
	hasChunk  bool
	format    string
	planArgs  []string // --arg key=value, in order
	timeout   time.Duration
	retries   int
	record    string // --record FILE
	allowSet  bool   // --allow-set
	audit     string // --audit FILE
	mkey      string // --mkey KEY; never printed
	smkey     string // --smkey KEY; never printed
	cckey     string // --cckey KEY; never printed
	maxMADs   uint64 // --max-mads N
	pkeyIndex uint16 // a tool's -Y: the P_Key index of every MAD but the SMPs
	// diagsVersion is a tool's --diags-version or $IBSCRIPT_DIAGS_VERSION.
	diagsVersion diag.Version
	// smi is how a tool opens the kernel's port (smiMode): as current
	// rdma-core's tool does under --diags-version current.
	smi       host.SMIMode
	timeLimit time.Duration   // --time-limit DUR: wall clock of the whole run
	memLimit  memoryLimitFlag // --memory-limit SIZE: heap of the whole run
	debug     bool            // --debug
	quiet     bool            // --quiet or $IBSCRIPT_QUIET: no notices on stderr
	nameMap   string          // --node-name-map FILE
	load      string          // --load FILE: analyze's and topology's saved fabric
	exporter  exporterFlags   // the exporter command's --web.*, --interval, --discover-interval
	names     map[uint64]string
	help      bool
	version   bool
	cmd       string   // "", "run", "discover", "analyze", "repl", "help", "tools", "tool"
	args      []string // positional arguments after the subcommand; a tool's whole command line
	tool      *Tool    // cmd "tool": the infiniband-diags tool to run (tools.go)
	viaLink   bool     // the tool runs through a link named like it

	// Files a script may use beyond the named paths (docs/security.md).
	allowPath  []string // --allow-path DIR, repeatable
	allowFiles bool     // --allow-files
	// logger takes debug lines to stderr with --debug; nil discards.
	logger *slog.Logger
	// guard ends the run when it does not end by itself (guard.go); nil
	// in tests that open backends directly.
	guard *guard
	// cancel ends the run with a cause (the memory limit, from the Lua
	// bindings); nil in tests that open backends directly.
	cancel context.CancelCauseFunc
	// testHost, set by tests only, changes the host.Options a run opens
	// its fabric with (the fake kernel of umadtest).
	testHost func(*host.Options)
}

const usage = `usage: ibscript [flags] [command] [args]

Commands:
  (none)              open the interactive REPL (or run -e CHUNK)
  run FILE [ARGS...]  run a Lua script or validation plan; ARGS are in the
                      script's global 'arg' table; FILE - reads it from stdin
  discover            discover the fabric and print it
  analyze [CHECK...]  routing analytics: credit loops, routes, multicast,
                      balance, fat tree (live, or --load a saved fabric)
  topology --format F the fabric (or --load FILE, a saved one) as Slurm's
                      topology.conf (slurm-conf) or topology.yaml
                      (slurm-yaml), a Graphviz graph (dot) or JSON (json)
  exporter            serve the fabric's port counters to Prometheus
  report merge F...   merge JSON plan reports of several hosts into one
  TOOL [OPTIONS]      an infiniband-diags tool (iblinkinfo, ibqueryerrors,
                      ibnetdiscover, ibswitches, perfquery, saquery, ...) with
                      the C tool's options and text, or --format json; a
                      link named TOOL to ibscript runs it too
  tools               list the tools ("help TOOL" shows a tool's options)
  completion SHELL    print the completion script of bash, zsh or fish
  help [COMMAND]      show help; "help man" prints the manual page (roff)
  run FILE --help     the arguments a plan takes (--arg), with their help

Flags (before or after the command):
  --fabric URI    backend: auto (default), sim:PATH, sim: (bundled topology),
                  umad:[CA/PORT], ibsim:[SOCKNAME][?...], replay:FILE
                  sim: takes ?node=NAME&port=N to attach elsewhere,
                  ?bare=1 to start the fabric with no SM configuration and
                  ?sm=NAME to put the SM on another node
                  ibsim: takes ?node=NAME (default $SIM_HOST), nodes=A,B
                  (ports on several nodes by name), issm=1 (the node is
                  the SM), server=HOST[:PORT] (ibsim's UDP mode, default
                  $IBSIM_SERVER_NAME); SOCKNAME defaults to
                  $IBSIM_SOCKNAME, then "sim"
  -e CHUNK        run the Lua chunk and exit
  --format FMT    run: plan report as text (default), json, tap or junit;
                  discover: ibnetdiscover (default) or list;
                  topology: slurm-conf, slurm-yaml, dot or json
  --arg KEY=VAL   a plan argument (plan.define); repeatable
  --timeout DUR   per-try MAD timeout (default 200ms, as OpenSM)
  --retries N     MAD retries after the first try (default 3)
  --record FILE   write every MAD sent and received, with timestamps, to FILE,
                  on every port the run opens (the session's, umad.open_port's,
                  the RDMA CM's) (JSON Lines, fabric/record); --fabric
                  replay:FILE plays it back
  --allow-set     let Set methods out on the kernel backend (refused otherwise)
  --audit FILE    append an audit line for every Set sent (default on the
                  kernel backend: stderr)
  --mkey KEY      M_Key for SMPs (better: $IBSCRIPT_MKEY); never printed
  --smkey KEY     SM_Key for SA requests (better: $IBSCRIPT_SMKEY); never
                  printed
  --cckey KEY     CC_Key for Congestion Control requests, as ibccquery -c
                  (better: $IBSCRIPT_CCKEY); never printed
  --max-mads N    send at most N MADs in the run (0, the default: no limit)
  --time-limit DUR
                  end a run, -e chunk or discover after DUR of wall-clock
                  time (exit status 2); --timeout is per MAD try, as in
                  infiniband-diags
  --node-name-map FILE
                  name nodes as ibnetdiscover's --node-name-map does (GUID
                  "name" lines): in discover's output, fabric.discover's
                  tables, and so in every message and report naming a node
  --memory-limit SIZE
                  end the run (exit status 2) when its heap passes SIZE
                  (4GiB, 512MiB, ...; 0: no limit); default a quarter of
                  the host's (or cgroup's) memory, at most 4GiB
                  A run that does not end within 2s of the time or memory
                  limit, SIGTERM, SIGHUP, SIGQUIT or (outside the REPL)
                  SIGINT is ended: its ports and files are closed and the
                  stuck call abandoned (exit status 2)
  --allow-path DIR
                  let the script read and write files under DIR too
                  (repeatable); by default only under the working directory,
                  the script's directory and arguments and --arg values
                  (docs/security.md)
  --allow-files   let the script read and write any file
  --debug         log what the layers below the script do on stderr (slog
                  text at debug level: dropped and malformed MADs, the
                  simulator's notes)
  --quiet         no notices on stderr (that auto mode uses the embedded
                  simulated fabric); IBSCRIPT_QUIET=1 does the same
  --version       print the version, the commit and the Go version
  -h, --help      show help

Durations (--timeout, --time-limit, --interval, --discover-interval): a
bare number is milliseconds, as infiniband-diags' -t takes them (--timeout
500); anything else is a Go duration (500ms, 10s, 5m, 1h30m).

Exit status: 0 all passed, 1 a check failed, 2 the run failed or a check could
not read what it needed.
`

func init() {
	var names []string
	for _, m := range bindings.Modules() {
		names = append(names, m.Name)
	}
	commandHelp["run"] = strings.Replace(commandHelp["run"], "MODULES", strings.Join(names, ", "), 1)
}

var commandHelp = map[string]string{
	"run": `usage: ibscript run [flags] FILE [ARGS...]

Runs the Lua script FILE against the fabric. The script sees its arguments
in the global table 'arg' (arg[0] is FILE) and the modules MODULES
(docs/lua-api.md). os.exit(n) ends the run with status n (0..255; a plan's
report is still written and a worse status of its own wins); an error in the script
ends it with status 2 and a traceback. require finds modules next to FILE
and in its checks/ directory.

A plan (a script calling plan.define or plan.check) prints its report on
stdout when it ends, in --format text (default; coloured on a terminal),
json (schema ibscript.plan.v1, docs/plan-report.md), tap or junit, and
exits 0 when every check passed, 1 when one failed, 2 when the run failed.
A run that fails still writes its report, carrying the error; with
--format, even one that failed before plan.define (syntax error,
unreachable fabric).
  --arg KEY=VALUE   sets a plan argument; unknown keys are errors
`,
	"report": `usage: ibscript report merge [--format json|text|tap|junit] REPORT.json...

Merges JSON plan reports (ibscript run --format json), e.g. one per host of
a pdsh or Slurm run, into one report whose categories are prefixed by each
report's host (host:CA/port when two reports come from one host). A report
that contradicts itself (null checks, unknown statuses, counts that do not
match its results) is refused, naming the file and the check. Exit status
as for run: 0, 1 when a check failed, 2 when a run failed or a file is not
a valid report.
`,
	"exporter": `usage: ibscript exporter [flags]

Serves the counters of every linked switch port to Prometheus, with the
metric names and labels of treydock/infiniband_exporter (so its dashboards
and alert rules work unchanged), on /metrics (Prometheus text format, or
OpenMetrics when the scraper asks for it) and /healthz (200 once a sweep has
completed, 503 before). In the background it discovers the fabric every
--discover-interval and reads PortCountersExtended (data and packets) and
PortCounters (error counters, PortXmitWait) of every linked switch port
every --interval (with --details, PortRcvErrorDetails and
PortXmitDiscardDetails too), all concurrently; a scrape is answered from the last complete sweep, never a
mix of two, and says its age (infiniband_exporter_sweep_age_seconds). Port
state, physical state, width, speed and rate come from the discovery, and
from a trap's re-read of the ports it names (at once, no discovery); a
port seen going down says when (..._port_down_since_timestamp_seconds),
link flaps are counted (..._port_link_flaps_total), and the topology is
compared with --topology-reference (infiniband_topology_*). Counters at
the top of their width are shown (..._counter_saturated; where the PMA has
the additional PortCountersExtended counters, their 64-bit copies are
served and never saturate), as is the fraction of time a port waited to
send (..._transmit_wait_ratio). On a planarized port (an XDR HCA's SMI/GSI
pair) it discovers and sweeps every plane, and each port series (and
infiniband_link_info) carries the port's plane as a plane label
(docs/planes.md). It never resets a counter unless --reset-saturated. It runs
until SIGTERM, SIGINT, SIGHUP or SIGQUIT (exit status 0) or --time-limit (2).
  --web.listen-address ADDR  where to listen (default :9315, as
                             infiniband_exporter): HOST:PORT, :PORT,
                             [IPv6]:PORT; repeatable; '' is an error
  --web.config.file FILE     exporter-toolkit's web configuration (TLS,
                             basic auth, headers), as every Prometheus
                             exporter reads it
  --web.systemd-socket       serve on the sockets systemd passes instead
  --web.disable-exporter-metrics  no go_* and process_* series
  --log.level LEVEL          debug, info (default), warn, error
  --log.format FORMAT        logfmt (default) or json (promslog's)
  --web.telemetry-path PATH  the metrics path (default /metrics)
  --interval DUR             time between counter sweeps (default 10s)
  --discover-interval DUR    time between discoveries (default 5m)
  --topology-reference FILE  the topology (ibnetdiscover, ibsim or JSON
                             snapshot) the infiniband_topology_* series
                             compare each discovery with (default: the
                             first discovery)
  --traps=false              no subscription to the SM's traps 64, 65,
                             128-131 and 144 (by default each re-reads the
                             ports it names at once, or rediscovers)
  --node-name-map FILE       switch and uplink names as in ibnetdiscover
  --collector.hca            CA ports too (infiniband_hca_* series)
  --details                  PortRcvErrorDetails and PortXmitDiscardDetails
                             too (twice the queries; off by default as in
                             infiniband_exporter, whose spellings
                             --collector.switch.rcv-err-details and
                             --collector.hca.rcv-err-details are accepted)
  --xmit-wait-tick N         a PortXmitWait tick in symbol times (default
                             1; perfquery -c shows a PMA's Tick, plus one)
  --reset-saturated          after each sweep, clear the PortCounters
                             counters found saturated, and only those (one
                             audited Set per port; refused on the kernel
                             backend without --allow-set)
  --sim-traffic LOAD         on the embedded simulator (sim:), the mean
                             fraction of link capacity its links carry so
                             graphs move (default 0.3; 0: only MADs)
  --once --output FILE       one sweep (with discovery) written to FILE
                             atomically, then exit (0, or 2 when the fabric
                             could not be swept), for node_exporter's
                             textfile collector on very large fabrics;
                             --output - writes it to stdout
treydock/infiniband_exporter's flags are taken with its defaults, and a
boolean flag's --no-NAME as kingpin takes it:
  --collector.switch         switch series (default on)
  --collector.switch.base-metrics, --collector.hca.base-metrics
                             base counters, info, rate and uplink_info
                             (default on; off: the detail counters only)
  --exporter.runonce --exporter.output FILE  --once --output FILE, the
                             collector label "switch-runonce" and
                             infiniband_exporter_last_execution, holding
  --exporter.lockfile FILE   (default /tmp/infiniband_exporter.lock)
  --ibnetdiscover.node-name-map FILE  --node-name-map
  --collector.ibswinfo, --ibswinfo.path, --ibswinfo.timeout,
  --ibswinfo.max-concurrent, --ibnetdiscover.path, --ibnetdiscover.timeout,
  --perfquery.path, --perfquery.timeout, --perfquery.max-concurrent, --sudo
                             accepted, change nothing: ibscript runs no
                             external program (ibswinfo's switch registers
                             are not read; --timeout and --retries bound
                             each MAD)
`,
	"completion": `usage: ibscript completion bash|zsh|fish

Prints the shell's completion script for ibscript: its commands, the
infiniband-diags tools, its flags and their values (--fabric, --format),
files where a flag takes one. Made from the same command table as the
manual page's synopsis. The packages install all three; by hand:
  source <(ibscript completion bash)                  # this shell
  ibscript completion bash > ~/.local/share/bash-completion/completions/ibscript
  ibscript completion zsh > "${fpath[1]}/_ibscript"
  ibscript completion fish > ~/.config/fish/completions/ibscript.fish
`,
	"discover": `usage: ibscript discover [flags]

Discovers the fabric by directed route from the local port and prints it.
  --format ibnetdiscover   ibnetdiscover's topology format (default)
  --format list            one line per node
`,
	"analyze": `usage: ibscript analyze [flags] [CHECK...]

Analyses the fabric's routing from its tables: the live fabric's (discovered,
its LFTs, MFTs and SLtoVL tables read) or --load FILE's (a snapshot, an
ibnetdiscover topology file or an ibnetdiscover --cache file, which have no
forwarding tables: the checks that follow routes say so and fail).
CHECKs (default all):
  credit-loops   cycles of the channel dependency graph per SL (deadlocks)
  routes         every LID reached from every switch and source port, no
                 loops, hop counts, asymmetric pairs
  multicast      every MLID's tree reaches every member once, no loops
  balance        destination LIDs per switch egress port (check_lft_balance)
  fat-tree       levels, up/down links, uniformity, oversubscription
  --format text|json   json: docs/diag/analyze.schema.json
Exit status 0 when every check passed, 1 when one found a fault or could not
run, 2 when the run failed; balance and fat-tree describe the fabric and set
the status only when named.
`,
	"topology": `usage: ibscript topology --format slurm-conf|slurm-yaml|dot|json [--load FILE] [flags]

Writes the fabric's topology for other programs, from a discovery from the
local port or, with --load FILE, from a saved fabric: a JSON snapshot
(fabric.save), an ibnetdiscover or ibsim topology file, or libibnetdisc's
cache file (ibnetdiscover --cache). --node-name-map names the nodes.
  --format slurm-conf   Slurm's topology.conf (topology/tree)
  --format slurm-yaml   Slurm's topology.yaml (Slurm 24.11+): a tree
                        topology and a block topology of the leaves
  --format dot          a Graphviz graph: dot -Tsvg draws it
  --format json         nodes and links (docs/diag/topology.schema.json)
Leaves are the switches with CAs attached; a host is named by the first
word of its name (the node-name-map's, else the NodeDescription); what the
Slurm files leave out is said in their comments (docs/topology.md).
Exit status: 0, 1 when the discovery could not read every node, 2 when it
or the file failed.
`,
	"repl": `usage: ibscript [flags]

Opens the interactive REPL. Expressions print their value; a chunk that is
not complete continues on the next line. Tab completes module, function and
field names; Ctrl-C cancels the running call; Ctrl-D exits. History is kept
in $XDG_CONFIG_HOME/ibscript/history; lines starting with a space, and
lines that mention a key (m_key, mkey, sm_key, cc_key), are not recorded.
`,
}

func newFlagSet(c *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ibscript", flag.ContinueOnError)
	// The flag package would print each error itself; run prints it once.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.fabricURI, "fabric", "auto", "")
	fs.Func("e", "", func(s string) error { c.chunk, c.hasChunk = s, true; return nil })
	fs.StringVar(&c.format, "format", "", "")
	fs.Func("arg", "", func(s string) error { c.planArgs = append(c.planArgs, s); return nil })
	c.timeout = engine.DefaultTimeout
	fs.Var(durationFlag{&c.timeout}, "timeout", "")
	fs.IntVar(&c.retries, "retries", engine.DefaultRetries, "")
	fs.StringVar(&c.record, "record", "", "")
	fs.BoolVar(&c.allowSet, "allow-set", false, "")
	fs.StringVar(&c.audit, "audit", "", "")
	fs.StringVar(&c.mkey, "mkey", "", "")
	fs.StringVar(&c.smkey, "smkey", "", "")
	fs.StringVar(&c.cckey, "cckey", "", "")
	fs.Uint64Var(&c.maxMADs, "max-mads", 0, "")
	fs.Var(durationFlag{&c.timeLimit}, "time-limit", "")
	fs.Var(&c.memLimit, "memory-limit", "")
	fs.BoolVar(&c.debug, "debug", false, "")
	fs.BoolVar(&c.quiet, "quiet", quietFromEnv(), "")
	fs.StringVar(&c.nameMap, "node-name-map", "", "")
	fs.StringVar(&c.load, "load", "", "")
	fs.Func("web.listen-address", "", func(s string) error {
		if len(c.exporter.listens) == 0 {
			c.exporter.listen = s
		}
		c.exporter.listens = append(c.exporter.listens, s)
		return nil
	})
	c.exporter.listen = ":9315"
	fs.StringVar(&c.exporter.webConfig, "web.config.file", "", "")
	fs.BoolVar(&c.exporter.systemdSocket, "web.systemd-socket", false, "")
	fs.BoolVar(&c.exporter.noExporterStats, "web.disable-exporter-metrics", false, "")
	fs.BoolVar(&c.exporter.switchOn, "collector.switch", true, "")
	fs.BoolVar(&c.exporter.switchBase, "collector.switch.base-metrics", true, "")
	fs.BoolVar(&c.exporter.hcaBase, "collector.hca.base-metrics", true, "")
	fs.BoolVar(&c.exporter.runonce, "exporter.runonce", false, "")
	fs.StringVar(&c.exporter.output, "exporter.output", "", "")
	fs.StringVar(&c.exporter.lockfile, "exporter.lockfile", "/tmp/infiniband_exporter.lock", "")
	fs.StringVar(&c.nameMap, "ibnetdiscover.node-name-map", "", "")
	c.exporter.logLevel, c.exporter.logFormat = promslog.NewLevel(), promslog.NewFormat()
	c.exporter.logFormat.Set("logfmt")
	fs.Var(levelFlag{c.exporter.logLevel}, "log.level", "")
	fs.Var(formatFlag{c.exporter.logFormat}, "log.format", "")
	no := &c.exporter.noop
	fs.BoolVar(&no.ibswinfo, "collector.ibswinfo", false, "")
	fs.StringVar(&no.ibswinfoPath, "ibswinfo.path", "ibswinfo", "")
	no.ibswinfoTimeout, no.ibnetTimeout, no.pqTimeout = 10*time.Second, 20*time.Second, 5*time.Second
	fs.Var(durationFlag{&no.ibswinfoTimeout}, "ibswinfo.timeout", "")
	fs.IntVar(&no.ibswinfoMax, "ibswinfo.max-concurrent", 1, "")
	fs.StringVar(&no.ibnetdiscoverPath, "ibnetdiscover.path", "ibnetdiscover", "")
	fs.Var(durationFlag{&no.ibnetTimeout}, "ibnetdiscover.timeout", "")
	fs.StringVar(&no.pqPath, "perfquery.path", "perfquery", "")
	fs.Var(durationFlag{&no.pqTimeout}, "perfquery.timeout", "")
	fs.IntVar(&no.pqMax, "perfquery.max-concurrent", 1, "")
	fs.BoolVar(&no.sudo, "sudo", false, "")
	fs.StringVar(&c.exporter.telemetryPath, "web.telemetry-path", "/metrics", "")
	c.exporter.interval, c.exporter.discoverInterval = exporter.DefaultInterval, exporter.DefaultDiscoverInterval
	fs.Var(durationFlag{&c.exporter.interval}, "interval", "")
	fs.Var(durationFlag{&c.exporter.discoverInterval}, "discover-interval", "")
	fs.StringVar(&c.exporter.reference, "topology-reference", "", "")
	fs.BoolVar(&c.exporter.once, "once", false, "")
	fs.StringVar(&c.exporter.output, "output", "", "")
	fs.BoolVar(&c.exporter.hca, "collector.hca", false, "")
	fs.BoolVar(&c.exporter.details, "details", false, "")
	fs.BoolVar(&c.exporter.switchDetails, "collector.switch.rcv-err-details", false, "")
	fs.BoolVar(&c.exporter.hcaDetails, "collector.hca.rcv-err-details", false, "")
	fs.IntVar(&c.exporter.xmitWaitTick, "xmit-wait-tick", 1, "")
	fs.BoolVar(&c.exporter.resetSaturated, "reset-saturated", false, "")
	fs.Float64Var(&c.exporter.simTraffic, "sim-traffic", 0.3, "")
	fs.BoolVar(&c.exporter.traps, "traps", true, "")
	fs.Func("allow-path", "", func(s string) error { c.allowPath = append(c.allowPath, s); return nil })
	fs.BoolVar(&c.allowFiles, "allow-files", false, "")
	fs.BoolVar(&c.help, "help", false, "")
	fs.BoolVar(&c.help, "h", false, "")
	fs.BoolVar(&c.version, "version", false, "")
	return fs
}

// levelFlag and formatFlag are --log.level and --log.format, promslog's
// (prometheus/common, as every Prometheus exporter reads them).
type levelFlag struct{ l *promslog.Level }

func (f levelFlag) String() string {
	if f.l == nil {
		return ""
	}
	return f.l.String()
}

func (f levelFlag) Set(s string) error {
	if err := f.l.Set(s); err != nil {
		return errors.New("want debug, info, warn or error")
	}
	return nil
}

type formatFlag struct{ f *promslog.Format }

func (f formatFlag) String() string {
	if f.f == nil {
		return ""
	}
	return f.f.String()
}

func (f formatFlag) Set(s string) error {
	if err := f.f.Set(s); err != nil {
		return errors.New("want logfmt or json")
	}
	return nil
}

// negations rewrites the flags at the head of args (up to the first
// argument that is not a flag, or --) as kingpin, the flag parser of
// treydock/infiniband_exporter and every Prometheus exporter, takes
// them: --no-NAME for a boolean flag NAME is --NAME=false
// (--no-collector.switch, --no-collector.switch.base-metrics). The value
// of a flag that takes one is left alone.
func negations(fs *flag.FlagSet, args []string) []string {
	out := args
	copied := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				i++ // its value follows
			}
			continue
		}
		pos, ok := strings.CutPrefix(name, "no-")
		if !ok {
			continue
		}
		if f := fs.Lookup(pos); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				if !copied {
					out, copied = slices.Clone(args), true
				}
				out[i] = "--" + pos + "=false"
			}
		}
	}
	return out
}

// parseArgs accepts flags anywhere before a "--": positional arguments are
// collected in order, the first naming the command.
func parseArgs(argv []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := newFlagSet(c, stderr)
	var pos []string
	rest := argv
	for {
		rest = negations(fs, rest)
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, flagError(err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		if c.hasChunk && len(pos) == 0 && !slices.Contains(commandNames(), rest[0]) {
			return nil, fmt.Errorf("unexpected arguments %s after -e CHUNK", strings.Join(rest, " "))
		}
		if len(pos) == 0 && tools[rest[0]] != nil {
			// A tool takes the rest of the command line, parsed as
			// getopt_long parses the C tool's (tools.go).
			c.cmd, c.tool, c.args = "tool", tools[rest[0]], rest[1:]
			return c, nil
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
		// After a script file, everything is the script's: flags that
		// ibscript knows are still taken (ibscript run --fabric X f.lua
		// and ibscript run f.lua --fabric X both work).
	}
	if len(pos) > 0 {
		if !slices.Contains(commandNames(), pos[0]) {
			return nil, unknownCommand(pos[0])
		}
		c.cmd, pos = pos[0], pos[1:]
	}
	c.args = pos
	fs.Visit(func(f *flag.Flag) { c.given = append(c.given, f.Name) })
	return c, nil
}

func run(argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseArgs(argv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "ibscript: %v\n%s", err, "run 'ibscript --help' for usage\n")
		return exitError
	}
	if err := flagsApply(c.given, c.cmd); err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n%s", err, "run 'ibscript --help' for usage\n")
		return exitError
	}
	var inv *Invocation
	if c.cmd == "tool" {
		c.viaLink = linkedTool && len(argv) > 0 && argv[0] == c.tool.Name
		var code int
		var done bool
		if inv, code, done = prepareTool(c, stdout, stderr); done {
			return code
		}
	}
	if c.version {
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	}
	if err := c.checkArgCount(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", strings.TrimSpace("ibscript "+c.cmd), err)
		return exitError
	}
	if !c.loadNameMap(stderr) {
		return exitError
	}
	if c.debug {
		c.logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if c.cmd == "run" && c.help && len(c.args) > 0 {
		return runPlanHelp(c, stdin, stdout, stderr)
	}
	if c.cmd == "help" || c.help {
		return runHelp(c, stdout, stderr)
	}

	if err := c.checkNumbers(); err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return exitError
	}
	if !c.memLimit.set {
		c.memLimit.v = defaultMemoryLimit()
	}

	// SIGTERM, SIGHUP, SIGQUIT, and outside the REPL Ctrl-C too, cancel
	// the run: calls return, ports close (ibsim gets its client slot
	// back) and the exit status is 2. In the REPL, Ctrl-C cancels only
	// the running call. The guard ends a run that does not end by itself
	// within its grace period, and one whose heap passes --memory-limit.
	g := newGuard(stderr)
	defer g.stop()
	c.guard = g
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
	if c.cmd != "" || c.hasChunk {
		sigs = append(sigs, os.Interrupt)
	}
	g.notifySignals(cancel, sigs...)
	defer setGoMemoryLimit(c.memLimit.v)()
	g.watchMemory(cancel, c.memLimit.v)
	if c.timeLimit > 0 && (c.cmd != "" || c.hasChunk) {
		// The whole run, its Lua loops included (the Lua state takes
		// ctx), ends when the limit is reached; the REPL has none.
		var cancelTL context.CancelFunc
		ctx, cancelTL = context.WithTimeoutCause(ctx, c.timeLimit, errTimeLimit{c.timeLimit})
		defer cancelTL()
	}
	c.cancel = cancel
	g.watch(ctx)

	return dispatch(ctx, c, inv, stdin, stdout, stderr)
}

// loadNameMap reads --node-name-map into c.names; false when it cannot
// be read, which ends the run except for a diags tool (its C tool warns
// and goes on without names).
func (c *config) loadNameMap(stderr io.Writer) bool {
	if c.nameMap == "" {
		return true
	}
	f, err := topo.OpenFile(c.nameMap) // a FIFO never hangs the open; /dev/zero is refused
	if err == nil {
		c.names, err = topo.ParseNameMap(f, c.nameMap)
		f.Close()
	}
	switch {
	case err != nil && c.cmd == "tool":
		// The C tools warn and go on without names when the map
		// cannot be opened or read (open_node_name_map).
		c.names = nil
		fmt.Fprintf(stderr, "ibscript %s: warning: --node-name-map: %v; going on without it, as %s does\n", c.tool.Name, err, c.tool.Name)
	case err != nil:
		fmt.Fprintf(stderr, "ibscript: --node-name-map: %v\n", err)
		return false
	}
	return true
}

// runHelp prints the help for c's command or for the topic of "ibscript
// help TOPIC".
func runHelp(c *config, stdout, stderr io.Writer) int {
	topic := c.cmd
	if c.cmd == "help" && len(c.args) > 0 {
		topic = c.args[0]
	}
	if t := tools[topic]; t != nil {
		fmt.Fprint(stdout, toolUsage(t))
		return exitOK
	}
	if topic == "tools" {
		fmt.Fprint(stdout, toolsList())
		return exitOK
	}
	if topic == "man" {
		if err := writeMan(stdout); err != nil {
			fmt.Fprintf(stderr, "ibscript: %v\n", err)
			return exitError
		}
		return exitOK
	}
	if h, ok := commandHelp[topic]; ok {
		fmt.Fprint(stdout, h)
	} else if c.cmd == "help" && topic != "" && topic != "help" {
		fmt.Fprintf(stderr, "ibscript help: no help on %q (topics: %s, man, tools, or a tool's name)\n", topic, strings.Join(helpTopics(), ", "))
		return exitError
	} else {
		fmt.Fprint(stdout, usage)
	}
	return exitOK
}

// dispatch runs c's command.
func dispatch(ctx context.Context, c *config, inv *Invocation, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case c.cmd == "run":
		if len(c.args) == 0 {
			fmt.Fprint(stderr, "ibscript run: missing script file\n", commandHelp["run"])
			return exitError
		}
		return runScript(ctx, c, stdin, stdout, stderr)
	case c.cmd == "report":
		return runReport(c, stdout, stderr)
	case c.cmd == "discover":
		return runDiscover(ctx, c, stdout, stderr)
	case c.cmd == "analyze":
		return runAnalyze(ctx, c, stdout, stderr)
	case c.cmd == "topology":
		return runTopology(ctx, c, stdout, stderr)
	case c.cmd == "exporter":
		return runExporter(ctx, c, stdout, stderr)
	case c.cmd == "tools":
		fmt.Fprint(stdout, toolsList())
		return exitOK
	case c.cmd == "completion":
		return runCompletion(c, stdout, stderr)
	case c.cmd == "tool":
		return runTool(ctx, inv)
	case c.hasChunk:
		return runChunk(ctx, c, stdout, stderr)
	default:
		if len(c.args) > 0 {
			fmt.Fprintf(stderr, "ibscript: unexpected arguments %s\n", strings.Join(c.args, " "))
			return exitError
		}
		return runREPL(ctx, c, stdin, stdout, stderr)
	}
}

// helpTopics lists what "ibscript help TOPIC" knows, sorted.
func helpTopics() []string {
	out := make([]string, 0, len(commandHelp))
	for t := range commandHelp {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
