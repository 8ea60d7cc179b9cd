package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// header is the comment that starts the Slurm files.
func (t *Tree) header(w io.Writer, file string) {
	leaves := 0
	for _, s := range t.Switches {
		if s.Level == 0 {
			leaves++
		}
	}
	fmt.Fprintf(w, "# %s written by ibscript topology\n# switches: %d (leaves, the switches with CAs attached: %d), hosts: %d, islands: %d\n",
		file, len(t.Switches), leaves, len(t.Hosts), t.Islands)
}

// notes writes the tree's notes as comments.
func (t *Tree) notes(w io.Writer) {
	for _, o := range t.Notes {
		fmt.Fprintf(w, "# %s\n", o)
	}
}

func hostNames(hs []*Host) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Name
	}
	return out
}

func switchList(ss []*Switch) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// comment says what a switch is: its GUID and description, or that
// ibscript added it.
func (s *Switch) comment() string {
	if s.Node == nil {
		return fmt.Sprintf("added above island %d: no switch of it reaches all its leaves", s.Island)
	}
	return fmt.Sprintf("0x%016x %q", s.Node.GUID, strings.TrimSpace(topo.MappedName(s.Node, nil)))
}

// WriteSlurmConf writes t as Slurm's topology.conf for topology/tree:
// one SwitchName line per switch, leaves with Nodes=, the others with
// Switches= (topology.conf(5)), each after a comment with its GUID.
func WriteSlurmConf(w io.Writer, t *Tree) error {
	bw := bufio.NewWriter(w)
	t.header(bw, "topology.conf for Slurm's topology/tree")
	t.notes(bw)
	for _, s := range t.Switches {
		fmt.Fprintf(bw, "# %s\n", s.comment())
		if s.Level == 0 {
			if len(s.Hosts) == 0 {
				// Every host of this leaf is listed under another;
				// an empty Nodes= would be an error.
				fmt.Fprintf(bw, "SwitchName=%s\n", s.Name)
				continue
			}
			fmt.Fprintf(bw, "SwitchName=%s Nodes=%s\n", s.Name, Hostlist(hostNames(s.Hosts)))
			continue
		}
		fmt.Fprintf(bw, "SwitchName=%s Switches=%s\n", s.Name, Hostlist(switchList(s.Children)))
	}
	return bw.Flush()
}

// YAMLOptions are topology.yaml's names.
type YAMLOptions struct {
	// Name is the tree topology's name (default "infiniband"); the block
	// topology is Name + "-blocks".
	Name string
}

// WriteSlurmYAML writes t as Slurm's topology.yaml (Slurm 24.11 and
// later, topology.yaml(5)): a tree topology (the cluster default) with
// the switches as topology.conf lists them, and a block topology whose
// blocks are the leaves with their hosts (a leaf whose hosts are all
// listed elsewhere has none and is left out) and whose one block size is
// the largest power of two no block is smaller than.
func WriteSlurmYAML(w io.Writer, t *Tree, o *YAMLOptions) error {
	name := "infiniband"
	if o != nil && o.Name != "" {
		name = o.Name
	}
	if !validName.MatchString(name) {
		return fmt.Errorf("topology name %q: want letters, digits and . _ + : @ - (at most 64)", name)
	}
	bw := bufio.NewWriter(w)
	t.header(bw, "topology.yaml (Slurm 24.11+)")
	t.notes(bw)
	fmt.Fprintf(bw, "- topology: %s\n  cluster_default: true\n  tree:\n    switches:\n", name)
	if len(t.Switches) == 0 {
		bw.WriteString("    []\n")
	}
	for _, s := range t.Switches {
		fmt.Fprintf(bw, "    # %s\n", s.comment())
		fmt.Fprintf(bw, "    - switch: %s\n", s.Name)
		switch {
		case s.Level > 0:
			fmt.Fprintf(bw, "      children: %s\n", yamlString(Hostlist(switchList(s.Children))))
		case len(s.Hosts) > 0:
			fmt.Fprintf(bw, "      nodes: %s\n", yamlString(Hostlist(hostNames(s.Hosts))))
		}
	}
	var blocks []*Switch
	smallest := 0
	for _, s := range t.Switches {
		if s.Level == 0 && len(s.Hosts) > 0 {
			blocks = append(blocks, s)
			if smallest == 0 || len(s.Hosts) < smallest {
				smallest = len(s.Hosts)
			}
		}
	}
	if len(blocks) > 0 {
		size := 1
		for size*2 <= smallest {
			size *= 2
		}
		fmt.Fprintf(bw, "- topology: %s-blocks\n  cluster_default: false\n  block:\n    block_sizes:\n      - %d\n    blocks:\n", name, size)
		for _, s := range blocks {
			fmt.Fprintf(bw, "    - block: %s\n      nodes: %s\n", s.Name, yamlString(Hostlist(hostNames(s.Hosts))))
		}
	}
	return bw.Flush()
}

// yamlString quotes s for YAML when a plain scalar would read otherwise
// (a number, a boolean, null, or a leading indicator such as '[').
func yamlString(s string) string {
	plain := s != "" && !strings.ContainsAny(s[:1], "[]{}!&*|>'\"%@`#,?:-") && !strings.ContainsAny(s, ": #")
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~":
		plain = false
	}
	if plain {
		if _, err := fmt.Sscanf(s, "%g", new(float64)); err == nil {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
