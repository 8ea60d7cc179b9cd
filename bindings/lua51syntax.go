package bindings

import (
	"fmt"
	"strings"
)

// Lua 5.1's syntax (docs/lua.md, "Corrections"). gopher-lua v1.1.2's
// parser accepts some of Lua 5.2's syntax that Lua 5.1 rejects ("::label::",
// "goto", ";;", "\300" as a 300th byte, "return 1e", the call "f\n(g)"
// that 5.1 calls ambiguous), reserves "goto", which is an ordinary name in
// 5.1, and words its errors its own way ("line:1(column:5) near 'x':
// syntax error"). Load therefore checks every chunk first with check51, a
// lexer and recursive-descent parser written from Lua 5.1's llex.c and
// lparser.c that builds nothing and stops at the first error, worded and
// placed as 5.1 does ("file.lua:3: ')' expected (to close '(' at line 2)
// near '<eof>'"); only then does gopher-lua's parser build the tree.

// Token kinds: a single character is its byte; the rest follow.
const (
	tkAnd = 257 + iota
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
	tkConcat
	tkDots
	tkEq
	tkGe
	tkLe
	tkNe
	tkNumber
	tkName
	tkString
	tkEOS
)

var tokenNames = [...]string{
	"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local",
	"nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
	"..", "...", "==", ">=", "<=", "~=", "<number>", "<name>", "<string>", "<eof>",
}

var reserved = func() map[string]int {
	m := map[string]int{}
	for i := tkAnd; i <= tkWhile; i++ {
		m[tokenNames[i-tkAnd]] = i
	}
	return m
}()

// token2str is luaX_token2str: how a message names a token kind.
func token2str(t int) string {
	if t < 257 {
		if t < 32 || t == 127 {
			return fmt.Sprintf("char(%d)", t)
		}
		return string(rune(t))
	}
	return tokenNames[t-tkAnd]
}

type token struct {
	t    int
	text string // what the lexer read: a name, a number, a string with its quotes
	line int    // the lexer's line once it read the token
	pos  int    // where the token starts in the source
}

// syntaxErr is a syntax error, as Lua 5.1 words it.
type syntaxErr string

type lexer51 struct {
	chunk   string
	src     string
	pos     int
	line    int
	lastTok int // line of the previous token, luaX's lastline
	tok     token
	ahead   token
	hasAh   bool
	buf     []byte
	gotos   []int // offsets of the name "goto"
}

const eoz = -1

func (l *lexer51) current() int {
	if l.pos < len(l.src) {
		return int(l.src[l.pos])
	}
	return eoz
}

func (l *lexer51) next() { l.pos++ }

func (l *lexer51) saveNext() {
	l.buf = append(l.buf, l.src[l.pos])
	l.pos++
}

func (l *lexer51) isNewline() bool { c := l.current(); return c == '\n' || c == '\r' }

// incLine skips '\n', '\r', "\n\r" or "\r\n" and counts a line.
func (l *lexer51) incLine() {
	old := l.current()
	l.next()
	if c := l.current(); (c == '\n' || c == '\r') && c != old {
		l.next()
	}
	l.line++
}

// lexError is luaX_lexerror: the message at the lexer's line, near the
// text of token t (none for 0).
func (l *lexer51) lexError(msg string, t int) {
	msg = fmt.Sprintf("%s:%d: %s", l.chunk, l.line, msg)
	if t != 0 {
		near := token2str(t)
		if t == tkName || t == tkString || t == tkNumber {
			near = string(l.buf)
		}
		msg += " near '" + near + "'"
	}
	panic(syntaxErr(msg))
}

// syntaxError is luaX_syntaxerror: near the current token.
func (l *lexer51) syntaxError(msg string) {
	msg = fmt.Sprintf("%s:%d: %s", l.chunk, l.line, msg)
	near := token2str(l.tok.t)
	if l.tok.t == tkName || l.tok.t == tkString || l.tok.t == tkNumber {
		near = l.tok.text
	}
	panic(syntaxErr(msg + " near '" + near + "'"))
}

// advance is luaX_next.
func (l *lexer51) advance() {
	l.lastTok = l.line
	if l.hasAh {
		l.tok, l.hasAh = l.ahead, false
		return
	}
	l.tok = l.lex()
}

func (l *lexer51) lookahead() int {
	l.ahead, l.hasAh = l.lex(), true
	return l.ahead.t
}

func lexAlpha(c int) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func lexDigit(c int) bool { return c >= '0' && c <= '9' }
func lexAlnum(c int) bool { return lexAlpha(c) || lexDigit(c) }

