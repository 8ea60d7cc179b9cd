package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/internal/keytest"
)

// Keys planted in the simulated fabric for the key hunt: the ports' M_Key
// (PortInfo), the SM's SM_Key (SMInfo, the SA), every CC agent's CC_Key;
// every byte non-zero and many digits, so no output holds one by chance.
const (
	huntMKey  uint64 = 0x1122334455667788
	huntSMKey uint64 = 0x5ec7e75ec7e75ec7
	huntCCKey uint64 = 0xcc6e75ec7e75ec71
)

// keyTools are the tool runs that reach a key, beyond every tool's
// registered example: raw dumps of SMInfo (SM_Key at bytes 8-15) and
// PortInfo (M_Key at 0-7), directed-route too, decoded PortInfo and
// SMInfo, the SA's records that embed them, CongestionKeyInfo.
var keyTools = [][]string{
	{"smpdump", "1", "0x20"},
	{"smpdump", "1", "0x15", "1"},
	{"smpdump", "-D", "0", "0x15"},
	{"smpdump", "-D", "0", "0x20"},
	{"smpdump", "-s", "1", "0x20"},
	{"smpquery", "portinfo", "1", "1"},
	{"smpquery", "sminfo", "1"},
	{"smpquery", "-D", "portinfo", "0", "1"},
	{"sminfo"},
	{"sminfo", "-v"},
	{"saquery", "SMIR"},
	{"saquery", "PIR"},
	{"saquery", "-p"},
	{"ibccquery", "CongestionKeyInfo", "1"},
	{"ibccquery", "CongestionKeyInfo", "2"},
	{"ibportstate", "1", "1"},
	{"perfquery", "1", "1"},
}

