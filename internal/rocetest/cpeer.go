package rocetest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// CPeer is a running tests/kernelvm/cpeer.c (librdmacm playing one side
// of a connection) and the lines it prints, without their "cpeer: "
// prefix and without "pdlen N": librdmacm's private_data_len is the
// whole buffer the kernel hands over (56 in a REQ after the IP CM header,
// 196 in a REP, 148 in a REJ), kept in the log and compared without.
type CPeer struct {
	t     testing.TB
	lines chan string
	mu    sync.Mutex
	all   []string
	done  chan error
}

// CPeerPath is cpeer on $PATH (the guest's /bin/cpeer): a failure under
// IBSCRIPT_TEST_HW=1 when it is missing, else a skip.
func CPeerPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("cpeer")
	if err != nil {
		if os.Getenv("IBSCRIPT_TEST_HW") == "1" {
			t.Fatalf("IBSCRIPT_TEST_HW=1: no librdmacm peer: %v", err)
		}
		t.Skipf("no librdmacm peer (tests/kernelvm/cpeer.c): %v", err)
	}
	return p
}

// StartCPeer runs cpeer with args; the test's cleanup ends it and logs
// everything it printed.
func StartCPeer(t testing.TB, path string, args ...string) *CPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := exec.CommandContext(ctx, path, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start cpeer: %v", err)
	}
	p := &CPeer{t: t, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			l := strings.TrimPrefix(sc.Text(), "cpeer: ")
			if i := strings.Index(l, " pdlen "); i >= 0 {
				rest := l[i+len(" pdlen "):]
				if j := strings.IndexByte(rest, ' '); j >= 0 {
					l = l[:i] + rest[j:]
				}
			}
			p.mu.Lock()
			p.all = append(p.all, sc.Text())
			p.mu.Unlock()
			p.lines <- l
		}
		close(p.lines)
		p.done <- cmd.Wait()
		cancel()
	}()
	t.Cleanup(func() {
		cancel()
		err := <-p.done
		p.done <- err
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Logf("librdmacm (cpeer %s):\n  %s", strings.Join(args, " "), strings.Join(p.all, "\n  "))
	})
	return p
}

// Expect reads cpeer's next lines and fails the test unless they are
// want, in order.
func (p *CPeer) Expect(want ...string) {
	p.t.Helper()
	for _, w := range want {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("librdmacm ended; want %q", w)
			}
			if l != w {
				p.t.Fatalf("librdmacm: %q, want %q", l, w)
			}
		case <-time.After(30 * time.Second):
			p.t.Fatalf("librdmacm: nothing within 30 s; want %q", w)
		}
	}
}

// Exit waits for "done" and cpeer's exit status 0, with nothing between.
func (p *CPeer) Exit() {
	p.t.Helper()
	p.Expect("done")
	for l := range p.lines {
		p.t.Errorf("librdmacm after done: %q", l)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			p.t.Fatalf("cpeer: %v", err)
		}
	case <-time.After(30 * time.Second):
		p.t.Fatal("cpeer did not exit")
	}
}
