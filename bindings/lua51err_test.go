package bindings

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// TestLua51ErrorBytecode pins what lua51err.go reads of gopher-lua's
// bytecode: the instruction layout and the operands of the instructions
// it names values from. A gopher-lua that lays them out otherwise fails
// here rather than naming the wrong variable.
func TestLua51ErrorBytecode(t *testing.T) {
	for _, c := range []struct {
		src  string
		op   int
		reg  func(i uint32) int // the operand named
		want string
	}{
		{"local x; local y = x.f", lua.OP_GETTABLEKS, instB, "local 'x'"},
		{"local y = g.f", lua.OP_GETTABLEKS, instB, "global 'g'"},
		{"local t = {}; local y = t.a.b", lua.OP_GETTABLEKS, instB, "field 'a'"}, // the last one
		{"undefined()", lua.OP_CALL, instA, "global 'undefined'"},
		{"local o = {}; o:m()", lua.OP_CALL, instA, "method 'm'"},
		{"local u; return function() return u + 1 end", lua.OP_ADD, instB, "upvalue 'u'"},
		{"local a; local b = 1 * a", lua.OP_MUL, instC, "local 'a'"},
		{"local t = 3; print(#t)", lua.OP_LEN, instB, "local 't'"},
		{"local t = {}; t[1]()", lua.OP_CALL, instA, "field '?'"},
		{"local a, b = 1; a, b = b.x, a", lua.OP_GETTABLEKS, instB, "local 'b'"},
	} {
		// Compiled as Load compiles: the assignment rewrite's locals stand
		// for temporaries.
		chunk, err := parse.Parse(strings.NewReader(c.src), "t")
		if err != nil {
			t.Fatal(err)
		}
		p, err := lua.Compile(rewriteBlock(chunk), "t")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(c.src, "function()") {
			p = p.FunctionPrototypes[0]
		}
		got := ""
		for pc, i := range p.Code {
			if instOp(i) == c.op {
				got = objName(p, pc, c.reg(i))
			}
		}
		if got != c.want {
			t.Errorf("%s: opcode %d names %q, want %q", c.src, c.op, got, c.want)
		}
	}
}

// TestLua51ErrorMessageLeftAlone: what is not one of gopher-lua's runtime
// or argument error texts keeps its words, even when it reads like one.
func TestLua51ErrorMessageLeftAlone(t *testing.T) {
	L, _, _ := newTestState(t)
	for _, src := range []string{
		`error("attempt to call a non-function object", 0)`,
		`error("<string>:1: attempt to index a non-table object(nil) with key 'x'", 0)`,
		`error("bad argument #1 to rep (string expected, got nil)", 0)`,
	} {
		err := DoString(L, src)
		want := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(src, `error("`), ""), `", 0)`)
		if err == nil || errorMessage(err) != want {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
}

// TestFixScopesLinesUp compiles every Lua file of the repository as Load
// does and checks that fixScopes lines each function's locals up with the
// tree (else it leaves gopher-lua's wrong scopes).
func TestFixScopesLinesUp(t *testing.T) {
	var files []string
	for _, g := range []string{"../scripts/*.lua", "../scripts/checks/*.lua", "../tests/lua/*.lua", "../tests/lua51/*.lua"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("%d Lua files found", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		gotos, err := check51(string(src), f)
		if err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		text, _ := renameGotos(string(src), gotos)
		chunk, err := parse.Parse(strings.NewReader(text), f)
		if err != nil {
			t.Fatal(err)
		}
		chunk = rewriteOps(rewriteBlock(chunk), false)
		p, err := lua.Compile(chunk, f)
		if err != nil {
			t.Fatal(err)
		}
		if !fixScopes(p, &ast.FunctionExpr{ParList: &ast.ParList{HasVargs: true}, Stmts: chunk}, false, true) {
			t.Errorf("%s: the locals do not line up with the tree", f)
		}
	}
}

// TestFixScopes: a local declared after a block that ended holds the
// register its locals held, and names it (gopher-lua's own EndPc left the
// block's local in scope: "attempt to call local 'y'").
func TestFixScopes(t *testing.T) {
	src := "local x = 1\ndo local y = 2 end\nlocal z\nz()"
	chunk, _ := parse.Parse(strings.NewReader(src), "t")
	p, _ := lua.Compile(chunk, "t")
	fixScopes(p, &ast.FunctionExpr{ParList: &ast.ParList{HasVargs: true}, Stmts: chunk}, false, true)
	for pc, i := range p.Code {
		if instOp(i) == lua.OP_CALL {
			if got := objName(p, pc, instA(i)); got != "local 'z'" {
				t.Errorf("call names %q, want local 'z'", got)
			}
		}
	}
}

// TestStackOverflowMessage: calls nested past the limit end with Lua 5.1's
// "file:line: stack overflow", never gopher-lua's "lua callstack overflow".
func TestStackOverflowMessage(t *testing.T) {
	L, _, _ := newTestState(t)
	for _, src := range []string{
		"local function f() return 1 + f() end f()",
		"local function f() return 1 + f() end local ok, e = pcall(f) error(e, 0)",
	} {
		err := DoString(L, src)
		if err == nil || !regexp.MustCompile(`^<string>:1: stack overflow$`).MatchString(errorMessage(err)) {
			t.Errorf("%s: %v", src, err)
		}
	}
}
