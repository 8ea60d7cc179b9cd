package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibscript/ibscript/bindings"
)

// The command table: ibscript's own commands and flags, in the order the
// help shows them. The manual page's SYNOPSIS (man.go), the shell
// completions (completion.go) and the "did you mean" suggestions are made
// from it; TestFlagTableMatchesFlagSet keeps it true to newFlagSet.

// command is one of ibscript's commands.
type command struct {
	name    string
	args    string // what follows it, as the synopsis shows it (roff-free)
	summary string
}

var commandTable = []command{
	{"run", "FILE|- [ARGS...]", "run a Lua script or validation plan (FILE --help lists a plan's --arg)"},
	{"discover", "", "discover the fabric and print it"},
	{"analyze", "[CHECK...]", "routing analytics: credit loops, routes, multicast, balance, fat tree"},
	{"topology", "--format slurm-conf|slurm-yaml|dot|json", "write the fabric's topology for Slurm, Graphviz or JSON readers"},
	{"exporter", "", "serve the fabric's port counters to Prometheus"},
	{"report", "merge REPORT.json...", "merge JSON plan reports of several hosts into one"},
	{"tools", "", "list the infiniband-diags tools ibscript runs"},
	{"completion", "bash|zsh|fish", "print a shell completion script"},
	{"help", "[COMMAND|TOOL|man]", "show help; help man prints the manual page"},
}

// commandNames are the words parseArgs takes as a command ("repl" too:
// the REPL, as with no command).
func commandNames() []string {
	out := make([]string, 0, len(commandTable)+1)
	for _, c := range commandTable {
		out = append(out, c.name)
	}
	return append(out, "repl")
}

// flagSpec is one of ibscript's flags: what its value is called, what
// completes it, and which commands read it (nil: every command).
type flagSpec struct {
	name     string
	arg      string   // the value's name; "" for a boolean flag
	values   []string // the values a shell completes, when a fixed list
	complete string   // "file" or "dir": the shell completes paths
	cmds     []string // the commands it applies to; nil: all
	help     string   // one line, for completions
}

