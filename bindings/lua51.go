package bindings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// This file corrects gopher-lua v1.1.2's compiler where it breaks Lua 5.1's
// assignment rules (docs/lua.md, "Corrections"). gopher-lua compiles an
// assignment to a local by evaluating the right-hand side straight into the
// local's register, so an expression that still has to read the local after
// writing part of its value there reads the new value:
//
//	a, b = b, a            -- gopher-lua: 2 2 (upstream issue 440)
//	a, b = a + 1, a + b    -- reads the new a
//	a[i], i = 20, 2        -- indexes with the new i (issue 158)
//	f, a.d = f, d          -- f gets "d" (issue 315)
//	s = f() and s or s     -- f()'s result clobbers s before it is read
//
// Load rewrites these statement shapes, on the parsed syntax tree, into
// ones gopher-lua compiles correctly, then compiles with lua.Compile:
//
//   - a multiple assignment evaluates every table and key expression of its
//     left-hand side, then every right-hand value, into fresh locals, and
//     only then assigns, right to left as Lua 5.1's reference implementation
//     does (so "a, a = 1, 2" leaves 1);
//   - a single assignment to a name evaluates its value into a fresh local
//     first, unless the value is a constant, a name or "...": anything longer
//     can read the half-assigned local, directly or through a closure.
//
// The fresh locals live in a do ... end block of their own, so the rewrite
// changes neither scoping nor what the chunk can see. Their names contain
// a space, which no Lua identifier can.

// Load compiles a chunk from r with ibscript's corrections, in L's global
// environment. Errors are *lua.ApiError values of type ApiErrorSyntax whose
// message names the chunk and line, as gopher-lua's own Load gives them.
func Load(L *lua.LState, r io.Reader, name string) (*lua.LFunction, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, &lua.ApiError{Type: lua.ApiErrorFile, Object: lua.LString(err.Error()), Cause: err}
	}
	// Lua 5.1's syntax and its messages first (lua51syntax.go).
	gotos, err := check51(string(src), name)
	if err != nil {
		return nil, syntaxError(err)
	}
	text, placeholder := string(src), ""
	if len(gotos) > 0 {
		text, placeholder = renameGotos(text, gotos)
	}
	chunk, err := parse.Parse(strings.NewReader(text), name)
	if err != nil {
		return nil, syntaxError(err)
	}
	if placeholder != "" {
		renameName(chunk, placeholder, "goto")
	}
	chunk = rewriteOps(rewriteBlock(chunk), exactArithmetic(L))
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, syntaxError(err)
	}
	fixScopes(proto, &ast.FunctionExpr{ParList: &ast.ParList{HasVargs: true}, Stmts: chunk}, false, true)
	linkOps(L, proto)
	return L.NewFunctionFromProto(proto), nil
}

// LoadString is Load of a string.
func LoadString(L *lua.LState, src, name string) (*lua.LFunction, error) {
	return Load(L, strings.NewReader(src), name)
}

// LoadFile is Load of a file, skipping a first line that starts with '#'
// (a shebang) as lua does, keeping line numbers. The file must be one the
// state's Files allows (files.go); a syntax error in a file not named
// *.lua shows its line, not the parser's message (HideSource).
func LoadFile(L *lua.LState, path string) (*lua.LFunction, error) {
	src, err := filesOf(L).ReadFile(path)
	if err != nil {
		return nil, &lua.ApiError{Type: lua.ApiErrorFile, Object: lua.LString(err.Error() + errorHint(L, err)), Cause: err}
	}
	fn, err := Load(L, bytes.NewReader(skipShebang(src)), path)
	return fn, HideSource(path, err)
}

// skipShebang blanks a first line that starts with '#', keeping its
// newline so line numbers stay those of the file.
func skipShebang(src []byte) []byte {
	if len(src) == 0 || src[0] != '#' {
		return src
	}
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		return src[i:]
	}
	return nil
}

func syntaxError(err error) error {
	return &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(err.Error()), Cause: err}
}

