package bindings

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
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
	p("and `fabric.discover` lists per-node failures in `errors`. A wrong argument type or count\n")
	p("names the function and the parameter, however the function was called (directly, through\n")
	p("`pcall` or an alias): `bad argument #2 to umad.poll (timeout_ms: number expected, got no value)`.\n\n")
	p("Targets are strings: `\"lid:5\"` (or the number 5), `\"dr:0,1,3\"` (a directed route as\n")
	p("`smpquery -D` writes it), `\"guid:0x0002c90300001234\"`, `\"gid:fd00::2\"` (a port GID: GMPs go with a\n")
	p("GRH, as RoCE needs; not SMPs). Decoded attributes are records with\n")
	p("snake_case keys in wire order; 64-bit GUIDs are hex strings, counters are numbers. A record\n")
	p("reads and takes fields as a table does (`pi.lid`, `pi.lid = 5`, `pi.note = \"x\"`); `pairs`\n")
	p("and `next` give its fields in wire order, then the keys a script added; `tostring` prints\n")
	p("it as smpquery does. It is a userdata (`type(pi)` says so), decoded field by field when\n")
	p("read, so functions that want a real table (`rawget`, `setmetatable`, `ipairs`, `table.*`)\n")
	p("refuse it; ibscript's own functions take a record wherever they take a table of fields. Keys\n")
	p("(`m_key`, `sm_key`, `cc_key`) are never shown: `\"<masked>\"` when the MAD carried one, else the zero\n")
	p("hex string ([security](security.md)).\n")
	p("Globals `help(x)`, `ls(attribute)` and `show(...)` print documentation, an attribute's fields\n")
	p("and values as the REPL shows them. The tables functions return are described field by field\n")
	p("under [Data model](#data-model).\n\n")
	p("Scripts have Lua 5.1's base, `package`, `table`, `string`, `math` and `coroutine` libraries and\n")
	p("part of `os` (`time`, `clock`, `date`, `getenv` (nil for the `IBSCRIPT_*KEY*` variables), and\n")
	p("`exit`, which ends the run with its status); no `io`, no `debug`, no loading of native code: a\n")
	p("plan touches files only through ibscript's functions (`dofile`, `loadfile`, `require`,\n")
	p("`fabric.load`, `fabric.save`, `plan.thresholds`), only under the paths the command line named\n")
	p("([security](security.md)), and reports through `plan`, so what it\n")
	p("does is what its report says. Why, and how ibscript corrects gopher-lua where it differs from Lua\n")
	p("5.1, is in [Lua in ibscript](lua.md).\n\n")
	p("%s\n", FabricSupport)
	// The sim module comes last: it exists only on sim backends.
	mods := append(Modules(), SimModule())
	p("| module | what |\n| --- | --- |\n")
	for _, m := range mods {
		p("| [`%s`](#%s) | %s |\n", m.Name, m.Name, m.Summary)
	}
	for _, m := range mods {
		p("\n## %s\n\n%s.\n", m.Name, upperFirst(m.Summary))
		if m.Name == "sa" {
			p("\nKnown limitation: through `--fabric ibsim:` (OpenSM under umad2sim) an SA answer longer than\n")
			p("one MAD is incomplete (a `get_table` of more than a few records, `multipath`): ibsim has no RMPP\n")
			p("and OpenSM leaves RMPP to a kernel umad2sim does not have. One-record queries work; the embedded\n")
			p("simulator and real HCAs (the kernel does RMPP) are not affected.\n")
		}
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
	writeDataModel(bw)
	writeAttributes(p)
	return bw.Flush()
}

// writeAttributes documents every attribute and record of the schema
// (mad/internal/madgen) with its rows: the tables smp.get, perf.get,
// sa.get_table, mad.decode and ls() return.
func writeAttributes(p func(string, ...any)) {
	p("\n## Attributes and records\n\n")
	p("Every attribute and record the functions above return, from the schema the codecs are\n")
	p("generated from (`mad/internal/madgen`): the Lua key of each field, its IBA name, where it is\n")
	p("(byte.bit and width in bits, as the IBA tables place it) and how it is shown. Tables of equal\n")
	p("entries are one row (`port0` .. `port63`, entry i that many bits after the first). SA records\n")
	p("also give the ComponentMask bit that selects a field in `sa.get_table` templates.\n")
	type section struct {
		title, how string
		layouts    []*mad.Layout
		enums      func(id uint16, field string) map[uint64]string
	}
	none := func(uint16, string) map[uint64]string { return nil }
	var recs []*mad.Layout
	comps := map[*mad.Layout][]int{}
	for _, a := range sa.Attrs() {
		recs = append(recs, a.Layout)
		comps[a.Layout] = a.Comp
	}
	for _, sec := range []section{
		{"SMP attributes", "`smp.get(target, name, modifier)`", smp.Layouts(), smp.EnumNames},
		{"PerfMgt attributes", "`perf.get(target, port, name)`", perf.Layouts(), perf.EnumNames},
		{"Congestion Control attributes", "`cc.get(target, name, modifier)`", cc.Layouts(), cc.EnumNames},
		{"SA records", "`sa.get_table(name, template)`", recs, none},
	} {
		p("\n### %s\n\nRead with %s.\n", sec.title, sec.how)
		for _, l := range sec.layouts {
			p("\n#### %s\n\nAttribute ID 0x%04x, %d bytes.", l.Name, l.ID, l.Size)
			if l.Mod != "" {
				p(" Modifier: %s.", strings.TrimSuffix(l.Mod, "."))
			}
			if l.Doc != "" {
				p(" %s", l.Doc)
			}
			p("\n\n| key | IBA name | at | bits | shown as | |\n| --- | --- | --- | --- | --- | --- |\n")
			c := comps[l]
			for _, g := range fieldGroups(l.Fields) {
				f := l.Fields[g.rows[0]]
				key, name := "`"+f.Key()+"`", f.Name
				at := fmt.Sprintf("%d.%d", f.Bit/8, f.Bit%8)
				if len(g.rows) > 1 {
					last := l.Fields[g.rows[len(g.rows)-1]]
					key += " .. `" + last.Key() + "`"
					name += " .. " + last.Name
					at += fmt.Sprintf(" + %d bits × i", g.stride)
				}
				note := f.Doc
				if c != nil && c[g.rows[0]] >= 0 {
					plus := ""
					if len(g.rows) > 1 {
						plus = " + i"
					}
					note = strings.TrimSuffix(strings.TrimSpace(fmt.Sprintf("component %d%s; %s", c[g.rows[0]], plus, note)), ";")
				}
				kind := kindName(f)
				if mad.IsKeyField(f.Name) {
					kind = "hex string, `\"<masked>\"` when set"
				}
				if names := sec.enums(l.ID, f.Name); len(names) > 0 {
					vs := make([]uint64, 0, len(names))
					for v := range names {
						vs = append(vs, v)
					}
					slices.Sort(vs)
					var parts []string
					for _, v := range vs {
						parts = append(parts, fmt.Sprintf("%d %s", v, names[v]))
					}
					kind += ": " + strings.Join(parts, ", ")
				}
				p("| %s | %s | %s | %d | %s | %s |\n", key, name, at, f.Width, kind, note)
			}
		}
	}
}

