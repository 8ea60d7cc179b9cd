package bindings

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Operators whose gopher-lua v1.1.2 instructions give other answers than
// Lua 5.1 (docs/lua.md, "Corrections"), compiled instead as calls of Go
// functions that do what Lua 5.1's virtual machine does:
//
//   - ".." writes numbers as Go does (1.2345675e+06, +Inf, -0 as 0); Lua
//     5.1 writes them with "%.14g" (1234567.5, inf, -0);
//   - "%" is Go's math.Mod corrected for the sign (1 % 0.1 is
//     0.0999...); Lua 5.1 computes a - floor(a/b)*b (0);
//   - "^" is Go's math.Pow, whose NaNs have another sign than glibc's
//     pow's (pow51);
//   - a numeric for's bounds must be numbers; Lua 5.1 converts numeric
//     strings.
//
// rewriteOps replaces each such expression, on the syntax tree, by a call
// of a string constant that no chunk can write (opMarker and a random
// part); after compiling, linkOps replaces those constants in every
// function prototype by the Go functions. A constant is loaded by one
// instruction, so the call costs what calling a Go function costs.
//
// The rewrite also records what each operand is (local 'x', upvalue 'x',
// global 'x', field 'x'), as Lua 5.1 finds it from the instruction that
// loaded the value, so that an error names the variable as 5.1 does:
// "attempt to concatenate local 'name' (a nil value)".

// opMarker starts every operator constant: a NUL and a random part.
var opMarker = func() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "\x00ibscript-op-" + hex.EncodeToString(b[:]) + ":"
}()

// Kinds of operator functions, the byte after opMarker.
const (
	opConcat  = 'c'
	opMod     = 'm'
	opForInit = 'i'
	opForLim  = 'l'
	opForStep = 's'
	// with SetExactArithmetic only
	opAdd = '+'
	opSub = '-'
	opMul = '*'
	opDiv = '/'
	opPow = '^'
	opUnm = 'u'
)

// arithFns are the events and functions of the arithmetic operators.
var arithFns = map[byte]struct {
	event string
	fn    func(a, b float64) float64
}{
	opAdd: {"__add", func(a, b float64) float64 { return a + b }},
	opSub: {"__sub", func(a, b float64) float64 { return a - b }},
	opMul: {"__mul", func(a, b float64) float64 { return a * b }},
	opDiv: {"__div", func(a, b float64) float64 { return a / b }},
	opMod: {"__mod", mod51},
	opPow: {"__pow", pow51},
	opUnm: {"__unm", func(a, _ float64) float64 { return -a }},
}

// exactKey is the registry field SetExactArithmetic sets.
const exactKey = "ibscript.exactarith"

// SetExactArithmetic makes the chunks Load compiles from now on in L
// compute every arithmetic operator (+ - * / ^ and unary minus, besides
// the % and .. always corrected) through a Go function, as Lua 5.1's
// virtual machine does: a zero result keeps its sign (gopher-lua's
// instructions store -0 as 0) and so does a NaN from ^, and an error
// names the operand as 5.1 does. It costs a function call per operator,
// several times gopher-lua's instruction, so plans do not get it; the
// differential tests use it to tell the difference that remains in
// gopher-lua's instructions from any other (docs/lua.md).
func SetExactArithmetic(L *lua.LState, on bool) {
	L.SetField(L.Get(lua.RegistryIndex), exactKey, lua.LBool(on))
}

func exactArithmetic(L *lua.LState) bool {
	return lua.LVAsBool(L.GetField(L.Get(lua.RegistryIndex), exactKey))
}

// opsRewriter walks a chunk keeping the scopes, to name operands.
type opsRewriter struct {
	funcs []*opsFunc
	exact bool // every arithmetic operator (SetExactArithmetic)
}

type opsFunc struct {
	blocks []map[string]bool
}

func (o *opsRewriter) fn() *opsFunc { return o.funcs[len(o.funcs)-1] }

func (o *opsRewriter) enterFunc(params ...string) {
	o.funcs = append(o.funcs, &opsFunc{})
	o.enterBlock()
	o.declare(params...)
}

