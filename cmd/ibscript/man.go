package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// writeMan writes the ibscript(1) manual page in roff, from the same help
// texts the command prints, so the two never disagree. docs/ibscript.1 is
// this output; a test keeps it fresh.
func writeMan(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p(".TH IBSCRIPT 1 \"\" \"ibscript %s\" \"User Commands\"\n", version)
	p(".SH NAME\nibscript \\- Lua-scriptable host for InfiniBand management datagrams\n")
	// The synopsis is the command table's (cli.go), as the help and
	// the completions are.
	p(".SH SYNOPSIS\n")
	p(".B ibscript\n[\\fIflags\\fR] [\\fB\\-e\\fR \\fICHUNK\\fR]\n")
	for _, c := range commandTable {
		p(".br\n.B ibscript\n[\\fIflags\\fR] \\fB%s\\fR", c.name)
		if c.args != "" {
			p(" %s", synopsisArgs(c.args))
		}
		p("\n")
	}
	p(".br\n.B ibscript\n\\fITOOL\\fR [\\fIthe C tool's options\\fR] [\\fB\\-\\-fabric\\fR \\fIURI\\fR] [\\fB\\-\\-format json\\fR]\n")
	p(".PP\n\\fIflags\\fR:\n")
	for i, f := range flagTable {
		if f.name == "h" {
			continue // -h is --help's
		}
		if i > 0 {
			p(" ")
		}
		p("[\\fB%s\\fR", strings.ReplaceAll(dash(f.name), "-", "\\-"))
		if f.arg != "" {
			p(" \\fI%s\\fR", f.arg)
		}
		p("]")
	}
	p("\n")
	p(".SH DESCRIPTION\n")
	p("ibscript sends, receives and decodes InfiniBand MADs from Lua: libibumad's calls (module \\fBumad\\fR),\n")
	p("typed SMP and PerfMgt queries (\\fBsmp\\fR, \\fBperf\\fR), fabric discovery (\\fBfabric\\fR) and validation plans.\n")
	p("It runs against real HCAs, ibsim, or a fabric simulated inside the process, the default on a host\n")
	p("without InfiniBand ports. With no command it opens an interactive REPL.\n")
	p(".SH COMMANDS\n")
	cmds := make([]string, 0, len(commandHelp))
	for c := range commandHelp {
		cmds = append(cmds, c)
	}
	sort.Strings(cmds)
	for _, c := range cmds {
		p(".SS %s\n", c)
		p(".nf\n%s.fi\n", roffEscape(commandHelp[c]))
	}
	p(".SH TOOLS\n")
	p("The infiniband-diags tools, run as \\fBibscript\\fR \\fITOOL\\fR or through a link named \\fITOOL\\fR to ibscript,\n")
	p("take the C tool's options (parsed as getopt_long parses them), its common options\n")
	p("(\\fB-C\\fR, \\fB-P\\fR, \\fB-G\\fR, \\fB-D\\fR, \\fB-L\\fR, \\fB-s\\fR, \\fB-t\\fR, \\fB-y\\fR, \\fB-e\\fR, \\fB-v\\fR, \\fB-d\\fR, \\fB-h\\fR, \\fB-V\\fR, \\fB--node-name-map\\fR)\n")
	p("and ibscript's \\fB--fabric\\fR and \\fB--format json\\fR, print the C tool's text byte for byte and exit as it does;\n")
	p("docs/diag.md names every deliberate difference. \\fBibscript\\fR \\fITOOL\\fR \\fB--help\\fR lists a tool's options.\n")
	for _, n := range toolNames() {
		p(".TP\n.B %s\n%s\n", n, roffEscape(tools[n].Summary))
	}
	p(".SH OPTIONS\n.nf\n%s.fi\n", roffEscape(section(usage, "Flags")))
	p(".SH EXIT STATUS\n0 all passed, 1 a check failed, 2 the run itself failed (bad script, bad flags, unreachable fabric) or a check could not read what it needed (no answer after every try, answers that could not be verified).\n")
	p(".SH EXAMPLES\n")
	for _, ex := range manExamples {
		p(".TP\n.B %s\n%s\n", roffEscape(ex[0]), roffEscape(ex[1]))
	}
	p(".SH ENVIRONMENT\n")
	for _, v := range environment {
		p(".TP\n.B %s\n%s\n", v[0], roffEscape(v[1]))
	}
	p(".SH FILES\n.TP\n.I docs/lua-api.md\nthe Lua API reference, generated from the modules' registration tables.\n")
	p(".SH SEE ALSO\n.BR ibnetdiscover (8),\n.BR iblinkinfo (8),\n.BR ibqueryerrors (8),\n.BR ibswitches (8),\n.BR smpquery (8),\n.BR perfquery (8),\n.BR umad_recv (3),\n.BR ibsim (1)\n")
	return bw.Flush()
}

