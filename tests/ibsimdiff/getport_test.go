package ibsimdiff

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibscript/ibscript/fabric/ibsim"
)

// ibstatPort is one "\t\tName: value" line of ibstat's port section.
var ibstatPort = regexp.MustCompile(`(?m)^\t\t(State|Physical state|Rate|Base lid|LMC|SM lid|Capability mask|Port GUID): (.*)$`)

// TestGetPortMatchesIBStat is umad_get_port on ibsim, differential: the
// port the ibsim backend gives a node (Fabric.Ports, Lua umad.get_port)
// carries what C ibstat prints for the same node under umad2sim, which
// reads umad_get_port's sysfs: state, physical state, rate (the integer
// part of "2.5 Gb/sec", extended speeds only where the port supports
// them), LIDs, LMC, capability mask and port GUID; on links of 1x to 12x,
// SDR to HDR. One deliberate difference: umad2sim writes 26 Gb/s a lane
// for EDR, HDR and NDR where the kernel writes 25, 50 and 100, and the
// backend gives the kernel's figure (Multi's port 1 is 4x HDR: 200, where
// umad2sim says 104).
func TestGetPortMatchesIBStat(t *testing.T) {
	states := map[string]int{"Down": 1, "Initializing": 2, "Armed": 3, "Active": 4}
	phys := map[string]int{"Sleep": 1, "Polling": 2, "Disabled": 3, "PortConfigurationTraining": 4, "LinkUp": 5, "LinkErrorRecovery": 6, "PhyTest": 7}
	rates := map[int]bool{}
	for _, c := range []struct {
		path   string
		nodes  []string
		kernel map[string]string // the kernel's rate where umad2sim's differs
	}{
		{"../topologies/net.mixed-router", []string{"HcaX", "HcaY", "HcaZ"}, nil},
		{"../topologies/net.chain36", []string{"Multi", "Host-A", "Host-B", "Tail"}, map[string]string{"Multi": "200"}},
	} {
		s := diagSim(t, c.path)
		for _, node := range c.nodes {
			out, err := s.Run(t.Context(), node, "ibstat")
			if err != nil {
				t.Fatalf("%s: ibstat: %v\n%s", node, err, out)
			}
			want := map[string]string{}
			for _, m := range ibstatPort.FindAllStringSubmatch(string(out), -1) {
				want[m[1]] = m[2]
			}
			if len(want) != 8 {
				t.Fatalf("%s: ibstat printed %d of the 8 port lines:\n%s", node, len(want), out)
			}
			want["State"] = fmt.Sprint(states[want["State"]])
			want["Physical state"] = fmt.Sprint(phys[strings.ReplaceAll(want["Physical state"], " ", "")])
			// ibstat prints a rate of 2 (1x SDR) as 2.5.
			if want["Rate"] == "2.5" {
				want["Rate"] = "2"
			}
			if r, ok := c.kernel[node]; ok {
				want["Rate"] = r
			}

			f := ibsim.NewFabric(s.Sock, &ibsim.Options{Node: node})
			ports, err := f.Ports(t.Context())
			f.Close()
			if err != nil || len(ports) != 1 {
				t.Fatalf("%s: Ports: %v, %v", node, ports, err)
			}
			p := ports[0]
			rates[p.Rate] = true
			got := map[string]string{
				"State":           fmt.Sprint(p.State),
				"Physical state":  fmt.Sprint(p.PhysState),
				"Rate":            fmt.Sprint(p.Rate),
				"Base lid":        fmt.Sprint(p.LID),
				"LMC":             fmt.Sprint(p.LMC),
				"SM lid":          fmt.Sprint(p.SMLID),
				"Capability mask": fmt.Sprintf("0x%08x", p.CapMask),
				"Port GUID":       fmt.Sprintf("0x%016x", p.PortGUID),
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s %s: %s %q, ibstat %q", c.path, node, k, got[k], w)
				}
			}
		}
	}
	if len(rates) < 3 {
		t.Errorf("rates seen %v: the test needs ports of several rates", rates)
	}
}

// TestIBStatMatchesC: ibscript ibstat prints what C ibstat prints under
// umad2sim, attached to CAs of one and four ports, a switch (its port 0)
// and a router, with -l, -s, -p, a CA name, a port number, and the two
// failures (an unknown CA, a port the CA does not have: ibpanic, 255).
// Two deliberate differences: the link layer, which umad2sim leaves out
// (libibumad then says "IB") and ibscript gives as the kernel does, and
// the rate of an HDR port (TestGetPortMatchesIBStat).
func TestIBStatMatchesC(t *testing.T) {
	for _, c := range []struct {
		path   string
		nodes  []string
		kernel map[string]string // the rate line ibscript prints where umad2sim's differs
	}{
		{"../topologies/net.mixed-router", []string{"HcaZ", "SwB"}, nil},
		{"../topologies/net.chain36", []string{"Multi", "Rtr2", "Host-B"}, map[string]string{"Multi": "Rate: 200\n"}},
	} {
		s := diagSim(t, c.path)
		for _, node := range c.nodes {
			for _, args := range [][]string{{}, {"-l"}, {"-s"}, {"-p"}, {"ibsim0"}, {"ibsim0", "1"}, {"-s", "ibsim0", "0x1"},
				{"-p", "ibsim0"}, {"ibsim0", "9"}, {"nosuch"}, {"-l", "nosuch"}} {
				what := fmt.Sprintf("%s: ibstat %s", node, strings.Join(args, " "))
				cr := cTool(t, s, node, "ibstat", args...)
				or := ibscriptTool(t, s, node, "ibstat", args...)
				got := strings.ReplaceAll(string(or.stdout), "Link layer: InfiniBand\n", "Link layer: IB\n")
				if r, ok := c.kernel[node]; ok {
					got = strings.ReplaceAll(got, r, "Rate: 104\n") // 4x HDR: umad2sim's 26 a lane
				}
				if got != string(cr.stdout) || or.code != cr.code {
					t.Errorf("%s: exit %d, C %d; stdout (-C +ibscript):\n%s", what, or.code, cr.code, cmp.Diff(string(cr.stdout), got))
				}
			}
		}
	}
}