// installLoaders replaces every way a chunk gets compiled from Lua (load,
// loadstring, loadfile, dofile, and require's Lua-file loader) with ones
// that go through Load.
func installLoaders(L *lua.LState) {
	loadResult := func(L *lua.LState, fn *lua.LFunction, err error) int {
		if err != nil {
			L.Push(lua.LNil)
			L.Push(lua.LString(errorMessage(err)))
			return 2
		}
		L.Push(fn)
		return 1
	}
	L.SetGlobal("loadstring", L.NewFunction(func(L *lua.LState) int {
		src := L.CheckString(1)
		fn, err := LoadString(L, src, chunkID(L.OptString(2, src)))
		return loadResult(L, fn, err)
	}))
	L.SetGlobal("load", L.NewFunction(func(L *lua.LState) int {
		reader := L.CheckFunction(1)
		name := L.OptString(2, "=(load)")
		var buf bytes.Buffer
		for {
			L.Push(reader)
			L.Call(0, 1)
			piece := L.Get(-1)
			L.Pop(1)
			if piece == lua.LNil {
				break
			}
			if !lua.LVCanConvToString(piece) {
				L.Push(lua.LNil)
				L.Push(lua.LString("reader function must return a string"))
				return 2
			}
			s := lua.LVAsString(piece)
			if s == "" {
				break
			}
			buf.WriteString(s)
		}
		fn, err := Load(L, &buf, chunkID(name))
		return loadResult(L, fn, err)
	}))
	L.SetGlobal("loadfile", L.NewFunction(func(L *lua.LState) int {
		path := L.CheckString(1)
		fn, err := LoadFile(L, path)
		return loadResult(L, fn, err)
	}))
	L.SetGlobal("dofile", L.NewFunction(func(L *lua.LState) int {
		path := L.CheckString(1)
		fn, err := LoadFile(L, path)
		if err != nil {
			L.RaiseError("dofile: %s", errorMessage(err))
		}
		top := L.GetTop()
		L.Push(fn)
		L.Call(0, lua.MultRet)
		return L.GetTop() - top
	}))
	if loaders, ok := L.GetField(L.GetGlobal("package"), "loaders").(*lua.LTable); ok {
		loaders.RawSetInt(2, L.NewFunction(requireLua))
	}
}

// chunkID is how Lua 5.1 names a chunk in messages: "=name" is name,
// "@file" is file, and anything else is source text, shown as
// [string "its first line"], cut short with "..." (luaO_chunkid).
func chunkID(source string) string {
	const idsize = 60 - len(` [string "..."] `) - 1
	switch {
	case strings.HasPrefix(source, "="):
		return source[1:min(len(source), 60)]
	case strings.HasPrefix(source, "@"):
		return source[1:]
	}
	line := source
	if i := strings.IndexAny(line, "\n\r"); i >= 0 {
		line = line[:i]
	}
	if len(line) > idsize {
		line = line[:idsize]
	}
	if len(line) < len(source) {
		return `[string "` + line + `..."]`
	}
	return `[string "` + line + `"]`
}

// requireLua is require's searcher for Lua files: package.path's templates
// with '?' replaced by the module name (dots as path separators), the
// first that exists compiled through Load.
func requireLua(L *lua.LState) int {
	name := L.CheckString(1)
	path, ok := L.GetField(L.GetGlobal("package"), "path").(lua.LString)
	if !ok {
		L.RaiseError("package.path must be a string")
	}
	file := strings.ReplaceAll(name, ".", string(os.PathSeparator))
	var tried strings.Builder
	for _, tmpl := range strings.Split(string(path), ";") {
		if tmpl == "" {
			continue
		}
		candidate := strings.ReplaceAll(tmpl, "?", file)
		if err := filesOf(L).Check(candidate); err != nil {
			// Not looked at: whether it exists is not the script's to know.
			fmt.Fprintf(&tried, "\n\tnot allowed '%s' (%v)", candidate, ErrFileNotAllowed)
			continue
		}
		if st, err := os.Stat(candidate); err != nil || st.IsDir() {
			fmt.Fprintf(&tried, "\n\tno file '%s'", candidate)
			continue
		}
		fn, err := LoadFile(L, candidate)
		if err != nil {
			L.RaiseError("error loading module '%s' from file '%s':\n\t%s", name, candidate, errorMessage(err))
		}
		L.Push(fn)
		return 1
	}
	L.Push(lua.LString(tried.String()))
	return 1
}