// skipSep reads [===[ or ]===] and returns the level, or -count-1 when the
// second bracket is missing.
func (l *lexer51) skipSep() int {
	count := 0
	s := l.current()
	l.saveNext()
	for l.current() == '=' {
		l.saveNext()
		count++
	}
	if l.current() == s {
		return count
	}
	return -count - 1
}

func (l *lexer51) longString(isString bool, sep int) {
	l.saveNext()
	if l.isNewline() {
		l.incLine()
	}
	for {
		switch l.current() {
		case eoz:
			if isString {
				l.lexError("unfinished long string", tkEOS)
			}
			l.lexError("unfinished long comment", tkEOS)
		case '[':
			if l.skipSep() == sep {
				l.saveNext()
				if sep == 0 {
					l.lexError("nesting of [[...]] is deprecated", '[')
				}
			}
		case ']':
			if l.skipSep() == sep {
				l.saveNext()
				return
			}
		case '\n', '\r':
			l.buf = append(l.buf, '\n')
			l.incLine()
			if !isString {
				l.buf = l.buf[:0]
			}
		default:
			if isString {
				l.saveNext()
			} else {
				l.next()
			}
		}
	}
}

func (l *lexer51) readString(del int) {
	l.saveNext()
	for l.current() != del {
		switch l.current() {
		case eoz:
			l.lexError("unfinished string", tkEOS)
		case '\n', '\r':
			l.lexError("unfinished string", tkString)
		case '\\':
			l.next()
			c := l.current()
			switch c {
			case 'a':
				c = '\a'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = '\v'
			case '\n', '\r':
				l.buf = append(l.buf, '\n')
				l.incLine()
				continue
			case eoz:
				continue
			default:
				if !lexDigit(c) {
					l.saveNext()
					continue
				}
				n := 0
				for i := 0; i < 3 && lexDigit(l.current()); i++ {
					n = 10*n + l.current() - '0'
					l.next()
				}
				if n > 255 {
					l.lexError("escape sequence too large", tkString)
				}
				l.buf = append(l.buf, byte(n))
				continue
			}
			l.buf = append(l.buf, byte(c))
			l.next()
		default:
			l.saveNext()
		}
	}
	l.saveNext()
}

func (l *lexer51) readNumeral() {
	for lexDigit(l.current()) || l.current() == '.' {
		l.saveNext()
	}
	if c := l.current(); c == 'E' || c == 'e' {
		l.saveNext()
		if c := l.current(); c == '+' || c == '-' {
			l.saveNext()
		}
	}
	for lexAlnum(l.current()) || l.current() == '_' {
		l.saveNext()
	}
	if _, ok := str2number(string(l.buf)); !ok {
		l.lexError("malformed number", tkNumber)
	}
}

// lex is llex: the next token.
func (l *lexer51) lex() token {
	l.buf = l.buf[:0]
	for {
		start := l.pos
		tok := func(t int) token {
			return token{t: t, text: string(l.buf), line: l.line, pos: start}
		}
		c := l.current()
		switch c {
		case '\n', '\r':
			l.incLine()
			continue
		case '-':
			l.next()
			if l.current() != '-' {
				return tok('-')
			}
			l.next()
			if l.current() == '[' {
				sep := l.skipSep()
				l.buf = l.buf[:0]
				if sep >= 0 {
					l.longString(false, sep)
					l.buf = l.buf[:0]
					continue
				}
			}
			for !l.isNewline() && l.current() != eoz {
				l.next()
			}
			continue
		case '[':
			sep := l.skipSep()
			if sep >= 0 {
				l.longString(true, sep)
				return tok(tkString)
			}
			if sep != -1 {
				l.lexError("invalid long string delimiter", tkString)
			}
			return tok('[')
		case '=', '<', '>', '~':
			l.next()
			if l.current() != '=' {
				return tok(c)
			}
			l.next()
			return tok(map[int]int{'=': tkEq, '<': tkLe, '>': tkGe, '~': tkNe}[c])
		case '"', '\'':
			l.readString(c)
			return tok(tkString)
		case '.':
			l.saveNext()
			if l.current() == '.' {
				l.saveNext()
				if l.current() == '.' {
					l.saveNext()
					return tok(tkDots)
				}
				return tok(tkConcat)
			}
			if !lexDigit(l.current()) {
				return tok('.')
			}
			l.readNumeral()
			return tok(tkNumber)
		case eoz:
			return tok(tkEOS)
		}
		switch {
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			l.next()
		case lexDigit(c):
			l.readNumeral()
			return tok(tkNumber)
		case lexAlpha(c) || c == '_':
			for lexAlnum(l.current()) || l.current() == '_' {
				l.saveNext()
			}
			if r, ok := reserved[string(l.buf)]; ok {
				return tok(r)
			}
			if string(l.buf) == "goto" {
				l.gotos = append(l.gotos, start)
			}
			return tok(tkName)
		default:
			l.next()
			return tok(c)
		}
	}
}

