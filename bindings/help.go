package bindings

import (
	"fmt"
	"io"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
)

// openHelp adds the REPL's helpers as globals: help(x) prints the doc line
// of a function or the functions of a module, ls(attr) an attribute's
// fields with their bit offsets and widths.
func (e *Env) openHelp() {
	e.L.SetGlobal("help", e.L.NewFunction(e.help))
	e.L.SetGlobal("ls", e.L.NewFunction(e.ls))
}

func (e *Env) help(L *lua.LState) int {
	mods := Modules()
	w := e.stdout
	switch v := L.Get(1).(type) {
	case *lua.LNilType:
		fmt.Fprintln(w, "ibscript modules (help(module) lists its functions, help(fn) shows one):")
		for _, m := range mods {
			fmt.Fprintf(w, "  %-8s %s\n", m.Name, m.Summary)
		}
		fmt.Fprintln(w, "  help(x), ls(attribute): this help; the fields of an attribute (ls(\"PortInfo\"))")
	case *lua.LFunction:
		doc, ok := e.docs[v]
		if !ok {
			raise(L, "help", "no documentation for this function (not an ibscript function)")
		}
		fmt.Fprintln(w, doc)
	case *lua.LTable, lua.LString:
		name := ""
		if s, ok := v.(lua.LString); ok {
			name = string(s)
		} else {
			for _, m := range mods {
				if L.GetGlobal(m.Name) == v {
					name = m.Name
				}
			}
		}
		modName, fnName, _ := strings.Cut(name, ".")
		for _, m := range mods {
			if m.Name != modName {
				continue
			}
			if fnName == "" {
				fmt.Fprintf(w, "%s: %s\n", m.Name, m.Summary)
				for _, f := range m.Funcs {
					fmt.Fprintf(w, "  %s.%s\n", m.Name, f.Doc)
				}
				return 0
			}
			for _, f := range m.Funcs {
				if f.Name == fnName {
					fmt.Fprintf(w, "%s.%s\n", m.Name, f.Doc)
					return 0
				}
			}
		}
		raise(L, "help", "nothing named %q (help() lists the modules)", name)
	default:
		L.ArgError(1, "function, module or name expected, got "+v.Type().String())
	}
	return 0
}

func (e *Env) ls(L *lua.LState) int {
	if L.Get(1) == lua.LNil {
		names := []string{}
		for _, l := range attributeLayouts() {
			names = append(names, l.Name)
		}
		sort.Strings(names)
		fmt.Fprintln(e.stdout, strings.Join(names, "  "))
		return 0
	}
	name := L.CheckString(1)
	l := findLayout(name)
	if l == nil {
		raise(L, "ls", "unknown attribute %q (ls() lists them)", name)
	}
	writeFields(e.stdout, l)
	return 0
}

// writeFields prints a layout as ls shows it: byte.bit offset, width and
// the Lua key of every field.
func writeFields(w io.Writer, l *mad.Layout) {
	if l.ID != 0 {
		fmt.Fprintf(w, "%s (attribute 0x%04x, %d bytes)\n", l.Name, l.ID, l.Size)
	} else {
		fmt.Fprintf(w, "%s (%d bytes)\n", l.Name, l.Size)
	}
	fmt.Fprintf(w, "  %-8s %5s  %s\n", "byte.bit", "width", "field")
	for _, f := range l.Fields {
		fmt.Fprintf(w, "  %4d.%-3d %5d  %s\n", f.Bit/8, f.Bit%8, f.Width, mad.SnakeName(f.Name))
	}
}