// TestNoKeyInAnyOutput plants an M_Key, an SM_Key and a CC_Key in the
// simulated fabric (the sim backend takes the run's keys as the keys its
// SM configured: --mkey and $IBSCRIPT_MKEY, --smkey, --cckey), so every
// answer that can carry one does, then runs every tool (its registered
// example and the runs above, as text and as JSON), every Lua function's
// example, the REPL on lines that echo keyed values, the exporter's
// metrics and validate.lua, all
// recording, auditing and at debug level, and looks for each key in
// every encoding (internal/keytest: hex in both cases with or without 0x,
// byte-spaced and in smpdump's pairs, decimal, float, raw, base64) in
// stdout, stderr, the recording, the audit file and the report.
func TestNoKeyInAnyOutput(t *testing.T) {
	tests, err := filepath.Abs("../../tests")
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Abs("../../scripts")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.Symlink(tests, filepath.Join(work, "tests")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("IBSCRIPT_MKEY", fmt.Sprintf("%#x", huntMKey))
	t.Setenv("IBSCRIPT_SMKEY", fmt.Sprintf("%#x", huntSMKey))
	t.Setenv("IBSCRIPT_CCKEY", fmt.Sprintf("%#x", huntCCKey))
	rec, audit := filepath.Join(work, "r.jsonl"), filepath.Join(work, "audit.log")
	check := func(what string, out []byte) {
		t.Helper()
		for _, k := range []uint64{huntMKey, huntSMKey, huntCCKey} {
			if enc, at, ok := keytest.Find(out, k); ok {
				t.Errorf("%s holds key %#x (%s) at byte %d: %.80q", what, k, enc, at, out[max(0, at-40):])
			}
		}
	}
	files := func(what string) {
		t.Helper()
		for _, p := range []string{rec, audit} {
			b, err := os.ReadFile(p)
			if err != nil && !os.IsNotExist(err) {
				t.Fatalf("%s: %v", what, err)
			}
			check(what+": "+filepath.Base(p), b)
			os.Remove(p)
		}
	}
	common := []string{"--fabric", "sim:", "--record", rec, "--audit", audit}

	// Every tool: its example and the key-carrying runs, text and JSON.
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	var runs [][]string
	for _, n := range names {
		runs = append(runs, append([]string{n}, tools[n].Example...))
	}
	runs = append(runs, keyTools...)
	for _, r := range runs {
		for _, format := range []string{"text", "json"} {
			args := append(append(slices.Clone(r[:1]), append(common, "-d", "--format", format)...), r[1:]...)
			what := strings.Join(r, " ") + " (" + format + ")"
			_, out, errOut := ibscript(t, args...)
			check(what+": stdout", []byte(out))
			check(what+": stderr", []byte(errOut))
			files(what)
		}
	}

	// Every Lua function's example, each in a pcall, in one run.
	var src strings.Builder
	ex := bindings.Examples()
	keys := make([]string, 0, len(ex))
	for k := range ex {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&src, "print(%q, pcall(assert(loadstring(%q, %q))))\n", k, ex[k], k)
	}
	// Raw bytes of every keyed class, through umad.recv and mad.send.
	src.WriteString(`
local port = umad.open_port()
local agents = {}
for _, class in ipairs({0x01, 0x03, 0x21}) do agents[class] = umad.register_agent(port, class, class == 0x01 and 1 or 2) end
local function get(class, attr, mod, extra)
  local h = string.char(1, class, class == 0x01 and 1 or 2, 1) .. string.rep("\0", 11)
    .. string.char(9, math.floor(attr / 256), attr % 256) .. string.char(0, 0, 0, mod)
  return h .. string.rep("\0", 256 - #h)
end
for _, m in ipairs({{0x01, 0x15, 1}, {0x01, 0x20, 0}, {0x21, 0x12, 0}, {0x21, 0x11, 0}, {0x03, 0x20, 0}, {0x03, 0x12, 0}}) do
  umad.send(port, agents[m[1]], get(m[1], m[2], m[3]), 200, 2, {lid = 1})
  local resp, _, status = umad.recv(port, 1000)
  print(status, resp, resp and mad.decode(resp).data)
end
port:close()
for _, a in ipairs({{"PortInfo", 1}, {"SMInfo", 0}}) do
  local resp = mad.send(mad.new(a[1], {target = "lid:1", modifier = a[2]}))
  print(resp.data, mad.show(resp))
end
print(diag.smpdump{target = 1, attr = 0x20}.data, diag.smpdump{target = "dr:0", attr = 0x15, mod = 1}.data)
print("hunt done")
`)
	lua := filepath.Join(work, "hunt.lua")
	if err := os.WriteFile(lua, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := ibscript(t, append([]string{"run"}, append(append(common, "--debug"), lua)...)...)
	check("examples: stdout", []byte(out))
	check("examples: stderr", []byte(errOut))
	files("examples")
	if !strings.Contains(out, "hunt done") {
		t.Errorf("the examples did not run:\n%s", errOut)
	}

	// The REPL's echo of values that carry keys.
	var stdout, stderr bytes.Buffer
	repl := "diag.smpdump{target = 1, attr = 0x20}\nsmp.sminfo('lid:1')\nsmp.portinfo('lid:1', 1)\nmad.send(mad.new('SMInfo', {target = 'lid:1'}))\ndiag.sminfo{}\n"
	run(common, strings.NewReader(repl), &stdout, &stderr)
	check("REPL stdout", stdout.Bytes())
	check("REPL stderr", stderr.Bytes())
	files("REPL")

	// The exporter's metrics.
	metrics := filepath.Join(work, "metrics.prom")
	_, out, errOut = ibscript(t, "exporter", "--fabric", "sim:", "--once", "--output", metrics, "--collector.hca")
	check("exporter stdout", []byte(out))
	check("exporter stderr", []byte(errOut))
	if b, err := os.ReadFile(metrics); err != nil || len(b) == 0 {
		t.Errorf("exporter --once wrote no metrics: %v", err)
	} else {
		check("exporter metrics", b)
	}

	// A plan's report, as JSON.
	_, out, errOut = ibscript(t, append(append([]string{"run"}, common...), "--format", "json", filepath.Join(scripts, "validate.lua"))...)
	check("validate.lua report", []byte(out))
	check("validate.lua stderr", []byte(errOut))
	files("validate.lua")
}
