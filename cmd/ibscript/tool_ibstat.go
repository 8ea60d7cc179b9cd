package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/fabric"
)

func init() {
	registerTool(&Tool{
		Name:    "ibstat",
		Summary: "the local CAs and their ports: state, rate, LIDs, GUIDs (umad_get_ca, umad_get_port)",
		Args:    "<ca_name> [portnum]",
		Options: []Option{
			{Short: 'l', Long: "list_of_cas", Help: "list all IB devices"},
			{Short: 's', Long: "short", Help: "short output"},
			{Short: 'p', Long: "port_list", Help: "show port list"},
		},
		// ibdiag_process_opts(..., "CDeGKLPsty", ...): the common
		// options it does not take.
		Exclude: "C,D,e,G,K,L,P,s,t,y",
		Example: []string{},
		Run:     runIBStat,
	})
}

func runIBStat(ctx context.Context, inv *Invocation) int {
	o := diag.IBStatOptions{Port: -1, List: inv.Has("list_of_cas"), Short: inv.Has("short"), PortList: inv.Has("port_list")}
	inv.ignoreArgs(2)
	if len(inv.Args) > 0 {
		o.CA = inv.Args[0]
	}
	if len(inv.Args) > 1 {
		o.Port = diag.ParsePortArg(inv.Args[1]) // strtol(argv[1], NULL, 0)
	}
	ports, err := inv.LocalPorts(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	r, err := diag.IBStatOf(ports, o)
	var noPort *diag.ErrNoPort
	if errors.As(err, &noPort) {
		fmt.Fprintf(inv.Stderr, "ibwarn: %s\n", noPort.Warning())
	}
	if err != nil {
		// IBPANIC: "ibpanic: [pid] main: ...", exit(-1).
		fmt.Fprintf(inv.Stderr, "ibpanic: main: %v\n", err)
		return exitIBExit
	}
	return inv.Output(r, nil, func(w io.Writer) error { return diag.WriteIBStat(w, r) }, false)
}

// LocalPorts opens the backend and lists its local ports as
// umad_get_ca/umad_get_port see them (diag.LocalPorts).
func (inv *Invocation) LocalPorts(ctx context.Context) ([]fabric.PortAttr, error) {
	env, err := inv.Env(ctx)
	if err != nil {
		return nil, err
	}
	all, err := inv.b.Fabric().Ports(ctx)
	if err != nil {
		return nil, err
	}
	return diag.LocalPorts(all, env.Session.Port(), env.Session.Production()), nil
}
