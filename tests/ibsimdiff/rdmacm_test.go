package ibsimdiff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/ibsim"
)

// nodesFabric is a fabric.Fabric over one ibsim whose CA ports are named
// by their node ids: Open("Hca2", 1) attaches to node Hca2 with issm, so
// ibsim forwards the GMPs it does not answer itself (the CM's) to it.
// Open("", 0) attaches to the default node as a plain client.
type nodesFabric struct {
	sock  string
	nodes []string

	mu   sync.Mutex
	open []fabric.Transport
}

func (f *nodesFabric) Ports(ctx context.Context) ([]fabric.PortAttr, error) {
	var out []fabric.PortAttr
	for _, n := range f.nodes {
		t, err := ibsim.Open(ctx, f.sock, &ibsim.Options{Node: n})
		if err != nil {
			return nil, err
		}
		a := t.Port()
		t.Close()
		a.CAName = n
		out = append(out, a)
	}
	return out, nil
}

func (f *nodesFabric) Open(ctx context.Context, ca string, port int) (fabric.Transport, error) {
	opts := &ibsim.Options{}
	if ca != "" {
		opts = &ibsim.Options{Node: ca, ISSM: true}
	}
	t, err := ibsim.Open(ctx, f.sock, opts)
	if err != nil {
		return nil, err
	}
	if port != 0 && port != t.Port().PortNum {
		t.Close()
		return nil, fmt.Errorf("ibsim node %q: no port %d", ca, port)
	}
	f.mu.Lock()
	f.open = append(f.open, t)
	f.mu.Unlock()
	return t, nil
}

func (f *nodesFabric) Close() error {
	f.mu.Lock()
	ts := f.open
	f.open = nil
	f.mu.Unlock()
	var errs []error
	for _, t := range ts {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}

// TestRdmacmOnIbsim runs tests/lua/rdmacm_test.lua on ibsim (with OpenSM)
// on the same topology: each endpoint attaches to its CA node with issm,
// the engine speaks the IB CM between them through ibsim, routes come from
// OpenSM's SA.
func TestRdmacmOnIbsim(t *testing.T) {
	const file = "../lua/rdmacm_test.lua"
	topology := luaTopology(t, file)
	s := shared.Get(t, "../topologies/"+topology, nil)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	if err := L.DoString(string(src)); err != nil {
		t.Fatal(err)
	}
	var names []string
	L.G.Global.ForEach(func(k, v lua.LValue) {
		if n := k.String(); strings.HasPrefix(n, "test_") && v.Type() == lua.LTFunction {
			names = append(names, n)
		}
	})
	L.Close()
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if err := runRdmacmOnIbsim(t, s.Sock, string(src), name); err != nil {
				t.Error(err)
			}
		})
	}
}

func runRdmacmOnIbsim(t *testing.T, sock, src, name string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := &nodesFabric{sock: sock, nodes: []string{"Hca1", "Hca2", "Hca3", "Hca4"}}
	defer f.Close()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		return err
	}
	sess, err := engine.New(tr, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	var out strings.Builder
	L, env, err := bindings.NewState(ctx, &bindings.Options{Session: sess, Fabric: f, Stdout: &out})
	if err != nil {
		return err
	}
	defer L.Close()
	defer env.Close()
	L.SetGlobal("expect_error", L.NewFunction(expectError))
	if err := L.DoString(src); err != nil {
		return err
	}
	L.Push(L.GetGlobal(name))
	L.Push(luaT(L, t))
	err = L.PCall(1, 0, nil)
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		if ud, ok := ae.Object.(*lua.LUserData); ok {
			if s, ok := ud.Value.(luaSkip); ok {
				t.Skip(s.msg)
			}
		}
		return errors.New(ae.Object.String())
	}
	if err == nil && env.OpenResources() > 0 {
		return errors.New("left resources open")
	}
	return err
}

// TestRdmacmPlanOnIbsim runs scripts/rdmacm_migrate.lua on ibsim: every
// check passes, as on the embedded simulator.
func TestRdmacmPlanOnIbsim(t *testing.T) {
	s := shared.Get(t, "../topologies/net.2sw2path4hca", nil)
	src, err := os.ReadFile("../../scripts/rdmacm_migrate.lua")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := &nodesFabric{sock: s.Sock, nodes: []string{"Hca1", "Hca2", "Hca3", "Hca4"}}
	defer f.Close()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := engine.New(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var out strings.Builder
	L, env, err := bindings.NewState(ctx, &bindings.Options{Session: sess, Fabric: f, Stdout: &out,
		PlanName: "rdmacm_migrate", PlanArgs: map[string]string{"connections": "12"}})
	if err != nil {
		t.Fatal(err)
	}
	defer L.Close()
	defer env.Close()
	runErr := L.DoString(string(src))
	rep := env.PlanReport(runErr)
	if runErr != nil || rep == nil {
		t.Fatalf("run: %v", runErr)
	}
	if rep.Summary.Failed != 0 || rep.Summary.Passed != 7 {
		for _, ch := range rep.Checks {
			for _, r := range ch.Results {
				t.Logf("%s: %s %s", ch.Name, r.Status, r.Message)
			}
		}
		t.Fatalf("summary %+v, want 7 passed", rep.Summary)
	}
	if n := env.OpenResources(); n != 0 {
		t.Errorf("%d resources left open", n)
	}
}
