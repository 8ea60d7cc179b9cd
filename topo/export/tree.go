// Package export writes a fabric's topology for other programs: Slurm's
// topology.conf (topology/tree) and topology.yaml (tree and block, Slurm
// 24.11 and later), a Graphviz DOT graph and a JSON graph. It works on a
// topo.Fabric, discovered or loaded, and knows nothing of Lua or of the
// fabric's backends.
//
// # The choices (docs/topology.md)
//
//   - A leaf is a switch with at least one CA attached.
//   - A host is named by the first word of its name: the node-name-map's
//     name when the map names the CA, else its NodeDescription (sites set
//     it to "HOSTNAME mlx5_0"). CAs with the same first word are one host
//     (a host with several HCAs).
//   - A switch is named by the node-name-map's name (first word) when the
//     map names it, else by the host name in a managed switch's
//     description ("MF0;leaf01:MSB7700/U1" gives leaf01), else by the
//     description's first word when that is a valid name and no other
//     switch has it, else by ibnetdiscover's id ("S-0002c90300001234").
//   - Levels: leaves are level 0; another switch's level is its distance
//     in switch-to-switch links from the nearest leaf; a switch's children
//     are its neighbours one level below. Links between switches of one
//     level are not part of the tree.
//   - A host reaching several leaves (a multi-port or multi-HCA host on
//     different leaves) is listed under the first (Slurm warns of a node
//     under several leaves); the others are said in a comment.
//   - An island (switches connected to each other, not to the rest) is a
//     tree of its own; when no switch of an island reaches all its leaves
//     through its children, a switch named "ibtop<N>" is added above the
//     island's parentless switches, so that Slurm sees the fabric the
//     subnet manager routes as one.
//   - Routers, switches of islands without hosts, and CAs with no switch or
//     no usable name are left out of the Slurm formats, each named in a
//     comment; the DOT and JSON graphs have every node and link.
//
// # Concurrency
//
// The functions only read the fabric; a Tree is a plain value.
package export

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// Options says how nodes are named.
type Options struct {
	// Names is a node-name-map (topo.ParseNameMap): GUID to name.
	Names map[uint64]string
}

// Tree is the fabric as a scheduler's switch tree.
type Tree struct {
	// Switches are the switches of the tree, leaves first, then by level,
	// by island and by name.
	Switches []*Switch
	// Hosts are the named hosts, by name.
	Hosts []*Host
	// Notes say what the tree leaves out or lists once of several
	// places, and why, one line each.
	Notes []string
	// Islands is the number of islands with hosts.
	Islands int
}

// Switch is one switch of the tree.
type Switch struct {
	Name   string
	Node   *topo.Node // nil for the added top of an island ("ibtop1")
	Level  int
	Island int // from 1
	// Hosts are the hosts listed under a leaf, by name.
	Hosts []*Host
	// Children are the switches one level below it, by name.
	Children []*Switch
	parents  int
}

// Host is one host: the CAs whose names start with the same word.
type Host struct {
	Name string
	CAs  []*topo.Node
	// Leaf is the leaf it is listed under; Leaves are all it reaches.
	Leaf   *Switch
	Leaves []*Switch
}

// validName is what a Slurm node or switch name may hold here: no blank,
// '=', ',', '#' or brackets (hostlist syntax), at most 64 bytes (Slurm's
// limit on a switch name).
var validName = regexp.MustCompile(`^[A-Za-z0-9._+:@-]{1,64}$`)

// managedSwitch is a managed switch's NodeDescription: "MF0;HOST:MODEL/U1".
var managedSwitch = regexp.MustCompile(`^MF0;([^:;]+):`)

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// HostName is the host name a CA gets ("" when none is usable): the first
// word of its node-name-map name, else of its description.
func HostName(n *topo.Node, names map[uint64]string) string {
	w := firstWord(topo.MappedName(n, names))
	if !validName.MatchString(w) {
		return ""
	}
	return w
}

// switchNames names every switch of f (see the package's choices).
func switchNames(f *topo.Fabric, names map[uint64]string) map[*topo.Node]string {
	out := map[*topo.Node]string{}
	cand := map[*topo.Node]string{}
	count := map[string]int{}
	for _, n := range f.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		var c string
		if s, ok := names[n.GUID]; ok {
			c = firstWord(topo.MappedName(n, names))
			if !validName.MatchString(c) {
				c = firstWord(s)
			}
		} else if m := managedSwitch.FindStringSubmatch(n.Desc); m != nil {
			c = m[1]
		} else {
			c = firstWord(topo.MappedName(n, nil))
		}
		if validName.MatchString(c) {
			cand[n] = c
			count[c]++
		}
	}
	for _, n := range f.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		if c, ok := cand[n]; ok && count[c] == 1 {
			out[n] = c
		} else {
			out[n] = topo.NodeIDFor(n.Type, n.GUID)
		}
	}
	return out
}