func (o *opsRewriter) leaveFunc() { o.funcs = o.funcs[:len(o.funcs)-1] }

func (o *opsRewriter) enterBlock() {
	f := o.fn()
	f.blocks = append(f.blocks, map[string]bool{})
}

func (o *opsRewriter) leaveBlock() {
	f := o.fn()
	f.blocks = f.blocks[:len(f.blocks)-1]
}

func (o *opsRewriter) declare(names ...string) {
	f := o.fn()
	for _, n := range names {
		f.blocks[len(f.blocks)-1][n] = true
	}
}

// kindOf says what a name refers to where it is used.
func (o *opsRewriter) kindOf(name string) string {
	for i := len(o.funcs) - 1; i >= 0; i-- {
		bs := o.funcs[i].blocks
		for j := len(bs) - 1; j >= 0; j-- {
			if bs[j][name] {
				if i == len(o.funcs)-1 {
					return "local"
				}
				return "upvalue"
			}
		}
	}
	return "global"
}

// describe is how Lua 5.1's getobjname names an operand's value, or "".
func (o *opsRewriter) describe(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		if strings.ContainsRune(e.Value, ' ') { // a rewrite's own local
			return ""
		}
		return o.kindOf(e.Value) + " '" + e.Value + "'"
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok {
			return "field '" + k.Value + "'"
		}
	}
	return ""
}

// rewriteOps rewrites a chunk's operators (see above).
func rewriteOps(chunk []ast.Stmt, exact bool) []ast.Stmt {
	o := &opsRewriter{exact: exact}
	o.enterFunc()
	o.block(chunk)
	return chunk
}

func (o *opsRewriter) block(stmts []ast.Stmt) {
	for _, s := range stmts {
		o.stmt(s)
	}
}

func (o *opsRewriter) scoped(stmts []ast.Stmt, names ...string) {
	o.enterBlock()
	o.declare(names...)
	o.block(stmts)
	o.leaveBlock()
}

func (o *opsRewriter) exprs(es []ast.Expr) {
	for i := range es {
		es[i] = o.expr(es[i])
	}
}

func (o *opsRewriter) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		o.exprs(s.Lhs)
		o.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		if s.LastLine() != 0 { // local function NAME: in scope in its body
			o.declare(s.Names...)
			o.exprs(s.Exprs)
			return
		}
		o.exprs(s.Exprs)
		o.declare(s.Names...)
	case *ast.FuncCallStmt:
		s.Expr = o.expr(s.Expr)
	case *ast.DoBlockStmt:
		o.scoped(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = o.expr(s.Condition)
		o.scoped(s.Stmts)
	case *ast.RepeatStmt:
		o.enterBlock()
		o.block(s.Stmts)
		s.Condition = o.expr(s.Condition) // sees the body's locals
		o.leaveBlock()
	case *ast.IfStmt:
		s.Condition = o.expr(s.Condition)
		o.scoped(s.Then)
		o.scoped(s.Else)
	case *ast.NumberForStmt:
		s.Init = o.forBound(opForInit, o.expr(s.Init))
		s.Limit = o.forBound(opForLim, o.expr(s.Limit))
		if s.Step != nil {
			s.Step = o.forBound(opForStep, o.expr(s.Step))
		}
		o.scoped(s.Stmts, s.Name)
	case *ast.GenericForStmt:
		o.exprs(s.Exprs)
		o.scoped(s.Stmts, s.Names...)
	case *ast.FuncDefStmt:
		if s.Name.Func != nil {
			s.Name.Func = o.expr(s.Name.Func)
			o.function(s.Func)
			return
		}
		s.Name.Receiver = o.expr(s.Name.Receiver)
		o.function(s.Func, "self")
	case *ast.ReturnStmt:
		o.exprs(s.Exprs)
	}
}

func (o *opsRewriter) function(f *ast.FunctionExpr, self ...string) {
	o.enterFunc(append(self, f.ParList.Names...)...)
	o.block(f.Stmts)
	o.leaveFunc()
}

