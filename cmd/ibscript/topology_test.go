package main

import (
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/jsonschema"
	"go.yaml.in/yaml/v2"
)

var topologyFiles = []string{"fattree-50.net", "net.2sw2path4hca", "net.island", "net.mixed-3sw", "net.chassis", "net.odd-ring", "net.mixed-router"}

// needProgram finds a program a test runs, or skips the test without it;
// with CI=true (.ci/run installs it) a missing program fails.
func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (.ci/run installs it)", name, err)
		}
		t.Skipf("%s: %v", name, err)
	}
}

// slurmHostnames expands a hostlist as Slurm does (scontrol show
// hostnames, which reads a slurm.conf but needs no daemon).
func slurmHostnames(t *testing.T, expr string) []string {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=t\nSlurmctldHost=localhost\nAuthType=auth/none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("scontrol", "show", "hostnames", expr)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scontrol show hostnames %s: %v", expr, err)
	}
	return strings.Fields(string(out))
}

// checkTopologyYAML checks a topology.yaml against topology.yaml(5) of
// Slurm 24.11+ (Slurm 22.05, Debian's, cannot read one): a sequence of
// topologies, each with its name first, cluster_default a boolean and
// exactly one of block, flat and tree; a tree's switches each with a
// unique name of at most 64 bytes, children naming switches of the tree
// and nodes; a block topology's block_sizes growing by powers of two and
// its blocks, each uniquely named with at least the first size of nodes.
// It returns each topology's "switch: members" lines.
func checkTopologyYAML(t *testing.T, text string) map[string][]string {
	t.Helper()
	var doc []yaml.MapSlice
	if err := yaml.UnmarshalStrict([]byte(text), &doc); err != nil {
		t.Fatalf("not a sequence of mappings: %v\n%s", err, text)
	}
	out := map[string][]string{}
	defaults := 0
	for i, topo := range doc {
		if len(topo) == 0 || topo[0].Key != "topology" {
			t.Fatalf("topology %d: the first attribute is not topology: %v", i, topo)
		}
		name, ok := topo[0].Value.(string)
		if !ok || name == "" || out[name] != nil {
			t.Fatalf("topology %d: name %v: not a unique string", i, topo[0].Value)
		}
		out[name] = []string{}
		kinds := 0
		for _, kv := range topo[1:] {
			switch kv.Key {
			case "cluster_default":
				b, ok := kv.Value.(bool)
				if !ok {
					t.Errorf("%s: cluster_default %v is not a boolean", name, kv.Value)
				}
				if b {
					defaults++
				}
			case "flat":
				kinds++
			case "tree":
				kinds++
				out[name] = checkTree(t, name, kv.Value)
			case "block":
				kinds++
				out[name] = checkBlock(t, name, kv.Value)
			default:
				t.Errorf("%s: unknown attribute %v", name, kv.Key)
			}
		}
		if kinds != 1 {
			t.Errorf("%s: %d of block, flat and tree, want exactly one", name, kinds)
		}
	}
	if defaults != 1 {
		t.Errorf("%d topologies with cluster_default: true, want 1", defaults)
	}
	return out
}

// members reads a list of maps with the given name key and allowed keys.
func members(t *testing.T, where string, v any, nameKey string, keys ...string) []map[string]any {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: %T, want a sequence", where, v)
	}
	var out []map[string]any
	seen := map[string]bool{}
	for _, item := range list {
		m, ok := item.(yaml.MapSlice)
		if !ok {
			t.Fatalf("%s: item %T, want a mapping", where, item)
		}
		got := map[string]any{}
		for _, kv := range m {
			k, _ := kv.Key.(string)
			if k != nameKey && !slices.Contains(keys, k) {
				t.Errorf("%s: unknown attribute %v", where, kv.Key)
			}
			if _, ok := kv.Value.(string); !ok {
				t.Errorf("%s: %v: %v is not a string", where, k, kv.Value)
			}
			got[k] = kv.Value
		}
		name, _ := got[nameKey].(string)
		if name == "" || len(name) > 64 || seen[name] {
			t.Errorf("%s: %s %q: missing, longer than 64 bytes or not unique", where, nameKey, name)
		}
		seen[name] = true
		out = append(out, got)
	}
	return out
}

