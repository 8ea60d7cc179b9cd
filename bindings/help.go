package bindings

import (
	"fmt"
	"io"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
)

// openHelp adds the REPL's helpers as globals: help(x) prints the doc line
// of a function or the functions of a module, ls(attr) an attribute's
// fields with their bit offsets and widths.
func (e *Env) openHelp() {
	for _, h := range helperList() {
		fn := namedFunction(e.L, h.name, h.doc, h.fn(e))
		e.docs[fn] = h.doc
		e.L.SetGlobal(h.name, fn)
	}
}

// helpers are the global functions of the REPL and scripts beside the
// modules, with their doc lines.
type helper struct {
	name string
	fn   func(e *Env) lua.LGFunction
	doc  string
}

func helperList() []helper {
	return []helper{
		{"help", func(e *Env) lua.LGFunction { return e.help }, "help([x]) -> nil: the modules (no argument), a module's functions (help(smp), help(\"smp\")) or one function's doc line (help(smp.portinfo), help(\"smp.portinfo\"))"},
		{"ls", func(e *Env) lua.LGFunction { return e.ls }, "ls([name]) -> nil: every attribute and SA record name (no argument), or the fields of one with their byte.bit offsets and widths (ls(\"PortInfo\"), ls(\"NodeRecord\"))"},
		{"show", func(e *Env) lua.LGFunction { return e.show }, "show(v, ...) -> nil: prints values as the REPL does (records as field tables, tables in a short literal form)"},
	}
}

// modules is every module this Env has: Modules(), and sim when the
// backend is the embedded simulator.
func (e *Env) modules() []Module {
	mods := Modules()
	if _, ok := e.L.GetGlobal("sim").(*lua.LTable); ok && e.hasSim {
		mods = append(mods, SimModule())
	}
	return mods
}

// show prints each argument as the REPL shows values: records as field
// tables, plain tables in a short literal form.
func (e *Env) show(L *lua.LState) int {
	for i := 1; i <= L.GetTop(); i++ {
		fmt.Fprintln(e.stdout, Render(L, L.Get(i)))
	}
	return 0
}

// Render shows a value as the REPL prints it and show() does.
func Render(L *lua.LState, v lua.LValue) string { return render(L, v, 0) }

func (e *Env) help(L *lua.LState) int {
	mods := e.modules()
	w := e.stdout
	switch v := L.Get(1).(type) {
	case *lua.LNilType:
		fmt.Fprintln(w, "ibscript modules (help(module) lists its functions, help(fn) shows one):")
		for _, m := range mods {
			fmt.Fprintf(w, "  %-8s %s\n", m.Name, m.Summary)
		}
		fmt.Fprintln(w, "helpers:")
		for _, h := range helperList() {
			fmt.Fprintf(w, "  %s\n", h.doc)
		}
	case *lua.LFunction:
		doc, ok := e.docs[v]
		if !ok {
			raise(L, "help", "no documentation for this function (a Lua function, or a standard library one: help() lists ibscript's)")
		}
		fmt.Fprintln(w, doc)
	case *lua.LTable, lua.LString:
		name := ""
		if s, ok := v.(lua.LString); ok {
			name = string(s)
			for _, h := range helperList() {
				if h.name == name {
					fmt.Fprintln(w, h.doc)
					return 0
				}
			}
		} else {
			for _, m := range mods {
				if L.GetGlobal(m.Name) == v {
					name = m.Name
				}
			}
			if name == "" {
				raise(L, "help", "this table is not an ibscript module (help() lists them)")
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
		var names []string
		seen := map[string]bool{}
		for _, l := range attributeLayouts() {
			if !seen[l.Name] {
				seen[l.Name] = true
				names = append(names, l.Name)
			}
		}
		sort.Strings(names)
		fmt.Fprintf(e.stdout, "attributes: %s\n", strings.Join(names, "  "))
		names = names[:0]
		for _, a := range sa.Attrs() {
			names = append(names, a.Name())
		}
		sort.Strings(names)
		fmt.Fprintf(e.stdout, "SA records: %s\n", strings.Join(names, "  "))
		return 0
	}
	name := L.CheckString(1)
	l := findLayout(name)
	if l == nil {
		if a, ok := sa.AttrByName(name); ok {
			l = a.Layout
		}
	}
	if l == nil {
		raise(L, "ls", "unknown attribute or SA record %q (ls() lists them)", name)
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
		fmt.Fprintf(w, "  %4d.%-3d %5d  %s\n", f.Bit/8, f.Bit%8, f.Width, f.Key())
	}
}

// Render shows a value as the REPL prints it and show() does: tostring for values with a
// __tostring metamethod (decoded attributes, nodes), a short literal form
// for plain tables.
func render(L *lua.LState, v lua.LValue, depth int) string {
	t, ok := v.(*lua.LTable)
	if !ok {
		if s, ok := v.(lua.LString); ok && depth > 0 {
			return fmt.Sprintf("%q", string(s))
		}
		if n, ok := v.(lua.LNumber); ok {
			return NumberText(float64(n)) // as tostring writes it
		}
		return L.ToStringMeta(v).String()
	}
	if mt, ok := L.GetMetatable(t).(*lua.LTable); ok && mt.RawGetString("__tostring") != lua.LNil {
		return L.ToStringMeta(v).String()
	}
	if depth >= 2 {
		if n := t.Len(); n > 0 {
			return fmt.Sprintf("{...%d items}", n)
		}
		keys := 0
		t.ForEach(func(k, _ lua.LValue) {
			if !hiddenKey(k) {
				keys++
			}
		})
		return fmt.Sprintf("{...%d keys}", keys)
	}
	var parts []string
	n := t.Len()
	const maxItems = 16
	for i := 1; i <= n && i <= maxItems; i++ {
		parts = append(parts, render(L, t.RawGetInt(i), depth+1))
	}
	if n > maxItems {
		parts = append(parts, fmt.Sprintf("... (%d items)", n))
	}
	var keys []string
	vals := map[string]lua.LValue{}
	t.ForEach(func(k, val lua.LValue) {
		if kn, ok := k.(lua.LNumber); ok && float64(kn) >= 1 && float64(kn) <= float64(n) && float64(kn) == float64(int(kn)) {
			return
		}
		if hiddenKey(k) {
			return
		}
		ks := toStringBasic(k)
		if _, ok := k.(lua.LString); !ok {
			ks = "[" + ks + "]"
		}
		keys = append(keys, ks)
		vals[ks] = val
	})
	sort.Strings(keys)
	for i, k := range keys {
		if i == maxItems {
			parts = append(parts, fmt.Sprintf("... (%d keys)", len(keys)))
			break
		}
		parts = append(parts, k+" = "+render(L, vals[k], depth+1))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// HiddenKey reports whether a table key is internal (a "__" name, such as
// the fabric table's __topo): the REPL neither shows nor completes it.
func HiddenKey(k lua.LValue) bool { return hiddenKey(k) }

func hiddenKey(k lua.LValue) bool {
	s, ok := k.(lua.LString)
	return ok && strings.HasPrefix(string(s), "__")
}
