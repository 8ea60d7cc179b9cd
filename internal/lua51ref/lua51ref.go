// Package lua51ref runs programs under Debian's lua5.1, the reference
// interpreter ibscript's Lua follows (docs/lua.md), for the tests that
// compare ibscript's error messages with Lua 5.1's: the cases of
// tests/lua51err/*.txt, each a program and the first line lua5.1 prints
// on stderr for it.
package lua51ref

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Case is one program of a cases file and the message Lua 5.1 gives for
// it when run as file.lua.
type Case struct {
	Name string
	Prog string
	Want string
}

// FileName is the name the cases' programs run under, and their messages
// start with.
const FileName = "file.lua"

// ReadCases reads a cases file: "== name", the program's lines, and
// "-> message"; '#' lines and blank lines between cases are comments.
func ReadCases(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cases []Case
	var cur *Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "== "):
			if cur != nil {
				return nil, fmt.Errorf("%s:%d: case %q has no '->' line", path, n, cur.Name)
			}
			cur = &Case{Name: line[3:]}
		case strings.HasPrefix(line, "-> "):
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: '->' outside a case", path, n)
			}
			cur.Want = line[3:]
			cases = append(cases, *cur)
			cur = nil
		case cur != nil:
			cur.Prog += line + "\n"
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			return nil, fmt.Errorf("%s:%d: text outside a case", path, n)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: case %q has no '->' line", path, cur.Name)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s: no cases", path)
	}
	return cases, sc.Err()
}

// Binary is the path of lua5.1, or skips tb when it is not installed
// (IBSCRIPT_TEST_LUA51=1, which .ci/run sets, makes that a failure).
func Binary(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("lua5.1")
	if err != nil {
		if os.Getenv("IBSCRIPT_TEST_LUA51") == "1" {
			tb.Fatal("lua5.1 not found and IBSCRIPT_TEST_LUA51=1")
		}
		tb.Skip("lua5.1 (Debian package lua5.1) not installed")
	}
	return p
}

// Rename gives msg, a message of a program run as file.lua, the chunk
// name chunk ("(command line)", "stdin") instead.
func Rename(msg, chunk string) string {
	if rest, ok := strings.CutPrefix(msg, FileName+":"); ok {
		return chunk + ":" + rest
	}
	return msg
}

// Message runs prog under lua5.1, as file.lua in dir (asFile) or as -e's
// chunk, and returns the first line it prints on stderr without the
// "lua5.1: " prefix; an error when it printed nothing there.
func Message(ctx context.Context, bin, dir, prog string, asFile bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if asFile {
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(prog), 0o644); err != nil {
			return "", err
		}
		cmd = exec.CommandContext(ctx, bin, FileName)
	} else {
		cmd = exec.CommandContext(ctx, bin, "-e", prog)
	}
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	line, _, _ := strings.Cut(stderr.String(), "\n")
	if line == "" {
		return "", fmt.Errorf("lua5.1 printed no error (%v)", err)
	}
	line = strings.TrimPrefix(line, bin+": ")
	return strings.TrimPrefix(line, "lua5.1: "), nil
}
