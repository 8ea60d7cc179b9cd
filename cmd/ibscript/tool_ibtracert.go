package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

// ibtracert: the route between two ports, hop by hop, as the switches'
// forwarding tables take it (diag/ibtracert.go).
func init() {
	registerTool(&Tool{
		Name:    "ibtracert",
		Summary: "trace the route between two ports through the switches' forwarding tables",
		Args:    "<src-addr> <dest-addr>",
		Options: []Option{
			{Short: 'f', Long: "force", Help: "force"},
			{Short: 'n', Long: "no_info", Help: "simple format"},
			{Short: 'm', Long: "mlid", Arg: "<mlid>", Help: "multicast trace of the mlid"},
			{Long: "ports-file", Arg: "<file>", Help: "port pairs file"},
		},
		// ibtracert takes no directed route.
		Exclude: "D",
		Schema:  "ibtracert",
		Example: []string{"1", "16"},
		Run:     runIBTracert,
	})
}

func runIBTracert(ctx context.Context, inv *Invocation) int {
	o := diag.TracertOptions{NoInfo: inv.Has("no_info"), Force: inv.Has("force"), Verbose: inv.Verbosity() > 0}
	if inv.Has("mlid") {
		// strtoul into ibtracert's int mlid: "abc" is 0, refused as
		// below 0xc000 where the route is sought, as the C tool does.
		o.Multicast, o.MLID = true, int(int32(cNumber(inv, "-m", inv.Value("mlid"))))
	}
	portsFile := inv.Value("ports-file")
	if portsFile == "" {
		inv.ignoreArgs(2)
	}
	if portsFile == "" && len(inv.Args) != 2 {
		return inv.Fail(errors.New("want a source and a destination address"))
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	var traces []*diag.Trace
	trace := func(src, dst string) error {
		t, err := tracePair(ctx, inv, env, src, dst, &o)
		if t != nil {
			traces = append(traces, t)
			if !inv.JSON {
				if werr := diag.WriteTracert(inv.Stdout, t); werr != nil {
					return werr
				}
			}
			for _, w := range t.Warnings {
				fmt.Fprintf(inv.Stderr, "ibwarn: %s\n", w)
			}
		}
		return err
	}
	if portsFile == "" {
		if err := trace(inv.Args[0], inv.Args[1]); err != nil {
			return tracertExit(inv, traces, "Failed to get route information", err)
		}
		if inv.JSON {
			if err := diag.WriteJSON(inv.Stdout, traces[0]); err != nil {
				return inv.Fail(err)
			}
		}
		return exitOK
	}
	f, err := topo.OpenFile(portsFile) // a FIFO never hangs the open; /dev/zero is refused
	if err != nil {
		return tracertExit(inv, traces, "cannot open ports-file "+portsFile, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line, pairs := 0, 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		fs := strings.Fields(s)
		if len(fs) < 2 {
			return tracertExit(inv, traces, fmt.Sprintf("ports-file, %s, at line %d contains bad data", portsFile, line), nil)
		}
		pairs++
		if err := trace(fs[0], fs[1]); err != nil {
			return tracertExit(inv, traces, fmt.Sprintf("Failed to get route information at line %d", line), err)
		}
	}
	if err := sc.Err(); err != nil {
		return inv.Fail(fmt.Errorf("%s: %w", portsFile, err))
	}
	if inv.JSON {
		if err := diag.WriteJSON(inv.Stdout, map[string]any{"traces": traces}); err != nil {
			return inv.Fail(err)
		}
		return exitOK
	}
	fmt.Fprintf(inv.Stdout, "%d lid/guid pairs processed from %s\n", pairs, portsFile)
	return exitOK
}

// tracePair resolves the two addresses to LIDs (-G: GUIDs) and traces
// the route between them.
func tracePair(ctx context.Context, inv *Invocation, env *diag.Env, src, dst string, o *diag.TracertOptions) (*diag.Trace, error) {
	var lids [2]uint16
	for i, a := range []string{src, dst} {
		what := [...]string{"source", "destination"}[i]
		t, err := inv.Target(what, a)
		parsed := err == nil
		if parsed {
			t, err = env.ResolveTarget(ctx, t)
		}
		if err != nil {
			// As ibtracert: libibmad's line for a GUID the SA did not
			// resolve, then get_route's; why, under -v or -e.
			if parsed {
				fmt.Fprintln(inv.Stderr, "ibwarn: "+diag.PathQueryFailed)
			}
			fmt.Fprintf(inv.Stderr, "ibwarn: get_route: can't resolve %s port %s\n", what, a)
			if !parsed || inv.Verbosity() > 0 || inv.ShowErrors() {
				inv.Errorf("%v", err)
			}
			return nil, err
		}
		lids[i] = t.LID
	}
	return diag.Tracert(ctx, env, lids[0], lids[1], o)
}

// tracertExit ends ibtracert as its IBEXIT does (status 255, the message
// on stdout); in JSON the traces so far and the error.
func tracertExit(inv *Invocation, traces []*diag.Trace, msg string, err error) int {
	if inv.JSON {
		out := map[string]any{"traces": traces, "error": msg}
		if err != nil {
			out["detail"] = err.Error()
		}
		_ = diag.WriteJSON(inv.Stdout, out)
		return exitIBExit
	}
	_ = diag.WriteIBExit(inv.Stdout, inv.argv0(), msg)
	return exitIBExit
}
