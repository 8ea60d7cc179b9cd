package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/luatest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/native/rdmacm"
	"github.com/ibscript/ibscript/native/rdmacm/rdmacmtest"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// kernelSkips are the cases of rdmacm_test.lua that cannot run on the
// kernel backend over rdmacmtest's model, and why.
var kernelSkips = map[string]string{
	"test_peer_never_answers": "every port of the model runs the kernel's CM and the model keeps no CM timers, " +
		"so no REQ goes unanswered into UNREACHABLE",
	"test_migrate_with_pending_events": "rdmacm.poll with a count: an rdma_cm fd reports readiness, not how many " +
		"events (EOPNOTSUPP); the CM conformance suite (rdmacm/cmtest) runs the case on the model",
	"test_destroy_with_unacked_events": "rdmacm.poll with a count: an rdma_cm fd reports readiness, not how many " +
		"events (EOPNOTSUPP); the CM conformance suite (rdmacm/cmtest) runs the case on the model",
}

// TestLuaRdmacmOnKernel runs tests/lua/rdmacm_test.lua on the kernel
// backend: umadtest's host with the suite's four CAs (Hca1..Hca4) and
// rdmacmtest's model as /dev/infiniband/rdma_cm, so rdmacm.New drives
// the model's CM through fabric/kernel and native/rdmacm.
func TestLuaRdmacmOnKernel(t *testing.T) { runSuiteOnKernel(t, "lua/rdmacm_test.lua", kernelSkips) }

// TestLuaSeedsOnKernel runs tests/lua/seeds_test.lua, the seed man pages'
// umad statements, on the kernel backend over umadtest's model of
// /dev/infiniband/umad and sysfs, every case.
func TestLuaSeedsOnKernel(t *testing.T) { runSuiteOnKernel(t, "lua/seeds_test.lua", nil) }

// runSuiteOnKernel runs every case of a Lua suite on the kernel backend
// but those skips names (with the reason), and fails when a skip names a
// case the suite no longer has or nothing ran.
func runSuiteOnKernel(t *testing.T, file string, skips map[string]string) {
	src, names, err := luatest.ReadSuite(file)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if why, ok := skips[name]; ok {
				t.Skip(why)
			}
			ran++
			runOnKernel(t, file, src, name)
		})
	}
	for name := range skips {
		if !strings.Contains(src, "function "+name+"(") {
			t.Errorf("skip list names %s, which the suite no longer has", name)
		}
	}
	if ran == 0 {
		t.Error("no case of the suite ran on the kernel backend")
	}
}

func runOnKernel(t *testing.T, file, src, name string) {
	h := umadtest.NewHost(umadtest.New(nil))
	for i := range 4 {
		h.AddCA(fmt.Sprintf("Hca%d", i+1), 1, 0x0002c90300001000+uint64(i)<<8,
			umadtest.HostPort{Num: 1, LID: uint16(i + 1), State: 4, PhysState: 5})
	}
	k := rdmacmtest.New()
	f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open, OpenCM: func() (rdmacm.Dev, error) { return k.Open(), nil }})
	defer f.Close()
	ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
	defer cancel()
	ports, err := f.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		k.AddGID(mad.NewGID(p.GIDPrefix, p.PortGUID))
	}
	var out strings.Builder
	L, env, done := planState(t, ctx, f, nil, bindings.Options{Stdout: &out})
	defer done()
	luatest.Install(L)
	if err := luatest.Run(t, L, env, src, filepath.Base(file), name); err != nil {
		t.Error(err)
	}
	if out.Len() > 0 {
		t.Logf("output:\n%s", out.String())
	}
}