// errorMessage is an error's Lua message: an ApiError's object, else its text.
func errorMessage(err error) string {
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		return ae.Object.String()
	}
	return err.Error()
}

// renameName renames every name from to to in stmts: variables, fields,
// methods, parameters, loop variables. Load uses it to give back the
// name "goto", which gopher-lua's parser reserves, after parsing the
// chunk with a placeholder in its place.
func renameName(stmts []ast.Stmt, from, to string) {
	fix := func(s *string) {
		if *s == from {
			*s = to
		}
	}
	var expr func(e ast.Expr)
	var block func(stmts []ast.Stmt)
	expr = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.IdentExpr:
			fix(&e.Value)
		case *ast.StringExpr:
			fix(&e.Value) // a.goto, {goto = 1}: the placeholder is in no string of the source
		case *ast.FuncCallExpr:
			fix(&e.Method)
		case *ast.FunctionExpr:
			if e.ParList != nil {
				for i := range e.ParList.Names {
					fix(&e.ParList.Names[i])
				}
			}
			block(e.Stmts)
			return
		}
		exprParts(e, expr)
	}
	block = func(stmts []ast.Stmt) {
		for _, s := range stmts {
			switch s := s.(type) {
			case *ast.LocalAssignStmt:
				for i := range s.Names {
					fix(&s.Names[i])
				}
			case *ast.NumberForStmt:
				fix(&s.Name)
			case *ast.GenericForStmt:
				for i := range s.Names {
					fix(&s.Names[i])
				}
			case *ast.FuncDefStmt:
				if s.Name != nil {
					fix(&s.Name.Method)
				}
			}
			exprs, blocks := stmtParts(s)
			for _, e := range exprs {
				if e != nil {
					expr(e)
				}
			}
			for _, b := range blocks {
				block(*b)
			}
		}
	}
	block(stmts)
}

// rewriteBlock applies the corrections to every statement of a block and
// of every block and function body inside it.
func rewriteBlock(stmts []ast.Stmt) []ast.Stmt {
	var out []ast.Stmt
	for i, s := range stmts {
		r := rewriteStmt(s)
		if r != s && out == nil {
			out = make([]ast.Stmt, i, len(stmts)+1)
			copy(out, stmts[:i])
		}
		if sp, ok := r.(*splice); ok {
			out = append(out, sp.stmts...)
		} else if out != nil {
			out = append(out, r)
		}
	}
	if out == nil {
		return stmts
	}
	return out
}

func rewriteStmt(s ast.Stmt) ast.Stmt {
	exprs, blocks := stmtParts(s)
	for _, e := range exprs {
		walkExpr(e)
	}
	for _, b := range blocks {
		*b = rewriteBlock(*b)
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		if len(s.Lhs) > 1 {
			return rewriteMultiAssign(s)
		}
		if id, ok := s.Lhs[0].(*ast.IdentExpr); ok && needsTemp(s.Rhs) {
			return rewriteSelfAssign(s, id)
		}
	case *ast.LocalAssignStmt:
		if capturesOwnName(s) {
			return rewriteLocalCapture(s)
		}
	case *ast.IfStmt:
		if taken, ok := constantCondition(s.Condition); ok {
			// gopher-lua folds a constant condition itself but still gives
			// the dead branch's locals registers, which corrupts an
			// enclosing generic for (upstream issue 540). Fold it first.
			block := &ast.DoBlockStmt{Stmts: s.Else}
			if taken {
				block.Stmts = s.Then
			}
			block.SetLine(s.Line())
			block.SetLastLine(s.LastLine())
			return block
		}
	case *ast.GenericForStmt:
		// The iterator, state and control value are three hidden locals;
		// gopher-lua leaves the ones the list does not give holding what a
		// previous loop left there (upstream issue 514). Give them nil.
		if n := len(s.Exprs); n < 3 && !multiValued(s.Exprs[n-1]) {
			for range 3 - n {
				nilExpr := &ast.NilExpr{}
				nilExpr.SetLine(s.Line())
				s.Exprs = append(s.Exprs, nilExpr)
			}
		}
		// Lua 5.1 puts the iterator's call on the line its expression
		// list starts on (lparser.c's forlist), gopher-lua on the for's:
		// an error there names the line 5.1 names.
		if l := s.Exprs[0].Line(); l > s.Line() {
			s.SetLine(l)
		}
	}
	return s
}

