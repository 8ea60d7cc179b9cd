package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/jsonschema"
	"github.com/ibscript/ibscript/internal/simkernel"
	"github.com/ibscript/ibscript/sim"
)

// TestPlanarizedFabric: on the bundled planarized XDR fat tree (4 planes,
// every host planarized; docs/planes.md) the embedded simulator is
// discovered, validated, exported and queried as a site would: discovery
// from a plane port finds every plane (host.DiscoverPlanes), each host
// planarized; validate.lua passes; `topology --format json` lists that
// plane's links, the exporter every plane's (labelled with their plane),
// and the JSON of the file (--load) every plane's with its plane (both valid against the schema); ibstat lists the host's GSI device with
// IsSMdisabled; perfquery reads any plane's counters through the GSI
// side, and -a the aggregated port (the planes' sum).
func TestPlanarizedFabric(t *testing.T) {
	fab := "sim:" + topologies + "fattree-xdr-4planes.net"
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := ibscript(t, append([]string{"--quiet"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	for plane, uri := range map[string]string{"1": fab, "3": fab + "?node=h000-00&port=3"} {
		out := run("discover", "--fabric", uri, "--format", "ibnetdiscover")
		if got := strings.Count(out, "\nCa\t4 "); got != 8 {
			t.Errorf("plane %s: %d planarized CAs of 4 ports, want 8:\n%s", plane, got, out)
		}
		if got := strings.Count(out, "\n# planarized \"H-"); got != 8 {
			t.Errorf("plane %s: %d '# planarized' lines, want 8 (one per host)", plane, got)
		}
		for p := 1; p <= 4; p++ {
			if got := strings.Count(out, fmt.Sprintf("\"p%d-", p)); got == 0 {
				t.Errorf("plane %s: no switch of plane %d:\n%s", plane, p, out)
			}
		}
		if !regexp.MustCompile(`\n\[` + plane + `\]\(100024\) \t"S-`).MatchString(out) {
			t.Errorf("plane %s: h001-03 not reached on its port %s:\n%s", plane, plane, out)
		}
	}
	if out := run("run", "--fabric", fab, "--arg", "speed=XDR", "--arg", "width=4X", "../../scripts/validate.lua"); !strings.Contains(out, " passed, 0 failed") {
		t.Errorf("validate.lua:\n%s", out)
	}
	// Discovered: plane 1's, at XDR. Loaded from the file: every plane,
	// each cable and switch with its plane, each host planarized.
	schema := jsonschema.Load(t, "../../docs/diag/topology.schema.json")
	type graph struct {
		Nodes []struct {
			Type       string
			Planarized bool
			Plane      int
		} `json:"nodes"`
		Links []struct {
			Speed string
			Plane int
		} `json:"links"`
	}
	var g, all graph
	for _, c := range []struct {
		src []string
		g   *graph
	}{{[]string{"--fabric", fab}, &g}, {[]string{"--load", topologies + "fattree-xdr-4planes.net"}, &all}} {
		out := run(append([]string{"topology", "--format", "json"}, c.src...)...)
		if errs := schema.Validate([]byte(out)); len(errs) > 0 {
			t.Errorf("topology %s: not valid against docs/diag/topology.schema.json:\n%s", c.src, strings.Join(errs, "\n"))
		}
		if err := json.Unmarshal([]byte(out), c.g); err != nil {
			t.Fatal(err)
		}
	}
	for name, g := range map[string]*graph{"discovered": &g, "--load": &all} {
		planes := map[int]int{}
		for _, l := range g.Links {
			planes[l.Plane]++
			if name == "discovered" && l.Speed != "XDR" {
				t.Errorf("topology json %s: link %+v", name, l)
			}
		}
		for _, n := range g.Nodes {
			if n.Planarized != (n.Type == "CA") || (n.Plane != 0) != (n.Type == "Switch") {
				t.Errorf("topology json %s: node %+v", name, n)
			}
		}
		if len(g.Nodes) != 24 || len(planes) != 4 || planes[3] != 12 {
			t.Errorf("topology json %s: %d nodes, links by plane %v; want 24, 12 on each of 4", name, len(g.Nodes), planes)
		}
	}
	// The exporter sweeps every plane, each cable labelled with its plane.
	metrics := run("exporter", "--fabric", fab, "--once", "--output", "-")
	links := map[string]int{}
	for _, m := range regexp.MustCompile(`\ninfiniband_link_info\{.*,plane="(\d)"\} 1`).FindAllStringSubmatch(metrics, -1) {
		links[m[1]]++
	}
	if len(links) != 4 || links["1"] != 12 || links["3"] != 12 {
		t.Errorf("exporter: link series by plane %v, want 12 on each of 4", links)
	}
	// The host (h000-00, the SM's) has its plane ports and its GSI device,
	// whose capability mask alone has IsSMdisabled (0x400).
	_, gsi, ok := strings.Cut(run("ibstat", "--fabric", fab), "CA 'h000-00:gsi'\n")
	m := regexp.MustCompile(`Capability mask: (0x[0-9a-f]+)`).FindStringSubmatch(gsi)
	if !ok || m == nil {
		t.Fatal("ibstat lists no GSI device of h000-00")
	}
	if capMask, err := strconv.ParseUint(m[len(m)-1], 0, 32); !ok || err != nil || capMask&0x400 == 0 {
		t.Errorf("ibstat: h000-00's GSI device, capability mask %q", m)
	}
	m = regexp.MustCompile(`"h001-02" lid (\d+) 4xXDR`).FindStringSubmatch(run("ibnetdiscover", "--fabric", fab))
	if m == nil {
		t.Fatal("ibnetdiscover: no h001-02")
	}
	if out := run("iblinkinfo", "--fabric", fab); !strings.Contains(out, "CA: h001-02:") || !strings.Contains(out, "212.5 Gbps") {
		t.Errorf("iblinkinfo:\n%s", out)
	}
	// Each plane is a subnet of its own, its SM h000-00's plane port
	// (LIDs 1, 3, 4, 5): sminfo on a plane's port asks that plane's SM,
	// and saquery that plane's SA, which names itself.
	for p, lid := range []int{1, 3, 4, 5} {
		uri := fmt.Sprintf("%s?node=h001-00&port=%d", fab, p+1)
		if out, want := run("sminfo", "--fabric", uri), fmt.Sprintf("sminfo: sm lid %d sm guid 0x100001, activity count ", lid); !strings.HasPrefix(out, want) || !strings.HasSuffix(out, " state 3 SMINFO_MASTER\n") {
			t.Errorf("sminfo on plane %d: %q, want plane %d's SM, at LID %d", p+1, out, p+1, lid)
		}
		if out := run("saquery", "--fabric", uri, "SMIR"); !strings.Contains(out, fmt.Sprintf("\t\tLID...................%d\n", lid)) || strings.Count(out, "SMInfoRecord dump:") != 1 {
			t.Errorf("saquery SMIR on plane %d:\n%s", p+1, out)
		}
	}
	// Plane 3's counters through plane 1's LID: the GSI side's PMA.
	if out := run("perfquery", "--fabric", fab, m[1], "3"); !strings.Contains(out, "PortSelect:......................3\n") {
		t.Errorf("perfquery %s 3:\n%s", m[1], out)
	}
	if out := run("perfquery", "--fabric", fab, "-a", m[1]); !strings.Contains(out, "PortSelect:......................255\n") {
		t.Errorf("perfquery -a %s:\n%s", m[1], out)
	}
}

// TestPlaneToolsOnKernel: ibnetdiscover, iblinkinfo and sminfo through
// the kernel backend on each plane (umad:mlx5_1/P, the SMI device's port
// P, paired with the GSI device mlx5_0), on a host whose planarized HCA's
// devices are cabled to the simulator's h000-00 (internal/simkernel),
// print what they print on the simulator's backend from plane port P
// (sminfo: plane P's SM; its activity count, which each SMInfo read
// moves, left out).
func TestPlaneToolsOnKernel(t *testing.T) {
	net := topologies + "fattree-xdr-4planes.net"
	sf, err := sim.Load(net, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	h := simkernel.Host(t, sf, "h000-00", false)
	generated := regexp.MustCompile(`(?m)^#.*generated.*\n|activity count \d+`)
	for _, tool := range []string{"ibnetdiscover", "iblinkinfo", "sminfo"} {
		for p := 1; p <= 4; p++ {
			// -t 2000: a loaded machine's goroutine hops through the
			// uplink stay well inside a try.
			code, kout, kerr := runFakeTool(t.Context(), t, h, nil, tool, "-t", "2000", "--fabric", fmt.Sprintf("umad:mlx5_1/%d", p))
			scode, sout, serr := ibscript(t, "--quiet", tool, "-t", "2000", "--fabric", fmt.Sprintf("sim:%s?node=h000-00&port=%d", net, p))
			if code != 0 || scode != 0 {
				t.Fatalf("%s plane %d: exit %d on the kernel (%s), %d on the simulator (%s)", tool, p, code, kerr, scode, serr)
			}
			kout, sout = generated.ReplaceAllString(kout, ""), generated.ReplaceAllString(sout, "")
			want := fmt.Sprintf("p%d-leaf000", p)
			if tool == "sminfo" {
				want = fmt.Sprintf("sm lid %d ", []int{1, 3, 4, 5}[p-1])
			}
			if kout != sout || !strings.Contains(kout, want) {
				t.Errorf("%s plane %d: the kernel backend printed\n%s\nthe simulator\n%s", tool, p, kout, sout)
			}
		}
	}
}
