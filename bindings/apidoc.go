package bindings

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteAPIReference writes the Lua API reference (docs/lua-api.md) from
// the modules' registration tables and their examples.
func WriteAPIReference(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("# ibscript Lua API\n\n")
	p("<!-- Generated from bindings' registration tables by `go test ./bindings -run TestAPIReference -update`. Do not edit. -->\n\n")
	p("Every function raises a Lua error on failure, with the function's name and what went wrong\n")
	p("(`smp.portinfo: lid:5 PortInfo: timeout after 4 tries`); `pcall` catches it. The exceptions\n")
	p("return absence as data: `umad.recv` returns nil when its timeout passes, `umad.poll` false,\n")
	p("and `fabric.discover` lists per-node failures in `errors`.\n\n")
	p("Targets are strings: `\"lid:5\"` (or the number 5), `\"dr:0,1,3\"` (a directed route as\n")
	p("`smpquery -D` writes it), `\"guid:0x0002c90300001234\"`. Decoded attributes are tables with\n")
	p("snake_case keys in wire order; 64-bit GUIDs and keys are hex strings, counters are numbers.\n")
	p("Globals `help(x)`, `ls(attribute)` and `show(...)` print documentation, an attribute's fields\n")
	p("and values as the REPL shows them.\n\n")
	// The sim module comes last: it exists only on sim backends.
	mods := append(Modules(), SimModule())
	p("| module | what |\n| --- | --- |\n")
	for _, m := range mods {
		p("| [`%s`](#%s) | %s |\n", m.Name, m.Name, m.Summary)
	}
	for _, m := range mods {
		p("\n## %s\n\n%s.\n", m.Name, upperFirst(m.Summary))
		if m.Name == "sim" {
			p("\nThe `sim` module is present only when the backend is the embedded simulator (`--fabric sim:`,\n")
			p("`sim:PATH`, or `auto` on a host without InfiniBand ports); on `umad:`, `ibsim:` and `replay:`\n")
			p("backends the global `sim` is nil and `require \"sim\"` fails. Faults are drawn from the seed,\n")
			p("the request's bytes and how often it was sent before, so the same seed replays the same\n")
			p("faults. The examples run on the bundled default fabric.\n")
		}
		for _, f := range m.Funcs {
			call, desc, _ := strings.Cut(f.Doc, ": ")
			p("\n### %s.%s\n\n`%s.%s`\n\n%s\n", m.Name, f.Name, m.Name, call, upperFirst(desc))
			if ex, ok := examples[m.Name+"."+f.Name]; ok {
				p("\n```lua\n%s\n```\n", ex)
			}
		}
	}
	return bw.Flush()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