// stmtParts lists a statement's own expressions and its blocks (as
// pointers, so a rewrite can replace them), not descending further.
func stmtParts(s ast.Stmt) (exprs []ast.Expr, blocks []*[]ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		return append(slices.Clip(s.Lhs), s.Rhs...), nil
	case *ast.LocalAssignStmt:
		return s.Exprs, nil
	case *ast.FuncCallStmt:
		return []ast.Expr{s.Expr}, nil
	case *ast.DoBlockStmt:
		return nil, []*[]ast.Stmt{&s.Stmts}
	case *ast.WhileStmt:
		return []ast.Expr{s.Condition}, []*[]ast.Stmt{&s.Stmts}
	case *ast.RepeatStmt:
		return []ast.Expr{s.Condition}, []*[]ast.Stmt{&s.Stmts}
	case *ast.IfStmt:
		return []ast.Expr{s.Condition}, []*[]ast.Stmt{&s.Then, &s.Else}
	case *ast.NumberForStmt:
		return []ast.Expr{s.Init, s.Limit, s.Step}, []*[]ast.Stmt{&s.Stmts}
	case *ast.GenericForStmt:
		return s.Exprs, []*[]ast.Stmt{&s.Stmts}
	case *ast.FuncDefStmt:
		if s.Name != nil {
			return []ast.Expr{s.Name.Func, s.Name.Receiver, s.Func}, nil
		}
		return []ast.Expr{s.Func}, nil
	case *ast.ReturnStmt:
		return s.Exprs, nil
	}
	return nil, nil
}

// exprParts calls fn on an expression's direct subexpressions (nil ones
// skipped), not entering function bodies.
func exprParts(e ast.Expr, fn func(ast.Expr)) {
	each := func(es ...ast.Expr) {
		for _, x := range es {
			if x != nil {
				fn(x)
			}
		}
	}
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		each(e.Object, e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			each(f.Key, f.Value)
		}
	case *ast.FuncCallExpr:
		each(e.Func, e.Receiver)
		each(e.Args...)
	case *ast.LogicalOpExpr:
		each(e.Lhs, e.Rhs)
	case *ast.RelationalOpExpr:
		each(e.Lhs, e.Rhs)
	case *ast.StringConcatOpExpr:
		each(e.Lhs, e.Rhs)
	case *ast.ArithmeticOpExpr:
		each(e.Lhs, e.Rhs)
	case *ast.UnaryMinusOpExpr:
		each(e.Expr)
	case *ast.UnaryNotOpExpr:
		each(e.Expr)
	case *ast.UnaryLenOpExpr:
		each(e.Expr)
	}
}

// constantCondition reports whether an if's condition is a constant, and
// whether the branch is then taken.
func constantCondition(e ast.Expr) (taken, ok bool) {
	switch e.(type) {
	case *ast.NilExpr, *ast.FalseExpr:
		return false, true
	case *ast.TrueExpr, *ast.NumberExpr, *ast.StringExpr:
		return true, true
	}
	return false, false
}

// multiValued reports whether e, last in a list, can give several values.
func multiValued(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.FuncCallExpr:
		return !e.AdjustRet
	case *ast.Comma3Expr:
		return !e.AdjustRet
	}
	return false
}

