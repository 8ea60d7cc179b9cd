package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ibscript/ibscript/plan"
	"github.com/ibscript/ibscript/topo"
)

// isTerminal reports whether w (a reader or writer) is a terminal (isTTY).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && isTTY(f)
}

func colorOK(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

// progressLine shows plan.progress on one stderr line, at most ten times a
// second, cleared when the run ends.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	shown bool
	now   func() time.Time // nil means time.Now
}

func (p *progressLine) update(done, total int, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.now != nil {
		now = p.now()
	}
	if (total <= 0 || done < total) && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	if total <= 0 {
		// No total known (a discovery): the count alone.
		fmt.Fprintf(p.w, "\r\x1b[K%s %d", what, done)
	} else {
		fmt.Fprintf(p.w, "\r\x1b[K%s %d/%d (%d%%)", what, done, total, done*100/total)
	}
	p.shown = true
}

func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// parsePlanArgs turns --arg key=value flags into a map, refusing
// duplicates and missing '='.
func parsePlanArgs(list []string) (map[string]string, error) {
	m := map[string]string{}
	for _, a := range list {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: want key=value", a)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("--arg %s given twice", k)
		}
		m[k] = v
	}
	return m, nil
}

// chunkName is the name a script's errors carry: its path, or "stdin".
func chunkName(file string) string {
	if file == "-" {
		return "stdin"
	}
	return file
}

// planName is the name a plan's report carries: the script's base name
// without .lua.
func planName(file string) string {
	if file == "-" {
		return "stdin"
	}
	return strings.TrimSuffix(filepath.Base(file), ".lua")
}

// runReport is "ibscript report merge A.json B.json ...": one report
// made of the reports of several hosts, in --format (default json), with
// the exit status of the merged result.
// reportFormat is --format for a plan report, def when not given; one
// plan.Write does not write is said on stderr, naming cmd, and ok is
// false.
func reportFormat(c *config, cmd, def string, stderr io.Writer) (format string, ok bool) {
	format = cmp.Or(c.format, def)
	if !slices.Contains(plan.Formats(), format) {
		fmt.Fprintf(stderr, "ibscript %s: unknown --format %q (want text, json, tap or junit)\n", cmd, format)
		return format, false
	}
	return format, true
}

func runReport(c *config, stdout, stderr io.Writer) int {
	switch {
	case len(c.args) == 0:
		fmt.Fprintln(stderr, "ibscript report: want a subcommand: merge REPORT.json...")
	case c.args[0] != "merge":
		fmt.Fprintf(stderr, "ibscript report: unknown subcommand %q (want merge)\n", c.args[0])
	case len(c.args) == 1:
		fmt.Fprintln(stderr, "ibscript report merge: want one or more JSON reports (ibscript run --format json)")
	}
	if len(c.args) < 2 || c.args[0] != "merge" {
		fmt.Fprint(stderr, commandHelp["report"])
		return exitError
	}
	format, ok := reportFormat(c, "report merge", "json", stderr) // before the reports are read
	if !ok {
		return exitError
	}
	var reports []*plan.Report
	for _, path := range c.args[1:] {
		f, err := topo.OpenFile(path) // a FIFO never hangs the open; /dev/zero is refused
		if err != nil {
			fmt.Fprintf(stderr, "ibscript report merge: %v\n", err)
			return exitError
		}
		r, err := plan.ReadJSON(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "ibscript report merge: %s: %v\n", path, err)
			return exitError
		}
		reports = append(reports, r)
	}
	m := plan.Merge(reports...)
	if err := plan.Write(stdout, format, m, colorOK(stdout)); err != nil {
		fmt.Fprintf(stderr, "ibscript report merge: %v\n", err)
		return exitError
	}
	return m.ExitCode()
}
