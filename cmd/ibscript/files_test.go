package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesOutsideNamedPaths: a script reads and writes files only under
// the paths the command line named (the working directory, here
// cmd/ibscript; the script's directory and arguments; --arg values;
// --allow-path), whatever Lua call it uses, and symbolic links do not
// lead out; --allow-path and --allow-files widen it.
func TestFilesOutsideNamedPaths(t *testing.T) {
	out := t.TempDir() // outside the working directory
	secret := filepath.Join(out, "secret")
	if err := os.WriteFile(secret, []byte("hunter2 opensesame\nroot:$6$saltsalt$hash:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(out, "inc.topo")
	if err := os.WriteFile(inc, []byte(`include "`+secret+`"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	allowed := t.TempDir()
	link := filepath.Join(allowed, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	sim := []string{"--fabric", "sim:"}
	for _, tc := range []struct {
		name, chunk string
		extra       []string
	}{
		{"dofile", `dofile(%q)`, nil},
		{"loadfile", `local f, err = loadfile(%q) error(err)`, nil},
		{"require", `package.path = %q .. "/?" require("secret")`, nil},
		{"fabric.load", `fabric.load(%q)`, nil},
		{"discover reference", `fabric.discover{reference = %q}`, nil},
		{"fabric.save", `fabric.save(fabric.discover(), %q .. ".new")`, nil},
		{"node_name_map", `fabric.save(fabric.discover(), "/dev/null", {format = "ibnetdiscover", node_name_map = %q})`, nil},
		{"plan.thresholds", `plan.thresholds(%q)`, nil},
		{"symlink", `dofile(%q)`, []string{"--allow-path", allowed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := secret
			switch tc.name {
			case "require":
				target = out
			case "symlink":
				target = link
			}
			args := append(append(append([]string{}, sim...), tc.extra...), "-e", strings.Replace(tc.chunk, "%q", `"`+target+`"`, 1))
			code, stdout, errOut := ibscript(t, args...)
			if code != exitError || !strings.Contains(errOut, "outside the paths this run may use") && !strings.Contains(errOut, "not allowed") {
				t.Errorf("exit %d, stderr %q; want 2 and a refusal", code, errOut)
			}
			if leaked(stdout + errOut) {
				t.Errorf("the file's content leaked: %q %q", stdout, errOut)
			}
		})
	}
	if b, err := os.ReadFile(secret + ".new"); err == nil {
		t.Errorf("fabric.save wrote outside the named paths (%d bytes)", len(b))
	}
	// An include in an allowed topology file is checked too.
	if code, _, errOut := ibscript(t, append(sim, "--allow-path", inc, "-e", `fabric.load("`+inc+`")`)...); code != exitError || !strings.Contains(errOut, "outside the paths") {
		t.Errorf("include of a file outside: exit %d, %q", code, errOut)
	}

	// Widened: the file is read, and its syntax error names its line
	// without its first token.
	for _, widen := range [][]string{{"--allow-path", out}, {"--allow-files"}, {"--arg", "x=" + secret}} {
		code, stdout, errOut := ibscript(t, append(append(append([]string{}, sim...), widen...), "-e", `dofile("`+secret+`")`)...)
		if code != exitError || !strings.Contains(errOut, secret+":1: not Lua source") {
			t.Errorf("%v: exit %d, stderr %q; want the syntax error at line 1", widen, code, errOut)
		}
		if leaked(stdout + errOut) {
			t.Errorf("%v: the file's content leaked: %q %q", widen, stdout, errOut)
		}
	}
	// Files the command line itself names show no line of theirs either
	// when they are not what they should be (ibscript run under sudo must
	// not print a line of /etc/shadow): the script, a node-name-map, a
	// threshold file the plan reads.
	for _, args := range [][]string{
		{"run", secret},
		{"--node-name-map", secret, "-e", "print(1)"},
		{"--allow-files", "-e", `plan.thresholds("` + secret + `")`},
		{"--allow-files", "-e", `fabric.save(fabric.discover(), "/dev/null", {format = "ibnetdiscover", node_name_map = "` + secret + `"})`},
	} {
		code, stdout, errOut := ibscript(t, append(append([]string{}, sim...), args...)...)
		if code != exitError || !strings.Contains(errOut, secret+":1") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s:1", args, code, errOut, secret)
		}
		if leaked(stdout + errOut) {
			t.Errorf("%v: the file's content leaked: %q %q", args, stdout, errOut)
		}
	}
	save := filepath.Join(out, "f.topo")
	if code, _, errOut := ibscript(t, append(sim, "--allow-path", out, "-e", `fabric.save(fabric.discover(), "`+save+`") print(#fabric.load("`+save+`").nodes)`)...); code != 0 {
		t.Errorf("save and load under --allow-path: exit %d, %s", code, errOut)
	}
}

// leaked reports whether output shows a word of the secret file.
func leaked(output string) bool {
	for _, w := range []string{"hunter2", "opensesame", "root", "saltsalt"} {
		if strings.Contains(output, w) {
			return true
		}
	}
	return false
}