func (o *opsRewriter) expr(e ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.AttrGetExpr:
		x.Object = o.expr(x.Object)
		x.Key = o.expr(x.Key)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			if f.Key != nil {
				f.Key = o.expr(f.Key)
			}
			f.Value = o.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if x.Func != nil {
			x.Func = o.expr(x.Func)
		}
		if x.Receiver != nil {
			x.Receiver = o.expr(x.Receiver)
		}
		o.exprs(x.Args)
	case *ast.LogicalOpExpr:
		x.Lhs, x.Rhs = o.expr(x.Lhs), o.expr(x.Rhs)
	case *ast.RelationalOpExpr:
		x.Lhs, x.Rhs = o.expr(x.Lhs), o.expr(x.Rhs)
	case *ast.ArithmeticOpExpr:
		if x.Operator == "%" || x.Operator == "^" {
			return o.arith(x)
		}
		if o.exact {
			names := []string{o.describe(x.Lhs), o.describe(x.Rhs)}
			return opCall(x.Operator[0], names, []ast.Expr{o.expr(x.Lhs), o.expr(x.Rhs)}, x)
		}
		x.Lhs, x.Rhs = o.expr(x.Lhs), o.expr(x.Rhs)
	case *ast.StringConcatOpExpr:
		return o.concat(x)
	case *ast.UnaryMinusOpExpr:
		if _, isConst := constNumber(x); o.exact && !isConst {
			return opCall(opUnm, []string{o.describe(x.Expr)}, []ast.Expr{o.expr(x.Expr)}, x)
		}
		x.Expr = o.expr(x.Expr)
	case *ast.UnaryNotOpExpr:
		x.Expr = o.expr(x.Expr)
	case *ast.UnaryLenOpExpr:
		x.Expr = o.expr(x.Expr)
	case *ast.FunctionExpr:
		o.function(x)
	}
	return e
}

// call makes the call of operator function kind with args, each an
// operand that gives one value (a call or "..." last in an argument list
// would give all of theirs).
func opCall(kind byte, names []string, args []ast.Expr, at ast.PositionHolder) ast.Expr {
	for _, a := range args {
		switch a := a.(type) {
		case *ast.FuncCallExpr:
			a.AdjustRet = true
		case *ast.Comma3Expr:
			a.AdjustRet = true
		}
	}
	fn := &ast.StringExpr{Value: opMarker + string(kind) + strings.Join(names, "\x01")}
	fn.SetLine(at.Line())
	fn.SetLastLine(at.LastLine())
	c := &ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true}
	c.SetLine(at.Line())
	c.SetLastLine(at.LastLine())
	return c
}

func (o *opsRewriter) concat(x *ast.StringConcatOpExpr) ast.Expr {
	var ops []ast.Expr
	var e ast.Expr = x
	for {
		c, ok := e.(*ast.StringConcatOpExpr)
		if !ok {
			ops = append(ops, e)
			break
		}
		ops = append(ops, c.Lhs)
		e = c.Rhs
	}
	names := make([]string, len(ops))
	folded, allStrings := "", true
	for i, op := range ops {
		names[i] = o.describe(op)
		ops[i] = o.expr(op)
		if s, ok := ops[i].(*ast.StringExpr); ok {
			folded += s.Value
		} else {
			allStrings = false
		}
	}
	if allStrings {
		s := &ast.StringExpr{Value: folded}
		s.SetLine(x.Line())
		s.SetLastLine(x.LastLine())
		return s
	}
	return opCall(opConcat, names, ops, x)
}

// arith rewrites % and ^ (x.Operator), folding constant operands.
func (o *opsRewriter) arith(x *ast.ArithmeticOpExpr) ast.Expr {
	kind := x.Operator[0]
	if kind == '%' {
		kind = opMod
	}
	names := []string{o.describe(x.Lhs), o.describe(x.Rhs)}
	lhs, rhs := o.expr(x.Lhs), o.expr(x.Rhs)
	a, aok := constNumber(lhs)
	b, bok := constNumber(rhs)
	if aok && bok {
		if v := arithFns[kind].fn(a, b); !math.IsNaN(v) && !math.IsInf(v, 0) && !(v == 0 && math.Signbit(v)) {
			n := &ast.NumberExpr{Value: strconv.FormatFloat(v, 'g', -1, 64)}
			n.SetLine(x.Line())
			n.SetLastLine(x.LastLine())
			return n
		}
	}
	return opCall(kind, names, []ast.Expr{lhs, rhs}, x)
}

