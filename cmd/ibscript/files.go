package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibscript/ibscript/bindings"
)

// files is which files the run's scripts may read and write
// (docs/security.md): those under the paths the user named on the
// command line (the working directory, the script's directory, the
// script's arguments, --arg values, --allow-path), or any with
// --allow-files.
func (c *config) files(stdout, stderr io.Writer) (*bindings.Files, error) {
	roots := append([]string{"."}, c.allowPath...)
	args := c.args
	if c.cmd == "run" && len(args) > 0 {
		roots = append(roots, filepath.Dir(args[0]))
		args = args[1:]
	}
	roots = append(roots, args...)
	for _, kv := range c.planArgs {
		if _, v, ok := strings.Cut(kv, "="); ok {
			roots = append(roots, v)
		}
	}
	f, err := bindings.NewFiles(c.allowFiles, roots...)
	if err != nil {
		return nil, err
	}
	// The run's own files stay out of its script's reach: the audit
	// trail, the recording, and the report and log where stdout and
	// stderr are files (ibscript run plan.lua > report.json).
	for _, p := range []struct{ what, path string }{{"--audit", c.audit}, {"--record", c.record}} {
		if err := f.Protect(p.what, p.path); err != nil {
			return nil, err
		}
	}
	for _, w := range []struct {
		what string
		w    io.Writer
	}{{"report (stdout)", stdout}, {"stderr", stderr}} {
		if o, ok := w.w.(*os.File); ok {
			if fi, err := o.Stat(); err == nil && fi.Mode().IsRegular() {
				f.ProtectFile(w.what, fi)
			}
		}
	}
	return f, nil
}
