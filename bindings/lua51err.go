package bindings

import (
	"fmt"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's runtime error messages (docs/lua.md, "Corrections").
// gopher-lua's virtual machine raises its own texts, without the variable
// Lua 5.1 names:
//
//	attempt to index a non-table object(nil) with key 'y'   5.1: attempt to index local 'x' (a nil value)
//	attempt to call a non-function object                   5.1: attempt to call global 'f' (a nil value)
//	cannot perform add operation between nil and number     5.1: attempt to perform arithmetic on local 'a' (a nil value)
//	cannot perform concat operation between string and table  5.1: attempt to concatenate global 's' (a table value)
//	attempt to compare table with table                     5.1: attempt to compare two table values
//	__len undefined, __unm undefined                        5.1: attempt to get length of local 't' (a number value)
//	bad argument #2 to rep (number expected, got nil)       5.1: bad argument #1 to 'rep' (number expected, got no value)
//
// Every protected call's thread (threads.call) therefore has its Panic
// function set, which gopher-lua calls where the error is raised, before
// any frame unwinds. There, through the debug API, it finds the failing
// frame (L.GetStack), its line, and the values of its registers
// (L.GetLocal reads every register below the top, as lua_getlocal's
// "(*temporary)" does). gopher-lua keeps no public program counter, so it
// takes every instruction of the failing kind on that line whose
// operands hold values that fail that way (the key and the type the
// message gives, a value that cannot be called, the operand of an
// arithmetic or concatenation that Lua 5.1 blames), and names the operand
// as Lua 5.1's getobjname does from the bytecode: a local by its register
// and the locals in scope, a global, field or method by the instruction
// that loaded the register and its constant key, an upvalue by its name.
// When those instructions disagree on the name, the message has none, as
// Lua 5.1's has none for a temporary ("attempt to index a nil value").
//
// The bytecode is read as gopher-lua v1.1.2 lays it out (opcode.go: the
// opcode in bits 26-31, A in 18-25, C in 9-17, B in 0-8, Bx in 0-17, and
// the OP_ constants it exports); TestLua51ErrorBytecode pins it.

func instOp(i uint32) int  { return int(i >> 26) }
func instA(i uint32) int   { return int(i>>18) & 0xff }
func instB(i uint32) int   { return int(i & 0x1ff) }
func instC(i uint32) int   { return int(i>>9) & 0x1ff }
func instBx(i uint32) int  { return int(i & 0x3ffff) }
func instSBx(i uint32) int { return instBx(i) - 0x3ffff>>1 }

// rkBit marks an RK operand that is a constant, not a register.
const rkBit = 1 << 8

// errFrame is the Lua frame an error was raised in, seen from the error
// function: its function, its line, and its registers.
type errFrame struct {
	L    *lua.LState
	dbg  *lua.Debug
	fn   *lua.LFunction
	line int
}

// reg is the value of register r of the frame, and whether it could be read.
func (f *errFrame) reg(r int) (lua.LValue, bool) {
	name, v := f.L.GetLocal(f.dbg, r+1)
	return v, name != ""
}

// rk is the value of an RK operand: a constant or a register.
func (f *errFrame) rk(x int) (lua.LValue, bool) {
	if x&rkBit != 0 {
		k := x &^ rkBit
		if k < len(f.fn.Proto.Constants) {
			return f.fn.Proto.Constants[k], true
		}
		return nil, false
	}
	return f.reg(x)
}

// localName is the name of the local held in register r at pc, "" for
// none. A local's scope runs from StartPc to EndPc, both included (Load
// corrects gopher-lua's EndPc, lua51scope.go). Where a block ends on the
// line the next statement starts on, the scope can reach past the block:
// a register last written, after the local's start, by an instruction
// that only writes temporaries is not the local's. With Load's rewrite,
// an assignment writes a local only by a move, a constant, a global, an
// upvalue or '...', and a loop its variables by FORPREP, FORLOOP and
// TFORLOOP. The assignment rewrite's own locals (lua51.go: their names
// hold a space) are not the script's: their values are named by the
// instruction that loaded them, as the temporaries they stand for are in
// Lua 5.1.
func localName(p *lua.FunctionProto, r, pc int) string {
	n := r
	for _, l := range p.DbgLocals {
		if l.StartPc > pc {
			break
		}
		if pc > l.EndPc {
			continue
		}
		if n > 0 {
			n--
			continue
		}
		if strings.Contains(l.Name, " ") && !strings.HasPrefix(l.Name, "(for ") {
			return ""
		}
		if spc := setter(p, pc, r); spc > l.StartPc {
			switch instOp(p.Code[spc]) {
			case lua.OP_MOVE, lua.OP_MOVEN, lua.OP_LOADK, lua.OP_LOADBOOL, lua.OP_LOADNIL,
				lua.OP_GETGLOBAL, lua.OP_GETUPVAL, lua.OP_VARARG,
				lua.OP_FORPREP, lua.OP_FORLOOP, lua.OP_TFORLOOP:
			default:
				return ""
			}
		}
		return l.Name
	}
	return ""
}

// setter finds the instruction before lastpc that last set register r, as
// Lua 5.1's symbexec does (forward jumps that do not pass lastpc are
// taken), or -1.
func setter(p *lua.FunctionProto, lastpc, r int) int {
	last := -1
	for pc := 0; pc < lastpc && pc < len(p.Code); pc++ {
		i := p.Code[pc]
		a := instA(i)
		switch op := instOp(i); op {
		case lua.OP_MOVE, lua.OP_MOVEN, lua.OP_LOADK, lua.OP_LOADBOOL, lua.OP_GETUPVAL,
			lua.OP_GETGLOBAL, lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_NEWTABLE,
			lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW,
			lua.OP_UNM, lua.OP_NOT, lua.OP_LEN, lua.OP_CONCAT, lua.OP_TESTSET:
			if a == r {
				last = pc
			}
		case lua.OP_LOADNIL:
			if a <= r && r <= instB(i) {
				last = pc
			}
		case lua.OP_SELF:
			if r == a || r == a+1 {
				last = pc
			}
		case lua.OP_CALL, lua.OP_TAILCALL, lua.OP_VARARG:
			if r >= a {
				last = pc
			}
		case lua.OP_TFORLOOP:
			if r >= a+2 {
				last = pc
			}
		case lua.OP_CLOSURE:
			if a == r {
				last = pc
			}
			if bx := instBx(i); bx < len(p.FunctionPrototypes) {
				pc += int(p.FunctionPrototypes[bx].NumUpvalues) // its upvalues' pseudo-instructions
			}
		case lua.OP_JMP, lua.OP_FORPREP, lua.OP_FORLOOP:
			if op != lua.OP_JMP && r >= a && r <= a+3 {
				last = pc
			}
			if dest := pc + 1 + instSBx(i); pc < dest && dest <= lastpc {
				pc = dest - 1
			}
		}
	}
	return last
}

// constName is Lua 5.1's kname: the constant string RK operand x names,
// "?" for anything else.
func constName(p *lua.FunctionProto, x int) string {
	if x&rkBit != 0 {
		if k := x &^ rkBit; k < len(p.Constants) {
			if s, ok := p.Constants[k].(lua.LString); ok {
				return string(s)
			}
		}
	}
	return "?"
}

// objName is Lua 5.1's getobjname: how the value in register r at pc was
// got, "local 'x'", "global 'x'", "field 'x'", "method 'x'", "upvalue 'x'",
// or "" when it is a temporary.
func objName(p *lua.FunctionProto, pc, r int) string {
	for depth := 0; depth < 32; depth++ {
		if name := localName(p, r, pc); name != "" {
			return "local '" + name + "'"
		}
		spc := setter(p, pc, r)
		if spc < 0 {
			return ""
		}
		i := p.Code[spc]
		switch instOp(i) {
		case lua.OP_GETGLOBAL:
			return "global '" + constName(p, instBx(i)|rkBit) + "'"
		case lua.OP_MOVE, lua.OP_MOVEN:
			if b := instB(i); b < instA(i) {
				r = b
				continue
			}
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
			return "field '" + constName(p, instC(i)) + "'"
		case lua.OP_GETUPVAL:
			name := "?"
			if b := instB(i); b < len(p.DbgUpvalues) {
				name = p.DbgUpvalues[b]
			}
			return "upvalue '" + name + "'"
		case lua.OP_SELF:
			if r == instA(i) {
				return "method '" + constName(p, instC(i)) + "'"
			}
		}
		return ""
	}
	return ""
}

// A vmError is one of gopher-lua's runtime error texts, taken apart.
type vmError struct {
	kind   string // "index", "call", "arith", "concat", "len", "unm"
	op     int    // the arithmetic opcode
	t1, t2 string // the types the message gives
	key    string // the key an index error gives
}

var (
	indexErrRE   = regexp.MustCompile(`^attempt to index a non-table object\((\w+)\) with key '(.*)'$`)
	arithErrRE   = regexp.MustCompile(`^cannot perform (\w+) operation between (\w+) and (\w+)$`)
	compareErrRE = regexp.MustCompile(`^attempt to compare (\w+) with (\w+)$`)
	arithOps     = map[string]int{"add": lua.OP_ADD, "sub": lua.OP_SUB, "mul": lua.OP_MUL, "div": lua.OP_DIV, "mod": lua.OP_MOD, "pow": lua.OP_POW}
)

// parseVMError recognises gopher-lua's VM error texts (without the
// position).
func parseVMError(msg string) (vmError, bool) {
	switch msg {
	case "attempt to call a non-function object":
		return vmError{kind: "call"}, true
	case "__len undefined":
		return vmError{kind: "len"}, true
	case "__unm undefined":
		return vmError{kind: "unm"}, true
	}
	if m := indexErrRE.FindStringSubmatch(msg); m != nil {
		return vmError{kind: "index", t1: m[1], key: m[2]}, true
	}
	if m := arithErrRE.FindStringSubmatch(msg); m != nil {
		if m[1] == "concat" {
			return vmError{kind: "concat", t1: m[2], t2: m[3]}, true
		}
		if op, ok := arithOps[m[1]]; ok {
			return vmError{kind: "arith", op: op, t1: m[2], t2: m[3]}, true
		}
	}
	return vmError{}, false
}

// lua51ErrorMessage rewrites msg, an error being raised in L (from the
// function at level 0, whose frame is still there), into Lua 5.1's words
// where it is one of gopher-lua's runtime or argument error texts;
// anything else (error() values, ibscript's own messages) is returned
// as it is.
func lua51ErrorMessage(L *lua.LState, msg string) string {
	dbg, ok := L.GetStack(0)
	if !ok {
		return msg
	}
	fnv, err := L.GetInfo("fnSl", dbg, lua.LNil)
	fn, _ := fnv.(*lua.LFunction)
	if err != nil || fn == nil {
		return msg
	}
	if fn.IsG && isOpFunction(L, fn) {
		return msg // lua51ops.go's operators name their operands themselves
	}
	if fn.IsG {
		if out := lua51ArgError(L, dbg, msg); out != msg {
			return out
		}
		return lua51MetaArithError(L, msg)
	}
	prefix := fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
	body, ok := strings.CutPrefix(msg, prefix)
	if !ok {
		return msg
	}
	if m := compareErrRE.FindStringSubmatch(body); m != nil {
		if m[1] == m[2] {
			return prefix + "attempt to compare two " + m[1] + " values"
		}
		return msg
	}
	e, ok := parseVMError(body)
	if !ok {
		return msg
	}
	f := &errFrame{L: L, dbg: dbg, fn: fn, line: dbg.CurrentLine}
	if text := f.explain(e); text != "" {
		return prefix + text
	}
	return msg
}

// blame is one instruction that can have raised the error: the name of
// the value it blames (as objName gives it) and that value's type.
type blame struct {
	name, typ string
}

// explain is Lua 5.1's text for e raised on f's line, or "" when the type
// of the value at fault cannot be told.
func (f *errFrame) explain(e vmError) string {
	p := f.fn.Proto
	var found []blame
	for pc, i := range p.Code {
		if pc >= len(p.DbgSourcePositions) || p.DbgSourcePositions[pc] != f.line {
			continue
		}
		if b, ok := f.blames(e, pc, i); ok {
			found = append(found, b)
		}
	}
	verb := map[string]string{
		"index": "index", "call": "call", "arith": "perform arithmetic on",
		"unm": "perform arithmetic on", "concat": "concatenate", "len": "get length of",
	}[e.kind]
	typ := ""
	switch e.kind {
	case "index":
		typ = e.t1
	case "arith":
		typ = e.t1
		if e.t1 == "number" {
			typ = e.t2
		}
	case "concat":
		typ = e.t1
		if e.t1 == "string" || e.t1 == "number" {
			typ = e.t2
		}
	}
	name := ""
	if len(found) > 0 {
		name = found[0].name
		for _, b := range found[1:] {
			if b.name != name {
				name = ""
			}
		}
	}
	if e.kind == "call" || e.kind == "len" || e.kind == "unm" {
		for _, b := range found {
			switch {
			case b.typ == "":
			case typ == "":
				typ = b.typ
			case typ != b.typ:
				return ""
			}
		}
	}
	if typ == "" {
		return ""
	}
	if name == "" {
		return fmt.Sprintf("attempt to %s a %s value", verb, typ)
	}
	return fmt.Sprintf("attempt to %s %s (a %s value)", verb, name, typ)
}

// blames tells whether instruction i at pc, if it were the one running,
// raises e with the registers as they are; and what it blames.
func (f *errFrame) blames(e vmError, pc int, i uint32) (blame, bool) {
	op := instOp(i)
	switch e.kind {
	case "index":
		var obj, key int
		switch op {
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
			obj, key = instB(i), instC(i)
		case lua.OP_SETTABLE, lua.OP_SETTABLEKS:
			obj, key = instA(i), instB(i)
		default:
			return blame{}, false
		}
		if k, ok := f.rk(key); ok && k.String() != e.key {
			return blame{}, false
		}
		return f.operand(pc, obj, e.t1)
	case "call":
		return f.callBlame(pc, i, op)
	case "arith":
		if e.op < 0 {
			return f.metaArithBlame(e, pc, i)
		}
		if op != e.op {
			return blame{}, false
		}
		// Lua 5.1 blames the first operand unless it is a number (or a
		// string that converts), then the second; gopher-lua's message
		// gives both types after that conversion.
		if e.t1 != "number" {
			return f.operand(pc, instB(i), e.t1)
		}
		return f.operand(pc, instC(i), e.t2)
	case "unm":
		if op != lua.OP_UNM {
			return blame{}, false
		}
		v, ok := f.reg(instB(i))
		if ok && (v.Type() == lua.LTNumber || v.Type() == lua.LTString && isNumeric(v)) {
			return blame{}, false
		}
		return f.operand(pc, instB(i), "")
	case "len":
		if op != lua.OP_LEN {
			return blame{}, false
		}
		v, ok := f.reg(instB(i))
		if ok && (v.Type() == lua.LTString || v.Type() == lua.LTTable) {
			return blame{}, false
		}
		return f.operand(pc, instB(i), "")
	case "concat":
		if op != lua.OP_CONCAT {
			return blame{}, false
		}
		return f.concatBlame(e, pc, instB(i), instC(i))
	}
	return blame{}, false
}

// operand checks that the register (or RK) x holds a value of the type t
// ("" for any) at pc: an unreadable register is taken as a match.
func (f *errFrame) operand(pc, x int, t string) (blame, bool) {
	p := f.fn.Proto
	v, ok := f.rk(x)
	if ok && t != "" && v.Type().String() != t {
		return blame{}, false
	}
	// The register may hold what a later instruction wrote there
	// (t.g.h.f.g reuses one register): what this instruction's
	// operand would be now tells it apart.
	if w, known := f.recompute(pc, x, 0); x&rkBit == 0 && known {
		if t != "" && w.Type().String() != t || ok && w.Type() != v.Type() {
			return blame{}, false
		}
	}
	b := blame{}
	if ok {
		b.typ = v.Type().String()
	}
	if x&rkBit == 0 {
		b.name = objName(p, pc, x)
	}
	return b, true
}

// callBlame is blames for a call of a value that cannot be called.
func (f *errFrame) callBlame(pc int, i uint32, op int) (blame, bool) {
	p := f.fn.Proto
	if op != lua.OP_CALL && op != lua.OP_TAILCALL && op != lua.OP_TFORLOOP {
		return blame{}, false
	}
	v, ok := f.reg(instA(i))
	if ok && callable(f.L, v) {
		return blame{}, false
	}
	// A call that already ran holds its result there: what the
	// instruction that loaded the function would load now tells it
	// apart (a=math.sin(3)+bbbb(3) fails in bbbb, not in sin).
	w, known := f.recompute(pc, instA(i), 0)
	if known && (callable(f.L, w) || ok && w.Type() != v.Type()) {
		return blame{}, false
	}
	b := blame{}
	if ok {
		b.typ = v.Type().String()
	}
	if op != lua.OP_TFORLOOP { // 5.1 calls a copy of the generator, a temporary
		b.name = objName(p, pc, instA(i))
	}
	return b, true
}

// metaArithBlame is blames for an arithmetic error a metamethod raised,
// which gives only the type of the operand at fault (e.t1): any arithmetic
// instruction whose operand Lua 5.1 blames (the first unless it converts
// to a number, else the second) has that type.
func (f *errFrame) metaArithBlame(e vmError, pc int, i uint32) (blame, bool) {
	x := -1
	switch instOp(i) {
	case lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW:
		v, ok := f.rk(instB(i))
		if !ok {
			return blame{}, false
		}
		x = instB(i)
		if v.Type() == lua.LTNumber || v.Type() == lua.LTString && isNumeric(v) {
			x = instC(i)
		}
	case lua.OP_UNM:
		x = instB(i)
	default:
		return blame{}, false
	}
	v, ok := f.rk(x)
	if !ok || v.Type().String() != e.t1 {
		return blame{}, false
	}
	b := blame{typ: e.t1}
	if x&rkBit == 0 {
		b.name = objName(f.fn.Proto, pc, x)
	}
	return b, true
}

// recompute is the value the instruction that last set register r
// before pc would give it now, where that needs no call and no
// metamethod but a table __index: a local's value, a global, an upvalue,
// a field of such a value, a constant.
func (f *errFrame) recompute(pc, r, depth int) (lua.LValue, bool) {
	p := f.fn.Proto
	if depth > 8 {
		return nil, false
	}
	if localName(p, r, pc) != "" {
		return f.reg(r)
	}
	spc := setter(p, pc, r)
	if spc < 0 {
		return nil, false
	}
	i := p.Code[spc]
	switch instOp(i) {
	case lua.OP_GETGLOBAL:
		if f.fn.Env == nil {
			return nil, false
		}
		return rawIndex(f.L, f.fn.Env, p.Constants[instBx(i)])
	case lua.OP_GETUPVAL:
		_, v := f.L.GetUpvalue(f.fn, instB(i)+1)
		return v, true
	case lua.OP_MOVE:
		return f.recompute(spc, instB(i), depth+1)
	case lua.OP_LOADK:
		return p.Constants[instBx(i)], true
	case lua.OP_LOADNIL:
		return lua.LNil, true
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
		if instOp(i) == lua.OP_SELF && r == instA(i)+1 {
			return f.recompute(spc, instB(i), depth+1)
		}
		c := instC(i)
		if c&rkBit == 0 {
			return nil, false
		}
		obj, ok := f.recompute(spc, instB(i), depth+1)
		if !ok {
			return nil, false
		}
		return rawIndex(f.L, obj, p.Constants[c&^rkBit])
	}
	return nil, false
}

// rawIndex is obj[key] where it takes no function: a table's own field,
// else its metatable's __index table's, as far as they go.
func rawIndex(L *lua.LState, obj, key lua.LValue) (lua.LValue, bool) {
	for range 16 {
		if t, ok := obj.(*lua.LTable); ok {
			if v := t.RawGet(key); v != lua.LNil {
				return v, true
			}
		}
		mt, ok := L.GetMetatable(obj).(*lua.LTable)
		if !ok {
			if _, isTable := obj.(*lua.LTable); isTable {
				return lua.LNil, true
			}
			return nil, false
		}
		switch idx := mt.RawGetString("__index").(type) {
		case *lua.LNilType:
			if _, isTable := obj.(*lua.LTable); isTable {
				return lua.LNil, true
			}
			return nil, false
		case *lua.LTable:
			obj = idx
		default:
			return nil, false
		}
	}
	return nil, false
}

// concatBlame finds the operand of R(first) .. ... .. R(last) that Lua 5.1
// blames: concatenation goes right to left, and of the two values that
// fail, the left one unless it is a string or number.
func (f *errFrame) concatBlame(e vmError, pc, first, last int) (blame, bool) {
	str := func(v lua.LValue) bool { return v.Type() == lua.LTString || v.Type() == lua.LTNumber }
	right, ok := f.reg(last)
	if !ok {
		return blame{}, false
	}
	for r := last - 1; r >= first; r-- {
		left, ok := f.reg(r)
		if !ok {
			return blame{}, false
		}
		if str(left) && str(right) {
			right = lua.LString("")
			continue
		}
		bad, br := left, r
		if str(left) {
			bad, br = right, r+1
		}
		if left.Type().String() != e.t1 || right.Type().String() != e.t2 {
			return blame{}, false
		}
		return blame{name: objName(f.fn.Proto, pc, br), typ: bad.Type().String()}, true
	}
	return blame{}, false
}

// callable tells whether gopher-lua can call v: a function, or a value
// whose metatable has a function __call.
func callable(L *lua.LState, v lua.LValue) bool {
	if v.Type() == lua.LTFunction {
		return true
	}
	_, ok := L.GetMetaField(v, "__call").(*lua.LFunction)
	return ok
}

// isNumeric tells whether the string v converts to a number as Lua 5.1's
// arithmetic converts it.
func isNumeric(v lua.LValue) bool {
	_, ok := str2number(v.String())
	return ok
}

// metaArithErrorRE is Lua 5.1's arithmetic error without a name, as the
// string metatable's arithmetic events raise it (lua51ops.go): they run as
// Go functions, which cannot see the operand's name.
var metaArithErrorRE = regexp.MustCompile(`^(.*?: )attempt to perform arithmetic on a (\w+) value$`)

// lua51MetaArithError names the operand of an arithmetic error raised by
// a metamethod (level 0 of L, a Go function) that the arithmetic
// instruction of the Lua function below it (level 1) called.
func lua51MetaArithError(L *lua.LState, msg string) string {
	m := metaArithErrorRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	dbg, ok := L.GetStack(1)
	if !ok {
		return msg
	}
	fnv, err := L.GetInfo("fSl", dbg, lua.LNil)
	fn, _ := fnv.(*lua.LFunction)
	if err != nil || fn == nil || fn.IsG || m[1] != fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine) {
		return msg
	}
	f := &errFrame{L: L, dbg: dbg, fn: fn, line: dbg.CurrentLine}
	if text := f.explain(vmError{kind: "arith", op: -1, t1: m[2]}); text != "" {
		return m[1] + text
	}
	return msg
}

