package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

// ibhosts, ibswitches, ibrouters and ibnodes: the node lists the
// infiniband-diags scripts print from ibnetdiscover's output, or from a
// topology file named as argument (diag/nodes.go).
func init() {
	for _, l := range []struct {
		name, summary string
		types         []topo.NodeType
	}{
		{"ibhosts", "list the fabric's CAs (channel adapters), one line each", []topo.NodeType{topo.CA}},
		{"ibswitches", "list the fabric's switches, one line each with port 0's LID", []topo.NodeType{topo.Switch}},
		{"ibrouters", "list the fabric's routers, one line each", []topo.NodeType{topo.Router}},
		{"ibnodes", "list the fabric's CAs, then its switches (ibhosts, then ibswitches)", []topo.NodeType{topo.CA, topo.Switch}},
	} {
		o := diag.NodesOptions{Types: l.types}
		runs := 1 // ibnetdiscover runs the script makes (ibnodes: ibhosts, then ibswitches)
		script := nodesScriptUsage(l.name)
		if l.name == "ibnodes" {
			runs = 2
			script = nodesScriptUsage("ibhosts") + nodesScriptUsage("ibswitches")
		}
		registerTool(&Tool{
			Name:    l.name,
			Summary: l.summary,
			Args:    "[<topology-file>]",
			// The scripts take -h, -y, -C, -P and -t and nothing else of
			// the common options.
			Exclude:   "z,G,D,L,s,e,v",
			Schema:    "nodes",
			Script:    script,
			Example:   []string{},
			Run:       func(ctx context.Context, inv *Invocation) int { return runNodes(ctx, inv, o) },
			Wraps:     "ibnetdiscover",
			WrapsRuns: runs,
			OpenFail:  func(inv *Invocation, _ portSel) int { return ibExitAs(inv, "discover failed") },
		})
	}
}

func runNodes(ctx context.Context, inv *Invocation, o diag.NodesOptions) int {
	switch len(inv.Args) {
	case 0:
	case 1:
		return nodesFromFile(inv, inv.Args[0], o)
	default:
		return scriptUsage(inv, fmt.Sprintf("one topology file at most, got %d arguments", len(inv.Args)))
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	l, err := diag.Nodes(ctx, env, o)
	return inv.Output(l, err, func(w io.Writer) error { return diag.WriteNodes(w, l) }, false)
}

// nodesFromFile is `ibhosts FILE`: the script's filter over the file's
// text (what `cat FILE | awk` prints), or the file's nodes as JSON.
func nodesFromFile(inv *Invocation, path string, o diag.NodesOptions) int {
	if inv.JSON {
		f, err := topo.ParseFile(path)
		if err != nil {
			return inv.Fail(err)
		}
		if err := diag.WriteJSON(inv.Stdout, diag.NodesOf(f, inv.c.names, o)); err != nil {
			return inv.Fail(err)
		}
		return exitOK
	}
	text, err := readLimited(path, topo.MaxLoadSize, "a topology file")
	if err != nil {
		// The script's `cat FILE` fails, awk prints nothing, and the
		// script exits with cat's status, 1.
		inv.Errorf("%v", err)
		return exitFailed
	}
	if err := diag.FilterNodeLines(inv.Stdout, string(text), o); err != nil {
		return inv.Fail(err)
	}
	return exitOK
}