// walkExpr rewrites the bodies of the functions an expression defines.
func walkExpr(e ast.Expr) {
	if f, ok := e.(*ast.FunctionExpr); ok {
		f.Stmts = rewriteBlock(f.Stmts)
		return
	}
	exprParts(e, walkExpr)
}

// tempName is the name of the rewrite's n-th fresh local; the space keeps
// it apart from every identifier a chunk can write.
func tempName(n int) string { return fmt.Sprintf("(assign %d)", n) }

func ident(name string, at ast.PositionHolder) *ast.IdentExpr {
	id := &ast.IdentExpr{Value: name}
	id.SetLine(at.Line())
	id.SetLastLine(at.LastLine())
	return id
}

// rewriteMultiAssign turns
//
//	t[k], x = e1, e2
//
// into
//
//	do local o1, k1 = t, k; local v1, v2 = e1, e2; x = v2; o1[k1] = v1 end
func rewriteMultiAssign(s *ast.AssignStmt) ast.Stmt {
	n := 0
	fresh := func() string { n++; return tempName(n) }
	var pre ast.LocalAssignStmt
	pre.SetLine(s.Line())
	pre.SetLastLine(s.LastLine())
	targets := make([]ast.Expr, len(s.Lhs))
	for i, lhs := range s.Lhs {
		get, ok := lhs.(*ast.AttrGetExpr)
		if !ok {
			targets[i] = lhs
			continue
		}
		g := &ast.AttrGetExpr{Object: get.Object, Key: get.Key}
		g.SetLine(get.Line())
		g.SetLastLine(get.LastLine())
		if !isConst(get.Object) {
			name := fresh()
			pre.Names = append(pre.Names, name)
			pre.Exprs = append(pre.Exprs, get.Object)
			g.Object = ident(name, get.Object)
		}
		if !isConst(get.Key) {
			name := fresh()
			pre.Names = append(pre.Names, name)
			pre.Exprs = append(pre.Exprs, get.Key)
			g.Key = ident(name, get.Key)
		}
		targets[i] = g
	}
	vals := &ast.LocalAssignStmt{Exprs: s.Rhs}
	vals.SetLine(s.Line())
	vals.SetLastLine(s.LastLine())
	for range s.Lhs {
		vals.Names = append(vals.Names, fresh())
	}
	block := &ast.DoBlockStmt{}
	block.SetLine(s.Line())
	block.SetLastLine(s.LastLine())
	if len(pre.Names) > 0 {
		block.Stmts = append(block.Stmts, &pre)
	}
	block.Stmts = append(block.Stmts, vals)
	for i := len(targets) - 1; i >= 0; i-- {
		a := &ast.AssignStmt{Lhs: []ast.Expr{targets[i]}, Rhs: []ast.Expr{ident(vals.Names[i], s)}}
		a.SetLine(s.Line())
		a.SetLastLine(s.LastLine())
		block.Stmts = append(block.Stmts, a)
	}
	return block
}

// capturesOwnName reports whether a function defined in a local statement's
// values mentions a name the statement declares. gopher-lua resolves that
// name to the new local; in Lua 5.1 a local's scope begins after its
// statement, so "local g = function() return g end" reads the outer g.
//
// "local function g" parses to the same statement, and there the name is
// in scope in the body by definition; gopher-lua's parser tells the two
// apart only by the last line it records (the body's end for a local
// function, none for a local statement). The semantics suite checks both.
func capturesOwnName(s *ast.LocalAssignStmt) bool {
	if s.LastLine() != 0 {
		return false // local function NAME
	}
	found := false
	for _, e := range s.Exprs {
		visitExpr(e, false, func(e ast.Expr, inFunc bool) {
			if id, ok := e.(*ast.IdentExpr); ok && inFunc && slices.Contains(s.Names, id.Value) {
				found = true
			}
		})
	}
	return found
}

