package diag

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo/ibndcache"
)

// ibcacheedit (infiniband-diags' ibcacheedit.c): rewrites an ibnetdiscover
// --cache file with node, system image and port GUIDs replaced. The C tool
// loads the file into libibnetdisc's fabric, edits the nodes and ports in
// memory and caches the fabric again, so every reference to an edited
// GUID (a node's port keys, a port's owner, the other end of a cable)
// follows; this edits the file's records the same way and writes them in
// the same order. The NodeInfo and PortInfo blocks keep the GUIDs they
// hold, but for --sysimgguid's, which is NodeInfo's SystemImageGUID.

// IBCacheEditOptions are ibcacheedit's: BEFOREGUID:AFTERGUID pairs (and
// NODEGUID:BEFOREGUID:AFTERGUID for a port), numbers as strtoull reads
// them (0x hex, 0 octal, decimal; no number reads as 0).
type IBCacheEditOptions struct {
	SwitchGUID string `flag:",switchguid" arg:"BEFOREGUID:AFTERGUID" help:"Specify before and after switchguid to edit" lua:"switchguid"`
	CAGUID     string `flag:",caguid" arg:"BEFOREGUID:AFTERGUID" help:"Specify before and after caguid to edit" lua:"caguid"`
	SysImgGUID string `flag:",sysimgguid" arg:"BEFOREGUID:AFTERGUID" help:"Specify before and after sysimgguid to edit" lua:"sysimgguid"`
	PortGUID   string `flag:",portguid" arg:"NODEGUID:BEFOREGUID:AFTERGUID" help:"Specify before and after port guid to edit" lua:"portguid"`
	Orig       string `pos:"0" lua:"orig"`
	New        string `pos:"1" lua:"new"`
}

// ibCacheEditTool is ibcacheedit.
var ibCacheEditTool = NewTool(Tool{
	Name:    "ibcacheedit",
	Lua:     "ibcacheedit",
	Summary: "edit the GUIDs of an ibnetdiscover cache file",
	Args:    "<orig.cache> <new.cache>",
	// ibdiag_process_opts(..., "CDdeGKLPstvy", ...): none of the fabric's
	// options.
	Exclude: "C,D,d,e,G,K,L,P,s,t,v,y",
	Offline: true,
	// $TMP is the test's temporary directory (TestToolSchemas).
	Example: []string{"--caguid", "0x100000:0x100099", "../../topo/ibndcache/testdata/mixed-router.cache", "$TMP/new.cache"},
	LuaDoc: `ibcacheedit({orig = path, new = path, switchguid = "BEFORE:AFTER", caguid = "BEFORE:AFTER", sysimgguid = "BEFORE:AFTER", portguid = "NODE:BEFORE:AFTER"}) -> ` +
		`{orig, new, edits = {{edit, node_guid, before, after, changed}}}: writes orig's cache with the GUIDs replaced, as ibcacheedit does`,
	LuaExample: `local ok, err = pcall(diag.ibcacheedit, {orig = "missing.cache", new = "new.cache", caguid = "0x1:0x2"})
print(ok, err)`,
}, IBCacheEditOptions{}, IBCacheEditRun, func(io.Writer, *IBCacheEdit) error { return nil })

// IBCacheEdit is what ibcacheedit did (the C tool prints nothing).
type IBCacheEdit struct {
	Orig  string      `json:"orig"`
	New   string      `json:"new"`
	Edits []CacheEdit `json:"edits"`
}

// CacheEdit is one edit: which, its GUIDs as hex, and how many records
// changed.
type CacheEdit struct {
	Edit     string `json:"edit"` // "switchguid", "caguid", "sysimgguid", "portguid"
	NodeGUID string `json:"node_guid,omitempty"`
	Before   string `json:"before"`
	After    string `json:"after"`
	Changed  int    `json:"changed"`
}

// UsageError is a command line the C tool refuses with its usage, exit
// status 2 (an option's value it cannot read).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// strtoull is C's strtoull(s, NULL, 0): the number at the front, 0 when
// there is none, the largest value when it overflows.
func strtoull(s string) uint64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	base := 10
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isDigit(s[2], 16):
		base, s = 16, s[2:]
	case len(s) > 0 && s[0] == '0':
		base = 8
	}
	end := 0
	for end < len(s) && isDigit(s[end], base) {
		end++
	}
	v, err := strconv.ParseUint(s[:end], base, 64)
	if err != nil && end > 0 {
		v = ^uint64(0) // ERANGE: ULLONG_MAX
	}
	if neg {
		v = -v
	}
	return v
}

