package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/sim"
)

// The differential harness: Lua programs run under ibscript's Lua (the
// state a plan gets) and under the reference interpreter, Debian's
// lua5.1, compared on standard output, the error that ended the program
// (its message, modulo the interpreter's own "lua5.1: " prefix) and the
// exit status. Two sources of programs:
//
//   - tests/lua51diff/*.lua, a corpus written from the Lua 5.1 reference
//     manual, one file per class of behaviour (TestLua51DiffCorpus);
//   - random programs from lua51Gen: expressions and statements over
//     integers, floats, negative zero, huge values and numeric strings,
//     the string, table and math libraries, comparisons and
//     concatenation (TestLua51DiffGenerated; IBSCRIPT_LUA51_SEED and
//     IBSCRIPT_LUA51_PROGRAMS choose the seed and the count).
//
// Every difference fails the test, except those docs/lua.md lists: the
// wording of some error messages (lua51Pending), which issue 30's item 2
// is replacing with Lua 5.1's; such differences are counted and logged.
// A program writes "ERR<TAB>message" lines for errors it catches (the
// corpus's prelude and the generator's show), so that caught errors are
// compared with the same rules as the one that ends a program.

// lua51Binary finds lua5.1, or skips (fails with IBSCRIPT_TEST_LUA51=1).
func lua51Binary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("lua5.1")
	if err != nil {
		if os.Getenv("IBSCRIPT_TEST_LUA51") == "1" {
			t.Fatal("lua5.1 not found and IBSCRIPT_TEST_LUA51=1")
		}
		t.Skip("lua5.1 (Debian package lua5.1) not installed")
	}
	return p
}

// luaRun is what a program did.
type luaRun struct {
	stdout string
	err    string // the message of the error that ended it, "" if none
	status int    // 0, os.exit's code, or 1 after an error
}

// diffTimeout bounds one program under either interpreter.
const diffTimeout = 30 * time.Second

// runUnderIbscript runs the file at path in the state a plan gets.
func runUnderIbscript(t *testing.T, f *sim.Fabric, path string, exact bool) luaRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), diffTimeout)
	defer cancel()
	var out bytes.Buffer
	L, _, done := planState(t, ctx, f, nil, bindings.Options{Stdout: &out, PlanName: "lua51diff"})
	defer done()
	bindings.SetExactArithmetic(L, exact)
	err := bindings.DoFile(L, path)
	r := luaRun{stdout: out.String()}
	if err != nil {
		if code, ok := bindings.AsExit(err); ok {
			r.status = code
			return r
		}
		r.status = 1
		var ae *lua.ApiError
		if errors.As(err, &ae) && ae.Object != nil {
			r.err = ae.Object.String()
		} else {
			r.err = err.Error()
		}
	}
	return r
}

// runUnderLua51 runs the file at path under lua5.1.
func runUnderLua51(t *testing.T, lua51, path string) luaRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), diffTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, lua51, path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := luaRun{stdout: stdout.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		r.status = ee.ExitCode()
		// "progname: message", progname being argv[0] (/usr/bin/lua5.1)
		msg := stderr.String()
		if strings.HasPrefix(msg, lua51+": ") {
			msg = strings.TrimPrefix(msg, lua51+": ")
			if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
				msg = msg[:i]
			}
			r.err = strings.TrimSuffix(msg, "\n")
		}
	default:
		t.Fatalf("lua5.1 %s: %v\n%s", path, err, stderr.String())
	}
	return r
}

