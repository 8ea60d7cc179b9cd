package bindings

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// gopher-lua v1.1.2 records where each local's scope ends (DbgLocalInfo's
// EndPc) in the wrong entries: when a block ends, it writes the end into
// DbgLocals[r] for each register r of the block's locals, but DbgLocals is
// indexed by declaration, not by register (compile.go's EndScope). Once a
// block has ended, later locals keep an EndPc of 0 and earlier ones get
// other blocks' ends, so "which local is in register r here" (debug
// information, and the names of lua51err.go's messages) comes out wrong:
// "attempt to call local 'y'" for a local z declared after y's block.
//
// fixScopes recomputes them after lua.Compile from the tree it compiled:
// it declares the locals in the order gopher-lua's compiler does
// (parameters, "self", "arg", "(for index)"..., each local statement's
// names), and ends each one where its block ends: before the first
// instruction of a later line than the block's last, and before the
// first local declared after the block. A function whose locals do not
// line up with the tree (names, count, its nested functions' lines) is
// left as gopher-lua made it.

type scopeLocal struct {
	entry    int // index in DbgLocals
	lastLine int // the last line of its block, 0 for the function's body
	after    int // the first entry declared after its block, -1 for none
}

type scopeWalker struct {
	p      *lua.FunctionProto
	locals []scopeLocal
	open   [][]int // per open block: the indexes in locals declared in it
	funcs  []*ast.FunctionExpr
	// pending are the locals whose block ended, waiting for the next
	// declaration (their "after").
	pending []int
	bad     bool
}

// fixScopes fixes p's DbgLocals (and its nested functions') from fn, the
// function expression it was compiled from (for the main chunk, one
// holding the chunk's statements), and reports whether every function
// lined up with the tree.
func fixScopes(p *lua.FunctionProto, fn *ast.FunctionExpr, isMethod, isMain bool) bool {
	w := &scopeWalker{p: p}
	w.open = append(w.open, nil)
	if isMethod {
		w.declare("self")
	}
	if fn.ParList != nil {
		for _, n := range fn.ParList.Names {
			w.declare(n)
		}
		if fn.ParList.HasVargs && !isMain && lua.CompatVarArg {
			w.declare("arg")
		}
	}
	w.stmts(fn.Stmts)
	if w.bad || len(w.locals) != len(p.DbgLocals) {
		return false
	}
	for _, l := range w.locals {
		d := p.DbgLocals[l.entry]
		end := len(p.Code) - 1
		if l.lastLine > 0 {
			for pc := d.StartPc; pc < len(p.Code) && pc < len(p.DbgSourcePositions); pc++ {
				if p.DbgSourcePositions[pc] > l.lastLine {
					end = pc - 1
					break
				}
			}
		}
		if l.after >= 0 && p.DbgLocals[l.after].StartPc-1 < end {
			end = p.DbgLocals[l.after].StartPc - 1
		}
		d.EndPc = max(end, d.StartPc-1)
	}
	// The nested functions, matched with the compiled ones by their lines.
	if len(w.funcs) != len(p.FunctionPrototypes) {
		return false
	}
	ok := true
	for i, f := range w.funcs {
		q := p.FunctionPrototypes[i]
		if q.LineDefined != f.Line() || q.LastLineDefined != f.LastLine() {
			return false
		}
		ok = fixScopes(q, f, int(q.NumParameters) == len(f.ParList.Names)+1, false) && ok
	}
	return ok
}

func (w *scopeWalker) declare(name string) {
	i := len(w.locals)
	if i >= len(w.p.DbgLocals) || w.p.DbgLocals[i].Name != name {
		w.bad = true
		return
	}
	w.locals = append(w.locals, scopeLocal{entry: i, after: -1})
	for _, j := range w.pending {
		w.locals[j].after = i
	}
	w.pending = w.pending[:0]
	top := len(w.open) - 1
	w.open[top] = append(w.open[top], i)
}

// block runs body inside a block whose last line is lastLine.
func (w *scopeWalker) block(lastLine int, body func()) {
	w.open = append(w.open, nil)
	body()
	top := len(w.open) - 1
	for _, i := range w.open[top] {
		w.locals[i].lastLine = lastLine
	}
	w.pending = append(w.pending, w.open[top]...)
	w.open = w.open[:top]
}

func (w *scopeWalker) declareAll(names []string) {
	for _, n := range names {
		w.declare(n)
	}
}

func stmtLastLine(s ast.Stmt) int { return max(s.Line(), s.LastLine()) }

func blockLastLine(stmts []ast.Stmt, fallback int) int {
	if len(stmts) == 0 {
		return fallback
	}
	return max(stmtLastLine(stmts[len(stmts)-1]), fallback)
}

func (w *scopeWalker) exprs(es ...ast.Expr) {
	for _, e := range es {
		if e != nil {
			w.expr(e)
		}
	}
}

// expr collects the function expressions of e, in the order gopher-lua
// compiles them.
func (w *scopeWalker) expr(e ast.Expr) {
	if f, ok := e.(*ast.FunctionExpr); ok {
		w.funcs = append(w.funcs, f)
		return
	}
	exprParts(e, w.expr)
}

func (w *scopeWalker) stmts(stmts []ast.Stmt) {
	for _, s := range stmts {
		w.stmt(s)
	}
}

func (w *scopeWalker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.LocalAssignStmt:
		if len(s.Names) == 1 && len(s.Exprs) == 1 {
			if _, ok := s.Exprs[0].(*ast.FunctionExpr); ok {
				w.declareAll(s.Names)
				w.exprs(s.Exprs...)
				return
			}
		}
		w.exprs(s.Exprs...)
		w.declareAll(s.Names)
	case *ast.DoBlockStmt:
		w.block(stmtLastLine(s), func() { w.stmts(s.Stmts) })
	case *ast.WhileStmt:
		w.exprs(s.Condition)
		w.block(stmtLastLine(s), func() { w.stmts(s.Stmts) })
	case *ast.RepeatStmt:
		w.block(stmtLastLine(s), func() { w.stmts(s.Stmts); w.exprs(s.Condition) })
	case *ast.IfStmt:
		w.exprs(s.Condition)
		w.block(blockLastLine(s.Then, s.Line()), func() { w.stmts(s.Then) })
		if len(s.Else) > 0 {
			w.block(blockLastLine(s.Else, s.Line()), func() { w.stmts(s.Else) })
		}
	case *ast.NumberForStmt:
		w.block(stmtLastLine(s), func() {
			w.declareAll([]string{"(for index)"})
			w.exprs(s.Init)
			w.declareAll([]string{"(for limit)"})
			w.exprs(s.Limit)
			w.declareAll([]string{"(for step)"})
			w.exprs(s.Step)
			w.declareAll([]string{s.Name})
			w.stmts(s.Stmts)
		})
	case *ast.GenericForStmt:
		w.block(stmtLastLine(s), func() {
			w.declareAll([]string{"(for generator)", "(for state)", "(for control)"})
			w.exprs(s.Exprs...)
			w.declareAll(s.Names)
			w.stmts(s.Stmts)
		})
	default:
		exprs, _ := stmtParts(s)
		w.exprs(exprs...)
	}
}
