package main

// The infiniband-diags tools (issue 19): `ibscript TOOL [options]`, or a
// link named TOOL to the ibscript binary. A tool written as one diag.Tool
// value is registered by tool_diag.go's adapter (docs/DESIGN.md); the
// others register themselves from their own file, tool_NAME.go, in an
// init(): registerTool(&Tool{...}). The
// options are parsed as getopt_long parses them for the C tools (combined
// short flags -xa, attached values -t100, --opt=v, --opt v, unambiguous
// prefixes of long options, --, arguments and options in any order), the
// infiniband-diags common options (-C, -P, -G, -D, -L, -s, -t, -d, -e, -v,
// -y, -h, -V, --node-name-map) and ibscript's own (--fabric, --format
// json, ...) once for every tool. The tools' data and text live in the
// diag package; a tool's Run only reads its options, calls diag and
// prints.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/host"
)

// Tool is one infiniband-diags tool.
type Tool struct {
	// Name is the C tool's name: the command word and the link name.
	Name string
	// Summary is the line `ibscript tools` shows.
	Summary string
	// Args is the usage's synopsis after "[options]", e.g. "<lid|guid>".
	Args string
	// Options are the tool's own options, in the order --help lists them.
	// One with the short letter or long name of a common option replaces
	// it (iblinkinfo's -G takes a port GUID; ibqueryerrors' -s a list).
	Options []Option
	// Exclude lists the common options' short letters (or long names,
	// separated by commas) the C tool does not take: "s,e" refuses -s and
	// -e as the C tool does.
	Exclude string
	// Schema is the base name of its JSON schema in docs/diag/ ("nodes":
	// docs/diag/nodes.schema.json); "" means the tool's name.
	Schema string
	// Example are arguments of a run on the bundled simulated fabric
	// (nil: none); TestToolSchemas runs the tool with them and
	// --format json and validates its output against the schema.
	Example []string
	// Run runs the tool and returns its exit status. Errors it prints
	// itself (inv.Errorf); the backend is opened on first inv.Env and
	// closed after Run.
	Run func(ctx context.Context, inv *Invocation) int
	// Script, when not "", is the usage line(s) of the infiniband-diags
	// shell script the tool is (ibhosts, ibswitches, ...): the script's
	// own option loop decides first (scriptArgs), and a usage error or
	// -h prints these lines on stdout, status 255, as the script does.
	Script string
	// ScriptArgs, when set, is the script's own option loop in place of
	// the node-list scripts' (scriptArgs).
	ScriptArgs func(args []string) string
	// ScriptStatus is the exit status of the script's usage; 0 is 255.
	ScriptStatus int
	// Wraps, when not "", is the C program the tool's script runs
	// (ibnetdiscover for the node lists, dump_fts for dump_lfts): the
	// script passes that program's IBEXIT lines on (ibExitAs), WrapsRuns
	// times (ibnodes runs two scripts; 0 is once).
	Wraps     string
	WrapsRuns int
	// OpenFail, when not nil, ends the tool as the C tool ends when its
	// local port cannot be opened (-C/-P naming none): nil is IBEXIT's
	// "PROG: iberror: failed: Failed to open 'CA' port 'N'", status 255.
	OpenFail func(inv *Invocation, s portSel) int
	// Notice, when not "", is what a wrapper script prints on stdout
	// after the C tool whatever its end, exiting 0 (dump_lfts and
	// dump_mfts after dump_fts): printed after a usage error, --help and
	// -V too, which then exit 0 as the script does.
	Notice string
}

// Option is one getopt_long option.
type Option struct {
	Short byte   // the short letter, 0 for a long-only option
	Long  string // the long name without "--", "" for a short-only option
	// Arg names the option's argument in --help ("<ms>"); "" means it
	// takes none.
	Arg string
	// Optional makes the argument optional (getopt's "::"): only an
	// attached one (-xVAL, --opt=VAL) is taken.
	Optional bool
	Help     string
}

// Key is how an Invocation names the option: its long name, else its
// short letter.
func (o *Option) Key() string {
	if o.Long != "" {
		return o.Long
	}
	return string(o.Short)
}

func (o *Option) spelling() string {
	if o.Long != "" {
		return "--" + o.Long
	}
	return "-" + string(o.Short)
}