// constNumber is the value of a number constant, negated or not.
func constNumber(e ast.Expr) (float64, bool) {
	switch e := e.(type) {
	case *ast.NumberExpr:
		f, ok := str2number(e.Value)
		return f, ok
	case *ast.UnaryMinusOpExpr:
		f, ok := constNumber(e.Expr)
		return -f, ok
	}
	return 0, false
}

func (o *opsRewriter) forBound(kind byte, e ast.Expr) ast.Expr {
	if _, ok := constNumber(e); ok {
		return e
	}
	return opCall(kind, nil, []ast.Expr{e}, e)
}

// mod51 is Lua 5.1's luai_nummod.
func mod51(a, b float64) float64 { return a - math.Floor(a/b)*b }

// linkOps replaces the operator constants of proto and its nested
// prototypes by their functions.
func linkOps(L *lua.LState, proto *lua.FunctionProto) {
	p := poolOf(L)
	if p.ops == nil {
		p.ops = map[string]*lua.LFunction{}
		p.opFns = map[*lua.LFunction]bool{}
	}
	linkProto(L, p, proto)
}

func linkProto(L *lua.LState, p *threads, proto *lua.FunctionProto) {
	for i, c := range proto.Constants {
		s, ok := c.(lua.LString)
		if !ok || !strings.HasPrefix(string(s), opMarker) {
			continue
		}
		// one function for each operator and operand names, for every
		// chunk of the state
		fn := p.ops[string(s)]
		if fn == nil {
			fn = L.NewFunction(opFunction(string(s[len(opMarker):])))
			p.ops[string(s)] = fn
			p.opFns[fn] = true
		}
		proto.Constants[i] = fn
	}
	for _, sub := range proto.FunctionPrototypes {
		linkProto(L, p, sub)
	}
}

// isOpFunction reports whether fn is one of the operator functions of
// L's chunks, whose errors already name their operands as Lua 5.1 does
// (lua51err.go leaves them alone).
func isOpFunction(L *lua.LState, fn *lua.LFunction) bool {
	return poolOf(L).opFns[fn]
}

// opFunction is the function of an operator constant (after opMarker).
func opFunction(spec string) lua.LGFunction {
	kind := spec[0]
	var names []string
	if len(spec) > 1 {
		names = strings.Split(spec[1:], "\x01")
	}
	switch kind {
	case opConcat:
		return func(L *lua.LState) int { return concat51(L, names) }
	case opUnm:
		return func(L *lua.LState) int {
			L.SetTop(1)
			L.Push(L.Get(1)) // 5.1 passes the operand twice
			return arith51(L, "__unm", arithFns[opUnm].fn, names)
		}
	}
	if op, ok := arithFns[kind]; ok {
		return func(L *lua.LState) int { return arith51(L, op.event, op.fn, names) }
	}
	what := map[byte]string{opForInit: "initial value", opForLim: "limit", opForStep: "step"}[kind]
	return func(L *lua.LState) int {
		v := L.Get(1)
		if _, ok := v.(lua.LNumber); ok {
			return 1
		}
		f, ok := valueNumber(v)
		if !ok {
			L.RaiseError("'for' %s must be a number", what)
		}
		L.Push(lua.LNumber(f))
		return 1
	}
}

// typeError is Lua 5.1's luaG_typeerror for operand i of an operator.
func typeError(L *lua.LState, op string, v lua.LValue, names []string, i int) {
	if i < len(names) && names[i] != "" {
		L.RaiseError("attempt to %s %s (a %s value)", op, names[i], v.Type().String())
	}
	L.RaiseError("attempt to %s a %s value", op, v.Type().String())
}