func mapOf(t *testing.T, where string, v any, keys ...string) map[string]any {
	t.Helper()
	m, ok := v.(yaml.MapSlice)
	if !ok {
		t.Fatalf("%s: %T, want a mapping", where, v)
	}
	out := map[string]any{}
	for _, kv := range m {
		k, _ := kv.Key.(string)
		if !slices.Contains(keys, k) {
			t.Errorf("%s: unknown attribute %v", where, kv.Key)
		}
		out[k] = kv.Value
	}
	return out
}

func checkTree(t *testing.T, name string, v any) []string {
	tree := mapOf(t, name+".tree", v, "switches")
	sws := members(t, name+".tree.switches", tree["switches"], "switch", "children", "nodes")
	known := map[string]bool{}
	for _, s := range sws {
		known[s["switch"].(string)] = true
	}
	var out []string
	for _, s := range sws {
		if (s["children"] == nil) == (s["nodes"] == nil) {
			t.Errorf("%s: switch %v has both or neither of children and nodes", name, s["switch"])
			continue
		}
		var kids []string
		if c, ok := s["children"].(string); ok {
			kids = slurmHostnames(t, c)
			for _, k := range kids {
				if !known[k] {
					t.Errorf("%s: switch %v: child %s is not a switch of the tree", name, s["switch"], k)
				}
			}
		} else {
			kids = slurmHostnames(t, s["nodes"].(string))
		}
		out = append(out, fmt.Sprintf("%s: %s", s["switch"], strings.Join(kids, " ")))
	}
	return out
}

func checkBlock(t *testing.T, name string, v any) []string {
	block := mapOf(t, name+".block", v, "block_sizes", "blocks")
	sizes, ok := block["block_sizes"].([]any)
	if !ok || len(sizes) == 0 {
		t.Fatalf("%s: block_sizes %v: want a list of numbers", name, block["block_sizes"])
	}
	prev := 0
	for _, s := range sizes {
		n, ok := s.(int)
		if !ok || n < 1 || (prev > 0 && (n <= prev || n%prev != 0 || bits.OnesCount(uint(n/prev)) != 1)) {
			t.Errorf("%s: block size %v after %d: want a power of two times the one before", name, s, prev)
		}
		prev = n
	}
	base, _ := sizes[0].(int)
	var out []string
	for _, b := range members(t, name+".block.blocks", block["blocks"], "block", "nodes") {
		nodes := slurmHostnames(t, b["nodes"].(string))
		if len(nodes) < base {
			t.Errorf("%s: block %v has %d nodes, fewer than the base block size %d", name, b["block"], len(nodes), base)
		}
		out = append(out, fmt.Sprintf("%s: %s", b["block"], strings.Join(nodes, " ")))
	}
	return out
}