func isDigit(c byte, base int) bool {
	var d int
	switch {
	case c >= '0' && c <= '9':
		d = int(c - '0')
	case c >= 'a' && c <= 'z':
		d = int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		d = int(c-'A') + 10
	default:
		return false
	}
	return d < base
}

// splitGUIDs reads "A:B" (n 2) or "N:A:B" (n 3) as ibcacheedit's
// parse_beforeafter and parse_guidbeforeafter: each ':' must be followed
// by something, the last part takes the rest.
func splitGUIDs(s string, n int) ([]uint64, error) {
	parts := strings.SplitN(s, ":", n)
	if len(parts) < n || slices.Contains(parts[1:], "") {
		return nil, &UsageError{Msg: fmt.Sprintf("invalid input '%s'", s)}
	}
	out := make([]uint64, n)
	for i, p := range parts {
		out[i] = strtoull(p)
	}
	return out, nil
}

// cacheGraph is a cache file's records with their references resolved,
// as libibnetdisc's loaded fabric holds them: a node's ports, a port's
// owner and the other end of its cable.
type cacheGraph struct {
	f      *ibndcache.File
	keys   [][]int // node -> the port records of its keys
	owner  []int   // port -> node, -1 for none
	remote []int   // port -> port, -1 for none
	from   int     // the node discovery started from, -1 for none
}

func newCacheGraph(f *ibndcache.File) *cacheGraph {
	g := &cacheGraph{f: f, keys: make([][]int, len(f.Nodes)), owner: make([]int, len(f.Ports)), remote: make([]int, len(f.Ports))}
	port := make(map[ibndcache.PortKey]int, len(f.Ports))
	for i, p := range f.Ports {
		port[ibndcache.PortKey{GUID: p.GUID, Num: p.Num}] = i
	}
	node := make(map[uint64]int, len(f.Nodes))
	g.from = -1
	for i, n := range f.Nodes {
		if n.GUID == f.FromNode && g.from < 0 {
			g.from = i
		}
		node[n.GUID] = i
		for _, k := range n.Ports {
			if j, ok := port[k]; ok {
				g.keys[i] = append(g.keys[i], j)
			} else {
				g.keys[i] = append(g.keys[i], -1)
			}
		}
	}
	for i, p := range f.Ports {
		g.owner[i], g.remote[i] = -1, -1
		if n, ok := node[p.NodeGUID]; ok {
			g.owner[i] = n
		}
		if j, ok := port[p.Remote]; ok && p.HasRemote {
			g.remote[i] = j
		}
	}
	return g
}

// sync writes the references back from the edited GUIDs, as
// ibnd_cache_fabric writes them from its pointers (the header's node
// discovery started from too).
func (g *cacheGraph) sync() {
	if g.from >= 0 {
		g.f.FromNode = g.f.Nodes[g.from].GUID
	}
	for i := range g.f.Nodes {
		for k, j := range g.keys[i] {
			if j >= 0 {
				g.f.Nodes[i].Ports[k] = ibndcache.PortKey{GUID: g.f.Ports[j].GUID, Num: g.f.Ports[j].Num}
			}
		}
	}
	for i := range g.f.Ports {
		if n := g.owner[i]; n >= 0 {
			g.f.Ports[i].NodeGUID = g.f.Nodes[n].GUID
		}
		if j := g.remote[i]; j >= 0 {
			g.f.Ports[i].Remote = ibndcache.PortKey{GUID: g.f.Ports[j].GUID, Num: g.f.Ports[j].Num}
		}
	}
}

// nodePorts are node i's port records, by port number (p 0..NumPorts,
// as node->ports[] holds them).
func (g *cacheGraph) nodePorts(i int) []int {
	var out []int
	for j, n := range g.owner {
		if n == i && int(g.f.Ports[j].Num) <= int(g.f.Nodes[i].NumPorts) {
			out = append(out, j)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return int(g.f.Ports[a].Num) - int(g.f.Ports[b].Num) })
	return out
}

// setNodeGUID is replace_node_guid: the node's GUID, and on a switch its
// ports' (a switch's ports share its GUID).
func (g *cacheGraph) setNodeGUID(i int, guid uint64) {
	g.f.Nodes[i].GUID = guid
	if g.f.Nodes[i].Type == 2 {
		for _, j := range g.nodePorts(i) {
			g.f.Ports[j].GUID = guid
		}
	}
}

