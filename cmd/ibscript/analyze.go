package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ibscript/ibscript/diag"
)

// runAnalyze is `ibscript analyze [CHECK...]`: the routing analytics of
// diag.Analyze on the live fabric or on --load FILE, as text or --format
// json (docs/diag/analyze.schema.json). Exit 0 when every check passed, 1
// when one found a fault or could not run, 2 when the run failed.
func runAnalyze(ctx context.Context, c *config, stdout, stderr io.Writer) (code int) {
	if c.format != "" && c.format != "text" && c.format != "json" {
		fmt.Fprintf(stderr, "ibscript analyze: unknown --format %q (want text or json)\n", c.format)
		return exitError
	}
	o := diag.AnalyzeOptions{Checks: c.args, Load: c.load}
	env := &diag.Env{NodeNames: c.names}
	if c.load == "" {
		b, status := openCommandBackend(ctx, c, stderr)
		if b == nil {
			return status
		}
		defer func() { code = finish(b, code, stderr) }()
		env.Session = b.Session()
	}
	a, err := diag.Analyze(ctx, env, o)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		fmt.Fprintf(stderr, "ibscript analyze: %s\n", hinted(err))
		return exitError
	}
	if c.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(a)
	} else {
		err = diag.WriteAnalysis(stdout, a)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibscript analyze: %v\n", err)
		return exitError
	}
	if a.Failed() {
		return exitFailed
	}
	return exitOK
}
