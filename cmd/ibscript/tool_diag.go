package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
)

// The tools written as one diag.Tool value each (diag.Tools): one
// adapter makes each a command. Its options come from the options
// struct's tags (diag.OptionSpec), read as getopt_long reads them like
// every tool's; option values as the C tools read numbers (strtoull,
// cut to the field's mask), arguments as strtol, address arguments as
// -L, -G and -D say (Invocation.Dest, diag.Env.Resolve); the data is
// printed as the C tool's text or --format json, its failure as the C
// tool's IBEXIT (queryDone).
func init() {
	for _, dt := range diag.Tools() {
		t := &Tool{Name: dt.Name, Summary: dt.Summary, Args: dt.Args, Exclude: dt.Exclude, Example: dt.Example,
			Run: func(ctx context.Context, inv *Invocation) int { return runDiagTool(ctx, inv, dt) }}
		if dt.Script != "" {
			// A script's own loop: -h first is its usage, the rest its
			// arguments (ibstatus); a Perl script's getopts.
			t.Script, t.ScriptStatus = dt.Script, dt.ScriptStatus
			t.ScriptArgs = func(args []string) string {
				if len(args) > 0 && args[0] == "-h" {
					return "help"
				}
				return ""
			}
			if dt.Getopts != "" {
				spec := dt.Getopts
				t.ScriptArgs = func(args []string) string { return perlGetopts(spec, args) }
			}
		}
		for _, s := range dt.Options() {
			if s.Pos < 0 {
				t.Options = append(t.Options, Option{Short: s.Short, Long: s.Long, Arg: s.Arg, Help: s.Help})
			}
		}
		registerTool(t)
	}
}

// runDiagTool runs dt with the invocation's options and arguments.
func runDiagTool(ctx context.Context, inv *Invocation, dt *diag.Tool) int {
	if dt.MaxArgs > 0 {
		inv.ignoreArgs(dt.MaxArgs)
	}
	if len(inv.Args) < dt.MinArgs {
		return usageError(inv, "%s", dt.Want)
	}
	o := dt.NewOptions()
	if err := setToolOptions(inv, dt, o); err != nil {
		return inv.Fail(err)
	}
	// The arguments: numbers and strings first, then what the C tool
	// refuses before it sends anything, then addresses, which may ask
	// the SA (a GUID's LID) and so open the fabric.
	args, combined := diagArgs(inv, dt)
	setToolArgs(args, dt, o)
	if dt.Check != nil {
		if err := dt.Check(o); err != nil {
			if ue := (*diag.UsageError)(nil); errors.As(err, &ue) {
				return usageError(inv, "%s", ue.Msg)
			}
			return queryDone(inv, nil, nil, err)
		}
	}
	if dt.Unaddressed == nil || !dt.Unaddressed(o) {
		if err := resolveToolArgs(ctx, inv, dt, o, args, combined); err != nil {
			return queryDone(inv, nil, nil, err)
		}
	}
	env, err := toolEnv(ctx, inv, dt)
	if err != nil {
		return inv.Fail(err)
	}
	r, err := dt.Run(ctx, env, o)
	return diagToolDone(inv, dt, r, err)
}

// setToolOptions sets o's options the command line gave, read as the C
// tool reads them.
func setToolOptions(inv *Invocation, dt *diag.Tool, o any) error {
	specs := dt.Options()
	for i := range specs {
		s := &specs[i]
		if s.Pos >= 0 || !inv.Has(s.Key()) {
			continue
		}
		switch s.Kind {
		case diag.OptFlag:
			s.SetBool(o, true)
		case diag.OptNumber:
			if !s.Strict {
				s.SetNumber(o, s.ReadOption(inv.Value(s.Key())))
				break
			}
			v, err := s.ReadStrict(inv.spelling(s.Key()), inv.Value(s.Key()))
			if err != nil {
				return err
			}
			s.SetNumber(o, v)
		case diag.OptString:
			s.SetString(o, inv.Value(s.Key()))
		}
	}
	return nil
}

// setToolArgs sets o's arguments but addresses: numbers as strtol reads
// them, strings, the rest.
func setToolArgs(args []string, dt *diag.Tool, o any) {
	specs := dt.Options()
	for i := range specs {
		s := &specs[i]
		switch {
		case s.Pos < 0 || s.Kind == diag.OptTarget:
		case s.Pos == diag.PosRest:
			if from := diag.NumberedArgs(specs); from < len(args) {
				s.SetStrings(o, args[from:])
			}
		case s.Pos >= len(args):
		case s.Kind == diag.OptNumber:
			s.SetNumber(o, s.ReadArg(args[s.Pos]))
		case s.Kind == diag.OptString:
			s.SetString(o, args[s.Pos])
		}
	}
}

// resolveToolArgs sets o's address arguments (args, from diagArgs), read
// by destArg; an error is the C tool's IBEXIT.
func resolveToolArgs(ctx context.Context, inv *Invocation, dt *diag.Tool, o any, args []string, combined bool) error {
	phrase := dt.Unresolved
	if phrase == "" {
		phrase = "can't resolve destination port"
	}
	specs := dt.Options()
	for i := range specs {
		s := &specs[i]
		if s.Pos < 0 || s.Kind != diag.OptTarget || s.Pos >= len(args) {
			continue
		}
		t, err := destArg(ctx, inv, combined, args[s.Pos], phrase)
		if err != nil {
			return err
		}
		s.SetTarget(o, t)
	}
	return nil
}

