package bindings

import (
	"errors"
	"strings"
	"testing"
)

// TestAllocationLimit: string.rep, table.concat and string.format refuse
// a result past Options.MemoryLimit before making it, with a RunError
// that pcall and plan.check pass on, and tell OnMemoryLimit; below the
// limit they behave as gopher-lua's own.
func TestAllocationLimit(t *testing.T) {
	var told []error
	L, _, out := newTestStateOpts(t, &Options{MemoryLimit: HeapInUse() + 64<<20,
		OnMemoryLimit: func(err error) { told = append(told, err) }})
	for _, c := range []struct{ chunk, fn, size string }{
		{`string.rep("x", 2^40)`, "string.rep", "1 TiB"},
		{`local ok, e = pcall(string.rep, "ab", 2^39); print("caught", e)`, "string.rep", "1 TiB"},
		{`plan.check("c", function() return ("x"):rep(2^50) end)`, "string.rep", "1 PiB"},
		{`local s = string.rep("x", 2^20); local t = {}; for i = 1, 100 do t[i] = s end; table.concat(t, "--")`, "table.concat", "100 MiB"},
		{`local t = {}; for i = 1, 100 do t[i] = 1 end; string.format(string.rep("%999999s", 100), unpack(t))`, "string.format", "95.4 MiB"},
	} {
		told = nil
		out.Reset()
		err := DoString(L, c.chunk)
		re, ok := AsRunError(err)
		var me *MemoryError
		if !ok || re.Fn != c.fn || !errors.As(re.Err, &me) || !strings.Contains(re.Error(), c.fn+": would allocate "+c.size) {
			t.Errorf("%s: error %v, want a RunError from %s allocating %s", c.chunk, err, c.fn, c.size)
		}
		if len(told) != 1 || out.String() != "" {
			t.Errorf("%s: OnMemoryLimit told %v, printed %q; want one call and nothing printed", c.chunk, told, out.String())
		}
	}
	if err := DoString(L, `print(#string.rep("ab", 2^21), table.concat({"a", 2, "c"}, "-"), string.format("%3d|%-2s|", 7, "x"))`); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "4194304\ta-2-c\t  7|x |\n" {
		t.Errorf("below the limit: printed %q", got)
	}
}