// Build makes the switch tree of f.
func Build(f *topo.Fabric, o *Options) (*Tree, error) {
	if o == nil {
		o = &Options{}
	}
	t := &Tree{}
	swNames := switchNames(f, o.Names)
	sw := map[*topo.Node]*Switch{}
	used := map[string]*topo.Node{}
	for _, n := range f.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		name := swNames[n]
		if prev := used[name]; prev != nil {
			return nil, fmt.Errorf("topology: switches 0x%016x and 0x%016x are both named %q (two nodes with one GUID?)", prev.GUID, n.GUID, name)
		}
		used[name] = n
		sw[n] = &Switch{Name: name, Node: n, Level: -1}
	}
	hosts := t.collectHosts(f, o.Names, sw)
	islands := islandsOf(f, sw)
	t.levels(f, sw, islands)
	for _, h := range hosts {
		t.Hosts = append(t.Hosts, h)
	}
	slices.SortFunc(t.Hosts, func(a, b *Host) int { return naturalCmp(a.Name, b.Name) })
	for _, h := range t.Hosts {
		h.Leaf = h.Leaves[0]
		h.Leaf.Hosts = append(h.Leaf.Hosts, h)
		if len(h.Leaves) > 1 {
			var others []string
			for _, l := range h.Leaves[1:] {
				others = append(others, l.Name)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("host %s is listed under %s only; it is also on %s", h.Name, h.Leaf.Name, strings.Join(others, ", ")))
		}
	}
	t.prune()
	if err := t.tops(islands, used); err != nil {
		return nil, err
	}
	slices.SortStableFunc(t.Switches, func(a, b *Switch) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.Island, b.Island), naturalCmp(a.Name, b.Name))
	})
	return t, nil
}

// collectHosts groups the CAs into hosts, each with the leaves it
// reaches (in fabric order), and notes the CAs left out.
func (t *Tree) collectHosts(f *topo.Fabric, names map[uint64]string, sw map[*topo.Node]*Switch) map[string]*Host {
	hosts := map[string]*Host{}
	for _, n := range f.Nodes {
		switch n.Type {
		case topo.Router:
			t.Notes = append(t.Notes, fmt.Sprintf("left out: router 0x%016x %q (neither a host nor a switch)", n.GUID, topo.MappedName(n, names)))
			continue
		case topo.CA:
		default:
			continue
		}
		var leaves []*Switch
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			if s := sw[p.Remote.Node]; s != nil && !slices.Contains(leaves, s) {
				leaves = append(leaves, s)
			}
		}
		name := HostName(n, names)
		switch {
		case len(leaves) == 0:
			t.Notes = append(t.Notes, fmt.Sprintf("left out: CA 0x%016x %q (no switch attached)", n.GUID, topo.MappedName(n, names)))
			continue
		case name == "":
			t.Notes = append(t.Notes, fmt.Sprintf("left out: CA 0x%016x %q (no usable host name; a node-name-map can give one)", n.GUID, topo.MappedName(n, names)))
			continue
		}
		h := hosts[name]
		if h == nil {
			h = &Host{Name: name}
			hosts[name] = h
		}
		h.CAs = append(h.CAs, n)
		for _, l := range leaves {
			if !slices.Contains(h.Leaves, l) {
				h.Leaves = append(h.Leaves, l)
			}
		}
	}
	return hosts
}

// islandsOf numbers the switches' connected components (switch-to-switch
// links), from 1 in fabric order.
func islandsOf(f *topo.Fabric, sw map[*topo.Node]*Switch) [][]*Switch {
	var out [][]*Switch
	for _, n := range f.Nodes {
		s := sw[n]
		if s == nil || s.Island != 0 {
			continue
		}
		id := len(out) + 1
		s.Island = id
		comp := []*Switch{s}
		for i := 0; i < len(comp); i++ {
			for _, nb := range neighbours(comp[i], sw) {
				if nb.Island == 0 {
					nb.Island = id
					comp = append(comp, nb)
				}
			}
		}
		out = append(out, comp)
	}
	return out
}

// neighbours are the switches linked to s, once each, in port order.
func neighbours(s *Switch, sw map[*topo.Node]*Switch) []*Switch {
	var out []*Switch
	for _, p := range s.Node.Ports {
		if p == nil || p.Remote == nil {
			continue
		}
		if nb := sw[p.Remote.Node]; nb != nil && nb != s && !slices.Contains(out, nb) {
			out = append(out, nb)
		}
	}
	return out
}

