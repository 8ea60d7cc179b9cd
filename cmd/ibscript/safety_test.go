package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
)

func TestSecretLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"plain", "smp.portinfo(1)", false},
		{"m_key field", "pi.m_key = 0x1234", true},
		{"mkey option", `smp.set("lid:1", {MKey = 0xdead})`, true},
		{"sm key", "si.sm_key", true},
		{"env name", `os.getenv("IBSCRIPT_MKEY")`, true},
		{"cc key", `ki.cc_key`, true},
		{"cc key env", `os.getenv("IBSCRIPT_CCKEY")`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := secretLine(tc.src); got != tc.want {
				t.Errorf("secretLine(%q) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

// TestMKeyNeverPrinted: a bad key in the environment or a flag is an
// error that does not show it; a good one is used silently.
func TestMKeyNeverPrinted(t *testing.T) {
	t.Setenv("IBSCRIPT_MKEY", "0xsecretvalue")
	code, out, errOut := ibscript(t, "--fabric", "sim:", "-e", "print(1)")
	if code != 2 || strings.Contains(out+errOut, "secretvalue") || !strings.Contains(errOut, "IBSCRIPT_MKEY") {
		t.Errorf("bad key: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = ibscript(t, "--fabric", "sim:", "--mkey", "12345zz", "-e", "print(1)")
	if code != 2 || strings.Contains(out+errOut, "12345zz") {
		t.Errorf("bad --mkey: exit %d, %q %q", code, out, errOut)
	}
	t.Setenv("IBSCRIPT_MKEY", "0x1122334455667788")
	code, out, errOut = ibscript(t, "--fabric", "sim:", "-e", "print(smp.portinfo('lid:1').lid)")
	if code != 0 || strings.Contains(strings.ToLower(out+errOut), "1122334455667788") {
		t.Errorf("good key: exit %d, %q %q", code, out, errOut)
	}
}

// TestAuditFile: with --audit, every Set is a line in the file (on the
// simulator, which never refuses Sets).
func TestAuditFile(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.log")
	code, _, errOut := ibscript(t, "--fabric", "sim:", "--audit", audit, "-e", "perf.reset('lid:1', 1)")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, "ibscript: audit:") || !strings.Contains(s, "target=lid:1") || !strings.Contains(s, "PortCounters") {
		t.Errorf("audit log %q", s)
	}
}

// TestUMADSetGate: on the kernel backend (the fake kernel), a Set is
// refused without --allow-set, also through --record; with --allow-set
// and --audit it goes out and is audited.
func TestUMADSetGate(t *testing.T) {
	dir := t.TempDir()
	h := umadHost()
	var stderr bytes.Buffer
	c := &config{fabricURI: "umad:", timeout: 10 * time.Millisecond, retries: -1, record: filepath.Join(dir, "rec.jsonl")}
	b, err := openFake(t.Context(), c, &stderr, h)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Session().Perf(t.Context(), engine.LID(1), mad.MethodSet, perf.AttrPortCounters, 1, []byte{0, 1, 0xff, 0xff})
	b.Close()
	if !errors.Is(err, engine.ErrSetRefused) {
		t.Errorf("Set without --allow-set: %v", err)
	}
	c.allowSet, c.audit, c.record = true, filepath.Join(dir, "audit.log"), ""
	b, err = openFake(t.Context(), c, &stderr, h)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Session().Perf(t.Context(), engine.LID(1), mad.MethodSet, perf.AttrPortCounters, 1, []byte{0, 1, 0xff, 0xff})
	b.Close()
	if errors.Is(err, engine.ErrSetRefused) {
		t.Errorf("Set with --allow-set refused: %v", err)
	}
	log, err := os.ReadFile(c.audit)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(log); strings.Count(s, "\n") != 1 || !strings.Contains(s, "target=lid:1") || !strings.Contains(s, "new=0001ffff") {
		t.Errorf("audit log %q", s)
	}
}

// TestMaxMADsFlag: reaching --max-mads ends the run with status 2 and one
// message naming the flag, whatever catches errors on the way (pcall, a
// plan's checks): never failed checks, a missing SM or a partial fabric.
func TestMaxMADsFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"loop", []string{"-e", "for i = 1, 100 do smp.nodeinfo(1) end"}},
		{"pcall discover", []string{"-e", "print(pcall(fabric.discover)) print(#fabric.discover().nodes)"}},
		{"pcall query", []string{"-e", "for i = 1, 200 do pcall(smp.nodeinfo, 1) end"}},
		{"plan", []string{"run", "../../scripts/validate.lua"}},
		{"plan json", []string{"run", "--format", "json", "../../scripts/validate.lua"}},
		{"check", []string{"-e", `plan.check("q", function(c) for i = 1, 200 do smp.nodeinfo(1) end c:pass("ok") end)`}},
		// The bundled fabric's discovery takes 250-300 MADs: the sweep
		// after it is what runs out.
		{"sweep", []string{"--max-mads", "400", "-e", `local f = fabric.discover() local ps = {}
			for _, n in ipairs(f.nodes) do for _, p in pairs(n.ports) do ps[#ps + 1] = p end end
			print(pcall(fabric.sweep, "portinfo", ps))`}},
		{"discover", []string{"discover"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := ibscript(t, append([]string{"--fabric", "sim:", "--max-mads", "40"}, tc.args...)...)
			if code != 2 || strings.Count(errOut, "--max-mads") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one message naming --max-mads", code, errOut)
			}
			if strings.Contains(out, "not ok") || strings.Contains(out, `"fail"`) || strings.Contains(out, "MASTER") {
				t.Errorf("failed checks reported:\n%s", out)
			}
		})
	}
}

// TestExporterResetGate: --reset-saturated is refused at start on the
// kernel backend (the fake kernel) without --allow-set, accepted with it,
// and on the simulators; without the flag nothing is refused.
func TestExporterResetGate(t *testing.T) {
	h := umadHost()
	for _, tc := range []struct {
		reset, allow bool
		refused      bool
	}{{true, false, true}, {true, true, false}, {false, false, false}} {
		var stderr bytes.Buffer
		c := &config{fabricURI: "umad:", timeout: 10 * time.Millisecond, retries: -1, allowSet: tc.allow}
		c.exporter.resetSaturated = tc.reset
		b, err := openFake(t.Context(), c, &stderr, h)
		if err != nil {
			t.Fatal(err)
		}
		err = resetGate(c, b)
		b.Close()
		if (err != nil) != tc.refused || (err != nil && !strings.Contains(err.Error(), "--reset-saturated sends PortCounters Sets, refused on a production fabric without --allow-set")) {
			t.Errorf("reset %v allow-set %v: %v, refused want %v", tc.reset, tc.allow, err, tc.refused)
		}
	}
	// The simulator: accepted, and a run with it succeeds.
	dir := t.TempDir()
	code, _, errOut := ibscript(t, "exporter", "--fabric", "sim:", "--reset-saturated", "--once", "--output", filepath.Join(dir, "ib.prom"), "--audit", filepath.Join(dir, "audit.log"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ib.prom"))
	if err != nil || !strings.Contains(string(b), "infiniband_exporter_saturated_resets{collector=\"switch\"} 0") {
		t.Errorf("%v: no saturated_resets 0 in\n%s", err, b)
	}
}