// Limits of Lua 5.1's parser (luaconf.h).
const (
	maxVars        = 200 // LUAI_MAXVARS: locals active in one function
	maxUpvalues    = 60  // LUAI_MAXUPVALUES
	maxSyntaxLevel = 200 // LUAI_MAXCCALLS: nested blocks and expressions
)

// funcState is a function being parsed: its locals in scope (blocks
// marked by their counts), its upvalues, and its loops.
type funcState struct {
	parent   *funcState
	line     int // line defined, 0 for the main chunk
	vararg   bool
	actvars  []string
	upvalues []string
	loops    int
}

type parser51 struct {
	*lexer51
	fs    *funcState
	level int
}

func (p *parser51) enterLevel() {
	p.level++
	if p.level > maxSyntaxLevel {
		p.lexError("chunk has too many syntax levels", 0)
	}
}

func (p *parser51) errorLimit(fs *funcState, limit int, what string) {
	if fs.line == 0 {
		p.lexError(fmt.Sprintf("main function has more than %d %s", limit, what), 0)
	}
	p.lexError(fmt.Sprintf("function at line %d has more than %d %s", fs.line, limit, what), 0)
}

func (p *parser51) newLocal(name string) {
	if len(p.fs.actvars)+1 > maxVars {
		p.errorLimit(p.fs, maxVars, "local variables")
	}
	p.fs.actvars = append(p.fs.actvars, name)
}

// singleVar resolves a name: a local, an upvalue (counted against the
// limit in every function it passes through) or a global.
func (p *parser51) singleVar(name string) {
	var find func(fs *funcState) bool
	find = func(fs *funcState) bool {
		if fs == nil {
			return false
		}
		for i := len(fs.actvars) - 1; i >= 0; i-- {
			if fs.actvars[i] == name {
				return true
			}
		}
		for _, u := range fs.upvalues {
			if u == name {
				return true
			}
		}
		if !find(fs.parent) {
			return false
		}
		if len(fs.upvalues)+1 > maxUpvalues {
			p.errorLimit(fs, maxUpvalues, "upvalues")
		}
		fs.upvalues = append(fs.upvalues, name)
		return true
	}
	fs := p.fs
	for i := len(fs.actvars) - 1; i >= 0; i-- {
		if fs.actvars[i] == name {
			return
		}
	}
	find(fs)
}

func (p *parser51) testNext(t int) bool {
	if p.tok.t == t {
		p.advance()
		return true
	}
	return false
}

func (p *parser51) errorExpected(t int) {
	p.syntaxError("'" + token2str(t) + "' expected")
}

func (p *parser51) check(t int) {
	if p.tok.t != t {
		p.errorExpected(t)
	}
}

func (p *parser51) checkNext(t int) {
	p.check(t)
	p.advance()
}

func (p *parser51) checkMatch(what, who, where int) {
	if p.testNext(what) {
		return
	}
	if where == p.line {
		p.errorExpected(what)
	}
	p.syntaxError(fmt.Sprintf("'%s' expected (to close '%s' at line %d)", token2str(what), token2str(who), where))
}

func (p *parser51) checkName() string {
	p.check(tkName)
	name := p.tok.text
	p.advance()
	return name
}

func blockFollow(t int) bool {
	switch t {
	case tkElse, tkElseif, tkEnd, tkUntil, tkEOS:
		return true
	}
	return false
}

// chunk is a block's statements (lparser.c's chunk).
func (p *parser51) chunk() {
	p.enterLevel()
	last := false
	for !last && !blockFollow(p.tok.t) {
		last = p.statement()
		p.testNext(';')
	}
	p.level--
}

// block is a chunk in a scope of its own; loop marks a loop's body.
func (p *parser51) block(loop bool) {
	n := len(p.fs.actvars)
	if loop {
		p.fs.loops++
	}
	p.chunk()
	if loop {
		p.fs.loops--
	}
	p.fs.actvars = p.fs.actvars[:n]
}