// goArgErrorRE is gopher-lua's argument error: "bad argument #N to NAME
// (MSG)", NAME being the frame's function name as gopher-lua gives it.
var goArgErrorRE = regexp.MustCompile(`^(.*?)bad argument #(\d+) to (.+?) \((.*)\)$`)

// lua51ArgError rewrites gopher-lua's argument error raised by the Go
// function at level 0 of L as luaL_argerror words it: the function
// named as the calling line called it, quoted, "?" when no Lua code called
// it (pcall(string.rep)); a method call's arguments counted from after
// self ("calling 'm' on bad self" for self itself); "got no value" for an
// argument not given. The errors ibscript's modules name themselves
// (argerror.go: "to umad.poll (timeout_ms: ...") are left alone.
func lua51ArgError(L *lua.LState, dbg *lua.Debug, msg string) string {
	m := goArgErrorRE.FindStringSubmatch(msg)
	if m == nil || m[3] != dbg.Name {
		return msg
	}
	prefix, n, detail := m[1], atoi(m[2]), m[4]
	if n <= 0 {
		return msg
	}
	// The Go function's stack: its arguments, then the message raised.
	nargs := 0
	for {
		if name, _ := L.GetLocal(dbg, nargs+1); name != "(*temporary)" {
			break
		}
		nargs++
	}
	nargs-- // the error message gopher-lua pushed
	if rest, ok := strings.CutSuffix(detail, "got nil"); ok && n > nargs {
		detail = rest + "got no value"
	}
	name, kind := "?", ""
	if caller, ok := L.GetStack(1); ok {
		name, kind = callName(L, caller, dbg.Name)
	}
	if kind == "method" {
		n--
		if n == 0 {
			return fmt.Sprintf("%scalling '%s' on bad self (%s)", prefix, name, detail)
		}
	}
	return fmt.Sprintf("%sbad argument #%d to '%s' (%s)", prefix, n, name, detail)
}

// callName is how the Lua function at caller named fn in the call on its
// current line: gopher-lua's name for the call (which it keeps for each
// call instruction), and its kind ("method", "global", ...) from the calls
// on that line of a value of that name; "?" when the caller is not a Lua
// function.
func callName(L *lua.LState, caller *lua.Debug, goName string) (name, kind string) {
	cv, err := L.GetInfo("fl", caller, lua.LNil)
	cfn, _ := cv.(*lua.LFunction)
	if err != nil || cfn == nil || cfn.IsG {
		return "?", ""
	}
	p := cfn.Proto
	for pc, i := range p.Code {
		if pc >= len(p.DbgSourcePositions) || p.DbgSourcePositions[pc] != caller.CurrentLine {
			continue
		}
		if op := instOp(i); op != lua.OP_CALL && op != lua.OP_TAILCALL {
			continue
		}
		k, quoted, ok := strings.Cut(objName(p, pc, instA(i)), " ")
		if !ok || strings.Trim(quoted, "'") != goName {
			continue
		}
		if kind != "" && k != kind {
			return goName, ""
		}
		kind = k
	}
	return goName, kind
}
