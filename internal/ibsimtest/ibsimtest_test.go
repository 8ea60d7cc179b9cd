package ibsimtest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestProcStop: stop ends a child that exits on the signal, kills one
// that ignores it after the grace period, and is a no-op once the child
// is gone; in every case the goroutine waiting for the child ends
// (goleak, TestMain).
func TestProcStop(t *testing.T) {
	t.Run("exits on SIGTERM", func(t *testing.T) {
		p, err := startProc(exec.Command("sleep", "60"))
		if err != nil {
			t.Skipf("no sleep: %v", err)
		}
		if !p.alive() {
			t.Fatal("not alive after start")
		}
		p.stop(syscall.SIGTERM, time.Minute)
		var ee *exec.ExitError
		if p.alive() || !errors.As(p.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("after stop: alive %v, err %v; want ended by SIGTERM", p.alive(), p.err)
		}
		p.stop(syscall.SIGTERM, time.Minute) // gone: returns at once
	})
	t.Run("ignores SIGTERM", func(t *testing.T) {
		// The shell ignores SIGTERM and blocks reading a pipe nobody
		// writes; only SIGKILL ends it.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		cmd := exec.Command("sh", "-c", `trap "" TERM; echo ready; read x`)
		cmd.Stdin = r
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		p, err := startProc(cmd)
		if err != nil {
			t.Skipf("no sh: %v", err)
		}
		ready := make([]byte, 6)
		if _, err := out.Read(ready); err != nil || string(ready) != "ready\n" {
			t.Fatalf("child said %q, %v", ready, err) // the trap is set
		}
		p.stop(syscall.SIGTERM, 50*time.Millisecond)
		var ee *exec.ExitError
		if p.alive() || !errors.As(p.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("after stop: alive %v, err %v; want killed", p.alive(), p.err)
		}
	})
}

// TestStartStop brings ibsim up without an SM on a small fabric, reads
// its port states through the console, and stops it: nothing is left
// running, and a second Stop is harmless.
func TestStartStop(t *testing.T) {
	Require(t)
	s, err := Start(t.Context(), t.TempDir(), "../../tests/topologies/net.2sw2path4hca", &Options{NoSM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !s.Alive() {
		t.Fatal("ibsim not alive after Start")
	}
	st, err := s.PortStates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st["Init"] == 0 || st["Armed"] != 0 {
		t.Errorf("port states %v: want cabled ports in Init (no SM brought them up)", st)
	}
	s.Stop()
	if s.Alive() {
		t.Error("ibsim alive after Stop")
	}
	s.Stop()
}