// section returns the lines of text from the one starting with title to
// the next blank line followed by an unindented line.
func section(text, title string) string {
	i := strings.Index(text, title)
	if i < 0 {
		return ""
	}
	s := text[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j+1]
	}
	return s
}

// roffEscape makes literal text safe in roff: backslashes, and lines that
// start with a dot or quote.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\e")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = "\\&" + l
		}
	}
	return strings.Join(lines, "\n")
}

// environment lists the variables ibscript reads, for the manual page.
var environment = [][2]string{
	{"XDG_CONFIG_HOME", "where the REPL keeps its history (ibscript/history, mode 0600); default ~/.config."},
	{"IBSCRIPT_MKEY", "the M_Key SMPs carry (better than --mkey, which shows in ps); never printed. Scripts cannot read it: os.getenv returns nil for every IBSCRIPT_*KEY* variable."},
	{"IBSCRIPT_SMKEY", "the SM_Key SA requests carry (better than --smkey, which shows in ps); never printed, and unreadable by scripts as IBSCRIPT_MKEY."},
	{"IBSCRIPT_CCKEY", "the CC_Key Congestion Control requests carry (better than --cckey, which shows in ps); never printed, and unreadable by scripts as IBSCRIPT_MKEY."},
	{"IBSIM_SOCKNAME", "the ibsim socket name for --fabric ibsim: without one (then \"sim\"), as umad2sim reads it."},
	{"SIM_HOST", "the ibsim node to attach to when --fabric ibsim: names none, as umad2sim reads it."},
	{"IBSIM_SERVER_NAME, IBSIM_SERVER_PORT", "ibsim's UDP mode: the host (and port) of a remote ibsim, as umad2sim reads them."},
	{"NO_COLOR", "when set, the text report has no colours even on a terminal."},
	{"IBSCRIPT_QUIET", "when set (and not 0 or false), as --quiet: no notice that auto mode uses the embedded simulated fabric."},
	{"GOGC, GOMEMLIMIT", "when set, they replace the collector settings run and discover choose for themselves."},
}

// manExamples are the manual page's EXAMPLES, command and what it does;
// TestDocExamples runs each from the repository root.
var manExamples = [][2]string{
	{"ibscript run scripts/validate.lua", "validate the fabric (the bundled simulated one on a host without InfiniBand ports): every check of scripts/checks, a text report, exit status 0, 1 or 2."},
	{"ibscript run scripts/validate.lua --format junit --arg width=4X > validate.xml", "the same for a CI test reporter, expecting 4X links."},
	{"ibscript discover --fabric sim:tests/topologies/net.2sw2path4hca > fabric.topo", "discover a fabric and save it in ibnetdiscover's format..."},
	{"ibscript run --fabric sim:tests/topologies/net.2sw2path4hca scripts/checks/topology.lua --arg reference=fabric.topo", "...and later compare the fabric with it."},
	{"ibscript -e 'print(smp.nodeinfo(\"lid:1\").node_guid)'", "one query, as smpquery nodeinfo 1 would make it."},
	{"ibscript --fabric sim: -e 'sim.faults{loss=0.05} print(#fabric.discover().nodes)'", "discovery with 5% of the MADs lost, on the simulator."},
	{"ibscript ibswitches --fabric sim:tests/topologies/net.mixed-router", "list the switches as ibswitches does (here on a simulated fabric; on a host with HCAs, -C and -P pick the port)."},
	{"ibscript topology --fabric sim:tests/topologies/fattree-50.net --format slurm-conf", "write Slurm's topology.conf from the fabric (--node-name-map names the hosts; --load FILE reads a saved fabric) (docs/topology.md says which switches are leaves and how hosts are named); --format dot | dot -Tsvg draws it."},
	{"ibscript exporter --interval 1s --node-name-map /etc/opensm/ib-node-name-map", "serve every linked switch port's counters to Prometheus on :9315/metrics, swept every second (curl localhost:9315/metrics)."},
}

// synopsisArgs renders a command's arguments for the synopsis: words in
// capitals (FILE, ARGS) are placeholders, in italics; the others (merge,
// bash, -) are typed as they are, in bold.
func synopsisArgs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			j := i + 1
			for j < len(s) && (s[j] == '_' || 'a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z' || '0' <= s[j] && s[j] <= '9' ||
				s[j] == '.' && j+1 < len(s) && s[j+1] != '.') {
				j++
			}
			w := s[i:j]
			font := "B"
			if 'A' <= c && c <= 'Z' {
				font = "I"
			}
			fmt.Fprintf(&b, "\\f%s%s\\fR", font, strings.ReplaceAll(w, "-", "\\-"))
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}