// statement parses one statement and reports whether it must be the
// block's last (return, break).
func (p *parser51) statement() bool {
	line := p.line
	switch p.tok.t {
	case tkIf:
		p.testThenBlock()
		for p.tok.t == tkElseif {
			p.testThenBlock()
		}
		if p.testNext(tkElse) {
			p.block(false)
		}
		p.checkMatch(tkEnd, tkIf, line)
	case tkWhile:
		p.advance()
		p.expr()
		p.checkNext(tkDo)
		p.block(true)
		p.checkMatch(tkEnd, tkWhile, line)
	case tkDo:
		p.advance()
		p.block(false)
		p.checkMatch(tkEnd, tkDo, line)
	case tkFor:
		p.forStat(line)
	case tkRepeat:
		n := len(p.fs.actvars)
		p.fs.loops++
		p.advance()
		p.chunk()
		p.checkMatch(tkUntil, tkRepeat, line)
		p.expr() // the condition sees the block's locals
		p.fs.loops--
		p.fs.actvars = p.fs.actvars[:n]
	case tkFunction:
		p.advance()
		p.singleVar(p.checkName())
		self := false
		for p.tok.t == '.' {
			p.advance()
			p.checkName()
		}
		if p.tok.t == ':' {
			p.advance()
			p.checkName()
			self = true
		}
		p.body(self, line)
	case tkLocal:
		p.advance()
		if p.testNext(tkFunction) {
			p.newLocal(p.checkName())
			p.body(false, p.line)
			break
		}
		var names []string
		for {
			name := p.checkName()
			if len(p.fs.actvars)+len(names)+1 > maxVars {
				p.errorLimit(p.fs, maxVars, "local variables")
			}
			names = append(names, name)
			if !p.testNext(',') {
				break
			}
		}
		if p.testNext('=') {
			p.exprList()
		}
		for _, n := range names {
			p.newLocal(n)
		}
	case tkReturn:
		p.advance()
		if !blockFollow(p.tok.t) && p.tok.t != ';' {
			p.exprList()
		}
		return true
	case tkBreak:
		p.advance()
		if p.fs.loops == 0 {
			p.syntaxError("no loop to break")
		}
		return true
	default:
		if k := p.primaryExp(); k != expCall {
			if k != expName && k != expIndexed {
				p.syntaxError("syntax error")
			}
			p.assignment()
		}
	}
	return false
}

func (p *parser51) testThenBlock() {
	p.advance()
	p.expr()
	p.checkNext(tkThen)
	p.block(false)
}

func (p *parser51) forStat(line int) {
	n := len(p.fs.actvars)
	p.advance()
	name := p.checkName()
	switch p.tok.t {
	case '=':
		p.newLocal("(for index)")
		p.newLocal("(for limit)")
		p.newLocal("(for step)")
		p.advance()
		p.expr()
		p.checkNext(',')
		p.expr()
		if p.testNext(',') {
			p.expr()
		}
		p.checkNext(tkDo)
		p.newLocal(name)
	case ',', tkIn:
		p.newLocal("(for generator)")
		p.newLocal("(for state)")
		p.newLocal("(for control)")
		names := []string{name}
		for p.testNext(',') {
			names = append(names, p.checkName())
		}
		p.checkNext(tkIn)
		p.exprList()
		p.checkNext(tkDo)
		for _, n := range names {
			p.newLocal(n)
		}
	default:
		p.syntaxError("'=' or 'in' expected")
	}
	p.block(true)
	p.fs.actvars = p.fs.actvars[:n]
	p.checkMatch(tkEnd, tkFor, line)
}

// Expression kinds that decide what a statement starting with one is.
const (
	expName = iota
	expIndexed
	expCall
	expOther
)

// assignment is the rest of an assignment whose first target was read.
func (p *parser51) assignment() {
	for {
		if p.testNext(',') {
			if k := p.primaryExp(); k != expName && k != expIndexed {
				p.syntaxError("syntax error")
			}
			continue
		}
		p.checkNext('=')
		p.exprList()
		return
	}
}

func (p *parser51) exprList() {
	p.expr()
	for p.testNext(',') {
		p.expr()
	}
}

func (p *parser51) body(self bool, line int) {
	fs := &funcState{parent: p.fs, line: line}
	p.fs = fs
	if self {
		p.newLocal("self")
	}
	p.checkNext('(')
	if p.tok.t != ')' {
		for {
			switch p.tok.t {
			case tkName:
				p.newLocal(p.checkName())
			case tkDots:
				p.advance()
				fs.vararg = true
				p.newLocal("arg") // LUA_COMPAT_VARARG
			default:
				p.syntaxError("<name> or '...' expected")
			}
			if fs.vararg || !p.testNext(',') {
				break
			}
		}
	}
	p.checkNext(')')
	p.chunk()
	p.checkMatch(tkEnd, tkFunction, line)
	p.fs = fs.parent
}