var flagTable = []flagSpec{
	{name: "fabric", arg: "URI", values: []string{"auto", "sim:", "umad:", "ibsim:", "replay:"}, help: "backend: auto, sim:PATH, umad:CA/PORT, ibsim:SOCK, replay:FILE"},
	{name: "e", arg: "CHUNK", help: "run the Lua chunk and exit"},
	{name: "format", arg: "FMT", values: []string{"text", "json", "tap", "junit", "ibnetdiscover", "list", "slurm-conf", "slurm-yaml", "dot"}, cmds: []string{"run", "discover", "analyze", "topology", "report"}, help: "report or output format"},
	{name: "arg", arg: "KEY=VAL", cmds: []string{"run", ""}, help: "a plan argument (run FILE --help lists them)"}, // -e: its file is one the chunk may read (files.go)
	{name: "timeout", arg: "DUR", help: "per-try MAD timeout (bare number: milliseconds)"},
	{name: "retries", arg: "N", help: "MAD retries after the first try"},
	{name: "record", arg: "FILE", complete: "file", help: "record every MAD to FILE (JSON Lines)"},
	{name: "allow-set", help: "let Set methods out on the kernel backend"},
	{name: "audit", arg: "FILE", complete: "file", help: "append an audit line per Set to FILE"},
	{name: "mkey", arg: "KEY", help: "M_Key for SMPs (better: $IBSCRIPT_MKEY)"},
	{name: "smkey", arg: "KEY", help: "SM_Key for SA requests (better: $IBSCRIPT_SMKEY)"},
	{name: "cckey", arg: "KEY", help: "CC_Key for Congestion Control (better: $IBSCRIPT_CCKEY)"},
	{name: "max-mads", arg: "N", help: "send at most N MADs"},
	{name: "time-limit", arg: "DUR", help: "end the run after DUR (bare number: milliseconds)"},
	{name: "memory-limit", arg: "SIZE", help: "end the run when its heap passes SIZE"},
	{name: "debug", help: "log what the layers below the script do on stderr"},
	{name: "quiet", help: "no notices on stderr (the simulated fabric's); also $IBSCRIPT_QUIET=1"},
	{name: "node-name-map", arg: "FILE", complete: "file", help: "name nodes as ibnetdiscover's --node-name-map"},
	{name: "load", arg: "FILE", complete: "file", cmds: []string{"analyze", "topology"}, help: "a saved fabric: snapshot, topology file or cache"},
	{name: "web.listen-address", arg: "ADDR", cmds: []string{"exporter"}, help: "where the exporter listens (default :9315)"},
	{name: "web.config.file", arg: "FILE", complete: "file", cmds: []string{"exporter"}, help: "exporter-toolkit web configuration: TLS, basic auth"},
	{name: "web.systemd-socket", cmds: []string{"exporter"}, help: "serve on systemd's socket-activated listeners"},
	{name: "web.disable-exporter-metrics", cmds: []string{"exporter"}, help: "no go_* and process_* series"},
	{name: "log.level", arg: "LEVEL", values: []string{"debug", "info", "warn", "error"}, cmds: []string{"exporter"}, help: "the exporter's log level (default info)"},
	{name: "log.format", arg: "FORMAT", values: []string{"logfmt", "json"}, cmds: []string{"exporter"}, help: "the exporter's log format (default logfmt)"},
	{name: "collector.switch", cmds: []string{"exporter"}, help: "switch port series (default on; --no-collector.switch: off)"},
	{name: "collector.switch.base-metrics", cmds: []string{"exporter"}, help: "switch base counters, info, rate, uplinks (default on)"},
	{name: "collector.hca.base-metrics", cmds: []string{"exporter"}, help: "CA base counters, info, rate, uplinks (default on)"},
	{name: "exporter.runonce", cmds: []string{"exporter"}, help: "--once as infiniband_exporter (collector=\"switch-runonce\")"},
	{name: "exporter.output", arg: "FILE", complete: "file", cmds: []string{"exporter"}, help: "--output (infiniband_exporter's spelling)"},
	{name: "exporter.lockfile", arg: "FILE", complete: "file", cmds: []string{"exporter"}, help: "held during --exporter.runonce"},
	{name: "ibnetdiscover.node-name-map", arg: "FILE", complete: "file", cmds: []string{"exporter"}, help: "--node-name-map (infiniband_exporter's spelling)"},
	{name: "collector.ibswinfo", cmds: []string{"exporter"}, help: "accepted; collects nothing (infiniband_exporter's ibswinfo)"},
	{name: "ibswinfo.path", arg: "PATH", cmds: []string{"exporter"}, help: "accepted; unused"},
	{name: "ibswinfo.timeout", arg: "DUR", cmds: []string{"exporter"}, help: "accepted; unused"},
	{name: "ibswinfo.max-concurrent", arg: "N", cmds: []string{"exporter"}, help: "accepted; unused"},
	{name: "ibnetdiscover.path", arg: "PATH", cmds: []string{"exporter"}, help: "accepted; unused (no external ibnetdiscover)"},
	{name: "ibnetdiscover.timeout", arg: "DUR", cmds: []string{"exporter"}, help: "accepted; unused (--timeout, --retries bound each MAD)"},
	{name: "perfquery.path", arg: "PATH", cmds: []string{"exporter"}, help: "accepted; unused (no external perfquery)"},
	{name: "perfquery.timeout", arg: "DUR", cmds: []string{"exporter"}, help: "accepted; unused (--timeout, --retries bound each MAD)"},
	{name: "perfquery.max-concurrent", arg: "N", cmds: []string{"exporter"}, help: "accepted; unused (the engine's window)"},
	{name: "sudo", cmds: []string{"exporter"}, help: "accepted; unused (no external program)"},
	{name: "web.telemetry-path", arg: "PATH", cmds: []string{"exporter"}, help: "the metrics path (default /metrics)"},
	{name: "interval", arg: "DUR", cmds: []string{"exporter"}, help: "time between counter sweeps (default 10s)"},
	{name: "discover-interval", arg: "DUR", cmds: []string{"exporter"}, help: "time between discoveries (default 5m)"},
	{name: "topology-reference", arg: "FILE", complete: "file", cmds: []string{"exporter"}, help: "the topology the infiniband_topology_* series compare each discovery with (default: the first discovery)"},
	{name: "once", cmds: []string{"exporter"}, help: "one sweep written to --output, then exit"},
	{name: "output", arg: "FILE", complete: "file", cmds: []string{"exporter"}, help: "where --once writes"},
	{name: "collector.hca", cmds: []string{"exporter"}, help: "CA ports too"},
	{name: "details", cmds: []string{"exporter"}, help: "PortRcvErrorDetails and PortXmitDiscardDetails too"},
	{name: "collector.switch.rcv-err-details", cmds: []string{"exporter"}, help: "--details (infiniband_exporter's spelling)"},
	{name: "collector.hca.rcv-err-details", cmds: []string{"exporter"}, help: "--details of CA ports (infiniband_exporter's spelling)"},
	{name: "xmit-wait-tick", arg: "N", cmds: []string{"exporter"}, help: "a PortXmitWait tick in symbol times"},
	{name: "reset-saturated", cmds: []string{"exporter"}, help: "clear saturated counters after each sweep"},
	{name: "sim-traffic", arg: "LOAD", cmds: []string{"exporter"}, help: "the simulator's background load, 0..1"},
	{name: "traps", cmds: []string{"exporter"}, help: "rediscover on the SM's traps (--traps=false: off)"},
	{name: "allow-path", arg: "DIR", complete: "dir", help: "let the script use files under DIR too"},
	{name: "allow-files", help: "let the script use any file"},
	{name: "version", help: "print the version, commit and Go version"},
	{name: "help", help: "show help"},
	{name: "h", help: "show help"},
}

