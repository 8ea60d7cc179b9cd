package ibsimdiff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/plan"
	"github.com/ibscript/ibscript/sim/simtest"
)

// TestCountersCheckMatchesIBQueryErrors: with error counters set by
// ibsim's console on a linked switch port, an unused switch port, a CA
// port discovery never reaches and PortXmitWait on another switch port,
// scripts/checks/counters.lua fails exactly the ports ibqueryerrors
// reports and checks as many ports as ibqueryerrors says it checked.
func TestCountersCheckMatchesIBQueryErrors(t *testing.T) {
	ibsimtest.Require(t)
	src, err := os.ReadFile(topo2sw)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tp := filepath.Join(dir, "net.counters") // a private ibsim: its counters change
	if err := os.WriteFile(tp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ibsimtest.Start(t.Context(), dir, tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for _, c := range []string{
		`PerformanceSet "Switch1"[4] PortCounters.PortXmitDiscards=7`, // unused switch port
		`PerformanceSet "Switch1"[1] PortCounters.SymbolErrorCounter=3`,
		`PerformanceSet "Switch2"[2] PortCounters.PortXmitWait=11`,
		`PerformanceSet "Hca1"[2] PortCounters.PortRcvErrors=9`, // never reached: neither tool reads it
	} {
		if out, err := s.Console(t.Context(), c); err != nil || !strings.Contains(out, "has been set") {
			t.Fatalf("%s: %q %v", c, out, err)
		}
	}
	// exit status 1: ports have errors beyond threshold
	ref, err := s.Run(t.Context(), "", "ibqueryerrors")
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("ibqueryerrors: %v\n%s", err, ref)
	}
	// "   GUID 0x200000 port 4: [PortXmitDiscards == 7]" (port ALL lines
	// are the switch's sum: not a port)
	var want []string
	for _, m := range regexp.MustCompile(`(?m)^   GUID (0x[0-9a-f]+) port (\d+):`).FindAllStringSubmatch(string(ref), -1) {
		want = append(want, m[1]+"/"+m[2])
	}
	slices.Sort(want)
	m := regexp.MustCompile(`(\d+) ports checked`).FindStringSubmatch(string(ref))
	if m == nil || len(want) < 3 {
		t.Fatalf("ibqueryerrors reported %q:\n%s", want, ref)
	}
	checked, _ := strconv.Atoi(m[1])

	r, portGUID := runCountersCheck(t, s.Sock)
	var got []string
	var c *plan.Check
	for _, ch := range r.Checks {
		if ch.Name == "error counters within thresholds" {
			c = ch
		}
	}
	if c == nil {
		t.Fatalf("no counters check in the report (error %q)", r.Error)
	}
	for _, res := range c.Results {
		if res.Status == plan.Fail {
			got = append(got, portGUID[res.Object.NodeGUID+"/"+strconv.Itoa(res.Object.Port)]+"/"+strconv.Itoa(res.Object.Port))
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("counters check failed ports %q, ibqueryerrors reported %q\n%s", got, want, ref)
	}
	if n := c.Passed + c.Failed; n != checked {
		t.Errorf("counters check read %d ports, ibqueryerrors %d", n, checked)
	}
}

// runCountersCheck runs scripts/checks/counters.lua alone on ibsim and
// returns its report and each port's GUID by "node GUID/port".
func runCountersCheck(t *testing.T, sock string) (*plan.Report, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := ibsim.NewFabric(sock, nil)
	defer f.Close()
	sess := simtest.Session(t, f, nil)
	d, err := sess.Discover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	portGUID := map[string]string{}
	for _, n := range d.Fabric.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				portGUID[fmt.Sprintf("0x%016x/%d", n.GUID, p.Num)] = fmt.Sprintf("%#x", p.GUID)
			}
		}
	}
	var out strings.Builder
	L, env, err := bindings.NewState(ctx, &bindings.Options{Session: sess, Fabric: f, Stdout: &out, PlanName: "counters"})
	if err != nil {
		t.Fatal(err)
	}
	defer L.Close()
	defer env.Close()
	L.GetGlobal("package").(*lua.LTable).RawSetString("path", lua.LString("../../scripts/checks/?.lua"))
	err = L.DoFile("../../scripts/checks/counters.lua")
	r := env.PlanReport(err)
	if r == nil {
		t.Fatalf("counters.lua made no report: %v", err)
	}
	return r, portGUID
}
