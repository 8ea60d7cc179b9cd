package tests

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/internal/luatest"
)

// TestRdmacmMigratePlan runs scripts/rdmacm_migrate.lua on the simulated
// fabrics with several connection counts: every check passes and the
// script leaves nothing open.
func TestRdmacmMigratePlan(t *testing.T) {
	src, err := os.ReadFile("../scripts/rdmacm_migrate.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topology string
		n        string
	}{{"default", "8"}, {"net.2sw2path4hca", "1"}, {"net.2sw2path4hca", "33"}} {
		t.Run(c.topology+"/"+c.n, func(t *testing.T) {
			f, err := openFabric(c.topology)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
			defer cancel()
			var out strings.Builder
			L, env, done := planState(t, ctx, f, nil, bindings.Options{Stdout: &out,
				PlanName: "rdmacm_migrate", PlanArgs: map[string]string{"connections": c.n}})
			defer done()
			luatest.ExpectPlan(t, env, bindings.DoString(L, string(src)), 7)
		})
	}
}