// rewriteLocalCapture turns local g = <value> into
// local v = <value>; local g = v. The fresh local stays in scope (the
// declared ones must), which costs one local slot per such statement.
func rewriteLocalCapture(s *ast.LocalAssignStmt) ast.Stmt {
	vals := &ast.LocalAssignStmt{Exprs: s.Exprs}
	vals.SetLine(s.Line())
	vals.SetLastLine(s.LastLine())
	decl := &ast.LocalAssignStmt{Names: s.Names}
	decl.SetLine(s.Line())
	decl.SetLastLine(s.LastLine())
	for i, name := range s.Names {
		tmp := fmt.Sprintf("(local %s %d)", name, i+1)
		vals.Names = append(vals.Names, tmp)
		decl.Exprs = append(decl.Exprs, ident(tmp, s))
	}
	// Two statements where one stood: a block that declares nothing new
	// would end the locals' scope, so the caller splices them (see
	// rewriteBlock).
	return &splice{stmts: []ast.Stmt{vals, decl}}
}

// splice stands for several statements that replace one in its block.
type splice struct {
	ast.StmtBase
	stmts []ast.Stmt
}

// visitExpr calls fn on e and every expression inside it, in nested
// function bodies too (inFunc tells which).
func visitExpr(e ast.Expr, inFunc bool, fn func(ast.Expr, bool)) {
	if e == nil {
		return
	}
	fn(e, inFunc)
	if f, ok := e.(*ast.FunctionExpr); ok {
		visitStmts(f.Stmts, fn)
		return
	}
	exprParts(e, func(x ast.Expr) { visitExpr(x, inFunc, fn) })
}

// visitStmts calls fn on every expression of a function body.
func visitStmts(stmts []ast.Stmt, fn func(ast.Expr, bool)) {
	for _, s := range stmts {
		exprs, blocks := stmtParts(s)
		for _, e := range exprs {
			visitExpr(e, true, fn)
		}
		for _, b := range blocks {
			visitStmts(*b, fn)
		}
	}
}

// rewriteSelfAssign turns x = <value reading x> into
// do local v = <value>; x = v end.
func rewriteSelfAssign(s *ast.AssignStmt, id *ast.IdentExpr) ast.Stmt {
	name := tempName(1)
	val := &ast.LocalAssignStmt{Names: []string{name}, Exprs: s.Rhs}
	val.SetLine(s.Line())
	val.SetLastLine(s.LastLine())
	a := &ast.AssignStmt{Lhs: []ast.Expr{id}, Rhs: []ast.Expr{ident(name, s)}}
	a.SetLine(s.Line())
	a.SetLastLine(s.LastLine())
	block := &ast.DoBlockStmt{Stmts: []ast.Stmt{val, a}}
	block.SetLine(s.Line())
	block.SetLastLine(s.LastLine())
	return block
}

// needsTemp reports whether assigning rhs to a name could write the name's
// register before the value is complete: gopher-lua evaluates straight into
// the register of a local, so a value of more than one step can read the
// half-assigned local, directly or through a closure's upvalue. Only a
// constant, a name or "..." is copied in one step.
func needsTemp(rhs []ast.Expr) bool {
	return len(rhs) != 1 || !isLeaf(rhs[0])
}

func isConst(e ast.Expr) bool {
	_, ok := e.(ast.ConstExpr)
	return ok
}

func isLeaf(e ast.Expr) bool {
	switch e.(type) {
	case *ast.IdentExpr, *ast.Comma3Expr:
		return true
	}
	return isConst(e)
}

// DoString compiles src through Load and runs it through PCall, as the
// runner runs a script; use it instead of L.DoString, which compiles with
// gopher-lua's uncorrected compiler.
func DoString(L *lua.LState, src string) error {
	fn, err := LoadString(L, src, "<string>")
	if err != nil {
		return err
	}
	L.Push(fn)
	return PCall(L, 0, lua.MultRet)
}

// DoFile is DoString of a file; use it instead of L.DoFile.
func DoFile(L *lua.LState, path string) error {
	fn, err := LoadFile(L, path)
	if err != nil {
		return err
	}
	L.Push(fn)
	return PCall(L, 0, lua.MultRet)
}
