package bindings

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
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
		// the count is a C int, as luaL_checkint reads it (2^40 is 0)
		{`string.rep(string.rep("x", 2^20), 2^20)`, "string.rep", "1 TiB"},
		{`local ok, e = pcall(string.rep, ("ab"):rep(2^19), 2^20); print("caught", e)`, "string.rep", "1 TiB"},
		{`plan.check("c", function() return ("x"):rep(2^20):rep(2^30) end)`, "string.rep", "1 PiB"},
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

// FuzzFormatSize: what string.format's check estimates is never less
// than what fmt.Sprintf (which gopher-lua's string.format calls) writes,
// for any format and a string and a number argument.
func FuzzFormatSize(f *testing.F) {
	for _, s := range []string{"%d", "%5.2f|%-10s", "%q", "% x", "%+q", "%%%5%", "%999999d", "%.1000000f", "%1000001d", "%10000009d", "%10000010d", "%*d", "%[2]d"} {
		f.Add(s, "h\x00\xffé", 3.5)
	}
	f.Fuzz(func(t *testing.T, format, s string, n float64) {
		if len(format) > 64 {
			return // Sprintf of many million-wide verbs: slow, not interesting
		}
		args := []any{lua.LString(s), lua.LNumber(n)}
		npat := strings.Count(format, "%") - strings.Count(format, "%%")
		got := len(fmt.Sprintf(format, args[:max(0, min(npat, len(args)))]...))
		est := fmtVerbsSize(format) + 4*uint64(len(s)) + 2 + 32
		if uint64(got) > est {
			t.Errorf("Sprintf(%q, %q, %v) wrote %d bytes, estimated %d", format, s, n, got, est)
		}
	})
}