// dash is how a flag is written: -e and -h with one dash, the rest with
// two (the flag package takes either; help, messages and completions use
// these).
func dash(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagNames are the flags as typed (--fabric, -e).
func flagNames() []string {
	out := make([]string, 0, len(flagTable))
	for _, f := range flagTable {
		out = append(out, dash(f.name))
	}
	return out
}

var (
	flagUndefined  = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	flagInvalid    = regexp.MustCompile(`(?s)^invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): (.*)$`)
	flagNeedsValue = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// flagError rewrites the flag package's errors as ibscript says them: the
// flag with its two dashes, its value, what was wanted, and for an
// unknown flag the nearest known ones.
func flagError(err error) error {
	msg := err.Error()
	if m := flagUndefined.FindStringSubmatch(msg); m != nil {
		name, _, _ := strings.Cut(m[1], "=")
		s := fmt.Sprintf("unknown flag %s", dash(name))
		if sug := bindings.Suggest(dash(name), flagNames()); len(sug) > 0 {
			s += fmt.Sprintf(" (did you mean %s?)", strings.Join(sug, " or "))
		}
		return errors.New(s)
	}
	if m := flagInvalid.FindStringSubmatch(msg); m != nil {
		why := m[3]
		switch why {
		case "parse error":
			why = "not a number"
			if f := findFlag(m[2]); f != nil && f.arg == "" {
				why = "want true or false"
			}
		case "value out of range":
			why = "out of range"
		}
		return fmt.Errorf("%s %s: %s", dash(m[2]), m[1], why)
	}
	if m := flagNeedsValue.FindStringSubmatch(msg); m != nil {
		arg := "a value"
		if f := findFlag(m[1]); f != nil && f.arg != "" {
			arg = f.arg
		}
		return fmt.Errorf("%s needs %s", dash(m[1]), arg)
	}
	return err
}

func findFlag(name string) *flagSpec {
	for i := range flagTable {
		if flagTable[i].name == name {
			return &flagTable[i]
		}
	}
	return nil
}

// unknownCommand is the error for a first word that is no command and no
// tool, with the nearest of those, or "run FILE" for a script.
// flagsApply refuses a flag given to a command it does not apply to
// (flagTable's cmds), which would otherwise be passed over in silence:
// "discover --load FILE" discovered the live fabric, FILE unread.
func flagsApply(given []string, cmd string) error {
	if cmd == "help" || cmd == "tool" {
		return nil // a tool's command line is its own (tools.go)
	}
	for _, name := range given {
		for _, s := range flagTable {
			if s.name == name && s.cmds != nil && !slices.Contains(s.cmds, cmd) {
				what := "ibscript " + cmd
				if cmd == "" {
					what = "the REPL or -e"
				}
				var to []string
				for _, c := range s.cmds {
					to = append(to, cmp.Or(c, "-e"))
				}
				return fmt.Errorf("%s does not apply to %s (only to %s)", dash(name), what, strings.Join(to, ", "))
			}
		}
	}
	return nil
}

func unknownCommand(word string) error {
	cands := append(commandNames(), toolNames()...)
	s := fmt.Sprintf("unknown command %q", word)
	switch sug := bindings.Suggest(word, cands); {
	case len(sug) > 0:
		s += fmt.Sprintf(" (did you mean %s?)", strings.Join(sug, " or "))
	case strings.HasSuffix(word, ".lua"):
		s += fmt.Sprintf(" (did you mean ibscript run %s?)", word)
	default:
		s += " (want run, discover, topology, exporter, report, tools, completion, a tool (ibscript tools lists them) or help)"
	}
	return errors.New(s)
}

// durationFlag is every duration flag's value (--timeout, --time-limit,
// --interval, --discover-interval): one rule, parseDuration's.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}

// parseDuration reads a duration flag: a bare number is milliseconds, as
// infiniband-diags' -t takes them (--timeout 500, --interval 10000);
// anything else is a Go duration (500ms, 10s, 5m, 1h30m). The range is
// each flag's to check.
func parseDuration(s string) (time.Duration, error) {
	if ms, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(ms) || math.Abs(ms) > float64(math.MaxInt64/int64(time.Millisecond)) {
			return 0, errors.New("out of range")
		}
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if durationSyntax.MatchString(s) {
			// Well formed, and past what a time.Duration holds.
			return 0, errors.New("out of range (at most 2562047h)")
		}
		return 0, errors.New("want milliseconds (500) or a duration (500ms, 10s, 5m)")
	}
	return d, nil
}

// durationSyntax is time.ParseDuration's grammar: a duration it refuses
// that matches it overflowed.
var durationSyntax = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// quietFromEnv reports whether $IBSCRIPT_QUIET asks for no notices: set,
// and not "0" or "false".
func quietFromEnv() bool {
	v := os.Getenv("IBSCRIPT_QUIET")
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// checkArgCount refuses positional arguments a command does not take,
// before anything runs.
func (c *config) checkArgCount() error {
	n := len(c.args)
	extra := func(from int) error {
		what := "takes none"
		if from > 0 {
			what = fmt.Sprintf("takes %d", from)
		}
		topic := c.cmd
		if topic == "" {
			topic = "repl"
		}
		return fmt.Errorf("unexpected arguments %s (%s %s; ibscript help %s)", strings.Join(c.args[from:], " "), cmdWord(c.cmd), what, topic)
	}
	switch c.cmd {
	case "discover", "topology", "exporter", "tools", "repl":
		if n > 0 {
			return extra(0)
		}
	case "":
		if n > 0 && c.hasChunk {
			return fmt.Errorf("unexpected arguments %s after -e CHUNK", strings.Join(c.args, " "))
		}
	case "help":
		if n > 1 {
			return extra(1)
		}
	case "completion":
		if n != 1 || !slices.Contains(completionShells, c.args[0]) {
			return fmt.Errorf("want one shell: %s (ibscript completion bash)", strings.Join(completionShells, ", "))
		}
	}
	return nil
}

func cmdWord(cmd string) string {
	if cmd == "" {
		return "the REPL"
	}
	return cmd
}

// buildCommit is the commit a release build names with -ldflags "-X
// main.buildCommit=..." (release/build), for builds whose build
// information has none: Go stamps vcs.revision only when it builds in a
// git checkout (not a worktree, not with -buildvcs=false).
var buildCommit string

// versionLine is what --version prints: the release, and from the
// binary's build information the commit it was built from (with
// "-dirty" when the tree had changes) and the Go version.
func versionLine() string {
	commit, dirty, goVersion := buildCommit, false, runtime.Version()
	if commit == "" {
		commit = "unknown"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		commit += "-dirty"
	}
	return fmt.Sprintf("ibscript %s (commit %s, %s, %s/%s)", version, commit, goVersion, runtime.GOOS, runtime.GOARCH)
}
