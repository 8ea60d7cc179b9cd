package bindings

import (
	"context"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's patterns (reference manual 5.4.1) for string.find, match,
// gmatch and gsub. gopher-lua v1.1.2's pattern package has no frontier
// (%f), clamps no init, and its find panics past the end of the subject;
// ibscript matches with this implementation of the manual instead, which
// also checks the run's context as it goes, so a pattern that backtracks
// for minutes ends with the run (--time-limit, SIGTERM, Ctrl-C).

const (
	maxCaptures    = 32
	capUnfinished  = -1
	capPosition    = -2
	maxMatchDepth  = 200     // nested pattern items before "pattern too complex"
	ctxCheckPeriod = 1 << 14 // matching steps between context checks
	patSpecials    = "^$*+?.([%-"
)

// patternError is a malformed pattern or a bad capture reference.
type patternError string

type matcher struct {
	src, pat string
	level    int
	capture  [maxCaptures]struct{ init, len int }
	depth    int
	steps    int
	ctx      context.Context
}

func (m *matcher) fail(msg string) { panic(patternError(msg)) }

// tick counts a step and ends the match when the run's context ended.
func (m *matcher) tick() {
	m.steps++
	if m.steps%ctxCheckPeriod == 0 && m.ctx != nil {
		if err := m.ctx.Err(); err != nil {
			panic(err)
		}
	}
}

// classEnd returns the index just after the single-character class at p.
func (m *matcher) classEnd(p int) int {
	pat := m.pat
	c := pat[p]
	p++
	switch c {
	case '%':
		if p >= len(pat) {
			m.fail("malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		for { // the first character is part of the set, even ']'
			if p >= len(pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := pat[p]
			p++
			if c == '%' {
				if p >= len(pat) {
					m.fail("malformed pattern (missing ']')")
				}
				p++
			}
			if p >= len(pat) {
				m.fail("malformed pattern (missing ']')")
			}
			if pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

// matchClass reports whether c is in the class %cl (C locale).
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = '0' <= c && c <= '9'
	case 'l':
		res = 'a' <= c && c <= 'z'
	case 'p':
		res = isPunct(c)
	case 's':
		res = c == ' ' || ('\t' <= c && c <= '\r')
	case 'u':
		res = 'A' <= c && c <= 'Z'
	case 'w':
		res = isAlpha(c) || ('0' <= c && c <= '9')
	case 'x':
		res = ('0' <= c && c <= '9') || ('a' <= c|0x20 && c|0x20 <= 'f')
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if 'A' <= cl && cl <= 'Z' {
		return !res
	}
	return res
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isPunct(c byte) bool {
	return (33 <= c && c <= 47) || (58 <= c && c <= 64) || (91 <= c && c <= 96) || (123 <= c && c <= 126)
}

// matchBracket reports whether c is in the set pat[p:ec+1] ("[...]").
func (m *matcher) matchBracket(c byte, p, ec int) bool {
	pat := m.pat
	sig := true
	p++
	if pat[p] == '^' {
		sig = false
		p++
	}
	for ; p < ec; p++ {
		switch {
		case pat[p] == '%':
			p++
			if matchClass(c, pat[p]) {
				return sig
			}
		case pat[p+1] == '-' && p+2 < ec:
			if pat[p] <= c && c <= pat[p+2] {
				return sig
			}
			p += 2
		case pat[p] == c:
			return sig
		}
	}
	return !sig
}

func (m *matcher) singleMatch(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchBracket(c, p, ep-1)
	}
	return m.pat[p] == c
}

// match returns the end of the match of pat[p:] at src[s:], or -1. A
// failure panics through it, and the matcher is dropped then, so the
// depth needs no defer.
func (m *matcher) match(s, p int) int {
	m.depth++
	if m.depth > maxMatchDepth {
		m.fail("pattern too complex")
	}
	r := m.doMatch(s, p)
	m.depth--
	return r
}

func (m *matcher) doMatch(s, p int) int {
	pat := m.pat
	for {
		m.tick()
		if p == len(pat) {
			return s
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 < len(pat) {
				switch c := pat[p+1]; {
				case c == 'b':
					s = m.matchBalance(s, p+2)
					if s == -1 {
						return -1
					}
					p += 4
					continue
				case c == 'f':
					p += 2
					if p >= len(pat) || pat[p] != '[' {
						m.fail("missing '[' after '%f' in pattern")
					}
					ep := m.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = m.src[s-1]
					}
					if s < len(m.src) {
						cur = m.src[s]
					}
					if m.matchBracket(prev, p, ep-1) || !m.matchBracket(cur, p, ep-1) {
						return -1
					}
					p = ep
					continue
				case '0' <= c && c <= '9':
					s = m.matchCapture(s, c)
					if s == -1 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		ep := m.classEnd(p)
		ok := m.singleMatch(s, p, ep)
		if ep < len(pat) {
			switch pat[ep] {
			case '?':
				if ok {
					if r := m.match(s+1, ep+1); r != -1 {
						return r
					}
				}
				p = ep + 1
				continue
			case '*':
				return m.maxExpand(s, p, ep)
			case '+':
				if !ok {
					return -1
				}
				return m.maxExpand(s+1, p, ep)
			case '-':
				return m.minExpand(s, p, ep)
			}
		}
		if !ok {
			return -1
		}
		s++
		p = ep
	}
}

func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.singleMatch(s+i, p, ep) {
		m.tick()
		i++
	}
	for ; i >= 0; i-- {
		if r := m.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if r := m.match(s, ep+1); r != -1 {
			return r
		}
		if !m.singleMatch(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		m.fail("too many captures")
	}
	m.capture[m.level].init = s
	m.capture[m.level].len = what
	m.level++
	r := m.match(s, p)
	if r == -1 {
		m.level--
	}
	return r
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.fail("invalid pattern capture")
	}
	m.capture[l].len = s - m.capture[l].init
	r := m.match(s, p)
	if r == -1 {
		m.capture[l].len = capUnfinished
	}
	return r
}

func (m *matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("unbalanced pattern")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	b, e := m.pat[p], m.pat[p+1]
	depth := 1
	for i := s + 1; i < len(m.src); i++ {
		m.tick()
		switch m.src[i] {
		case e:
			depth--
			if depth == 0 {
				return i + 1
			}
		case b:
			depth++
		}
	}
	return -1
}

func (m *matcher) matchCapture(s int, l byte) int {
	i := int(l - '1')
	if i < 0 || i >= m.level || m.capture[i].len == capUnfinished {
		m.fail("invalid capture index")
	}
	if m.capture[i].len == capPosition {
		// Lua 5.1 compares the capture's length, (size_t)CAP_POSITION, with
		// what is left of the subject: a position capture never matches.
		return -1
	}
	c := m.src[m.capture[i].init : m.capture[i].init+m.capture[i].len]
	if strings.HasPrefix(m.src[s:], c) {
		return s + len(c)
	}
	return -1
}

// captureValue is capture i of the match src[s:e]: with no captures,
// capture 0 is the whole match.
func (m *matcher) captureValue(i, s, e int) lua.LValue {
	if i >= m.level {
		if i != 0 {
			m.fail("invalid capture index")
		}
		return lua.LString(m.src[s:e])
	}
	c := m.capture[i]
	switch c.len {
	case capUnfinished:
		m.fail("unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(m.src[c.init : c.init+c.len])
}

// pushCaptures pushes the captures of src[s:e] (the whole match when there
// are none and whole is set) and returns how many.
func (m *matcher) pushCaptures(L *lua.LState, s, e int, whole bool) int {
	n := m.level
	if n == 0 && whole {
		n = 1
	}
	for i := range n {
		L.Push(m.captureValue(i, s, e))
	}
	return n
}

// patternCall runs fn and turns a malformed pattern into a Lua error of
// the calling function, and an ended context into the run's end.
func patternCall(L *lua.LState, name string, fn func() int) (n int) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case patternError:
			L.RaiseError("%s", string(r)) // as 5.1's luaL_error: no function name
		case error:
			if L.Context() != nil && L.Context().Err() != nil {
				L.RaiseError("%s: %v", name, r)
			}
			panic(r)
		default:
			panic(r)
		}
	}()
	return fn()
}

// startIndex is Lua 5.1's init argument: 1-based, negative from the end,
// clamped to [0, len] as a 0-based index.
func startIndex(L *lua.LState, arg, n int) int {
	init := posrelat(optInteger(L, arg, 1), n) - 1
	return int(max(0, min(init, int64(n))))
}

func strFindAux(L *lua.LState, find bool) int {
	src := argString(L, 1)
	pat := argString(L, 2)
	init := startIndex(L, 3, len(src))
	name := "string.match"
	if find {
		name = "string.find"
	}
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(pat, patSpecials)) {
		if i := strings.Index(src[init:], pat); i >= 0 {
			L.Push(lua.LNumber(init + i + 1))
			L.Push(lua.LNumber(init + i + len(pat)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	return patternCall(L, name, func() int {
		m := &matcher{src: src, pat: pat, ctx: L.Context()}
		p, anchor := 0, strings.HasPrefix(pat, "^")
		if anchor {
			p = 1
		}
		for s := init; ; s++ {
			m.level = 0
			if e := m.match(s, p); e != -1 {
				if find {
					L.Push(lua.LNumber(s + 1))
					L.Push(lua.LNumber(e))
					return m.pushCaptures(L, 0, 0, false) + 2
				}
				return m.pushCaptures(L, s, e, true)
			}
			if s >= len(src) || anchor {
				break
			}
		}
		L.Push(lua.LNil)
		return 1
	})
}

func strGmatch(L *lua.LState) int {
	src := argString(L, 1)
	pat := argString(L, 2)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		return patternCall(L, "string.gmatch", func() int {
			m := &matcher{src: src, pat: pat, ctx: L.Context()}
			for s := pos; s <= len(src); s++ {
				m.level = 0
				if e := m.match(s, 0); e != -1 {
					pos = e
					if e == s {
						pos++ // an empty match: go on after it
					}
					return m.pushCaptures(L, s, e, true)
				}
			}
			pos = len(src) + 1
			return 0
		})
	}))
	return 1
}

func strGsub(L *lua.LState) int {
	src := argString(L, 1)
	pat := argString(L, 2)
	repl := L.Get(3)
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTTable, lua.LTFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := optInt(L, 4, len(src)+1)
	return patternCall(L, "string.gsub", func() int {
		m := &matcher{src: src, pat: pat, ctx: L.Context()}
		p, anchor := 0, strings.HasPrefix(pat, "^")
		if anchor {
			p = 1
		}
		var b strings.Builder
		s, n := 0, 0
		grown := 0 // b's capacity when its next growth was last checked
	loop:
		for n < maxN {
			m.level = 0
			e := m.match(s, p)
			if e != -1 {
				n++
				m.addValue(L, &b, s, e, repl)
				if c := b.Cap(); c > grown {
					// The result doubles as it grows: the next doubling
					// is checked against --memory-limit before it is
					// made, as '..' and string.rep are (a gsub building
					// a huge result passed the limit 1.4 times).
					grown = c
					checkAllocOf(L, "string.gsub", 2*uint64(c))
				}
			}
			switch {
			case e != -1 && e > s:
				s = e
			case s < len(src):
				b.WriteByte(src[s])
				s++
			default:
				break loop // the subject is used up
			}
			if anchor {
				break
			}
		}
		b.WriteString(src[s:])
		L.Push(lua.LString(b.String()))
		L.Push(lua.LNumber(n))
		return 2
	})
}

// addValue appends the replacement of the match src[s:e].
func (m *matcher) addValue(L *lua.LState, b *strings.Builder, s, e int, repl lua.LValue) {
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		news, _ := valueText(r)
		for i := 0; i < len(news); i++ {
			c := news[i]
			if c != '%' || i+1 == len(news) {
				b.WriteByte(c)
				continue
			}
			i++
			switch d := news[i]; {
			case d == '0':
				b.WriteString(m.src[s:e])
			case '1' <= d && d <= '9':
				c, _ := valueText(m.captureValue(int(d-'1'), s, e))
				b.WriteString(c)
			default:
				b.WriteByte(d)
			}
		}
		return
	case *lua.LTable:
		v = L.GetTable(r, m.captureValue(0, s, e))
	case *lua.LFunction:
		top := L.GetTop()
		L.Push(r)
		n := m.pushCaptures(L, s, e, true)
		L.Call(n, 1)
		v = L.Get(-1)
		L.SetTop(top)
	}
	switch v.Type() {
	case lua.LTNil:
		b.WriteString(m.src[s:e])
	case lua.LTBool:
		if v == lua.LFalse {
			b.WriteString(m.src[s:e])
			return
		}
		m.fail("invalid replacement value (a boolean)")
	case lua.LTString, lua.LTNumber:
		t, _ := valueText(v)
		b.WriteString(t)
	default:
		m.fail("invalid replacement value (a " + v.Type().String() + ")")
	}
}
