package freeport

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
)

// TestRetryTakesAnotherPort: a port another process takes between Port
// and the server's bind (here the test itself, on the first try) is
// given up for a new one; the server runs on the second.
func TestRetryTakesAnotherPort(t *testing.T) {
	var ports []int
	var held net.Listener
	defer func() {
		if held != nil {
			held.Close()
		}
	}()
	var server net.Listener
	err := Retry(func(port int) error {
		ports = append(ports, port)
		if held == nil {
			var err error
			if held, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err != nil {
				t.Fatal(err)
			}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("server: %w", ErrInUse)
		}
		server = ln
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if len(ports) != 2 || ports[0] == ports[1] {
		t.Errorf("ports tried %v, want two different", ports)
	}
}

// TestRetryStops: an error other than ErrInUse ends Retry at once; a
// port always taken ends it after Tries ports, its error wrapping
// ErrInUse.
func TestRetryStops(t *testing.T) {
	other := errors.New("no such binary")
	n := 0
	if err := Retry(func(int) error { n++; return other }); !errors.Is(err, other) || n != 1 {
		t.Errorf("another error: %v after %d tries, want it after 1", err, n)
	}
	n = 0
	if err := Retry(func(int) error { n++; return ErrInUse }); !errors.Is(err, ErrInUse) || n != Tries {
		t.Errorf("always in use: %v after %d tries, want ErrInUse after %d", err, n, Tries)
	}
}

func TestInUse(t *testing.T) {
	for log, want := range map[string]bool{
		"ts=... err=\"listen tcp 127.0.0.1:4000: bind: address already in use\"":    true,
		"slurmctld: fatal: slurm_init_msg_engine_port error Address already in use": true,
		"slurmctld: fatal: No PartitionName information available!":                 false,
	} {
		if InUse(log) != want {
			t.Errorf("InUse(%q) = %v", log, !want)
		}
	}
}