// toolEnv is the Env a tool runs in: the opened fabric's, or for an
// Offline tool (ibcacheedit) one without a fabric.
func toolEnv(ctx context.Context, inv *Invocation, dt *diag.Tool) (*diag.Env, error) {
	if dt.Offline {
		return &diag.Env{NodeNames: inv.c.names, Version: inv.c.diagsVersion}, nil
	}
	return inv.Env(ctx)
}

// diagToolDone ends a tool as the C tool ends: its data printed (text or
// --format json), a refused value's usage (2), a script's fatal() (255),
// a failed check (1), an IBEXIT (255).
func diagToolDone(inv *Invocation, dt *diag.Tool, r any, err error) int {
	var usage *diag.UsageError
	if errors.As(err, &usage) {
		// A value the C tool's option handler refuses: its usage, 2.
		return usageError(inv, "%s", usage.Msg)
	}
	var panicked *diag.IBPanic
	if errors.As(err, &panicked) {
		if panicked.Warning != "" {
			fmt.Fprintf(inv.Stderr, "ibwarn: %s\n", panicked.Warning)
		}
		fmt.Fprintf(inv.Stderr, "ibpanic: %s: %v\n", panicked.Where(), panicked)
		return exitIBExit
	}
	var fatal *diag.ScriptFatal
	if errors.As(err, &fatal) {
		// A script's fatal(): what it printed, then its line on stdout
		// (stderr with --format json), status 255.
		out := inv.Stdout
		if r != nil && inv.OutputTo(inv.Stdout, r, func(w io.Writer) error { return dt.WriteText(w, r) }, nil, false) != exitOK {
			return exitError
		}
		if inv.JSON {
			out = inv.Stderr
		}
		fmt.Fprintln(out, fatal)
		return exitIBExit
	}
	var failed *diag.CheckFailed
	if errors.As(err, &failed) {
		// The data say the fabric failed the check: printed, status 1.
		if code := queryDone(inv, r, func(b *strings.Builder) { _ = dt.WriteText(b, r) }, nil); code != exitOK {
			return code
		}
		return exitFailed
	}
	if r == nil {
		return queryDone(inv, nil, nil, err)
	}
	if w, ok := r.(diag.Warner); ok {
		for _, s := range w.ToolWarnings() {
			inv.Errorf("%s", s)
		}
	}
	return queryDone(inv, r, func(b *strings.Builder) { _ = dt.WriteText(b, r) }, err)
}

// perlGetopts reads args as Perl's Getopt::Std getopts(spec) does: the
// leading arguments that start with '-' and a character ("--" ends
// them), bundled letters, a value attached or the next argument. It
// returns "help" for -h, a reason for an unknown option or a missing
// value (the script then prints its usage), "" otherwise. ibscript's own
// long options (--fabric, --format, ...) are not the script's: they are
// taken out first.
func perlGetopts(spec string, all []string) string {
	var args []string
	for i := 0; i < len(all); i++ {
		if o := ownLongOption(all[i]); o != nil {
			if o.Arg != "" && !strings.Contains(all[i], "=") {
				i++
			}
			continue
		}
		args = append(args, all[i])
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return ""
		}
		if a == "--" {
			return ""
		}
		if a == "--help" || a == "--version" {
			// Getopt::Std prints its own help or version on stderr and
			// goes on; ibscript's parse answers them.
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			k := strings.IndexByte(spec, c)
			switch {
			case c == ':' || k < 0:
				return fmt.Sprintf("unknown option: %c", c)
			case c == 'h':
				return "help"
			case k+1 < len(spec) && spec[k+1] == ':':
				if j+1 == len(a) {
					if i+1 >= len(args) {
						return fmt.Sprintf("option %c wants a value", c)
					}
					i++
				}
				j = len(a)
			}
		}
	}
	return ""
}

// diagArgs are the tool's positional arguments: the command line's, or,
// when dt's Combined flag is the last of -L, -G, -D and it, with the
// address argument and the one after it joined as smpquery joins a
// combined route's ("%s %s" into 64 bytes); combined says which.
func diagArgs(inv *Invocation, dt *diag.Tool) ([]string, bool) {
	if dt.Combined == "" {
		return inv.Args, false
	}
	last := ""
	for _, ov := range inv.order {
		switch ov.Key {
		case optLID, optGUID, optDirect, dt.Combined:
			last = ov.Key
		}
	}
	if last != dt.Combined {
		return inv.Args, false
	}
	for _, s := range dt.Options() {
		if s.Kind != diag.OptTarget || s.Pos < 0 || s.Pos >= len(inv.Args) {
			continue
		}
		next := "(null)"
		if s.Pos+1 < len(inv.Args) {
			next = inv.Args[s.Pos+1]
		}
		joined := inv.Args[s.Pos] + " " + next
		if len(joined) > 63 {
			joined = joined[:63]
		}
		args := append(slices.Clone(inv.Args[:s.Pos]), joined)
		if s.Pos+2 < len(inv.Args) {
			args = append(args, inv.Args[s.Pos+2:]...)
		}
		return args, true
	}
	return inv.Args, true
}

// destArg reads an address argument: inv.Dest's, or a combined route's
// joined arguments (diag.ParseCombined; the engine sends it with the
// local LID as DrSLID). An error is the C tool's IBEXIT phrase followed
// by the argument.
func destArg(ctx context.Context, inv *Invocation, combined bool, arg, phrase string) (engine.Target, error) {
	if !combined {
		return inv.Dest(ctx, arg, phrase)
	}
	a, err := diag.ParseCombined(arg)
	if err != nil {
		return engine.Target{}, &diag.ToolError{Msg: phrase + " " + arg, Err: err}
	}
	return a.Target, nil
}
