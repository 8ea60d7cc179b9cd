package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadIBDiagConfig: a configuration file read as
// read_ibdiag_config reads it: '#' lines and blank lines skipped, each
// name a prefix (strncmp), leading '='s skipped (strtok), the value the
// rest of the line, a line without a value passed over (where the C
// tools crash on strtoul(NULL)), lines in fgets' 1023-byte pieces.
func TestReadIBDiagConfig(t *testing.T) {
	long := "#" + strings.Repeat("x", 1022) + "timeout=7\n" // the piece after 1023 bytes is a line of its own
	in := "# Define different defaults\n\n#CA=mlx4_0\nCA=mlx5_0\nPort=2\ntimeout_ms=50\n=m_key=0x10\nsa_key=0x20\nMLX_EPI=false\nnd_format=x\ntimeout=\nPortx\n" + long
	got, err := readIBDiagConfig(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []OptionValue{{optCA, "mlx5_0"}, {optPort, "2"}, {optTimeout, "50"}, {optMKey, "0x10"}, {"smkey", "0x20"}, {optTimeout, "7"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestIBDiagConfig: ibdiag.conf is read before the command line and a
// -z file where it stands, the last setting winning, as the C tools'
// ibdiag_process_opts reads them: "smpquery -z F -C ibsim0" queries and
// "smpquery -C ibsim0 -z F" fails to open F's CA on ibsim (where the C
// tool crashes freeing argv's string); a -z file that cannot be read is
// a warning; the tools that take no -z (the scripts) read no file.
func TestIBDiagConfig(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "ibdiag.conf")
	if err := os.WriteFile(def, []byte("timeout=11\nPort=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bogus := filepath.Join(dir, "bogus.conf")
	if err := os.WriteFile(bogus, []byte("CA=bogus\nm_key=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := ibdiagConfig
	ibdiagConfig = def
	t.Cleanup(func() { ibdiagConfig = old })

	vals := func(tool string, argv ...string) map[string][]string {
		t.Helper()
		inv := &Invocation{Tool: tools[tool], Stderr: &strings.Builder{}}
		var err error
		inv.vals, _, inv.order, err = parseToolArgsOrdered(inv.Tool, argv)
		if err != nil {
			t.Fatal(err)
		}
		inv.applyConfig()
		return inv.vals
	}
	for _, c := range []struct {
		argv []string
		want map[string]string
	}{
		{nil, map[string]string{optTimeout: "11", optPort: "3"}},
		{[]string{"-t", "20"}, map[string]string{optTimeout: "20", optPort: "3"}},
		{[]string{"-y", "7", "-z", bogus}, map[string]string{optTimeout: "11", optPort: "3", optCA: "bogus", optMKey: "5"}},
		{[]string{"-z", bogus, "-y", "7", "-C", "x"}, map[string]string{optTimeout: "11", optPort: "3", optCA: "x", optMKey: "7"}},
	} {
		got := vals("smpquery", append(c.argv, "nodeinfo", "1")...)
		for k, v := range c.want {
			if !slices.Equal(got[k], []string{v}) {
				t.Errorf("%q: %s is %q, want %q", c.argv, k, got[k], v)
			}
		}
	}
	if got := vals("ibhosts"); got[optTimeout] != nil || got[optPort] != nil {
		t.Errorf("ibhosts read ibdiag.conf: %q", got)
	}

	ibdiagConfig = filepath.Join(dir, "none") // no default file: nothing said
	for _, c := range []struct {
		argv         []string
		code         int
		out, errPart string
	}{
		{[]string{"-z", bogus, "-C", "node001"}, exitOK, "# Node info: Lid 1\n", ""},
		{[]string{"-C", "node001", "-z", bogus}, exitIBExit, "smpquery: iberror: failed: Failed to open 'bogus' port '0'\n", `-C "bogus"`},
		{[]string{"-z", filepath.Join(dir, "missing")}, exitOK, "# Node info: Lid 1\n", "missing: no such file or directory; its settings are not used"},
	} {
		argv := append([]string{"smpquery", "--fabric", "sim:", "--quiet"}, c.argv...)
		code, out, errOut := ibscript(t, append(argv, "nodeinfo", "1")...)
		if code != c.code || !strings.HasPrefix(out, c.out) || !strings.Contains(errOut, c.errPart) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q..., stderr with %q", argv, code, out, errOut, c.code, c.out, c.errPart)
		}
	}
}
