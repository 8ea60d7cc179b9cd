package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/internal/lua51ref"
)

// lua51ErrCases reads tests/lua51err's cases: programs and the message Lua
// 5.1 gives for each, run as file.lua (tests.TestLua51ErrorMessagesReference
// checks them against lua5.1).
func lua51ErrCases(t *testing.T) []lua51ref.Case {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "tests", "lua51err", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("tests/lua51err: no cases files (%v)", err)
	}
	var all []lua51ref.Case
	for _, f := range files {
		cases, err := lua51ref.ReadCases(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cases...)
	}
	return all
}

// TestLua51ErrorMessagesCommands: `ibscript run FILE` and `ibscript -e`
// print Lua 5.1's message for each case ("ibscript: " and the message on
// stderr's first line, the chunk named as lua5.1 names it: the path,
// "(command line)"), and the REPL's evaluator returns it ("stdin").
func TestLua51ErrorMessagesCommands(t *testing.T) {
	cases := lua51ErrCases(t)
	dir := t.TempDir()
	path := filepath.Join(dir, lua51ref.FileName)
	firstLine := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "embedded simulated fabric") {
				continue
			}
			for _, prefix := range []string{"ibscript: ", "ibscript run: "} {
				if rest, ok := strings.CutPrefix(l, prefix); ok {
					return rest
				}
			}
		}
		return ""
	}
	c0 := &config{fabricURI: "sim:"}
	b, L, env, err := newLua(context.Background(), c0, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeLua(b, L, env, 0, io.Discard)
	ev := &evaluator{L: L}
	for _, c := range cases {
		if err := os.WriteFile(path, []byte(c.Prog), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, errOut := ibscript(t, "--fabric", "sim:", "run", path)
		if got, want := firstLine(errOut), lua51ref.Rename(c.Want, path); got != want {
			t.Errorf("%s: ibscript run: %q\nwant %q (Lua 5.1)\n%s", c.Name, got, want, errOut)
		}
		_, _, errOut = ibscript(t, "--fabric", "sim:", "-e", c.Prog)
		if got, want := firstLine(errOut), lua51ref.Rename(c.Want, "(command line)"); got != want {
			t.Errorf("%s: ibscript -e: %q\nwant %q (Lua 5.1)\n%s", c.Name, got, want, errOut)
		}
		if _, err := bindings.LoadString(L, "return "+c.Prog, "stdin"); err == nil {
			continue // the REPL tries "return " first: ";" is "return ;"
		}
		_, err := ev.Eval(t.Context(), c.Prog)
		got := "<no error>"
		if err != nil {
			got = errorMessage(err)
		}
		want := lua51ref.Rename(c.Want, "stdin")
		if strings.HasSuffix(want, "'<eof>'") {
			// As lua.c, the REPL reads more lines for a chunk that ends
			// before its syntax does.
			if !errors.Is(err, errIncomplete) {
				t.Errorf("%s: REPL: %q, want it incomplete (5.1: %q)", c.Name, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: REPL: %q\nwant %q (Lua 5.1)", c.Name, got, want)
		}
	}
}