// confShape is topology.conf's "switch: members" lines.
func confShape(t *testing.T, conf string) []string {
	var out []string
	for _, l := range strings.Split(conf, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(l) {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		kids := kv["Switches"] + kv["Nodes"]
		out = append(out, fmt.Sprintf("%s: %s", kv["SwitchName"], strings.Join(slurmHostnames(t, kids), " ")))
	}
	return out
}

// TestTopologySlurmYAML: topology.yaml is what topology.yaml(5) describes
// (checkTopologyYAML), its tree the switches topology.conf lists (which
// slurmctld reads: topo/export's TestSlurmConfAccepted), its blocks the
// leaves with their hosts.
func TestTopologySlurmYAML(t *testing.T) {
	needProgram(t, "scontrol")
	for _, file := range topologyFiles {
		t.Run(file, func(t *testing.T) {
			code, y, errOut := ibscript(t, "topology", "--load", topologies+file, "--format", "slurm-yaml")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			code, conf, errOut := ibscript(t, "topology", "--load", topologies+file, "--format", "slurm-conf")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got := checkTopologyYAML(t, y)
			want := confShape(t, conf)
			if !slices.Equal(got["infiniband"], want) {
				t.Errorf("tree %q, topology.conf %q", got["infiniband"], want)
			}
			var leaves []string
			for _, l := range want {
				if name, _, _ := strings.Cut(l, ":"); !strings.Contains(conf, "SwitchName="+name+" Switches=") {
					leaves = append(leaves, l)
				}
			}
			if !slices.Equal(got["infiniband-blocks"], leaves) {
				t.Errorf("blocks %q, leaves %q", got["infiniband-blocks"], leaves)
			}
		})
	}
}

// TestTopologySources: the same fabric discovered, loaded from an
// ibnetdiscover file, from a JSON snapshot and from a --cache file gives
// the same exports; --node-name-map names the hosts and switches; the
// JSON graph is valid against docs/diag/topology.schema.json.
func TestTopologySources(t *testing.T) {
	dir := t.TempDir()
	file := topologies + "net.2sw2path4hca"
	nameMap := "../../tests/testdata/net.2sw2path4hca.node-name-map"
	cache := filepath.Join(dir, "fabric.cache")
	if code, _, errOut := ibscript(t, "ibnetdiscover", "--fabric", "sim:"+file, "--cache", cache); code != exitOK {
		t.Fatalf("ibnetdiscover --cache: exit %d: %s", code, errOut)
	}
	code, nd, errOut := ibscript(t, "discover", "--quiet", "--fabric", "sim:"+file)
	if code != exitOK {
		t.Fatalf("discover: exit %d: %s", code, errOut)
	}
	ndFile := filepath.Join(dir, "fabric.topo")
	if err := os.WriteFile(ndFile, []byte(nd), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "fabric.json")
	if code, _, errOut := ibscript(t, "--quiet", "--fabric", "sim:"+file, "-e", fmt.Sprintf("fabric.save(fabric.discover(), %q)", snap), "--allow-path", dir); code != exitOK {
		t.Fatalf("save: exit %d: %s", code, errOut)
	}
	schema := jsonschema.Load(t, "../../docs/diag/topology.schema.json")
	for _, format := range []string{"slurm-conf", "slurm-yaml", "json"} {
		var first string
		for _, src := range [][]string{{"--fabric", "sim:" + file}, {"--load", file}, {"--load", ndFile}, {"--load", snap}, {"--load", cache}} {
			argv := append([]string{"topology", "--quiet", "--format", format, "--node-name-map", nameMap}, src...)
			code, out, errOut := ibscript(t, argv...)
			if code != exitOK {
				t.Fatalf("%q: exit %d: %s", argv, code, errOut)
			}
			if format == "json" {
				if errs := schema.Validate([]byte(out)); len(errs) > 0 {
					t.Errorf("%q: not valid against docs/diag/topology.schema.json:\n%s", argv, strings.Join(errs, "\n"))
				}
				continue // node order is each source's
			}
			if first == "" {
				first = out
				if !strings.Contains(out, "spine-a") || !strings.Contains(out, "rack1-hca1") {
					t.Errorf("%q: the node-name-map's names are not used:\n%s", argv, out)
				}
			} else if out != first {
				t.Errorf("%q gives\n%s\nwhere the discovery gives\n%s", argv, out, first)
			}
		}
	}
}

func TestTopologyErrors(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"topology"}, `ibscript topology: --format "": want slurm-conf, slurm-yaml, dot or json`},
		{[]string{"topology", "--format", "svg"}, `ibscript topology: --format "svg": want slurm-conf, slurm-yaml, dot or json`},
		{[]string{"topology", "--format", "dot", "--load", "/nonexistent/f"}, "ibscript topology: open /nonexistent/f: no such file or directory"},
		{[]string{"topology", "--format", "dot", "--load", "/dev/zero"}, "ibscript topology: /dev/zero: not a regular file but a character device"},
		{[]string{"topology", "--format", "dot", "extra"}, "ibscript topology: unexpected arguments extra (topology takes none; ibscript help topology)"},
	} {
		code, out, errOut := ibscript(t, tc.argv...)
		if code != exitError || out != "" || strings.TrimSpace(errOut) != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.argv, code, out, errOut, tc.want)
		}
	}
}
