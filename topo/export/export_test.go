package export

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ibscript/ibscript/internal/freeport"
	"github.com/ibscript/ibscript/topo"
)

// needTool finds a program the test runs, or skips the test without it;
// in CI (CI=true, where .ci/run installs it) a missing program fails.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (CI installs it: .ci/run)", name, err)
		}
		t.Skipf("%s: %v", name, err)
	}
	return p
}

func load(t *testing.T, name string) *topo.Fabric {
	t.Helper()
	f, err := topo.Load(filepath.Join("../../tests/topologies", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func build(t *testing.T, f *topo.Fabric, names map[uint64]string) *Tree {
	t.Helper()
	tr, err := Build(f, &Options{Names: names})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// shape is a tree as "name level: children or hosts" lines.
func shape(tr *Tree) []string {
	var out []string
	for _, s := range tr.Switches {
		kids := switchList(s.Children)
		if s.Level == 0 {
			kids = hostNames(s.Hosts)
		}
		out = append(out, fmt.Sprintf("%s %d: %s", s.Name, s.Level, strings.Join(kids, " ")))
	}
	return out
}

func TestBuildChoices(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string
		want  []string
		notes []string
	}{
		{name: "fat tree", file: "fattree-50.net", want: []string{
			"leaf000 0: h000-00 h000-01 h000-02 h000-03 h000-04 h000-05 h000-06 h000-07 h000-08 h000-09 h000-10",
			"leaf001 0: h001-00 h001-01 h001-02 h001-03 h001-04 h001-05 h001-06 h001-07 h001-08 h001-09 h001-10",
			"leaf002 0: h002-00 h002-01 h002-02 h002-03 h002-04 h002-05 h002-06 h002-07 h002-08 h002-09 h002-10",
			"leaf003 0: h003-00 h003-01 h003-02 h003-03 h003-04 h003-05 h003-06 h003-07 h003-08 h003-09 h003-10",
			"spine000 1: leaf000 leaf001 leaf002 leaf003",
			"spine001 1: leaf000 leaf001 leaf002 leaf003",
		}},
		{name: "two leaves cabled to each other get a top", file: "net.2sw2path4hca", want: []string{
			"Switch1 0: Hca1 Hca3", "Switch2 0: Hca2 Hca4", "ibtop1 1: Switch1 Switch2",
		}},
		{name: "islands, CAs without a switch", file: "net.island", want: []string{
			"S1 0: A B", "S2 0: C", "Island 0: I1", "ibtop1 1: S1 S2",
		}, notes: []string{
			`left out: CA 0x0000000000100009 "P1" (no switch attached)`,
			`left out: CA 0x000000000010000b "P2" (no switch attached)`,
		}},
		{name: "routers; hosts on two leaves listed once", file: "net.mixed-3sw", want: []string{
			"Core 0: Host3", "Leaf1 0: Host1", "Leaf2 0: Host2", "ibtop1 1: Core Leaf1 Leaf2",
		}, notes: []string{
			`left out: router 0x0000000000000000 "Rtr" (neither a host nor a switch)`,
			"host Host1 is listed under Leaf1 only; it is also on Leaf2",
			"host Host2 is listed under Leaf2 only; it is also on Leaf1",
		}},
		{name: "levels above levels", file: "net.chassis", want: []string{
			"C1 0: Blade H1", "C2 0: H2", "T1 1: C1", "T2 1: C2", "T3 2: T1", "ibtop1 3: T2 T3",
		}, notes: []string{`left out: router 0x0000000000000000 "RtC" (neither a host nor a switch)`}},
		{name: "a leaf whose hosts are listed elsewhere", file: "net.odd-ring", want: []string{
			"S-0000000000200000 0: enhanced h1", "S-0000000000200002 0: export", "ibtop1 1: S-0000000000200000 S-0000000000200002",
		}, notes: []string{
			"host h1 is listed under S-0000000000200000 only; it is also on S-0000000000200001",
			"left out: switch S-0000000000200001 0x0000000000200001 (no host below it is listed under it)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := build(t, load(t, tc.file), nil)
			if d := cmp.Diff(tc.want, shape(tr)); d != "" {
				t.Errorf("tree (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.notes, tr.Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

func TestNames(t *testing.T) {
	f := load(t, "net.2sw2path4hca")
	f.Nodes[0].Desc = "MF0;leaf-a:MSB7700/U1"          // Switch1: a managed switch's host name
	f.NodeByID("Switch2").Desc = "SwitchX -  Mellanox" // first word
	f.NodeByID("Hca1").Desc = "node01 mlx5_0"
	f.NodeByID("Hca3").Desc = "node01 mlx5_1" // the same host's second HCA
	f.NodeByID("Hca4").Desc = "bad[name] mlx5_0"
	names := map[uint64]string{f.NodeByID("Hca2").GUID: "rack1-n7 the map's name"}
	tr := build(t, f, names)
	want := []string{"SwitchX 0: rack1-n7", "leaf-a 0: node01", "ibtop1 1: SwitchX leaf-a"}
	if d := cmp.Diff(want, shape(tr)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if h := tr.Hosts[0]; h.Name != "node01" || len(h.CAs) != 2 {
		t.Errorf("host %s with %d CAs, want node01 with 2", h.Name, len(h.CAs))
	}
	if want := `left out: CA 0x0000000000100009 "bad[name] mlx5_0" (no usable host name; a node-name-map can give one)`; !slices.Contains(tr.Notes, want) {
		t.Errorf("notes %q lack %q", tr.Notes, want)
	}
	// Two switches with one first word: both by their ids.
	f.Nodes[0].Desc = "SwitchX -  Mellanox"
	tr = build(t, f, names)
	want = []string{"S-0000000000200000 0: node01", "S-0000000000200001 0: rack1-n7", "ibtop1 1: S-0000000000200000 S-0000000000200001"}
	if d := cmp.Diff(want, shape(tr)); d != "" {
		t.Errorf("same names (-want +got):\n%s", d)
	}
}

func TestHostlist(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"n1", "n2", "n3", "x"}, "n[1-3],x"},
		{[]string{"n08", "n09", "n10", "n12"}, "n[08-10,12]"},
		{[]string{"n9", "n10", "n010"}, "n[9-10,010]"},
		{[]string{"a-1", "b", "a-3", "a-4"}, "a-[1,3-4],b"},
		{[]string{"h1", "h1"}, "h1"},
		{[]string{"S-0000000000200000", "S-0000000000200002"}, "S-0000000000200000,S-0000000000200002"},
		{[]string{"n1"}, "n1"},
	} {
		if got := Hostlist(tc.in); got != tc.want {
			t.Errorf("Hostlist(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHostlistSlurm: Slurm's own hostlist (scontrol show hostnames)
// expands what Hostlist folds back into the names.
func TestHostlistSlurm(t *testing.T) {
	needTool(t, "scontrol")
	conf := writeSlurmConf(t, t.TempDir(), nil, 6817) // no daemon: the port is never used
	for _, names := range [][]string{
		{"n1", "n2", "n3", "x"},
		{"n08", "n09", "n10", "n12", "n7"},
		{"n9", "n10", "n010", "n0010", "n11"},
		{"a-1", "b", "a-3", "a-4", "c2d", "c2e"},
		{"h000-00", "h000-01", "h001-00", "leaf.1", "leaf.2"},
		{"S-0000000000200000", "S-0000000000200002"},
	} {
		expr := Hostlist(names)
		got := expand(t, conf, expr)
		if d := cmp.Diff(sorted(names), sorted(got)); d != "" {
			t.Errorf("%q -> %q: scontrol show hostnames (-want +got):\n%s", names, expr, d)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// expand is Slurm's expansion of a hostlist.
func expand(t *testing.T, conf, expr string) []string {
	t.Helper()
	cmd := exec.Command("scontrol", "show", "hostnames", expr)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scontrol show hostnames %s: %v", expr, err)
	}
	return strings.Fields(string(out))
}

// writeSlurmConf writes a slurm.conf for the topology/tree plugin with
// the hosts as nodes, slurmctld on port, everything in dir.
func writeSlurmConf(t *testing.T, dir string, hosts []string, port int) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterName=ibscripttest\nSlurmctldHost=localhost\nSlurmctldPort=%d\nSlurmUser=%s\n", port, u.Username)
	fmt.Fprintf(&b, "AuthType=auth/none\nCredType=cred/none\nStateSaveLocation=%s/state\nSlurmctldPidFile=%[1]s/slurmctld.pid\n", dir)
	b.WriteString("SlurmdSpoolDir=" + dir + "/spool\nTopologyPlugin=topology/tree\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n")
	b.WriteString("SchedulerType=sched/builtin\nSelectType=select/cons_tres\nMailProg=/bin/true\n")
	for _, h := range hosts {
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 State=UNKNOWN\n", h)
	}
	if len(hosts) > 0 {
		b.WriteString("PartitionName=all Nodes=ALL Default=YES\n")
	}
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// slurmTopology runs slurmctld in the foreground on topology.conf text
// (with a slurm.conf naming hosts) until `scontrol show topology` answers,
// and returns that answer and slurmctld's log. slurmctld takes its port
// from slurm.conf, so the port found free may be taken before it binds:
// one that exits saying so is started again on another (freeport.Retry).
func slurmTopology(t *testing.T, text string, hosts []string) (show, log string) {
	t.Helper()
	needTool(t, "slurmctld")
	needTool(t, "scontrol")
	err := freeport.Retry(func(port int) error {
		var err error
		show, log, err = slurmTopologyOn(t, port, text, hosts)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return show, log
}

// slurmTopologyOn is slurmTopology with slurmctld on port; an error wraps
// freeport.ErrInUse when slurmctld could not bind it.
func slurmTopologyOn(t *testing.T, port int, text string, hosts []string) (show, log string, err error) {
	t.Helper()
	dir := t.TempDir()
	conf := writeSlurmConf(t, dir, hosts, port)
	if err := os.WriteFile(filepath.Join(dir, "topology.conf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	var logBuf bytes.Buffer
	ctld := exec.CommandContext(ctx, "slurmctld", "-D", "-vv", "-f", conf)
	ctld.Stdout, ctld.Stderr = &logBuf, &logBuf
	ctld.WaitDelay = 5 * time.Second
	if err := ctld.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = ctld.Wait(); close(done) }()
	stop := func() string { // the log, once slurmctld has gone
		ctld.Process.Kill()
		<-done
		return logBuf.String()
	}
	defer stop()
	for {
		q := exec.CommandContext(ctx, "scontrol", "show", "topology")
		q.Env = append(os.Environ(), "SLURM_CONF="+conf)
		if out, err := q.Output(); err == nil && len(out) > 0 {
			if l := stop(); freeport.InUse(l) { // another's slurmctld answered
				return "", l, fmt.Errorf("slurmctld on port %d: %w", port, freeport.ErrInUse)
			}
			return string(out), logBuf.String(), nil
		}
		select {
		case <-done:
			if l := stop(); freeport.InUse(l) {
				return "", l, fmt.Errorf("slurmctld on port %d: %w", port, freeport.ErrInUse)
			}
			t.Fatalf("slurmctld exited (%v) before answering:\n%s", waitErr, stop())
		case <-ctx.Done():
			t.Fatalf("slurmctld did not answer scontrol show topology in time:\n%s", stop())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// TestSlurmConfAccepted: slurmctld (topology/tree) reads what
// WriteSlurmConf writes without a warning or error about it, and
// `scontrol show topology` gives back the same switches, levels, nodes
// and children. Islands alone make Slurm warn that no switch reaches
// every node, as it should.
func TestSlurmConfAccepted(t *testing.T) {
	for _, file := range []string{"fattree-50.net", "net.2sw2path4hca", "net.island", "net.mixed-3sw", "net.chassis", "net.odd-ring"} {
		t.Run(file, func(t *testing.T) {
			f := load(t, file)
			tr := build(t, f, nil)
			var conf bytes.Buffer
			if err := WriteSlurmConf(&conf, tr); err != nil {
				t.Fatal(err)
			}
			show, log := slurmTopology(t, conf.String(), hostNames(tr.Hosts))
			for _, bad := range []string{"Multiple leaf switches", "Invalid hostnames", "lookup failure", "fatal", "neither child", "error: _"} {
				for _, l := range strings.Split(log, "\n") {
					if strings.Contains(l, bad) && !strings.Contains(l, "Reading the topology.conf file") {
						t.Errorf("slurmctld: %s", l)
					}
				}
			}
			if warned := strings.Contains(log, "no switch can reach all nodes"); warned != (tr.Islands > 1) {
				t.Errorf("islands %d, slurmctld warned that no switch reaches all nodes: %v", tr.Islands, warned)
			}
			conf2 := writeSlurmConf(t, t.TempDir(), nil, 6817) // for scontrol show hostnames: no daemon
			got := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(show), "\n") {
				kv := map[string]string{}
				for _, f := range strings.Fields(l) {
					k, v, _ := strings.Cut(f, "=")
					kv[k] = v
				}
				kids := kv["Switches"]
				if kids == "" {
					kids = kv["Nodes"]
				}
				got[kv["SwitchName"]] = fmt.Sprintf("%s: %s", kv["Level"], strings.Join(sorted(expand(t, conf2, kids)), " "))
			}
			want := map[string]string{}
			for _, s := range tr.Switches {
				kids := switchList(s.Children)
				if s.Level == 0 {
					kids = hostNames(s.Hosts)
				}
				want[s.Name] = fmt.Sprintf("%d: %s", s.Level, strings.Join(sorted(kids), " "))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("scontrol show topology (-want +got):\n%s\n%s", d, show)
			}
		})
	}
}

// TestDOTRenders: Graphviz's dot draws every graph without a word on
// stderr, names with quotes and backslashes included.
func TestDOTRenders(t *testing.T) {
	needTool(t, "dot")
	for _, file := range []string{"fattree-50.net", "net.2sw2path4hca", "net.island", "net.mixed-router", "net.chassis", "net.odd-desc"} {
		t.Run(file, func(t *testing.T) {
			f := load(t, file)
			f.Nodes[0].Desc = `a "quoted" \name\ with a \N`
			tr := build(t, f, nil)
			var dot bytes.Buffer
			if err := WriteDOT(&dot, NewGraph(f, tr, nil)); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("dot", "-Tsvg")
			cmd.Stdin = &dot
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil || errOut.Len() > 0 {
				t.Fatalf("dot -Tsvg: %v: %s\n%s", err, errOut.String(), dot.String())
			}
			svg := out.String()
			if !strings.Contains(svg, "<svg") || strings.Count(svg, `class="edge"`) != len(f.Links()) || strings.Count(svg, `class="node"`) != len(f.Nodes) {
				t.Errorf("svg has %d nodes and %d edges, want %d and %d", strings.Count(svg, `class="node"`), strings.Count(svg, `class="edge"`), len(f.Nodes), len(f.Links()))
			}
			if !strings.Contains(svg, `a &quot;quoted&quot; \name\ with a \N`) {
				t.Errorf("the quoted name is not drawn as it is")
			}
		})
	}
}