// Binary operators' left and right priorities (lparser.c's priority[]).
var binaryPriority = map[int][2]int{
	'+': {6, 6}, '-': {6, 6}, '*': {7, 7}, '/': {7, 7}, '%': {7, 7},
	'^': {10, 9}, tkConcat: {5, 4},
	tkNe: {3, 3}, tkEq: {3, 3}, '<': {3, 3}, tkLe: {3, 3}, '>': {3, 3}, tkGe: {3, 3},
	tkAnd: {2, 2}, tkOr: {1, 1},
}

const unaryPriority = 8

func (p *parser51) expr() { p.subExpr(0) }

func (p *parser51) subExpr(limit int) {
	p.enterLevel()
	switch p.tok.t {
	case tkNot, '-', '#':
		p.advance()
		p.subExpr(unaryPriority)
	default:
		p.simpleExp()
	}
	for {
		pr, ok := binaryPriority[p.tok.t]
		if !ok || pr[0] <= limit {
			break
		}
		p.advance()
		p.subExpr(pr[1])
	}
	p.level--
}

func (p *parser51) simpleExp() {
	switch p.tok.t {
	case tkNumber, tkString, tkNil, tkTrue, tkFalse:
		p.advance()
	case tkDots:
		if !p.fs.vararg {
			p.syntaxError("cannot use '...' outside a vararg function")
		}
		p.advance()
	case '{':
		p.constructor()
	case tkFunction:
		p.advance()
		p.body(false, p.line)
	default:
		p.primaryExp()
	}
}

func (p *parser51) constructor() {
	line := p.line
	p.checkNext('{')
	for p.tok.t != '}' {
		switch p.tok.t {
		case tkName:
			if p.lookahead() != '=' {
				p.expr()
			} else {
				p.advance()
				p.checkNext('=')
				p.expr()
			}
		case '[':
			p.advance()
			p.expr()
			p.checkNext(']')
			p.checkNext('=')
			p.expr()
		default:
			p.expr()
		}
		if !p.testNext(',') && !p.testNext(';') {
			break
		}
	}
	p.checkMatch('}', '{', line)
}

// primaryExp reads a name or parenthesised expression and its suffixes,
// and returns what the whole is.
func (p *parser51) primaryExp() int {
	kind := expOther
	switch p.tok.t {
	case tkName:
		p.singleVar(p.checkName())
		kind = expName
	case '(':
		line := p.line
		p.advance()
		p.expr()
		p.checkMatch(')', '(', line)
	default:
		p.syntaxError("unexpected symbol")
	}
	for {
		switch p.tok.t {
		case '.':
			p.advance()
			p.checkName()
			kind = expIndexed
		case '[':
			p.advance()
			p.expr()
			p.checkNext(']')
			kind = expIndexed
		case ':':
			p.advance()
			p.checkName()
			p.funcArgs()
			kind = expCall
		case '(', tkString, '{':
			p.funcArgs()
			kind = expCall
		default:
			return kind
		}
	}
}

func (p *parser51) funcArgs() {
	line := p.line
	switch p.tok.t {
	case '(':
		if line != p.lastTok {
			p.syntaxError("ambiguous syntax (function call x new statement)")
		}
		p.advance()
		if p.tok.t != ')' {
			p.exprList()
		}
		p.checkMatch(')', '(', line)
	case '{':
		p.constructor()
	case tkString:
		p.advance()
	default:
		p.syntaxError("function arguments expected")
	}
}

// check51 checks src, a chunk named chunk in messages, against Lua 5.1's
// syntax, and returns the offsets of the names "goto" it holds (an
// ordinary name in Lua 5.1, a keyword to gopher-lua's parser).
func check51(src, chunk string) (gotos []int, err error) {
	l := &lexer51{chunk: chunk, src: src, line: 1}
	p := &parser51{lexer51: l, fs: &funcState{vararg: true}}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(syntaxErr)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%s", string(se))
		}
	}()
	p.advance()
	p.chunk()
	if p.tok.t != tkEOS {
		p.errorExpected(tkEOS)
	}
	return l.gotos, nil
}

// renameGotos replaces the names "goto" at the offsets gotos with a name
// the source does not hold, which gopher-lua's parser takes, and returns
// the new source and that name.
func renameGotos(src string, gotos []int) (string, string) {
	name := "goto_"
	for strings.Contains(src, name) {
		name += "_"
	}
	var b strings.Builder
	last := 0
	for _, at := range gotos {
		b.WriteString(src[last:at])
		b.WriteString(name)
		last = at + len("goto")
	}
	b.WriteString(src[last:])
	return b.String(), name
}
