package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDocExamples runs the examples of README.md, docs/*.md and the
// manual page as a new user would: every shell line that runs ibscript,
// from a directory that looks like the repository root (a copy of what
// the examples read, so files they write stay out of the repository), with
// an ibscript on PATH and in ./ibscript; every Lua block as a script; the
// README's REPL session through the REPL, output compared. An example
// that ends with status 2 (a run error), panics or prints a Go error fails.
// Lines that need what a test cannot have (a cluster, minutes) are listed
// in docSkips with the reason.
func TestDocExamples(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := docWorkdir(t, root)
	docs := []string{filepath.Join(root, "README.md")}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, more...)
	ran := 0
	for _, doc := range docs {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(doc, root+"/")
		for i, b := range fencedBlocks(string(raw)) {
			switch b.lang {
			case "sh":
				for _, line := range shellLines(b.text) {
					if why, skip := docSkip(line); skip {
						t.Logf("%s: skipped %q: %s", name, line, why)
						continue
					}
					ran++
					runDocLine(t, work, name, line)
				}
			case "lua":
				ran++
				file := filepath.Join(work, fmt.Sprintf("example-%s-%d.lua", strings.ReplaceAll(filepath.Base(name), ".", "_"), i))
				if err := os.WriteFile(file, []byte(b.text), 0o644); err != nil {
					t.Fatal(err)
				}
				runDocLine(t, work, name, "ibscript run --fabric sim: "+filepath.Base(file))
			}
		}
	}
	man, err := os.ReadFile(filepath.Join(root, "docs", "ibscript.1"))
	if err != nil {
		t.Fatal(err)
	}
	mans := manPageExamples(string(man))
	if len(mans) == 0 {
		t.Errorf("docs/ibscript.1 has no EXAMPLES")
	}
	for _, line := range mans {
		if why, skip := docSkip(line); skip {
			t.Logf("docs/ibscript.1: skipped %q: %s", line, why)
			continue
		}
		ran++
		runDocLine(t, work, "docs/ibscript.1", line)
	}
	if ran < 100 {
		t.Errorf("only %d examples ran", ran)
	}
	t.Logf("%d examples ran", ran)
}

// TestREADMESession replays the README's REPL session through the REPL
// and compares what it prints.
func TestREADMESession(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var session string
	for _, b := range fencedBlocks(string(raw)) {
		if b.lang == "" && strings.HasPrefix(b.text, "$ ibscript\n") {
			session = b.text
		}
	}
	if session == "" {
		t.Fatal("README.md has no REPL session")
	}
	var in, want strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(session, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "$ "), strings.HasPrefix(l, "ibscript"):
			// the command, and the banner and fallback note (stderr, or a
			// terminal's only)
		case strings.HasPrefix(l, ">> "):
			in.WriteString(l[3:] + "\n")
		case strings.HasPrefix(l, "> "):
			in.WriteString(l[2:] + "\n")
		default:
			want.WriteString(l + "\n")
		}
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"--fabric", "sim:"}, strings.NewReader(in.String()), &stdout, &stderr)
	if code != exitOK || stdout.String() != want.String() {
		t.Errorf("exit %d\ninput:\n%s\ngot:\n%s\nwant:\n%s\nstderr: %s", code, in.String(), stdout.String(), want.String(), stderr.String())
	}
}

// docSkips are the example lines a test does not run, by pattern, and
// why.
var docSkips = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`^go test\b`), "the tests themselves"},
	{regexp.MustCompile(`^go build \./cmd/ibscript$`), "the test provides ./ibscript"},
	{regexp.MustCompile(`^(pdsh|clush|srun)\b`), "needs a cluster"},
	{regexp.MustCompile(`^release/build|^PATH=/usr/lib/ibscript/bin`), "installs a package on the host (root): .ci/run builds, installs and runs the .deb"},
	{regexp.MustCompile(`^source <\(`), "bash's process substitution loads a completion into the interactive shell: TestCompletions runs it in bash"},
	{regexp.MustCompile(`/shared/reports/|SLURM_SUBMIT_DIR`), "reports of a cluster run"},
	{regexp.MustCompile(`ft16k\.net`), "a 16,050-node run: minutes of CPU on a shared machine; BenchmarkValidate16k measures it"},
	{regexp.MustCompile(`--arg interval=`), "waits for the interval between two counter sweeps"},
	{regexp.MustCompile(`^(\./)?ibscript exporter\b`), "a server that runs until stopped: TestExporterCommand starts and scrapes it"},
	{regexp.MustCompile(`^curl\b`), "asks a running exporter"},
	{regexp.MustCompile(`\bibsysstat -S\b`), "a server that runs until interrupted (backgrounded, it keeps sh's output open and the line never ends): diag's TestSysstatOnSimulator runs one"},
	{regexp.MustCompile(`\bsudo\b`), "installs the exporter on a host (root, systemd): TestSystemdUnit checks the unit and its command line"},
}

func docSkip(line string) (string, bool) {
	for _, s := range docSkips {
		if s.re.MatchString(line) {
			return s.why, true
		}
	}
	return "", false
}

// goError matches what a user must never see: a panic, a Go runtime
// message or a Lua traceback of ibscript's own Go frames.
var goError = regexp.MustCompile(`panic:|goroutine \d+ \[|runtime error|\[G\]:`)

func runDocLine(t *testing.T, work, doc, line string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(work, ".bin")+":"+os.Getenv("PATH"))
	cmd.Stdin = strings.NewReader("")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Errorf("%s: %q did not end within 2 minutes\n%s", doc, line, out.String())
		return
	}
	if (err != nil && code < 0) || code >= 2 || goError.MatchString(out.String()) {
		t.Errorf("%s: %q: exit %d (%v)\n%s", doc, line, code, err, out.String())
	}
}

// docWorkdir makes a directory that looks like the repository root: a
// copy of scripts/, docs/, tests/topologies and tests/testdata,
// ./ibscript and .bin/ibscript running this test binary as ibscript.
func docWorkdir(t *testing.T, root string) string {
	t.Helper()
	work := t.TempDir()
	// Copies, not links: a run may use files under its working directory,
	// and a link would lead out of it.
	for _, dir := range []string{"scripts", "tests/topologies", "tests/testdata", "docs"} {
		if err := os.CopyFS(filepath.Join(work, dir), os.DirFS(filepath.Join(root, dir))); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", replChildEnv, self)
	if err := os.MkdirAll(filepath.Join(work, ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(work, "ibscript"), filepath.Join(work, ".bin", "ibscript")} {
		if err := os.WriteFile(p, []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The README merges host*.json: two hosts' reports.
	for i, fab := range []string{"net.2sw2path4hca", "net.2sw2path4hca-degraded"} {
		var stdout bytes.Buffer
		run([]string{"run", "--fabric", "sim:" + root + "/tests/topologies/" + fab, "--format", "json", root + "/scripts/checks/links.lua", "--arg", "width=4X"}, strings.NewReader(""), &stdout, &bytes.Buffer{})
		rep := strings.Replace(stdout.String(), `"host": "`, fmt.Sprintf(`"host": "host%d-`, i+1), 1)
		if err := os.WriteFile(filepath.Join(work, fmt.Sprintf("host%d.json", i+1)), []byte(rep), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

type fenced struct{ lang, text string }

var fence = regexp.MustCompile("(?ms)^```(\\w*)\n(.*?)^```")

func fencedBlocks(md string) []fenced {
	var out []fenced
	for _, m := range fence.FindAllStringSubmatch(md, -1) {
		out = append(out, fenced{m[1], m[2]})
	}
	return out
}

// shellLines are the commands of a sh block that run ibscript: comment
// lines dropped, continuations joined, "go run ./cmd/ibscript" as
// "ibscript".
func shellLines(block string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(block, "\n") {
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.ReplaceAll(line, "go run ./cmd/ibscript", "ibscript")
		out = append(out, line)
	}
	return out
}

// manPageExamples are the commands of the manual page's EXAMPLES section
// (".TP" then ".B command"), unescaped from roff.
func manPageExamples(roff string) []string {
	i := strings.Index(roff, ".SH EXAMPLES\n")
	if i < 0 {
		return nil
	}
	sec := roff[i+len(".SH EXAMPLES\n"):]
	if j := strings.Index(sec, ".SH "); j >= 0 {
		sec = sec[:j]
	}
	var out []string
	lines := strings.Split(sec, "\n")
	for k, l := range lines {
		if l == ".TP" && k+1 < len(lines) && strings.HasPrefix(lines[k+1], ".B ") {
			cmd := strings.TrimPrefix(lines[k+1], ".B ")
			cmd = strings.ReplaceAll(strings.ReplaceAll(cmd, "\\&", ""), "\\e", "\\")
			out = append(out, cmd)
		}
	}
	return out
}
