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
		{"ibcacheedit orig", `diag.ibcacheedit{orig = %q, new = "new.cache"}`, nil},
		{"ibcacheedit new", `diag.ibcacheedit{orig = "../../topo/ibndcache/testdata/mixed-router.cache", new = %q .. ".cache"}`, nil},
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

// TestRunFilesOutOfReach: a plan cannot overwrite the run's --audit and
// --record files (fabric.save(f, "audit.log") erased the audit trail and
// broke the recording), nor the report stdout is redirected to, not even
// through a hard link or with --allow-files; a dangling symbolic link in
// an allowed directory does not lead out of it (it created a file
// outside every allowed path), and no file is written through a link.
func TestRunFilesOutOfReach(t *testing.T) {
	cache, err := os.ReadFile("../../topo/ibndcache/testdata/mixed-router.cache")
	if err != nil {
		t.Fatal(err)
	}
	work, outside := t.TempDir(), t.TempDir()
	t.Chdir(work)
	if err := os.WriteFile("orig.cache", cache, 0o644); err != nil {
		t.Fatal(err)
	}
	audit, rec := filepath.Join(work, "audit.log"), filepath.Join(work, "run.jsonl")
	if err := os.WriteFile(audit, []byte("ibscript: audit: an earlier Set\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(outside, "escaped")
	if err := os.Symlink(escape, filepath.Join(work, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(work, "dangling"), filepath.Join(work, "chain")); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(work, "mine.topo")
	if err := os.WriteFile(mine, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mine, filepath.Join(work, "tomine")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(audit, filepath.Join(work, "hardlink")); err != nil {
		t.Fatal(err)
	}
	common := []string{"--fabric", "sim:", "--audit", audit, "--record", rec}
	for _, c := range []struct {
		name, path string
		extra      []string
		want       string
	}{
		{"audit", "audit.log", nil, "the run's --audit file"},
		{"audit absolute", audit, nil, "the run's --audit file"},
		{"audit with --allow-files", audit, []string{"--allow-files"}, "the run's --audit file"},
		{"audit through ..", "../" + filepath.Base(work) + "/audit.log", nil, "the run's --audit file"},
		{"hard link to the audit", "hardlink", nil, "the run's --audit file"},
		{"record", "run.jsonl", nil, "the run's --record file"},
		{"dangling link", "dangling", nil, "outside the paths this run may use"},
		{"chain to a dangling link", "chain", nil, "outside the paths this run may use"},
		{"link to an allowed file", "tomine", nil, "through a symbolic link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// fabric.save, and diag.ibcacheedit's new cache file.
			for _, chunk := range []string{`fabric.save(fabric.discover(), "` + c.path + `")`, `diag.ibcacheedit{orig = "orig.cache", new = "` + c.path + `"}`} {
				args := append(append(append([]string{}, common...), c.extra...), "-e", chunk)
				code, _, errOut := ibscript(t, args...)
				if code != exitError || !strings.Contains(errOut, c.want) {
					t.Errorf("%s: exit %d, stderr %q; want 2 and %q", chunk, code, errOut, c.want)
				}
			}
		})
	}
	if b, err := os.ReadFile(audit); err != nil || !strings.HasPrefix(string(b), "ibscript: audit: an earlier Set\n") {
		t.Errorf("the audit file changed: %q, %v", b, err)
	}
	if _, err := os.Lstat(escape); err == nil {
		t.Errorf("a file was created outside the allowed paths through a dangling link")
	}
	if b, _ := os.ReadFile(mine); string(b) != "x" {
		t.Errorf("a file was written through a symbolic link")
	}
	// The report's file (stdout redirected to it) is the run's too.
	report := filepath.Join(work, "report.txt")
	f, err := os.Create(report)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	code := run([]string{"--fabric", "sim:", "-e", `plan.check("x", function(r) r:pass("ok") end) fabric.save(fabric.discover(), "report.txt")`}, strings.NewReader(""), f, &stderr)
	f.Close()
	if code != exitError || !strings.Contains(stderr.String(), "the run's report (stdout) file") {
		t.Errorf("writing the report's own file: exit %d, stderr %q", code, stderr.String())
	}
	// What a plan may write, it still may: a new file, then over it.
	for range 2 {
		if code, _, errOut := ibscript(t, "--fabric", "sim:", "-e", `fabric.save(fabric.discover(), "new.topo")`); code != 0 {
			t.Errorf("save a new file: exit %d, %s", code, errOut)
		}
	}
}