// lua51Pending lists the wordings of gopher-lua's own error messages that
// ibscript keeps (docs/lua.md, "Differences kept": runtime error
// messages, and errors inside coroutines), each with the Lua 5.1 message
// it stands for. Only such a pair is let through; any other difference
// in an error message fails.
var lua51Pending = []struct{ gopher, lua51 *regexp.Regexp }{
	{regexp.MustCompile(`__unm undefined$|cannot perform \w+ operation between \w+ and \w+$`), regexp.MustCompile(`attempt to perform arithmetic on (a|\w+ '[^']*' \(a) \w+ value\)?$`)},
	{regexp.MustCompile(`__len undefined$`), regexp.MustCompile(`attempt to get length of (a|\w+ '[^']*' \(a) \w+ value\)?$`)},
	{regexp.MustCompile(`attempt to index a non-table object\(\w+\) with key '.*'$`), regexp.MustCompile(`attempt to index (a|\w+ '[^']*' \(a) \w+ value\)?$`)},
	{regexp.MustCompile(`attempt to call a non-function object$`), regexp.MustCompile(`attempt to call (a|\w+ '[^']*' \(a) \w+ value\)?$`)},
}

// errorPrefix is a message's "chunk:line: " position.
var errorPrefix = regexp.MustCompile(`^[^\n]*?:\d+: `)

// compareErrors says whether two error messages are the same (ok), or
// differ only where lua51Pending allows (pending).
func compareErrors(ibs, ref string) (ok, pending bool) {
	if ibs == ref {
		return true, false
	}
	pi, pr := errorPrefix.FindString(ibs), errorPrefix.FindString(ref)
	if pi != pr {
		return false, false
	}
	for _, p := range lua51Pending {
		if p.gopher.MatchString(ibs[len(pi):]) && p.lua51.MatchString(ref[len(pr):]) {
			return true, true
		}
	}
	return false, false
}

// libmCall finds what computes with the C library's transcendental
// functions in Lua 5.1 and with Go's math package in ibscript: Go's
// results can differ in the last bits (docs/lua.md), which "%.14g" shows
// for about one result in 500 of ^ and one in 1,000 of sin.
var libmCall = regexp.MustCompile(`\^|math\.(sin|cos|tan|asin|acos|atan|sinh|cosh|tanh|exp|log|pow)`)

// libmMarker ends the marker line of a statement libmCall finds; its
// output may differ from lua5.1's in the last digits (closeNumbers).
const libmMarker = "~"

// numberToken finds the numbers in an output line.
var numberToken = regexp.MustCompile(`-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?`)

// closeNumbers reports whether two lines are the same but for numbers
// that agree to 12 significant digits.
func closeNumbers(a, b string) bool {
	if numberToken.ReplaceAllString(a, "N") != numberToken.ReplaceAllString(b, "N") {
		return false
	}
	na, nb := numberToken.FindAllString(a, -1), numberToken.FindAllString(b, -1)
	for i := range na {
		x, err1 := strconv.ParseFloat(na[i], 64)
		y, err2 := strconv.ParseFloat(nb[i], 64)
		if err1 != nil || err2 != nil || math.Abs(x-y) > 1e-12*math.Max(math.Abs(x), math.Abs(y)) {
			return false
		}
	}
	return true
}

