//go:build linux

package rdmacm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/native/rdmacm"
)

// TestDevWaitOnFIFO drives the device's Wait (poll through the runtime
// poller) on a FIFO standing in for the rdma_cm fd: readiness with and
// without a ctx already ended, a timeout, and no deadline left over from
// one Wait failing the next.
func TestDevWaitOnFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rdma_cm")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ch, err := rdmacm.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := ch.Wait(done); !errors.Is(err, context.Canceled) {
		t.Errorf("zero-wait poll of an empty fd: %v", err)
	}
	for range 20 {
		short, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		err := ch.Wait(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait on an empty fd: %v", err)
		}
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel2 := context.WithTimeout(t.Context(), time.Second)
	defer cancel2()
	if err := ch.Wait(ctx); err != nil {
		t.Errorf("Wait on a readable fd after timed-out Waits: %v", err)
	}
	if err := ch.Wait(done); err != nil {
		t.Errorf("zero-wait poll of a readable fd: %v", err)
	}
}
