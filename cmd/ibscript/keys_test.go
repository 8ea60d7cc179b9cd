package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/keytest"
)

// FuzzNoKeyInOutput runs ibscript with an M_Key (--mkey), an SM_Key and a CC_Key in
// the environment, recording, auditing and logging at debug level, a
// chunk that prints everything a script can reach (discovery, decoded
// PortInfo and SMInfo, mad.send and mad.show, SA records, os.getenv, a
// Sets) and validate.lua's JSON report, and checks that no key
// appears, in any encoding, in stdout, stderr, the recording or the audit
// file.
func FuzzNoKeyInOutput(f *testing.F) {
	chunk, err := os.ReadFile("testdata/keys.lua")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint64(0x1122334455667788), uint64(0x5ec7e75ec7e75ec7), uint64(0xcc6e75ec7e75ec71))
	f.Add(uint64(0xdeadbeefcafef00d), uint64(0x8877665544332211), uint64(0x1357924680acebdf))
	f.Fuzz(func(t *testing.T, mkey, smkey, cckey uint64) {
		if !distinctive(mkey) || !distinctive(smkey) || !distinctive(cckey) {
			t.Skip("a key with a zero byte or few digits could occur in output by chance")
		}
		t.Setenv("IBSCRIPT_SMKEY", fmt.Sprintf("%#x", smkey))
		t.Setenv("IBSCRIPT_CCKEY", fmt.Sprintf("%#x", cckey))
		t.Setenv("IBSCRIPT_MKEY", fmt.Sprintf("%#x", mkey))
		dir := t.TempDir()
		rec, audit := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "audit.log")
		common := []string{"--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--mkey", fmt.Sprintf("%#x", mkey),
			"--record", rec, "--audit", audit, "--debug"}
		check := func(what string, out []byte) {
			t.Helper()
			for _, k := range []uint64{mkey, smkey, cckey} {
				if enc, at, ok := keytest.Find(out, k); ok {
					t.Errorf("%s holds key %#x (%s) at byte %d: %.60q", what, k, enc, at, out[max(0, at-30):])
				}
			}
		}
		files := func(run string) {
			t.Helper()
			for _, p := range []string{rec, audit} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("%s: %v", run, err)
				}
				check(run+": "+filepath.Base(p), b)
			}
			fi, err := os.Stat(rec)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: recording mode %v (%v), want 0600", run, fi.Mode(), err)
			}
		}
		code, out, errOut := ibscript(t, append(common, "-e", string(chunk))...)
		if code != 0 {
			t.Fatalf("chunk: exit %d: %s", code, errOut)
		}
		check("chunk stdout", []byte(out))
		check("chunk stderr", []byte(errOut))
		files("chunk")
		code, out, errOut = ibscript(t, append(common, "run", "--format", "json", "../../scripts/validate.lua")...)
		if code != 0 {
			t.Fatalf("validate.lua: exit %d: %s", code, errOut)
		}
		check("report", []byte(out))
		check("validate.lua stderr", []byte(errOut))
		files("validate.lua")
	})
}

// distinctive is a key whose every byte is non-zero and that has many
// decimal digits: no output holds it by chance.
func distinctive(k uint64) bool {
	for i := range 8 {
		if byte(k>>(8*i)) == 0 {
			return false
		}
	}
	return k > 1<<60
}

// TestKeyFlags: a malformed --mkey, --smkey or key variable is refused
// naming where it came from, never showing the value.
func TestKeyFlags(t *testing.T) {
	const bad = "0xnot-a-k3y-zzz"
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--mkey", bad}, "", "--mkey: not a 64-bit number"},
		{[]string{"--smkey", bad}, "", "--smkey: not a 64-bit number"},
		{nil, "IBSCRIPT_SMKEY", "IBSCRIPT_SMKEY: not a 64-bit number"},
		{nil, "IBSCRIPT_MKEY", "IBSCRIPT_MKEY: not a 64-bit number"},
		{[]string{"--cckey", bad}, "", "--cckey: not a 64-bit number"},
		{nil, "IBSCRIPT_CCKEY", "IBSCRIPT_CCKEY: not a 64-bit number"},
	} {
		if c.env != "" {
			t.Setenv(c.env, bad)
		}
		args := append([]string{"--fabric", "sim:../../tests/topologies/net.2sw2path4hca"}, c.args...)
		code, out, errOut := ibscript(t, append(args, "-e", "print(1)")...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Contains(out+errOut, "k3y") {
			t.Errorf("%v %s: exit %d, stdout %q, stderr %q; want %q without the value", c.args, c.env, code, out, errOut, c.want)
		}
		if c.env != "" {
			t.Setenv(c.env, "")
		}
	}
}