// compareRuns lists the differences between ibscript's run and lua5.1's,
// and the pending ones apart.
func compareRuns(ibs, ref luaRun) (diffs, pending []string) {
	il := strings.Split(ibs.stdout, "\n")
	rl := strings.Split(ref.stdout, "\n")
	libm := false // under a statement marked libmMarker
	stmt := ""    // the marker of the statement the line belongs to
	for i := 0; i < max(len(il), len(rl)); i++ {
		var a, b string
		if i < len(il) {
			a = il[i]
		}
		if i < len(rl) {
			b = rl[i]
		}
		if a == b {
			if strings.HasPrefix(a, "@") {
				libm = strings.HasSuffix(a, libmMarker)
				stmt = " (program line " + strings.TrimSuffix(a[1:], libmMarker) + ")"
			}
			continue
		}
		if libm && closeNumbers(a, b) {
			pending = append(pending, fmt.Sprintf("stdout line %d%s (Go's math package, last digits): ibscript %q, lua5.1 %q", i+1, stmt, a, b))
			continue
		}
		if i < len(il) && i < len(rl) && strings.HasPrefix(a, "ERR\t") && strings.HasPrefix(b, "ERR\t") {
			if ok, p := compareErrors(a[4:], b[4:]); ok {
				if p {
					pending = append(pending, fmt.Sprintf("stdout line %d%s: ibscript %q, lua5.1 %q", i+1, stmt, a, b))
				}
				continue
			}
		}
		diffs = append(diffs, fmt.Sprintf("stdout line %d%s: ibscript %q, lua5.1 %q", i+1, stmt, a, b))
	}
	if ibs.status != ref.status {
		diffs = append(diffs, fmt.Sprintf("exit status: ibscript %d, lua5.1 %d", ibs.status, ref.status))
	}
	if ok, p := compareErrors(ibs.err, ref.err); !ok {
		diffs = append(diffs, fmt.Sprintf("error: ibscript %q, lua5.1 %q", ibs.err, ref.err))
	} else if p {
		pending = append(pending, fmt.Sprintf("error: ibscript %q, lua5.1 %q", ibs.err, ref.err))
	}
	return diffs, pending
}

// lua51DiffPrelude is the corpus's first line: show(pcall(...)) prints
// the results, or "ERR", a tab and the message.
const lua51DiffPrelude = `local z, tiny, sub = 0, 5e-324, 1e-310; local nz = -z; local function show(ok, ...) if ok then print(...) else print("ERR\t" .. tostring((...))) end end ` +
	`local function try(f, ...) show(pcall(f, ...)) end `

// diffFile runs one program both ways and reports its differences.
func diffFile(t *testing.T, f *sim.Fabric, lua51, path string) (pending int) {
	t.Helper()
	ibs := runUnderIbscript(t, f, path, false)
	ref := runUnderLua51(t, lua51, path)
	diffs, pend := compareRuns(ibs, ref)
	if len(diffs) > 0 {
		// The one difference gopher-lua's arithmetic instructions keep
		// (docs/lua.md): the sign of a zero or NaN they compute. With
		// every operator computed as Lua 5.1 does, does the program
		// agree?
		exact, _ := compareRuns(runUnderIbscript(t, f, path, true), ref)
		if len(exact) == 0 {
			t.Logf("%s: differs only by the sign of zero or NaN from gopher-lua's arithmetic (docs/lua.md): %s", path, strings.Join(diffs, "; "))
			return len(pend) + len(diffs)
		}
		diffs = append(diffs, "with every arithmetic operator computed as Lua 5.1 does (bindings.SetExactArithmetic):")
		diffs = append(diffs, exact...)
	}
	for i, p := range pend {
		if i == 3 {
			t.Logf("%s: %d more documented differences", path, len(pend)-i)
			break
		}
		t.Logf("%s: documented difference: %s", path, p)
	}
	if len(diffs) > 0 {
		src, _ := os.ReadFile(path)
		t.Errorf("%s differs from lua5.1:\n%s\nprogram:\n%s", path, strings.Join(diffs, "\n"), src)
	}
	return len(pend)
}

// shortTempDir is a temporary directory with a short path: Lua 5.1 cuts
// a chunk name longer than 52 bytes to its end in messages ("...001/x.lua",
// luaO_chunkid), and t.TempDir's paths come close.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "l51")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestLua51DiffCorpus(t *testing.T) {
	lua51 := lua51Binary(t)
	files, err := filepath.Glob(filepath.Join("lua51diff", "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("tests/lua51diff has %d programs, want at least 10", len(files))
	}
	f, err := sim.Default(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := shortTempDir(t)
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".lua"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, append([]byte(lua51DiffPrelude), src...), 0o644); err != nil {
				t.Fatal(err)
			}
			diffFile(t, f, lua51, path)
		})
	}
}