// concat51 is Lua 5.1's luaV_concat of the call's arguments: strings and
// numbers ("%.14g") joined, __concat for a pair that is not both, right
// to left.
func concat51(L *lua.LState, names []string) int {
	n := L.GetTop()
	size, simple := 0, true
	for i := 1; i <= n && simple; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			size += len(v)
		case lua.LNumber:
			size += 24
		default:
			simple = false
		}
	}
	if simple {
		// s = s .. s doubles until Go's fatal "out of memory", which
		// skips every cleanup: a result past the limit is refused first,
		// as string.rep's is.
		checkAllocOf(L, "'..'", uint64(size))
		if n == 2 {
			if a, ok := L.Get(1).(lua.LString); ok {
				if b, ok := L.Get(2).(lua.LString); ok {
					L.Push(a + b)
					return 1
				}
			}
		}
		var b strings.Builder
		b.Grow(size)
		for i := 1; i <= n; i++ {
			s, _ := valueText(L.Get(i))
			b.WriteString(s)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}
	vals := make([]lua.LValue, n)
	for i := range vals {
		vals[i] = L.Get(i + 1)
	}
	isText := func(v lua.LValue) bool {
		_, ok := valueText(v)
		return ok
	}
	top := n
	for top > 1 {
		a, b := vals[top-2], vals[top-1]
		if !isText(a) || !isText(b) {
			tm := L.GetMetaField(a, "__concat")
			if tm == lua.LNil {
				tm = L.GetMetaField(b, "__concat")
			}
			if tm.Type() != lua.LTFunction {
				if isText(a) {
					typeError(L, "concatenate", b, names, top-1)
				}
				typeError(L, "concatenate", a, names, top-2)
			}
			vals[top-2] = call2(L, tm, a, b)
			top--
			continue
		}
		// as many strings and numbers as there are below the top
		k := 2
		for k < top && isText(vals[top-k-1]) {
			k++
		}
		var sb strings.Builder
		for _, v := range vals[top-k : top] {
			s, _ := valueText(v)
			sb.WriteString(s)
		}
		vals[top-k] = lua.LString(sb.String())
		top -= k - 1
	}
	L.Push(vals[0])
	return 1
}

// arithMeta is the metamethod event of v for arithmetic, leaving out the
// string metatable's (installStringArith's own, which Lua 5.1 lacks).
func arithMeta(L *lua.LState, v lua.LValue, event string) lua.LValue {
	if _, ok := v.(lua.LString); ok {
		return lua.LNil
	}
	return L.GetMetaField(v, event)
}

// arith51 is Lua 5.1's luaV_arith for the two arguments: numbers and
// numeric strings computed by op, else the first operand's metamethod or
// the second's, else luaG_aritherror.
func arith51(L *lua.LState, event string, op func(a, b float64) float64, names []string) int {
	a, b := L.Get(1), L.Get(2)
	x, ok1 := valueNumber(a)
	y, ok2 := valueNumber(b)
	if ok1 && ok2 {
		L.Push(lua.LNumber(op(x, y)))
		return 1
	}
	tm := arithMeta(L, a, event)
	if tm == lua.LNil {
		tm = arithMeta(L, b, event)
	}
	if tm.Type() != lua.LTFunction {
		if !ok1 {
			typeError(L, "perform arithmetic on", a, names, 0)
		}
		typeError(L, "perform arithmetic on", b, names, 1)
	}
	L.Push(tm)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	return 1
}

// installStringArith gives the string metatable the arithmetic events, so
// that arithmetic on a string converts it as Lua 5.1's strtod does:
// gopher-lua's instructions, when an operand is not a number, call the
// operands' metamethods before anything else, and otherwise read "010"
// as octal 8 and "1_000" as 1000.
func installStringArith(L *lua.LState) {
	mt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable)
	if !ok {
		return
	}
	for _, a := range arithFns {
		event, op := a.event, a.fn
		mt.RawSetString(event, L.NewFunction(func(L *lua.LState) int {
			if event == "__unm" {
				L.SetTop(1)
				L.Push(L.Get(1)) // 5.1 passes the operand twice
			}
			return arith51(L, event, op, nil)
		}))
	}
}
