package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/export"
)

// runTopology is `ibscript topology --format F [--load FILE]`: the
// discovered fabric, or a saved one, for Slurm, Graphviz or a JSON
// reader, named with --node-name-map.
func runTopology(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	if !slices.Contains(export.Formats(), c.format) {
		fmt.Fprintf(stderr, "ibscript topology: --format %q: want slurm-conf, slurm-yaml, dot or json\n", c.format)
		return exitError
	}
	write := func(f *topo.Fabric) error { return export.Write(stdout, f, c.format, &export.Options{Names: c.names}) }
	if c.load == "" {
		return sweepAndWrite(ctx, c, stderr, "topology", write)
	}
	f, err := diag.LoadSaved(c.load)
	if err == nil {
		err = write(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibscript topology: %v\n", err)
		return exitError
	}
	return exitOK
}