func TestLua51DiffGenerated(t *testing.T) {
	lua51 := lua51Binary(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("IBSCRIPT_LUA51_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("IBSCRIPT_LUA51_SEED=%q: %v", s, err)
		}
		seed = v
	}
	programs := 500
	if s := os.Getenv("IBSCRIPT_LUA51_PROGRAMS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("IBSCRIPT_LUA51_PROGRAMS=%q: %v", s, err)
		}
		programs = v
	}
	// One minute at most, whatever the machine: programs not run by then
	// are left for the next run's seed.
	deadline := time.Now().Add(time.Minute)
	defer func() {
		if t.Failed() {
			t.Logf("seed %d: rerun with IBSCRIPT_LUA51_SEED=%d go test ./tests -run Lua51DiffGenerated", seed, seed)
		}
	}()
	f, err := sim.Default(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := shortTempDir(t)
	if d := os.Getenv("IBSCRIPT_LUA51_KEEP"); d != "" {
		dir = d // keep the programs for a look
	}
	g := newLua51Gen(seed)
	pending, ran := 0, 0
	for i := range programs {
		if time.Now().After(deadline) {
			break
		}
		path := filepath.Join(dir, fmt.Sprintf("gen%d.lua", i))
		if err := os.WriteFile(path, []byte(g.program(40)), 0o644); err != nil {
			t.Fatal(err)
		}
		pending += diffFile(t, f, lua51, path)
		ran++
		if t.Failed() {
			break
		}
	}
	t.Logf("seed %d: %d programs of 40 statements, %d differences docs/lua.md lists (gopher-lua's error wordings, libm last digits, -0)", seed, ran, pending)
}

// lua51Gen writes random programs. Each statement is
// show(pcall(function() ... end)), so one error does not end the program.
type lua51Gen struct {
	r *rand.Rand
}