// tools is the registry, filled by the tool files' init functions.
var tools = map[string]*Tool{}

// registerTool adds t to the registry; a second tool of the same name is
// a programming error.
func registerTool(t *Tool) {
	if _, dup := tools[t.Name]; dup {
		panic("ibscript: tool " + t.Name + " registered twice")
	}
	tools[t.Name] = t
}

// toolNames returns the registered tools' names, sorted.
func toolNames() []string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// toolArgv returns the command line run sees: the arguments, with the
// tool's name in front when the binary was invoked through a link named
// like a tool (argv[0] "iblinkinfo" runs `ibscript iblinkinfo`).
func toolArgv(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	if base := filepath.Base(args[0]); tools[base] != nil {
		return append([]string{base}, args[1:]...)
	}
	return args[1:]
}

// Keys of the common options an Invocation reads.
const (
	optFabric  = "fabric"
	optFormat  = "format"
	optCA      = "Ca"
	optPort    = "Port"
	optGUID    = "Guid"
	optDirect  = "Direct"
	optLID     = "Lid"
	optSMPort  = "sm_port"
	optTimeout = "timeout"
	optMKey    = "m_key"
	optPKeyIdx = "pkey-idx"
	optErrors  = "errors"
	optVerbose = "verbose"
	optDebug   = "debug"
	optHelp    = "help"
	optVersion = "version"
	optNameMap = "node-name-map"
	// optDiagsVersion is ibscript's: which infiniband-diags to behave as.
	optDiagsVersion = "diags-version"
)

// commonOptions are the infiniband-diags common options (ibdiag_common),
// then ibscript's own, as every tool's --help lists them after its own.
var commonOptions = []Option{
	configOption,
	{Short: 'C', Long: optCA, Arg: "<ca>", Help: "Ca name to use (the umad backend: --fabric umad:CA/PORT;\nelsewhere it must name the CA the backend opened)"},
	{Short: 'P', Long: optPort, Arg: "<port>", Help: "Ca port number to use"},
	{Short: 'G', Long: optGUID, Help: "use GUID address argument"},
	{Short: 'D', Long: optDirect, Help: "use Direct address argument (\"0,1,3\")"},
	{Short: 'L', Long: optLID, Help: "use LID address argument (the default)"},
	{Short: 's', Long: optSMPort, Arg: "<lid>", Help: "SM port lid"},
	{Short: 't', Long: optTimeout, Arg: "<ms>", Help: "timeout in ms"},
	{Short: 'y', Long: optMKey, Arg: "<key>", Help: "M_Key to use in request (better: $IBSCRIPT_MKEY)"},
	// -Y is current rdma-core's (#1759; ibdiag_common.c's common_opts:
	// its help wrapped where ibdiag_show_usage's pretty_print wraps it
	// at 74 columns, the trailing space included). Debian's 44 has none;
	// given or not, nothing 44 prints changes.
	{Short: 'Y', Long: optPKeyIdx, Arg: "<idx>", Help: "P_Key table index for outgoing SA/GMP MADs \n(default 0)"},
	{Short: 'e', Long: optErrors, Help: "show send and receive errors"},
	{Short: 'v', Long: optVerbose, Help: "increase verbosity level"},
	{Short: 'd', Long: optDebug, Help: "raise debug level (ibscript's --debug)"},
	{Short: 'h', Long: optHelp, Help: "help message"},
	{Short: 'V', Long: optVersion, Help: "show version"},
	{Long: optNameMap, Arg: "<file>", Help: "node name map file"},
	{Long: optFabric, Arg: "<uri>", Help: "ibscript's backend: auto, sim:PATH, umad:CA/PORT, ibsim:SOCK, replay:FILE"},
	{Long: optFormat, Arg: "<fmt>", Help: "text (the C tool's, default) or json (docs/diag/TOOL.schema.json)"},
	{Long: "retries", Arg: "<n>", Help: "MAD retries after the first try (default 3; with -t, 2: libibmad's 3 tries)"},
	{Long: "record", Arg: "<file>", Help: "record every MAD sent and received (ibscript --record)"},
	{Long: "allow-set", Help: "let Sets out on the kernel backend (audited)"},
	{Long: "audit", Arg: "<file>", Help: "append an audit line for every Set sent"},
	{Long: "max-mads", Arg: "<n>", Help: "send at most N MADs"},
	{Long: "time-limit", Arg: "<dur>", Help: "end the tool after DUR of wall-clock time (exit status 2)"},
	{Long: optDiagsVersion, Arg: "<44|current>", Help: "behave as Debian's infiniband-diags 44 (default) or current rdma-core where they differ\n(docs/diag.md; also $IBSCRIPT_DIAGS_VERSION)"},
	{Long: "quiet", Help: "no notice that auto mode uses the embedded simulated fabric (also $IBSCRIPT_QUIET=1)"},
}

