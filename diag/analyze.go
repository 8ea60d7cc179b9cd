package diag

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/analyze"
	"github.com/ibscript/ibscript/topo/ibndcache"
)

// AnalyzeSchema names the JSON layout of Analysis.
const AnalyzeSchema = "ibscript.analyze.v1"

// analyzeChecks are the analyses Analyze runs, in order.
var analyzeChecks = []string{"credit-loops", "routes", "multicast", "balance", "fat-tree"}

// AnalyzeChecks returns the analyses Analyze runs, in order.
func AnalyzeChecks() []string { return slices.Clone(analyzeChecks) }

// AnalyzeOptions say what Analyze runs on.
type AnalyzeOptions struct {
	// Checks are the analyses (AnalyzeChecks()); empty means all of them.
	Checks []string `lua:"checks"`
	// Load is a saved fabric (a snapshot, an ibnetdiscover topology file
	// or libibnetdisc's cache) to analyse instead of the live one. None
	// has forwarding tables: the checks that follow routes fail on it,
	// saying so.
	Load string `lua:"load"`
	// NoSL2VL leaves the live fabric's SLtoVLMappingTables unread: the
	// credit-loop search takes every SL on VL 0.
	NoSL2VL bool `lua:"no_sl2vl"`
	// Fabric, when set, is the saved fabric already read (Load names it):
	// a caller with its own rules for opening files (the Lua bindings'
	// allowed paths, a topology's included files) reads it itself.
	Fabric *topo.Fabric
}

// Analysis is what Analyze found: one entry per check, and the checks
// that could not run with their error.
type Analysis struct {
	Schema      string                   `json:"schema"`
	Source      string                   `json:"source"` // "live" or the file loaded
	Nodes       int                      `json:"nodes"`
	CreditLoops *analyze.CreditLoops     `json:"credit_loops,omitempty"`
	Routes      *analyze.RouteReport     `json:"routes,omitempty"`
	Multicast   *analyze.MulticastReport `json:"multicast,omitempty"`
	Balance     *analyze.BalanceReport   `json:"balance,omitempty"`
	FatTree     *analyze.FatTreeReport   `json:"fat_tree,omitempty"`
	// Errors name the checks that could not run (a saved fabric has no
	// LFTs) and the tables that could not be read.
	Errors []string `json:"errors"`

	named []string // the checks the options named
}

// Failed reports whether a check found a fault or could not run. Balance
// and the fat-tree shape describe the fabric (a ring is no fat tree, and
// its switches' loads differ by design): they count only when named in
// AnalyzeOptions.Checks.
func (a *Analysis) Failed() bool {
	named := func(c string) bool { return slices.Contains(a.named, c) }
	return len(a.Errors) > 0 || (a.CreditLoops != nil && a.CreditLoops.Count > 0) ||
		(a.Routes != nil && (a.Routes.Count > 0 || a.Routes.Loops > 0)) ||
		(a.Multicast != nil && a.Multicast.Count > 0) ||
		(named("balance") && a.Balance != nil && a.Balance.Unbalanced > 0) ||
		(named("fat-tree") && a.FatTree != nil && len(a.FatTree.Problems) > 0)
}

// LoadSaved reads a saved fabric: libibnetdisc's cache (by its magic),
// else a snapshot or an ibnetdiscover / ibsim topology file (topo.Load).
func LoadSaved(path string) (*topo.Fabric, error) { return LoadSavedWith(path, topo.Load) }

// LoadSavedWith is LoadSaved reading topology files and snapshots with
// load.
func LoadSavedWith(path string, load func(string) (*topo.Fabric, error)) (*topo.Fabric, error) {
	f, err := topo.OpenFile(path)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	_, rerr := io.ReadFull(f, magic[:])
	f.Close()
	if rerr == nil && binary.LittleEndian.Uint32(magic[:]) == ibndcache.Magic {
		cf, err := ibndcache.Read(path)
		if err != nil {
			return nil, err
		}
		return cf.Fabric(path)
	}
	return load(path)
}

// Analyze runs the routing analyses on the live fabric (discovered, its
// LFTs, MFTs and SL2VL tables read) or on a saved one.
func Analyze(ctx context.Context, e *Env, o AnalyzeOptions) (*Analysis, error) {
	checks := o.Checks
	if len(checks) == 0 {
		checks = analyzeChecks
	}
	for _, c := range checks {
		if !slices.Contains(analyzeChecks, c) {
			return nil, fmt.Errorf("unknown check %q (want %s)", c, strings.Join(analyzeChecks, ", "))
		}
	}
	a := &Analysis{Schema: AnalyzeSchema, Source: "live", Errors: []string{}, named: o.Checks}
	var f *topo.Fabric
	var t analyze.Tables
	if o.Fabric != nil || o.Load != "" {
		f = o.Fabric
		if f == nil {
			var err error
			if f, err = LoadSaved(o.Load); err != nil {
				return nil, err
			}
		}
		f.Rename(e.names())
		a.Source = o.Load
	} else {
		d, err := e.Discover(ctx)
		if err != nil {
			return nil, err
		}
		// Routes through what discovery missed are unknown, never
		// guessed: the analyses count them; the run says why.
		for _, te := range d.Errors {
			a.Errors = append(a.Errors, fmt.Sprintf("discovery: %s", te))
		}
		f = d.Fabric
		t = e.routingTables(ctx, d, checks, !o.NoSL2VL, a)
	}
	a.Nodes = len(f.Nodes)
	for _, c := range checks {
		if err := a.run(c, f, t); err != nil {
			if a.Source != "live" {
				err = fmt.Errorf("%w; %s is %s", err, a.Source, savedKind(a.Source))
			}
			a.Errors = append(a.Errors, fmt.Sprintf("%s: %v", c, err))
		}
	}
	return a, nil
}