func newLua51Gen(seed uint64) *lua51Gen {
	return &lua51Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *lua51Gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// genNumbers are the generator's numbers. No 0 is written as a constant
// (z is a local holding 0, and nz -0): Lua 5.1 merges the constants 0
// and -0 of a function into whichever its compiler emits first, in an
// order gopher-lua's compiler does not follow (docs/lua.md); nor is one
// of the values whose constant products can underflow to a zero.
var genNumbers = []string{
	"z", "nz", "1", "-1", "2", "3", "7", "10", "255", "256", "0.5", "-2.5", "0.1", "1/3", "-7.25",
	"1e15", "1e14", "-1e14", "123456789012345", "1234567.5", "2^53", "2^63", "-2^63", "2^31", "2^32",
	"1e308", "sub", "tiny", "(1/z)", "(-1/z)", "math.huge", "-math.huge", "100", "1e100", "3.14159",
	"0x10", "0xff", "1e2", "nz", "(z/z)", "12.5", "65", "97",
}

var genStrings = []string{
	`"10"`, `"0x10"`, `" 5 "`, `"1e2"`, `"010"`, `"abc"`, `""`, `"3.5"`, `"-2"`, `"1_000"`, `"inf"`,
	`"nan"`, `"0x"`, `"5 x"`, `"\t7\n"`, `"2"`, `"-0"`, `"1e400"`, `"0b1"`, `"hello world"`, `"a,b,,c"`,
	`"%d"`, `"x"`, `"  "`, `"1."`, `".5"`, `"+3"`, `"0X1P4"`, `"\0"`, `"abcABC123"`,
}

func (g *lua51Gen) number() string { return genNumbers[g.r.IntN(len(genNumbers))] }
func (g *lua51Gen) str() string    { return genStrings[g.r.IntN(len(genStrings))] }

func (g *lua51Gen) atom() string {
	switch g.r.IntN(10) {
	case 0, 1, 2, 3, 4:
		return g.number()
	case 5, 6, 7, 8:
		return g.str()
	}
	return g.pick("nil", "true", "false")
}

// small is a count or position: a small number or numeric string, or nil.
func (g *lua51Gen) small() string {
	return g.pick("1", "2", "3", "-1", "-2", "z", "4", "10", `"2"`, `"-1"`, `" 3 "`, `"0x2"`, "2.7", "-2.7", "nil", "1e5", "-1e5")
}

func (g *lua51Gen) expr(d int) string {
	if d <= 0 {
		return g.atom()
	}
	switch g.r.IntN(12) {
	case 0, 1:
		return g.atom()
	case 2, 3:
		return "(" + g.expr(d-1) + " " + g.pick("+", "-", "*", "/", "%", "%") + " " + g.expr(d-1) + ")"
	case 4:
		return "(- " + g.expr(d-1) + ")"
	case 5:
		return "(" + g.expr(d-1) + " .. " + g.expr(d-1) + ")"
	case 6:
		return "(" + g.expr(d-1) + " " + g.pick("==", "~=", "<", "<=", ">", ">=") + " " + g.expr(d-1) + ")"
	case 7:
		return "#" + g.str()
	case 8, 9, 10:
		return g.call(d - 1)
	}
	return "(" + g.expr(d-1) + " " + g.pick("and", "or") + " " + g.expr(d-1) + ")"
}

func (g *lua51Gen) call(d int) string {
	e := func() string { return g.expr(d) }
	switch g.r.IntN(16) {
	case 0:
		// the C library's exact functions; the others are libmExpr's
		return "math." + g.pick("floor", "ceil", "abs", "sqrt", "deg", "rad", "frexp", "modf") + "(" + e() + ")"
	case 1:
		return "math." + g.pick("fmod", "max", "min", "ldexp", "mod") + "(" + e() + ", " + e() + ")"
	case 2:
		return "tostring(" + e() + ")"
	case 3:
		return "tonumber(" + e() + ")"
	case 4:
		return "tonumber(" + g.pick(`"ff"`, `"10"`, `"z"`, `"777"`, `"-10"`, `" 11 "`, `"0x1f"`, `"1e1"`, "10", "255", `"8"`) + ", " + g.pick("2", "8", "10", "16", "36", `"16"`, `"8"`, "37", "1") + ")"
	case 5:
		return "string.sub(" + g.str() + ", " + g.small() + ", " + g.small() + ")"
	case 6:
		return "string.rep(" + g.pick(g.str(), g.number()) + ", " + g.pick("z", "1", "2", "-1", `"3"`, "2.9", `" 2 "`, "nil") + ")"
	case 7:
		return "string.byte(" + g.pick(g.str(), g.number()) + ", " + g.small() + ", " + g.small() + ")"
	case 8:
		return "string.char(" + g.pick("65", `"66"`, "67.9", "256", "-1", `"0x41"`) + ", " + g.pick("97", `"98"`, "z") + ")"
	case 9:
		return "string." + g.pick("len", "upper", "lower", "reverse") + "(" + e() + ")"
	case 10:
		return "string.format(" + g.pick(`"%d"`, `"%5.2f"`, `"%g"`, `"%s"`, `"%x"`, `"%q"`, `"%5s|"`, `"%.3s"`, `"%e"`, `"%i"`, `"%c"`, `"%o"`, `"%-5d|"`, `"%+.1f"`, `"%.14g"`) + ", " + e() + ")"
	case 11:
		return "string." + g.pick("find", "match") + "(" + g.pick(`"hello world"`, `"a1b22c333"`, `"10 20 30"`, g.str()) + ", " + g.pick(`"o"`, `"%d+"`, `"(%a)(%d*)"`, `"()l"`, `"^h"`, `"l+$"`, `"%s"`, `"."`, `"[%d.]+"`) + ", " + g.small() + ")"
	case 12:
		return "string.gsub(" + g.pick(`"hello world"`, `"a1b22c333"`, `"10 20 30"`) + ", " + g.pick(`"o"`, `"%d+"`, `"(%w+)"`, `"%s"`) + ", " + g.pick(`"<%1>"`, `"%0%0"`, "12.5", "1e15", `"x"`, "{}") + ", " + g.small() + ")"
	case 13:
		return "select(" + g.pick("1", "2", `"2"`, "-1", `"#"`, "3", "-2", "z") + ", " + e() + ", " + e() + ", " + e() + ")"
	case 14:
		return "unpack({" + g.elems(d) + "}, " + g.small() + ", " + g.small() + ")"
	}
	return "table.concat({" + g.elems(d) + "}, " + g.pick(`","`, `""`, "1", "nil", `" - "`) + ", " + g.small() + ", " + g.small() + ")"
}

// elems is three table elements, none nil: the length of a table with a
// hole is any of its borders (the manual lets Lua 5.1 and gopher-lua
// pick differently), and unpack and table.concat default to it.
func (g *lua51Gen) elems(d int) string {
	e := func() string { return "(" + g.expr(d) + " or z)" }
	return e() + ", " + e() + ", " + e()
}

// libmExpr is a call of a function whose result can differ from glibc's
// in the last bits (libmCall), on arguments computed exactly, and only
// ever at the top of a statement: a last-bit difference fed to % or
// fmod could grow to any size.
func (g *lua51Gen) libmExpr() string {
	e := func() string { return g.expr(2) }
	if g.r.IntN(3) == 0 {
		return e() + " ^ " + e()
	}
	if g.r.IntN(4) == 0 {
		return "math." + g.pick("pow", "atan2") + "(" + e() + ", " + e() + ")"
	}
	return "math." + g.pick("exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan") + "(" + e() + ")"
}

// tableStmt changes a small table with the table library and prints it
// index by index (no # of a table with holes: the manual lets the border
// differ).
func (g *lua51Gen) tableStmt() string {
	t := "local t = {" + g.pick("1, 2, 3", `"a", "b", "c", "d"`, "", "10", `3, 1, 2, 5, 4`, `"10", 9, "8"`, `"b", "a", "c", "B"`) + "}; "
	var op string
	switch g.r.IntN(6) {
	case 0:
		// one value: table.insert(t, string.gsub(...)) would insert at
		// the position gsub's string makes, 1e15 as a C int, and Lua
		// 5.1 would move a billion keys
		op = "table.insert(t, (" + g.expr(1) + "))"
	case 1:
		op = "table.insert(t, " + g.small() + ", " + g.expr(1) + ")"
	case 2:
		op = "print(table.remove(t" + g.pick("", ", "+g.small()) + "))"
	case 3:
		op = "table.sort(t" + g.pick("", ", nil", ", function(a, b) return a > b end", ", function(a, b) return tostring(a) < tostring(b) end") + ")"
	case 4:
		op = "print(table.maxn(t), table.getn(t), #t)"
	default:
		op = "table.insert(t, " + g.small() + ", " + g.expr(1) + ", " + g.expr(1) + ")"
	}
	return t + op + "; local r = {} for i = -1, 7 do r[#r + 1] = tostring(t[i]) end return table.concat(r, \" \")"
}

// program is n statements, each printing what it computed.
func (g *lua51Gen) program(n int) string {
	var b strings.Builder
	b.WriteString(lua51DiffPrelude + "\n")
	for i := range n {
		var stmt string
		switch g.r.IntN(10) {
		case 0, 1:
			stmt = fmt.Sprintf("show(pcall(function() %s end))", g.tableStmt())
		case 2:
			stmt = fmt.Sprintf("show(pcall(function() return %s end))", g.libmExpr())
		default:
			stmt = fmt.Sprintf("show(pcall(function() return %s end))", g.expr(3))
		}
		// a marker line before each statement's output: its line, and
		// "~" when it calls libm (libmMarker)
		mark := ""
		if libmCall.MatchString(stmt) {
			mark = libmMarker
		}
		fmt.Fprintf(&b, "print('@%d%s') %s\n", i+2, mark, stmt)
	}
	return b.String()
}
