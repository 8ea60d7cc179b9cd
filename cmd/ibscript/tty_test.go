package main

import (
	"bytes"
	"os"
	"testing"
)

// TestNullIsNoTerminal: /dev/null is a character device but no
// terminal: "ibscript < /dev/null" reads it as a script on stdin (no
// banner, no prompt, status 0), and output to it gets no colours, as
// isatty(3) tells; a file and a pipe are no terminal either. (The REPL
// on a pseudo-terminal: TestREPLOnATerminal.)
func TestNullIsNoTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, f := range []*os.File{null, r, w} {
		if isTerminal(f) {
			t.Errorf("%s is a terminal", f.Name())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--fabric", "sim:"}, null, &stdout, &stderr); code != exitOK || stdout.Len() != 0 {
		t.Errorf("ibscript < %s: exit %d, stdout %q, stderr %q; want 0 and nothing", os.DevNull, code, stdout.String(), stderr.String())
	}
}