// fieldGroup is the rows of one table of equal entries (Name0, Name1, ...
// at a regular stride, possibly interleaved with another table's), or one
// row.
type fieldGroup struct {
	rows   []int // indexes into the layout's fields
	stride int
}

// fieldGroups groups the rows of fs, in order of first appearance.
func fieldGroups(fs []mad.Field) []fieldGroup {
	byBase := map[string][]int{}
	for i, f := range fs {
		if b := strings.TrimRight(f.Name, "0123456789"); b != f.Name {
			byBase[b] = append(byBase[b], i)
		}
	}
	done := map[int]bool{}
	var out []fieldGroup
	for i, f := range fs {
		if done[i] {
			continue
		}
		g := fieldGroup{rows: []int{i}}
		if idx := byBase[strings.TrimRight(f.Name, "0123456789")]; len(idx) > 1 && idx[0] == i {
			stride := fs[idx[1]].Bit - f.Bit
			ok := true
			for k, j := range idx {
				r := fs[j]
				if r.Name != fmt.Sprintf("%s%d", strings.TrimRight(f.Name, "0123456789"), k) ||
					r.Width != f.Width || r.Kind != f.Kind || r.Bit != f.Bit+k*stride {
					ok = false
				}
			}
			if ok {
				g = fieldGroup{rows: idx, stride: stride}
			}
		}
		for _, j := range g.rows {
			done[j] = true
		}
		out = append(out, g)
	}
	return out
}

func kindName(f mad.Field) string {
	switch f.Kind {
	case mad.Hex:
		if f.Width > 52 {
			return "hex string"
		}
		return "number (hex)"
	case mad.String:
		return "string"
	case mad.Bytes:
		return "hex string"
	}
	return "number"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// FabricSupport is the table of what each kind of fabric supports, which
// docs/lua-api.md and the README show.
const FabricSupport = `What each fabric supports (` + "`--fabric`" + `: ` + "`umad:`" + ` on an InfiniBand or a RoCE port, ` + "`sim:`" + `, ` + "`ibsim:`" + `):

| | InfiniBand (kernel) | RoCE (kernel; Soft-RoCE too) | embedded simulator | ibsim |
| --- | --- | --- | --- | --- |
| SMPs (` + "`smp`" + `, discovery, the diag tools) | yes | no: no QP0 (refused naming RoCE; the kernel's EPROTONOSUPPORT) | yes | yes |
| GMPs by LID (` + "`perf`" + `, ` + "`cc`" + `, ` + "`umad.send{lid=}`" + `) | yes | no: no LIDs (use ` + "`gid:`" + `) | yes | yes |
| GRH (` + "`umad.send{gid=}`" + `, ` + "`gid:`" + ` targets, ` + "`grh`" + ` in ` + "`umad.recv`" + `) | yes: global routing, LID-routed | needed on every MAD (EINVAL without) | yes | no: its protocol has no GRH; refused (EINVAL) |
| SA (` + "`sa`" + `, PathRecords, traps) | yes (the SM's) | no: no SM | yes (built in) | yes (OpenSM's) |
| RDMA CM by ` + "`{lid=}`" + `/` + "`{gid=}`" + ` (AF_IB) | yes (kernel rdma_cm) | no: bind fails ENODEV | yes (user-space IB CM) | yes (user-space IB CM) |
| RDMA CM by ` + "`{ip=}`" + ` (AF_INET, AF_INET6) | yes: IPoIB netdevs | yes: the NIC's addresses | yes: topology ` + "`# ipoib`" + ` lines, ` + "`sim.ipoib`" + ` | Go only: ` + "`rdmacm.Options.IPoIB`" + ` |
| IB CM (class 0x07) | the kernel's ib_cm | the kernel's ib_cm | ibscript's (rdmacm/ibcm) | ibscript's (rdmacm/ibcm) |
| Planes (` + "`umad.get_smi_gsi_pairs`" + `) | yes: SMI/GSI pairs from sysfs as libibumad finds them; SMPs leave through the SMI device, the rest through the GSI device | no: RoCE ports take no part in pairing | yes: a topology's ` + "`# planarized`" + ` CAs (docs/planes.md) pair NODE (its plane ports: SMPs) with NODE:gsi (the rest); every other CA is its own pair | every CA its own pair |
`
