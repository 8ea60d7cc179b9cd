package tests

import (
	"context"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/sim/simtest"
)

// planState opens a port of f, a session on it (eopts as engine.New takes
// them) and the Lua state a plan gets there; opts gets the session and the
// fabric. done closes the state's Env, the state and the session, in that
// order.
func planState(t testing.TB, ctx context.Context, f fabric.Fabric, eopts *engine.Options, opts bindings.Options) (L *lua.LState, env *bindings.Env, done func()) {
	t.Helper()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := engine.New(tr, eopts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Session, opts.Fabric = sess, f
	L, env, err = bindings.NewState(ctx, &opts)
	if err != nil {
		sess.Close()
		t.Fatal(err)
	}
	return L, env, func() {
		env.Close()
		L.Close()
		sess.Close()
	}
}

// defaultPlanState is planState on sim.Default's fabric, closed when t
// ends.
func defaultPlanState(t *testing.T, opts bindings.Options) (L *lua.LState, env *bindings.Env, done func()) {
	t.Helper()
	return planState(t, t.Context(), simtest.Default(t, nil), nil, opts)
}
