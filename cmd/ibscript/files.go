package main

import (
	"path/filepath"
	"strings"

	"github.com/ibscript/ibscript/bindings"
)

// files is which files the run's scripts may read and write
// (docs/security.md): those under the paths the user named on the
// command line (the working directory, the script's directory, the
// script's arguments, --arg values, --allow-path), or any with
// --allow-files.
func (c *config) files() (*bindings.Files, error) {
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
	return bindings.NewFiles(c.allowFiles, roots...)
}