// levels sets each switch's level (breadth first from the leaves) and
// children, and keeps the switches of islands that have a leaf.
func (t *Tree) levels(f *topo.Fabric, sw map[*topo.Node]*Switch, islands [][]*Switch) {
	leaf := map[*Switch]bool{}
	for _, n := range f.Nodes {
		if n.Type != topo.CA {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && sw[p.Remote.Node] != nil {
				leaf[sw[p.Remote.Node]] = true
			}
		}
	}
	for _, comp := range islands {
		var queue []*Switch
		for _, s := range comp {
			if leaf[s] {
				s.Level = 0
				queue = append(queue, s)
			}
		}
		if len(queue) == 0 {
			for _, s := range comp {
				t.Notes = append(t.Notes, fmt.Sprintf("left out: switch %s 0x%016x (its island has no hosts)", s.Name, s.Node.GUID))
			}
			continue
		}
		t.Islands++
		for i := 0; i < len(queue); i++ {
			for _, nb := range neighbours(queue[i], sw) {
				if nb.Level < 0 {
					nb.Level = queue[i].Level + 1
					queue = append(queue, nb)
				}
			}
		}
		for _, s := range comp {
			for _, nb := range neighbours(s, sw) {
				if nb.Level == s.Level-1 {
					s.Children = append(s.Children, nb)
					nb.parents++
				}
			}
			slices.SortFunc(s.Children, func(a, b *Switch) int { return naturalCmp(a.Name, b.Name) })
			t.Switches = append(t.Switches, s)
		}
	}
}

// prune drops the switches with no host below them (a leaf whose hosts
// are all listed under another, and what is above only such leaves):
// Slurm refuses a switch with neither nodes nor child switches.
func (t *Tree) prune() {
	slices.SortStableFunc(t.Switches, func(a, b *Switch) int { return cmp.Compare(a.Level, b.Level) })
	live := map[*Switch]bool{}
	kept := t.Switches[:0]
	for _, s := range t.Switches {
		s.Children = slices.DeleteFunc(s.Children, func(c *Switch) bool { return !live[c] })
		if len(s.Hosts) == 0 && len(s.Children) == 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("left out: switch %s 0x%016x (no host below it is listed under it)", s.Name, s.Node.GUID))
			continue
		}
		live[s] = true
		kept = append(kept, s)
	}
	t.Switches = kept
	for _, s := range kept {
		s.parents = 0
	}
	for _, s := range kept {
		for _, c := range s.Children {
			c.parents++
		}
	}
}

// tops adds a top switch to each island in which no switch reaches all
// the island's leaves through its children.
func (t *Tree) tops(islands [][]*Switch, used map[string]*topo.Node) error {
	n := 0
	inTree := make(map[*Switch]bool, len(t.Switches))
	for _, s := range t.Switches {
		inTree[s] = true
	}
	for _, comp := range islands {
		if comp[0].Level < 0 {
			continue
		}
		leaves := 0
		var kept []*Switch
		for _, s := range comp {
			if inTree[s] {
				kept = append(kept, s)
				if s.Level == 0 {
					leaves++
				}
			}
		}
		if len(kept) == 0 {
			continue
		}
		comp = kept
		whole := false
		for _, s := range comp {
			if s.parents == 0 && reach(s, map[*Switch]bool{}) == leaves {
				whole = true
				break
			}
		}
		if whole {
			continue
		}
		n++
		top := &Switch{Name: fmt.Sprintf("ibtop%d", n), Island: comp[0].Island}
		if prev := used[top.Name]; prev != nil {
			return fmt.Errorf("topology: switch 0x%016x is named %q, the name of the switch added above island %d", prev.GUID, top.Name, top.Island)
		}
		for _, s := range comp {
			if s.parents == 0 {
				top.Children = append(top.Children, s)
				top.Level = max(top.Level, s.Level+1)
			}
		}
		slices.SortFunc(top.Children, func(a, b *Switch) int { return naturalCmp(a.Name, b.Name) })
		t.Switches = append(t.Switches, top)
	}
	return nil
}

// reach counts the leaves below s.
func reach(s *Switch, seen map[*Switch]bool) int {
	if seen[s] {
		return 0
	}
	seen[s] = true
	if s.Level == 0 {
		return 1
	}
	c := 0
	for _, ch := range s.Children {
		c += reach(ch, seen)
	}
	return c
}

// naturalCmp orders names with their digit runs as numbers: node2 before
// node10.
func naturalCmp(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb), cmp.Compare(da, db)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
