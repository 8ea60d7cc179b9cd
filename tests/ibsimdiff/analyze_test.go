package ibsimdiff

import (
	"context"
	"encoding/json"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/internal/jsonschema"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// TestAnalyzeOpenSMFabrics runs `ibscript analyze` on fabrics OpenSM
// routed (ibsim): its routes reach every LID from every switch and port,
// OpenSM programs no MFT on ibsim (nothing to check), and the tables read
// without error. A fat tree routed by OpenSM's min-hop has no credit loop;
// on the rings and chains what the search finds is logged, as OpenSM's
// min-hop does not promise freedom from deadlock there.
func TestAnalyzeOpenSMFabrics(t *testing.T) {
	for _, c := range []struct {
		path, host string
		tree       bool
	}{
		{"../topologies/fattree-50.net", "", true},
		{"../topologies/net.mixed-3sw", "Host1", false},
		{"../topologies/net.route-ring", "h2", false},
		{"../topologies/net.chain36", "Multi", false},
	} {
		t.Run(topoName(c.path), func(t *testing.T) {
			ibsimtest.Require(t)
			host := c.host
			if host == "" {
				host = validateHost(t, c.path)
			}
			s := shared.Get(t, c.path, &ibsimtest.Options{InitPorts: initPorts(c.path)})
			ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, ibscriptBinary(t), "analyze", "--format", "json", "--fabric", "ibsim:"+s.Sock+"?"+url.Values{"node": {host}}.Encode())
			ibsimtest.Terminate(cmd) // SIGTERM first: its ibsim slot back
			r := runCmd(t, cmd)
			validAnalysis(t, r.stdout)
			var a diag.Analysis
			if err := json.Unmarshal(r.stdout, &a); err != nil {
				t.Fatalf("exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
			}
			if len(a.Errors) > 0 || a.Routes == nil || a.Routes.Count != 0 || a.Routes.Unreachable != 0 || a.Multicast == nil || a.Multicast.Count != 0 {
				t.Fatalf("exit %d: errors %q, routes %+v, multicast %+v", r.code, a.Errors, a.Routes, a.Multicast)
			}
			cl := a.CreditLoops
			if cl == nil || cl.SL2VL != "tables" || cl.MissingSL2VL != 0 {
				t.Fatalf("credit loops %+v", cl)
			}
			t.Logf("%s: %d credit loops over %d dependencies (SL classes %v); hops %d..%d, %d asymmetric pairs; exit %d",
				topoName(c.path), cl.Count, cl.Dependencies, cl.SLClasses, a.Routes.MinHops, a.Routes.MaxHops, a.Routes.Asymmetric, r.code)
			for _, l := range cl.Loops {
				t.Logf("  loop SLs %v: %v", l.SLs, l.Channels)
			}
			if c.tree && (cl.Count != 0 || r.code != 0) {
				t.Errorf("a fat tree routed by OpenSM: %d credit loops, exit %d", cl.Count, r.code)
			}
			if r.code != 0 && cl.Count == 0 {
				t.Errorf("exit %d without a fault: %s", r.code, r.stderr)
			}
		})
	}
}

// TestAnalyzeFindsPlantedCreditLoop: net.route-ring under ibsim and
// OpenSM, every switch then set (LinearForwardingTable Sets) to send each
// CA LID that is not its own to its clockwise neighbour: every route
// still arrives, and ibscript analyze reports the cycle of the four
// inter-switch channels and exits 1.
func TestAnalyzeFindsPlantedCreditLoop(t *testing.T) {
	ibsimtest.Require(t)
	const path, host = "../topologies/net.route-ring", "h2"
	s, sess := routeSimOwn(t, path, host)
	d, err := sess.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{"ring sw-A 'top'": 3, "ring-B": 4, "ring-C": 5, "ring-D": 4}
	for _, sw := range d.Fabric.Nodes {
		out, ok := next[sw.Desc]
		if !ok {
			continue
		}
		target := engine.LID(sw.Ports[0].LID)
		for _, n := range d.Fabric.Nodes {
			if n.Type == topo.Switch {
				continue
			}
			for _, p := range n.Ports {
				if p == nil || p.LID == 0 || p.Remote == nil || p.Remote.Node == sw {
					continue
				}
				if n.Desc == "h2" && p.Remote.Node.Desc != sw.Desc && (sw.Desc == "ring sw-A 'top'" || sw.Desc == "ring-B") {
					continue // h2 is on both: A and B keep OpenSM's route to it
				}
				data, err := sess.SMP(t.Context(), target, mad.MethodGet, smp.AttrLinearForwardingTable, uint32(p.LID/64), nil)
				if err != nil {
					t.Fatal(err)
				}
				data[p.LID%64] = uint8(out)
				if _, err := sess.SMP(t.Context(), target, mad.MethodSet, smp.AttrLinearForwardingTable, uint32(p.LID/64), data); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ibscriptBinary(t), "analyze", "credit-loops", "routes", "--format", "json", "--fabric", "ibsim:"+s.Sock+"?"+url.Values{"node": {host}}.Encode())
	ibsimtest.Terminate(cmd)
	r := runCmd(t, cmd)
	validAnalysis(t, r.stdout)
	var a diag.Analysis
	if err := json.Unmarshal(r.stdout, &a); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if r.code != 1 || a.CreditLoops == nil || a.CreditLoops.Count == 0 || a.Routes.Count != 0 || a.Routes.Unreachable != 0 {
		t.Fatalf("exit %d: credit loops %+v, routes %+v, errors %q", r.code, a.CreditLoops, a.Routes, a.Errors)
	}
	l := a.CreditLoops.Loops[0]
	if len(l.Channels) != 4 {
		t.Errorf("loop of %d channels, want the ring's 4: %v", len(l.Channels), l.Channels)
	}
	for i, ch := range l.Channels {
		if nx := l.Channels[(i+1)%len(l.Channels)]; ch.RemoteNode.GUID != nx.Node.GUID || next[ch.Node.Desc] != ch.Port {
			t.Errorf("channel %d %v: not the clockwise hop into the next channel's switch", i, ch)
		}
	}
}

// validAnalysis checks ibscript analyze's JSON against its schema.
func validAnalysis(t *testing.T, out []byte) {
	t.Helper()
	s := jsonschema.Load(t, "../../docs/diag/analyze.schema.json")
	if errs := s.Validate(out); len(errs) > 0 {
		t.Errorf("not valid against docs/diag/analyze.schema.json:\n%s", strings.Join(errs, "\n"))
	}
}
