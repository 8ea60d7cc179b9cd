package ibsimdiff

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

// The point-query tools of issue 19 (smpquery, perfquery, sminfo, ibaddr,
// ...): diag's data and text against the C tool's stdout and exit status,
// byte for byte, on the same live fabric.

// diagTopologies are the fabrics the diag tools are compared on: the two
// of issue 18 and one with odd descriptions, a loop and a dual-homed CA.
var diagTopologies = append(append([]struct{ path, host string }{}, mixedTopologies...),
	struct{ path, host string }{"../topologies/net.odd-query", "q1"})

// cTool runs a C tool and returns its stdout and exit status (a status
// the tool exits with is not an error; failing to run it is).
func cTool(t *testing.T, s *ibsimtest.Sim, node, tool string, args ...string) ([]byte, int) {
	t.Helper()
	cmd, err := s.Command(t.Context(), node, tool, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &ee) && ee.Exited():
		return out, ee.ExitCode()
	}
	t.Fatalf("%s %s: %v", tool, strings.Join(args, " "), err)
	return nil, 0
}

// diagStatus is the exit status the C tools give an error diag returns:
// 255 for their IBEXIT failures, 0 for none.
func diagStatus(err error) int {
	var te *diag.ToolError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &te):
		return 255
	}
	return 2
}

// same fails t when the C tool's and diag's stdout or status differ.
func same(t *testing.T, what string, cOut []byte, cCode int, dOut string, dErr error) {
	t.Helper()
	if cCode != diagStatus(dErr) {
		t.Errorf("%s: exit status: C %d, diag %d (%v)", what, cCode, diagStatus(dErr), dErr)
	}
	if d := cmp.Diff(string(cOut), dOut); d != "" {
		t.Errorf("%s: stdout differs (-C +diag):\n%s", what, d)
	}
}

// lidTargets are every node's LID (port 0's on a switch, each active
// port's on a CA) and the ports a query may name there.
type lidTarget struct {
	node  *topo.Node
	lid   uint16
	ports []int
}

func lidTargets(t *testing.T, sess *engine.Session) []lidTarget {
	var out []lidTarget
	for _, mp := range mixedPorts(t, sess) {
		if mp.node.Type == topo.Switch {
			if mp.num != 0 {
				continue
			}
			ports := []int{}
			for i := 0; i <= mp.node.NumPorts; i++ {
				ports = append(ports, i)
			}
			out = append(out, lidTarget{mp.node, mp.lid, ports})
			continue
		}
		out = append(out, lidTarget{mp.node, mp.lid, []int{0, mp.num}})
	}
	return out
}

// TestSMPQueryMatchesC runs every smpquery op on every node (and port) of
// each fabric through smpquery and through diag, LID-routed and by
// directed route, and compares the bytes and the exit status; then the
// failures: an unknown op, a LID nobody has, a port past NumPorts.
func TestSMPQueryMatchesC(t *testing.T) {
	for _, tp := range diagTopologies {
		t.Run(tp.path[strings.LastIndex(tp.path, "/")+1:], func(t *testing.T) {
			s := shared.Get(t, tp.path, &ibsimtest.Options{InitPorts: initPorts(tp.path)})
			sess, _ := session(t, s, tp.host, nil, nil)
			env := &diag.Env{Session: sess}
			ctx := t.Context()
			run := func(what string, o diag.SMPQueryOptions, args ...string) {
				t.Helper()
				cOut, cCode := cTool(t, s, tp.host, "smpquery", args...)
				q, err := diag.SMPQueryRun(ctx, env, o)
				var b strings.Builder
				if err == nil {
					diag.WriteSMPQuery(&b, q)
				}
				diag.WriteIBError(&b, "/usr/sbin/smpquery", err)
				same(t, what, cOut, cCode, b.String(), err)
			}
			n := 0
			for _, lt := range lidTargets(t, sess) {
				ls := strconv.Itoa(int(lt.lid))
				tg := engine.LID(lt.lid)
				for _, op := range []string{"nodeinfo", "NodeDesc", "SI", "GI"} {
					if op == "SI" && lt.node.Type != topo.Switch {
						continue
					}
					run(fmt.Sprintf("smpquery %s %s", op, ls), diag.SMPQueryOptions{Op: op, Target: tg}, op, ls)
					n++
				}
				for _, p := range lt.ports {
					ps := strconv.Itoa(p)
					for _, op := range []string{"portinfo", "pkeys", "sl2vl", "vlarb"} {
						run(fmt.Sprintf("smpquery %s %s %s", op, ls, ps), diag.SMPQueryOptions{Op: op, Target: tg, Port: p}, op, ls, ps)
						n++
					}
				}
			}
			// Directed routes: the local node, and one hop out of each of
			// its ports.
			for _, path := range []string{"0", "0,1", "0,2"} {
				tg, err := engine.ParseTarget("dr:" + path)
				if err != nil {
					t.Fatal(err)
				}
				for _, op := range []string{"nodeinfo", "nodedesc", "portinfo"} {
					run(fmt.Sprintf("smpquery -D %s %s", op, path), diag.SMPQueryOptions{Op: op, Target: tg}, "-D", op, path)
					n++
				}
			}
			// Failures: an op smpquery has not, a LID nobody answers, a
			// port past the node's last.
			run("unknown op", diag.SMPQueryOptions{Op: "nosuchop", Target: engine.LID(1)}, "nosuchop", "1")
			run("absent LID", diag.SMPQueryOptions{Op: "nodeinfo", Target: engine.LID(999)}, "nodeinfo", "999")
			run("port past NumPorts", diag.SMPQueryOptions{Op: "pkeys", Target: engine.LID(1), Port: 60}, "pkeys", "1", "60")
			t.Logf("%d smpquery invocations compared", n+3)
		})
	}
}
