package main

import "testing"

// TestREPLLua51OnATerminal types issue 15's repros into the REPL on a
// pseudo-terminal, as a block spanning several lines.
func TestREPLLua51OnATerminal(t *testing.T) {
	tm := startREPL(t, t.TempDir(), "--fabric=sim:"+topologies+"net.2sw2path4hca")
	pos := tm.expect(0, "> ", nil)
	tm.typ("do\r")
	pos = tm.expect(pos, ">> ", nil)
	tm.typ("  local x = 0\r")
	tm.typ("  local function f(fn) x = x + 1; pcall(fn, \"e\") end\r")
	tm.typ("  f(error); f(error); f(error); print(\"x=\" .. x)\r")
	tm.typ("end\r")
	pos = tm.expect(pos, "x=3\n", nil)
	tm.typ("do local a, b = 1, 2; a, b = b, a; print(\"ab=\" .. a .. b) end\r")
	tm.expect(pos, "ab=21\n", nil)
}
