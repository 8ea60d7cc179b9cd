package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// GraphSchema names the JSON graph's layout (docs/diag/topology.schema.json).
const GraphSchema = "ibscript.topology.graph.v1"

// Graph is the fabric as a graph: every node and every cable.
type Graph struct {
	Schema string      `json:"schema"`
	Nodes  []GraphNode `json:"nodes"`
	Links  []GraphLink `json:"links"`
}

// GraphNode is one node of the graph.
type GraphNode struct {
	ID       string `json:"id"`   // ibnetdiscover's node id: "S-0002c90300001234"
	Type     string `json:"type"` // "Switch", "CA", "Router"
	GUID     string `json:"guid"`
	Name     string `json:"name"` // the node-name-map's name, else the description
	NumPorts int    `json:"num_ports"`
	LID      uint16 `json:"lid,omitempty"` // a switch's port 0 LID, a CA's first port's
	// Slurm is the name the Slurm formats give it (a switch's SwitchName,
	// a CA's host); "" where they leave it out.
	Slurm string `json:"slurm,omitempty"`
	// Level is a switch's level in the Slurm tree (0: a leaf); absent
	// where the tree leaves it out.
	Level *int `json:"level,omitempty"`
	// Island numbers the switch's island (from 1); absent on CAs and
	// routers.
	Island int `json:"island,omitempty"`
	// Planarized marks a planarized CA and Plane is a switch's plane,
	// where the fabric says so (a topology file's "# planarized" lines;
	// docs/planes.md); absent otherwise.
	Planarized bool `json:"planarized,omitempty"`
	Plane      int  `json:"plane,omitempty"`
}

// GraphLink is one cable, from the end that comes first in node order.
type GraphLink struct {
	Source     string `json:"source"`
	SourcePort int    `json:"source_port"`
	Target     string `json:"target"`
	TargetPort int    `json:"target_port"`
	// Width and Speed are the active link ("4X", "QDR", "HDR"); "" where
	// unknown (a topology file without them, a port down).
	Width string `json:"width,omitempty"`
	Speed string `json:"speed,omitempty"`
	// Plane is the plane the cable is on in a planarized fabric; absent
	// otherwise.
	Plane int `json:"plane,omitempty"`
}

// linkText is a port's active width and speed: "4X" and "QDR", "EDR",
// "FDR10"; "" where the port does not say.
func linkText(p *topo.Port) (width, speed string) {
	if p.WidthActive != 0 {
		width = smp.WidthName(p.WidthActive)
		if strings.HasPrefix(width, "undefined") {
			width = ""
		}
	}
	switch {
	case p.FDR10Active():
		speed = "FDR10"
	case p.SpeedActive != 0 || p.SpeedExtActive != 0:
		speed = smp.LinkSpeedText(p.SpeedActive, p.SpeedExtActive)
		if speed == "???" {
			speed = ""
		}
	}
	return width, speed
}

// nodeIDs gives every node an id: ibnetdiscover's ("S-<guid>"), with
// "#2", "#3" after a GUID met again (a file with one GUID twice).
func nodeIDs(f *topo.Fabric) map[*topo.Node]string {
	ids := make(map[*topo.Node]string, len(f.Nodes))
	seen := map[string]int{}
	for _, n := range f.Nodes {
		id := topo.NodeIDFor(n.Type, n.GUID)
		seen[id]++
		if c := seen[id]; c > 1 {
			id = fmt.Sprintf("%s#%d", id, c)
		}
		ids[n] = id
	}
	return ids
}

func firstLID(n *topo.Node) uint16 {
	for _, p := range n.Ports {
		if p != nil && p.LID != 0 {
			return p.LID
		}
	}
	return 0
}