// options returns the tool's option table: its own options, then the
// common ones it neither replaces nor excludes.
func (t *Tool) options() []Option {
	excluded := map[string]bool{}
	for _, e := range strings.Split(t.Exclude, ",") {
		if e = strings.TrimSpace(e); e != "" {
			excluded[e] = true
		}
	}
	out := slices.Clone(t.Options)
	for _, c := range commonOptions {
		if excluded[c.Long] || (c.Short != 0 && excluded[string(c.Short)]) {
			continue
		}
		taken := slices.ContainsFunc(t.Options, func(o Option) bool {
			return (c.Short != 0 && o.Short == c.Short) || (c.Long != "" && o.Long == c.Long)
		})
		if taken {
			// The tool's own option replaces the common one; a long
			// name it does not reuse stays (--Guid when -G is the
			// tool's), unless the tool uses the letter for something
			// else entirely.
			if c.Long != "" && !slices.ContainsFunc(t.Options, func(o Option) bool { return o.Long == c.Long }) &&
				!slices.ContainsFunc(t.Options, func(o Option) bool { return o.Short == c.Short && o.Long != "" }) {
				c.Short = 0
				out = append(out, c)
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// Invocation is one run of a tool: its parsed options and arguments, and
// the backend it opens on demand.
type Invocation struct {
	Tool *Tool
	// Prog is the name errors start with: "iblinkinfo" through a link,
	// "ibscript iblinkinfo" otherwise.
	Prog string
	// Args are the positional arguments, in order.
	Args           []string
	Stdout, Stderr io.Writer
	// JSON is --format json.
	JSON bool

	vals          map[string][]string // option key -> each value given ("" for flags), in order
	order         []OptionValue       // every option given, in command-line order
	c             *config
	b             *host.Host
	diagE         *diag.Env
	clearProgress func() // clears the progress line, when one is shown
}

// OptionValue is one option given: its Key and value ("" for a flag).
type OptionValue struct{ Key, Value string }

// Order returns every option given, in command-line order (for tools
// whose options accumulate across kinds, as ibqueryerrors' -s and -c).
func (inv *Invocation) Order() []OptionValue { return inv.order }

// Has reports whether the option (by Key) was given.
func (inv *Invocation) Has(key string) bool { _, ok := inv.vals[key]; return ok }

// Count is how many times the option was given (-vvv: 3).
func (inv *Invocation) Count(key string) int { return len(inv.vals[key]) }

// Value is the option's last value, "" when it was not given.
func (inv *Invocation) Value(key string) string {
	v := inv.vals[key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// Values are every value the option was given, in order.
func (inv *Invocation) Values(key string) []string { return inv.vals[key] }

// Int reads the option's last value as strtol(..., 0) does (decimal,
// 0x hex, 0 octal); an error names the option and the value.
func (inv *Invocation) Int(key string, def int64) (int64, error) {
	if !inv.Has(key) {
		return def, nil
	}
	s := inv.Value(key)
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a number", inv.spelling(key), s)
	}
	return v, nil
}

// spelling is how the command line spells the option of key.
func (inv *Invocation) spelling(key string) string {
	for _, o := range inv.Tool.options() {
		if o.Key() == key {
			if o.Short != 0 {
				return "-" + string(o.Short)
			}
			return o.spelling()
		}
	}
	return key
}

// Verbosity is how many -v were given.
func (inv *Invocation) Verbosity() int { return inv.Count(optVerbose) }

// ShowErrors is -e.
func (inv *Invocation) ShowErrors() bool { return inv.Has(optErrors) }

// SMLID is -s: the SM's LID, 0 when not given (ask the local port's
// PortInfo.MasterSMLID).
func (inv *Invocation) SMLID() (uint16, error) {
	if !inv.Has(optSMPort) {
		return 0, nil
	}
	return cSMLID(inv.Value(optSMPort))
}

// Target reads a destination argument as the C tools' -L (default), -G
// or -D say (diag.ParseAddress): a LID (decimal or 0x hex), a GUID, or a
// directed route "0,1,3" from the local port. what names the argument in
// errors.
func (inv *Invocation) Target(what, s string) (engine.Target, error) {
	return inv.address(what, inv.destKind(), s)
}

// destKind is how a destination argument is read, the last of -L, -G
// and -D given, as ibdiag_common's ibd_dest_type (-G -D reads a route,
// -D -L a LID).
func (inv *Invocation) destKind() diag.AddrKind {
	kind := diag.AddrLID
	for _, ov := range inv.order {
		switch ov.Key {
		case optLID:
			kind = diag.AddrLID
		case optGUID:
			kind = diag.AddrGUID
		case optDirect:
			kind = diag.AddrDR
		}
	}
	return kind
}

// Route reads -D's value as the C tools' own -D readers (iblinkinfo's
// and ibqueryerrors' resolve_portid_str) do: libibmad's str2drpath, as
// Target reads a -D destination argument.
func (inv *Invocation) Route() ([]uint8, error) {
	t, err := inv.address("-D", diag.AddrDR, inv.Value(optDirect))
	return t.Path, err
}

// address reads s as an address of kind as the C tools read it
// (diag.ParseAddress), warning on stderr where that is not what was
// typed.
func (inv *Invocation) address(what string, kind diag.AddrKind, s string) (engine.Target, error) {
	a, err := diag.ParseAddress(kind, s)
	if err != nil {
		return engine.Target{}, fmt.Errorf("%s: %w", what, err)
	}
	if a.ReadAs != "" {
		inv.Errorf("warning: %s %q read as %s, as the C tools read it", what, s, a.ReadAs)
	}
	return a.Target, nil
}

// ignoreArgs drops the arguments past the first n, as the C tools
// ignore them (iblinkinfo extra prints the whole fabric), saying so.
func (inv *Invocation) ignoreArgs(n int) {
	if len(inv.Args) <= n {
		return
	}
	inv.Errorf("warning: argument %q and any after it ignored (%s reads %d at most; the C tool ignores the rest)", inv.Args[n], inv.Tool.Name, n)
	inv.Args = inv.Args[:n]
}

// Dest reads the destination argument arg as Target does and, for a
// GUID, resolves it to its port's LID before any query, as the C tools'
// resolve_portid_str does (through the SA's PathRecord, so their headers
// say "Lid N"). What cannot be read or resolved is the C tool's IBEXIT:
// a diag.ToolError "PHRASE ARG", ARG as typed (phrase is the tool's own,
// e.g. "can't resolve destination port").
func (inv *Invocation) Dest(ctx context.Context, arg, phrase string) (engine.Target, error) {
	t, err := inv.Target("destination", arg)
	if err != nil {
		return t, &diag.ToolError{Msg: phrase + " " + arg, Err: err}
	}
	if t.Kind != engine.ByGUID {
		return t, nil
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return t, err
	}
	if t, err = env.ResolveTarget(ctx, t); err != nil {
		// libibmad's resolve_guid says so first, as the C tools print it.
		fmt.Fprintln(inv.Stderr, "ibwarn: "+diag.PathQueryFailed)
		return t, &diag.ToolError{Msg: phrase + " " + arg, Err: err}
	}
	return t, nil
}

// Env opens the backend (--fabric, or -C/-P on the kernel's umad ports)
// on first use and returns the diag environment on it.
func (inv *Invocation) Env(ctx context.Context) (*diag.Env, error) {
	if inv.diagE != nil {
		return inv.diagE, nil
	}
	c := inv.c
	if s := c.portSel; s != nil && strings.HasPrefix(c.fabricURI, "umad:") {
		if _, ok := s.uri(); !ok {
			return nil, &portOpenError{sel: *s, err: fmt.Errorf("-P %d: no umad port has that number (0..254)", s.port)}
		}
	}
	if c.diagsVersion == diag.VersionCurrent {
		c.smi = smiMode(inv.Tool.Name)
	}
	b, err := openBackend(ctx, c, inv.Stderr)
	if err != nil {
		return nil, openEnvError(c, err)
	}
	if !strings.HasPrefix(c.fabricURI, "umad:") {
		if err := checkPortSel(c.portSel, b.Session().Port(), c.fabricURI); err != nil {
			b.Close()
			return nil, err
		}
	}
	inv.b = b
	inv.diagE = &diag.Env{Session: b.Session(), NodeNames: inv.c.names, Ports: b.Fabric().Ports, Version: inv.c.diagsVersion}
	if ps, ok := b.Raw().(portSpeeder); ok {
		inv.diagE.PortSpeed = ps.PortSpeed
	}
	if isTerminal(inv.Stderr) {
		prog := &progressLine{w: inv.Stderr}
		inv.diagE.Progress = func(nodes, _ int) { prog.update(nodes, 0, inv.Tool.Name+": nodes found") }
		inv.clearProgress = prog.clear
	}
	return inv.diagE, nil
}

// portSpeeder is a backend that answers ibv_query_port_speed (current
// ibstat's "Effective speed"): the embedded simulator. The kernel's umad
// backend does not: the verb is a uverbs ioctl on a verbs context, which
// only the provider's user-space driver (mlx5, efa) opens, so there, as
// on ibsim, ibstat leaves the line out as it does for a provider without
// the verb.
type portSpeeder interface {
	PortSpeed(ctx context.Context, ca string, port int) (uint64, error)
}

// argv0 is the name a C tool's IBEXIT line starts with: the tool as
// invoked (argv[0], a path included) through a link, and TOOL for
// `ibscript TOOL`, as the C tool typed by its name says.
func (inv *Invocation) argv0() string {
	if inv.c != nil && inv.c.viaLink && len(os.Args) > 0 {
		return os.Args[0]
	}
	return inv.Tool.Name
}

// Errorf prints "PROG: message" on stderr.
func (inv *Invocation) Errorf(format string, args ...any) {
	fmt.Fprintf(inv.Stderr, "%s: %s\n", inv.Prog, fmt.Sprintf(format, args...))
}

// Fail prints err and returns exit status 2, the status of a tool that
// could not run (the C tools exit with IBEXIT_ERR or a usage status).
func (inv *Invocation) Fail(err error) int {
	if inv.clearProgress != nil {
		inv.clearProgress()
	}
	if pe := (*portOpenError)(nil); errors.As(err, &pe) {
		return inv.openFailed(pe)
	}
	inv.Errorf("%s", hinted(err))
	return exitError
}

// Output prints a tool's data: as JSON with --format json, else through
// text (the C tool's text). err is what gathering the data returned: a
// DiscoveryErrors (part of the fabric missed) still prints what was
// found, then says what was missed and makes the status 1; any other
// error prints nothing. bad makes the status 1 too (ibqueryerrors'
// errors beyond a threshold).
func (inv *Invocation) Output(v any, err error, text func(io.Writer) error, bad bool) int {
	var missed diag.DiscoveryErrors
	if err != nil && !errors.As(err, &missed) {
		return inv.Fail(err)
	}
	if inv.clearProgress != nil {
		inv.clearProgress()
	}
	return inv.OutputTo(inv.Stdout, v, text, missed, bad)
}

// OutputTo is Output's printing, to out.
func (inv *Invocation) OutputTo(out io.Writer, v any, text func(io.Writer) error, missed diag.DiscoveryErrors, bad bool) int {
	var err error
	if inv.JSON {
		err = diag.WriteJSON(out, v)
	} else {
		err = text(out)
	}
	switch {
	case err != nil:
		return inv.Fail(err)
	case missed != nil:
		inv.Errorf("%v", missed)
		return exitFailed
	case bad:
		return exitFailed
	}
	return exitOK
}

// parseToolArgs parses argv as getopt_long parses it for the tool's
// option table: options and arguments in any order (GNU permutation),
// "--" ending the options, "-" an argument.
func parseToolArgs(t *Tool, argv []string) (vals map[string][]string, args []string, err error) {
	vals, args, _, err = parseToolArgsOrdered(t, argv)
	return vals, args, err
}

// unknownLongError is a long option the tool does not have, with getopt's
// text; near are the nearest the tool has, for the hint after it.
type unknownLongError struct {
	name string
	near []string
}

func (e *unknownLongError) Error() string { return fmt.Sprintf("unrecognized option '--%s'", e.name) }

// parseToolArgsOrdered is parseToolArgs also returning every option in
// the order given.
func parseToolArgsOrdered(t *Tool, argv []string) (vals map[string][]string, args []string, order []OptionValue, err error) {
	opts := t.options()
	vals = map[string][]string{}
	set := func(o *Option, v string) {
		vals[o.Key()] = append(vals[o.Key()], v)
		order = append(order, OptionValue{o.Key(), v})
	}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			// ibscript's own --fabric is taken after "--" too (the C
			// tool has no such option, and no argument of one is
			// "--fabric"): `TOOL -- ARGS --fabric URI` runs on URI, not
			// on the default fabric with two more arguments ignored.
			rest := argv[i+1:]
			fab, _ := matchLong(opts, optFabric)
			for j := 0; j < len(rest); j++ {
				switch v, ok := strings.CutPrefix(rest[j], "--"+optFabric+"="); {
				case fab != nil && ok:
					set(fab, v)
				case fab != nil && rest[j] == "--"+optFabric && j+1 < len(rest):
					j++
					set(fab, rest[j])
				default:
					args = append(args, rest[j])
				}
			}
			return vals, args, order, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			o, err := matchLong(opts, name)
			if err != nil {
				return nil, nil, nil, err
			}
			switch {
			case o.Arg == "" && hasVal:
				return nil, nil, nil, fmt.Errorf("option '--%s' doesn't allow an argument", o.Long)
			case o.Arg == "" || o.Optional || hasVal:
				set(o, val)
			case i+1 < len(argv) && !fabricWord(o, argv[i+1]):
				i++
				set(o, argv[i])
			default:
				return nil, nil, nil, fmt.Errorf("option '--%s' requires an argument %s", o.Long, o.Arg)
			}
		case len(a) > 1 && a[0] == '-':
		shorts:
			for j := 1; j < len(a); j++ {
				o := matchShort(opts, a[j])
				if o == nil {
					return nil, nil, nil, fmt.Errorf("invalid option -- '%c'", a[j])
				}
				if o.Arg == "" {
					set(o, "")
					continue
				}
				switch {
				case j+1 < len(a):
					set(o, a[j+1:])
				case o.Optional:
					set(o, "")
				case i+1 < len(argv) && !fabricWord(o, argv[i+1]):
					i++
					set(o, argv[i])
				default:
					return nil, nil, nil, fmt.Errorf("option requires an argument -- '%c' %s", a[j], o.Arg)
				}
				break shorts // the rest of a was the value
			}
		default:
			args = append(args, a)
		}
	}
	return vals, args, order, nil
}

// fabricWord reports whether w, the word after option o that wants a
// value, is ibscript's own --fabric instead: `TOOL -S --fabric URI` is
// -S without its value, as the C tool's `TOOL -S` is, not -S "--fabric"
// on the default fabric (no value of a C tool's option is "--fabric").
func fabricWord(o *Option, w string) bool {
	return o.Long != optFabric && (w == "--"+optFabric || strings.HasPrefix(w, "--"+optFabric+"="))
}

func matchShort(opts []Option, c byte) *Option {
	for i := range opts {
		if opts[i].Short == c && c != 0 {
			return &opts[i]
		}
	}
	return nil
}

// matchLong finds a long option by its name or, as getopt_long does, an
// unambiguous prefix of it.
func matchLong(opts []Option, name string) (*Option, error) {
	var found []*Option
	for i := range opts {
		l := opts[i].Long
		if l == "" {
			continue
		}
		if l == name {
			return &opts[i], nil
		}
		if name != "" && strings.HasPrefix(l, name) {
			found = append(found, &opts[i])
		}
	}
	switch len(found) {
	case 0:
		var longs []string
		for _, o := range opts {
			if o.Long != "" {
				longs = append(longs, "--"+o.Long)
			}
		}
		return nil, &unknownLongError{name: name, near: bindings.Suggest("--"+name, longs)}
	case 1:
		return found[0], nil
	}
	var names []string
	for _, o := range found {
		names = append(names, "'--"+o.Long+"'")
	}
	return nil, fmt.Errorf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(names, " "))
}

// toolUsage is the tool's --help, laid out as ibdiag_show_usage lays it
// out.
func toolUsage(t *Tool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nUsage: %s [options] %s\n\n", t.Name, t.Args)
	fmt.Fprintf(&b, "(ibscript %s: %s)\n\nOptions:\n", t.Name, t.Summary)
	for _, o := range t.options() {
		var name string
		switch {
		case o.Long != "" && o.Short != 0:
			name = fmt.Sprintf("--%s, -%c", o.Long, o.Short)
		case o.Long != "":
			name = "--" + o.Long
		default:
			name = "-" + string(o.Short)
		}
		if o.Arg != "" {
			name += " " + o.Arg
		}
		col := fmt.Sprintf("  %-22s  ", name)
		lines := strings.Split(o.Help, "\n")
		b.WriteString(col + lines[0] + "\n")
		for _, l := range lines[1:] {
			b.WriteString(strings.Repeat(" ", len(col)) + l + "\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// toolsList is `ibscript tools`.
func toolsList() string {
	var b strings.Builder
	b.WriteString("usage: ibscript TOOL [options] [args], or a link named TOOL to ibscript\n\n")
	b.WriteString("The infiniband-diags tools, with the C tools' options and text (docs/diag.md);\n")
	b.WriteString("--format json prints the data as JSON; ibscript TOOL --help lists a tool's options.\n\n")
	for _, n := range toolNames() {
		fmt.Fprintf(&b, "  %-16s %s\n", n, tools[n].Summary)
	}
	return b.String()
}

// prepareTool parses the tool's command line into c. done means the run
// ends here with code (--help, -V, a usage error).
func prepareTool(c *config, stdout, stderr io.Writer) (inv *Invocation, code int, done bool) {
	t := c.tool
	prog := "ibscript " + t.Name
	if c.viaLink {
		prog = t.Name
	}
	inv = &Invocation{Tool: t, Prog: prog, Stdout: stdout, Stderr: stderr, c: c}
	defer func() {
		if done && t.Notice != "" {
			fmt.Fprint(stdout, t.Notice)
			code = exitOK
		}
	}()
	if t.Script != "" {
		check := scriptArgs
		if t.ScriptArgs != nil {
			check = t.ScriptArgs
		}
		if msg := check(c.args); msg != "" {
			return nil, scriptUsage(inv, msg), true
		}
	}
	vals, args, order, err := parseToolArgsOrdered(t, c.args)
	if err != nil {
		hint := ""
		if ue := (*unknownLongError)(nil); errors.As(err, &ue) && len(ue.near) > 0 {
			hint = "did you mean " + strings.Join(ue.near, " or ") + "? "
		}
		fmt.Fprintf(stderr, "%s: %v\n(%s%s --help lists the options)\n", prog, err, hint, prog)
		return nil, exitError, true
	}
	inv.vals, inv.Args, inv.order = vals, args, order
	if inv.Has(optHelp) {
		// As ibdiag_show_usage: on stderr, status 2 (`ibscript help
		// TOOL` prints it on stdout).
		fmt.Fprint(stderr, toolUsage(t))
		return nil, exitError, true
	}
	if inv.Has(optVersion) {
		// As process_opt: on stderr, status 0.
		fmt.Fprintf(stderr, "%s (ibscript %s)\n", t.Name, version)
		return nil, exitOK, true
	}
	inv.applyConfig()
	if err := inv.configure(c); err != nil {
		if ce := (*commonOptError)(nil); errors.As(err, &ce) {
			return nil, ibExitAs(inv, ce.msg), true
		}
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return nil, exitError, true
	}
	return inv, 0, false
}

// libibmadTries is how many times libibmad sends a MAD before it gives up
// (MAD_DEF_RETRIES, a count of tries): a tool's -t is a timeout per try
// of these.
const libibmadTries = 3

// configure moves the common options into the run's config.
func (inv *Invocation) configure(c *config) error {
	if inv.Has(optFabric) {
		c.fabricURI = inv.Value(optFabric)
	}
	switch f := inv.Value(optFormat); f {
	case "", "text":
	case "json":
		inv.JSON = true
	default:
		return fmt.Errorf("--format %q: want text or json", f)
	}
	if inv.Has(optCA) || inv.Has(optPort) {
		sel := parsePortSel(inv.Value(optCA), inv.Value(optPort), inv.Has(optPort))
		scheme, rest, _ := strings.Cut(c.fabricURI, ":")
		if scheme == "umad" && !strings.Contains(rest, "/") && !inv.Has(optCA) {
			sel.ca = rest // --fabric umad:CA -P N
		}
		c.portSel = &sel
		if scheme == "auto" || scheme == "" || (scheme == "umad" && !strings.Contains(rest, "/")) {
			// The kernel's ports: -C/-P are the port to open (one no
			// umad port can be fails as it opens, in Env).
			if uri, ok := sel.uri(); ok {
				c.fabricURI = uri
			} else {
				c.fabricURI = "umad:" + sel.ca
			}
		}
	}
	if inv.Has(optTimeout) {
		ms, err := cTimeout(inv.Value(optTimeout))
		if err != nil {
			return err
		}
		c.timeout = time.Duration(ms) * time.Millisecond
	}
	if inv.Has(optSMPort) {
		if _, err := cSMLID(inv.Value(optSMPort)); err != nil {
			return err
		}
	}
	if inv.Has("retries") {
		n, err := strconv.Atoi(inv.Value("retries"))
		if err != nil {
			return fmt.Errorf("--retries %q: want a number", inv.Value("retries"))
		}
		c.retries = n
	} else if inv.Has(optTimeout) && c.retries == engine.DefaultRetries {
		// -t as the C tool's: libibmad's tries of it (MAD_DEF_RETRIES
		// counts tries, the first included), so a MAD nothing answers
		// costs no longer than in the C tool.
		c.retries = libibmadTries - 1
	}
	if err := c.readKeyOpts(inv); err != nil {
		return err
	}
	if inv.Has(optNameMap) {
		c.nameMap = inv.Value(optNameMap)
	}
	if inv.Has(optDebug) {
		c.debug = true
	}
	c.record = inv.Value("record")
	c.audit = inv.Value("audit")
	c.allowSet = inv.Has("allow-set")
	if inv.Has("quiet") {
		c.quiet = true
	}
	if inv.Has("max-mads") {
		n, err := strconv.ParseUint(inv.Value("max-mads"), 10, 64)
		if err != nil {
			return fmt.Errorf("--max-mads %q: want a number", inv.Value("max-mads"))
		}
		c.maxMADs = n
	}
	if inv.Has("time-limit") {
		d, err := parseDuration(inv.Value("time-limit"))
		if err != nil || d <= 0 {
			return fmt.Errorf("--time-limit %q: want a positive duration (30s, 2m; a bare number is milliseconds)", inv.Value("time-limit"))
		}
		c.timeLimit = d
	}
	return nil
}

// readKeyOpts reads -y into c.mkey, -Y (current rdma-core's) into
// c.pkeyIndex, and c.diagsVersion from --diags-version, else
// $IBSCRIPT_DIAGS_VERSION (unset is 44).
func (c *config) readKeyOpts(inv *Invocation) error {
	if inv.Has(optMKey) {
		k, err := cMKey(inv.Value(optMKey))
		if err != nil {
			return err
		}
		c.mkey = strconv.FormatUint(k, 10)
	}
	if inv.Has(optPKeyIdx) {
		idx, err := cPKeyIdx(inv.Value(optPKeyIdx))
		if err != nil {
			return err
		}
		c.pkeyIndex = idx
	}
	what, v := "--"+optDiagsVersion, inv.Value(optDiagsVersion)
	if !inv.Has(optDiagsVersion) {
		what, v = "$IBSCRIPT_DIAGS_VERSION", os.Getenv("IBSCRIPT_DIAGS_VERSION")
		if v == "" {
			return nil
		}
	}
	ver, err := diag.ParseVersion(v)
	if err != nil {
		return fmt.Errorf("%s %q: want 44 or current", what, v)
	}
	c.diagsVersion = ver
	return nil
}

// runTool runs the parsed tool; the backend, if it opened one, is closed
// after, its recording and audit checked as every command's are.
func runTool(ctx context.Context, inv *Invocation) (code int) {
	oneShotGC(inv.c)
	defer func() {
		if inv.clearProgress != nil {
			inv.clearProgress()
		}
		if inv.b != nil {
			code = finish(inv.b, code, inv.Stderr)
		}
	}()
	return inv.Tool.Run(ctx, inv)
}