// savedKind names what a saved fabric file is, for the errors of the
// checks it has no tables for.
func savedKind(path string) string {
	f, err := topo.OpenFile(path)
	if err != nil {
		return "a saved fabric"
	}
	defer f.Close()
	var head [64]byte
	n, _ := io.ReadFull(f, head[:])
	b := bytes.TrimSpace(head[:n])
	switch {
	case n >= 4 && binary.LittleEndian.Uint32(head[:4]) == ibndcache.Magic:
		return "an ibnetdiscover --cache file (nodes, ports and links)"
	case len(b) > 0 && b[0] == '{':
		return "a snapshot (nodes, ports and links)"
	}
	return "a topology file (nodes and links)"
}

func (e *Env) names() map[uint64]string {
	if e == nil {
		return nil
	}
	return e.NodeNames
}

// routingTables reads what the checks need from the live fabric.
func (e *Env) routingTables(ctx context.Context, d *engine.Discovery, checks []string, sl2vl bool, a *Analysis) analyze.Tables {
	var t analyze.Tables
	add := func(what string, errs []engine.TargetError) {
		for _, te := range errs {
			a.Errors = append(a.Errors, fmt.Sprintf("%s: %s", what, te))
		}
	}
	need := func(cs ...string) bool {
		return slices.ContainsFunc(checks, func(c string) bool { return slices.Contains(cs, c) })
	}
	if need("credit-loops", "routes", "balance") {
		l := e.Session.LFTs(ctx, d, nil)
		add("LinearForwardingTable", l.Errors)
		t.LFT = &l.ForwardingTables
	}
	if need("credit-loops", "multicast") {
		m := e.Session.MFTs(ctx, d, nil)
		add("MulticastForwardingTable", m.Errors)
		t.MFT = &m.MulticastTables
	}
	if need("credit-loops") && sl2vl {
		s := e.Session.SL2VLs(ctx, d, nil)
		add("SLtoVLMappingTable", s.Errors)
		t.SL2VL = &s.SL2VLTables
	}
	return t
}

func (a *Analysis) run(check string, f *topo.Fabric, t analyze.Tables) error {
	var err error
	switch check {
	case "credit-loops":
		if t.LFT == nil {
			return analyze.ErrNoLFT
		}
		a.CreditLoops, err = analyze.FindCreditLoops(f, t)
	case "routes":
		a.Routes, err = analyze.ValidateRoutes(f, t)
	case "multicast":
		a.Multicast, err = analyze.ValidateMulticast(f, t)
	case "balance":
		a.Balance, err = analyze.Balance(f, t)
	case "fat-tree":
		a.FatTree = analyze.CheckFatTree(f)
	}
	return err
}

// WriteAnalysis writes a's text: one section per check.
func WriteAnalysis(w io.Writer, a *Analysis) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Analysis of %s (%d nodes)\n", a.Source, a.Nodes)
	if c := a.CreditLoops; c != nil {
		fmt.Fprintf(bw, "\nCredit loops: %d (SL2VL %s; %d channels, %d dependencies; %d sources, %d destinations, %d MLIDs)\n",
			c.Count, c.SL2VL, c.Channels, c.Dependencies, c.Sources, c.Destinations, c.MLIDs)
		if c.MissingSL2VL > 0 {
			fmt.Fprintf(bw, "  %d switch port pairs without an SL2VL table: taken as VL 0\n", c.MissingSL2VL)
		}
		for i, l := range c.Loops {
			kind := "unicast"
			if l.Multicast {
				kind = "multicast"
			}
			fmt.Fprintf(bw, "  loop %d: SLs %v, %s, %d channels (component of %d)\n", i+1, l.SLs, kind, len(l.Channels), l.Component)
			for _, ch := range l.Channels {
				fmt.Fprintf(bw, "    %s\n", ch)
			}
		}
	}
	writeRoutes(bw, a.Routes)
	if m := a.Multicast; m != nil {
		fmt.Fprintf(bw, "\nMulticast: %d MLIDs, %d members, %d problems\n", m.MLIDs, m.Members, m.Count)
		for _, p := range m.Problems {
			fmt.Fprintf(bw, "  MLID 0x%04x %s: from %q port %d%s\n", p.MLID, p.Kind, p.Source.Node.Desc, p.Source.Port, mcastWhere(p))
		}
	}
	writeBalance(bw, a.Balance)
	writeFatTree(bw, a.FatTree)
	for _, e := range a.Errors {
		fmt.Fprintf(bw, "\nerror: %s\n", e)
	}
	return bw.Flush()
}