// NewGraph makes the graph of f, with the Slurm names and levels of t
// (Build(f, o)).
func NewGraph(f *topo.Fabric, t *Tree, o *Options) *Graph {
	if o == nil {
		o = &Options{}
	}
	ids := nodeIDs(f)
	slurm := map[*topo.Node]*Switch{}
	for _, s := range t.Switches {
		if s.Node != nil {
			slurm[s.Node] = s
		}
	}
	host := map[*topo.Node]string{}
	for _, h := range t.Hosts {
		for _, n := range h.CAs {
			host[n] = h.Name
		}
	}
	g := &Graph{Schema: GraphSchema, Nodes: make([]GraphNode, 0, len(f.Nodes)), Links: []GraphLink{}}
	for _, n := range f.Nodes {
		gn := GraphNode{ID: ids[n], Type: n.Type.String(), GUID: fmt.Sprintf("0x%016x", n.GUID), Name: topo.MappedName(n, o.Names),
			NumPorts: n.NumPorts, LID: firstLID(n), Slurm: host[n]}
		if s := slurm[n]; s != nil {
			gn.Slurm, gn.Level, gn.Island = s.Name, &s.Level, s.Island
		}
		gn.Planarized = n.Planarized
		if n.Type == topo.Switch && n.Ports[0] != nil {
			gn.Plane = int(n.Ports[0].Plane)
		}
		g.Nodes = append(g.Nodes, gn)
	}
	for _, l := range f.Links() {
		w, s := linkText(l.A)
		g.Links = append(g.Links, GraphLink{Source: ids[l.A.Node], SourcePort: l.A.Num, Target: ids[l.B.Node], TargetPort: l.B.Num, Width: w, Speed: s,
			Plane: int(max(l.A.Plane, l.B.Plane))})
	}
	return g
}

// WriteJSON writes g as indented JSON.
func WriteJSON(w io.Writer, g *Graph) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}

// dotQuote quotes s as a DOT string: '"' and '\' escaped (a backslash
// would otherwise start one of Graphviz's label escapes).
func dotQuote(s string) string { return `"` + dotEscaper.Replace(s) + `"` }

var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ", "\r", " ")

// dotLabel quotes lines as one label, Graphviz's \n between them.
func dotLabel(lines ...string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = dotQuote(l)
		q[i] = q[i][1 : len(q[i])-1]
	}
	return `"` + strings.Join(q, `\n`) + `"`
}

// WriteDOT writes g as an undirected Graphviz graph: switches as boxes
// (leaves filled), CAs as ellipses, routers as diamonds, each labelled
// with its name and GUID; a cable as an edge with its ports at its ends
// and its width and speed in the middle.
func WriteDOT(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("graph \"infiniband\" {\n\tnode [fontsize=10];\n\tedge [fontsize=8];\n")
	for _, n := range g.Nodes {
		var attrs string
		switch n.Type {
		case "Switch":
			attrs = "shape=box"
			if n.Level != nil && *n.Level == 0 {
				attrs += ", style=filled, fillcolor=lightgrey"
			}
		case "Router":
			attrs = "shape=diamond"
		default:
			attrs = "shape=ellipse"
		}
		label := []string{n.Name, n.GUID}
		if n.Slurm != "" && n.Slurm != firstWord(n.Name) {
			label = append([]string{n.Slurm}, label...)
		}
		fmt.Fprintf(bw, "\t%s [label=%s, %s];\n", dotQuote(n.ID), dotLabel(label...), attrs)
	}
	for _, l := range g.Links {
		fmt.Fprintf(bw, "\t%s -- %s [taillabel=%s, headlabel=%s", dotQuote(l.Source), dotQuote(l.Target), dotQuote(fmt.Sprint(l.SourcePort)), dotQuote(fmt.Sprint(l.TargetPort)))
		if t := strings.TrimSpace(l.Width + " " + l.Speed); t != "" {
			fmt.Fprintf(bw, ", label=%s", dotQuote(t))
		}
		bw.WriteString("];\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// Formats are what Write writes.
func Formats() []string { return []string{"slurm-conf", "slurm-yaml", "dot", "json"} }

// Write builds f's tree and writes it in one of Formats.
func Write(w io.Writer, f *topo.Fabric, format string, o *Options) error {
	t, err := Build(f, o)
	if err != nil {
		return err
	}
	switch format {
	case "slurm-conf":
		return WriteSlurmConf(w, t)
	case "slurm-yaml":
		return WriteSlurmYAML(w, t, nil)
	case "dot":
		return WriteDOT(w, NewGraph(f, t, o))
	case "json":
		return WriteJSON(w, NewGraph(f, t, o))
	}
	return fmt.Errorf("format %q: want slurm-conf, slurm-yaml, dot or json", format)
}