// IBCacheEditRun reads o.Orig, edits it and writes o.New, as ibcacheedit.
func IBCacheEditRun(ctx context.Context, env *Env, o IBCacheEditOptions) (*IBCacheEdit, error) {
	type edit struct {
		name  string
		n     int
		value string
		guids []uint64
	}
	edits := []*edit{{name: "switchguid", n: 2, value: o.SwitchGUID}, {name: "caguid", n: 2, value: o.CAGUID},
		{name: "sysimgguid", n: 2, value: o.SysImgGUID}, {name: "portguid", n: 3, value: o.PortGUID}}
	for _, e := range edits {
		if e.value == "" {
			continue
		}
		var err error
		if e.guids, err = splitGUIDs(e.value, e.n); err != nil {
			return nil, err
		}
	}
	switch {
	case o.Orig == "":
		return nil, &ToolError{Msg: "original cache file not specified"}
	case o.New == "":
		return nil, &ToolError{Msg: "new cache file not specified"}
	}
	for _, p := range []string{o.Orig, o.New} {
		if err := env.checkFile(p); err != nil {
			return nil, err
		}
	}
	cf, err := ibndcache.Read(o.Orig)
	if err == nil {
		_, err = cf.Fabric(o.Orig) // the references libibnetdisc's load checks
	}
	if err != nil {
		return nil, &ToolError{Msg: "loading original cached fabric failed", Err: err}
	}
	// The C tool writes the ports in the order its load left them in
	// (their GUIDs' hash buckets from before the edits).
	order := cf.LoadedPortOrder()
	g := newCacheGraph(cf)
	r := &IBCacheEdit{Orig: o.Orig, New: o.New, Edits: []CacheEdit{}}
	for _, e := range edits {
		if e.guids == nil {
			continue
		}
		ce, err := g.apply(e.name, e.guids)
		if err != nil {
			return nil, err
		}
		r.Edits = append(r.Edits, ce)
	}
	g.sync()
	ports := make([]ibndcache.Port, 0, len(order))
	for _, i := range order {
		ports = append(ports, cf.Ports[i])
	}
	cf.Ports = ports
	if err := env.writeCache(cf, o.New); err != nil {
		return nil, &ToolError{Msg: "caching new cache data failed", Err: err}
	}
	return r, nil
}

// apply makes one edit; an edit that finds nothing is the C tool's
// IBEXIT, with the GUID as %PRIx64 prints it.
func (g *cacheGraph) apply(name string, guids []uint64) (CacheEdit, error) {
	hex := func(v uint64) string { return fmt.Sprintf("0x%016x", v) }
	ce := CacheEdit{Edit: name, Before: hex(guids[len(guids)-2]), After: hex(guids[len(guids)-1])}
	before, after := guids[len(guids)-2], guids[len(guids)-1]
	nodes := g.f.Nodes
	switch name {
	case "switchguid", "caguid":
		typ := uint8(2)
		if name == "caguid" {
			typ = 1
		}
		for i := range nodes {
			if nodes[i].Type == typ && nodes[i].GUID == before {
				g.setNodeGUID(i, after)
				ce.Changed++
			}
		}
	case "sysimgguid":
		for i := range nodes {
			// The NodeInfo block's SystemImageGUID (mad_set_field64 of
			// IB_NODE_SYSTEM_GUID_F); the block's other bytes stay.
			var ni smp.NodeInfo
			if ni.UnmarshalBinary(nodes[i].Info[:]) != nil || ni.SystemImageGUID != before {
				continue
			}
			ni.SystemImageGUID = after
			b, err := ni.AppendBinary(nil)
			if err != nil {
				return ce, err
			}
			copy(nodes[i].Info[:], b)
			ce.Changed++
		}
	case "portguid":
		ce.NodeGUID = hex(guids[0])
		found := false
		for i := range nodes {
			if nodes[i].GUID != guids[0] {
				continue
			}
			found = true
			if nodes[i].Type == 2 {
				if nodes[i].GUID == before {
					g.setNodeGUID(i, after)
					ce.Changed++
				}
				continue
			}
			for _, j := range g.nodePorts(i) {
				if p := &g.f.Ports[j]; p.Num >= 1 && p.GUID == before {
					p.GUID = after
					ce.Changed++
					break
				}
			}
		}
		if !found {
			return ce, &ToolError{Msg: fmt.Sprintf("nodeguid = %x not found", guids[0])}
		}
	}
	if ce.Changed == 0 {
		return ce, &ToolError{Msg: fmt.Sprintf("%s = %x not found", name, before)}
	}
	return ce, nil
}

// writeCache writes cf to name: as ibnd_cache_fabric (the old file
// unlinked, a new one made) or through Env.WriteFile.
func (e *Env) writeCache(cf *ibndcache.File, name string) error {
	if e == nil || e.WriteFile == nil {
		return cf.Write(name)
	}
	b, err := cf.Encode()
	if err != nil {
		return err
	}
	return e.WriteFile(name, b, 0o644)
}