func mcastWhere(p analyze.MulticastProblem) string {
	switch {
	case p.Member != nil:
		return fmt.Sprintf(", member %q port %d", p.Member.Node.Desc, p.Member.Port)
	case p.Switch != nil:
		return fmt.Sprintf(", reaches %q again", p.Switch.Desc)
	}
	return ""
}

func writeRoutes(w io.Writer, r *analyze.RouteReport) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "\nRoutes: %d switches, %d LIDs, %d problems (%d loops, %d inherited, %d unknown)\n", r.Switches, r.LIDs, r.Count, r.Loops, r.Inherited, r.Unknown)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  %q (%s) LID %d -> port %d: %s\n", p.Switch.Desc, p.Switch.GUID, p.LID, p.Port, p.Detail)
	}
	fmt.Fprintf(w, "  pairs %d, unreachable %d, hops min %d max %d:", r.Pairs, r.Unreachable, r.MinHops, r.MaxHops)
	for _, h := range r.Hops {
		fmt.Fprintf(w, " %d:%d", h.Hops, h.Pairs)
	}
	fmt.Fprintf(w, "\n  asymmetric pairs: %d\n", r.Asymmetric)
	for i, p := range r.AsymmetricPairs {
		if i == 20 {
			fmt.Fprintf(w, "    ... and %d more\n", r.Asymmetric-20)
			break
		}
		fmt.Fprintf(w, "    %q port %d -> %q port %d: %d hops, back %d\n", p.A.Node.Desc, p.A.Port, p.B.Node.Desc, p.B.Port, p.HopsAB, p.HopsBA)
	}
}

func writeBalance(w io.Writer, b *analyze.BalanceReport) {
	if b == nil {
		return
	}
	fmt.Fprintf(w, "\nBalance: %d of %d switches unbalanced\n", b.Unbalanced, len(b.Switches))
	for _, s := range b.Switches {
		if !s.Unbalanced {
			continue
		}
		fmt.Fprintf(w, "  %q (%s):", s.Switch.Desc, s.Switch.GUID)
		for _, p := range s.Ports {
			if p.Remote != nil && p.Remote.Node.Type == "Switch" {
				fmt.Fprintf(w, " %d(%s):%d", p.Port, p.Direction, p.CA)
			}
		}
		fmt.Fprintln(w)
	}
}

func writeFatTree(w io.Writer, t *analyze.FatTreeReport) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "\nFat tree: %s, bisection %g Gb/s", analyze.Count(len(t.Levels), "level", "levels"), t.BisectionGbps)
	if t.UnknownRates > 0 {
		fmt.Fprintf(w, " (%d switch ports without an active rate)", t.UnknownRates)
	}
	fmt.Fprintln(w)
	for _, l := range t.Levels {
		over := fmt.Sprintf("oversubscription %.2f", l.Oversubscription)
		if l.UpGbps == 0 {
			over = "the top (no up links)"
		}
		fmt.Fprintf(w, "  level %d: %s, %d up %d down, %g Gb/s up %g down, %s\n", l.Level, analyze.Count(l.Switches, "switch", "switches"), l.Up, l.Down, l.UpGbps, l.DownGbps, over)
	}
	for _, p := range t.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

// NodesUsingOptions name a switch port: the switch by GUID ("0x...") or
// node description (node-name-map names included).
type NodesUsingOptions struct {
	Switch string `lua:"switch"`
	Port   int    `lua:"port"`
}

// NodesUsing discovers the fabric, reads its LFTs and reports which
// nodes use the link at the switch port (analyze.NodesUsing): the LIDs
// routed out of it and the sources whose routes cross it, both ways.
func NodesUsing(ctx context.Context, e *Env, o NodesUsingOptions) (*analyze.LinkUse, error) {
	d, err := e.Discover(ctx)
	if err != nil {
		return nil, err
	}
	var sw *topo.Node
	guid, gerr := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(o.Switch), "0x"), 16, 64)
	for _, n := range d.Fabric.Nodes {
		if n.Type == topo.Switch && ((gerr == nil && n.GUID == guid) || n.Desc == o.Switch) {
			sw = n
			break
		}
	}
	if sw == nil {
		return nil, fmt.Errorf("no switch %q in the fabric", o.Switch)
	}
	l := e.Session.LFTs(ctx, d, nil)
	if len(l.Errors) > 0 {
		return nil, fmt.Errorf("LinearForwardingTable: %s", l.Errors[0])
	}
	return analyze.NodesUsing(d.Fabric, analyze.Tables{LFT: &l.ForwardingTables}, sw, o.Port)
}
