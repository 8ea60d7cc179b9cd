package rdmacm_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/ibscript/ibscript/native/rdmacm"
)

// TestHardware runs CREATE_ID, MIGRATE_ID, GET_EVENT and DESTROY_ID on
// the host's rdma_cm device, which needs no RDMA device in the kernel. It
// skips without /dev/infiniband/rdma_cm (IBSCRIPT_TEST_HW=1 makes that a
// failure).
func TestHardware(t *testing.T) {
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("IBSCRIPT_TEST_HW") == "1" {
			t.Fatalf("IBSCRIPT_TEST_HW=1: "+format, args...)
		}
		t.Skipf(format, args...)
	}
	a, err := rdmacm.Open("")
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errors.ErrUnsupported):
		skip("no %s: %v", rdmacm.DevicePath, err)
	case errors.Is(err, fs.ErrPermission):
		skip("%s: %v", rdmacm.DevicePath, err)
	case err != nil:
		t.Fatal(err)
	}
	defer a.Close()
	if v, err := rdmacm.ReadABIVersion(os.DirFS("/")); err == nil && (v < rdmacm.MinABIVersion || v > rdmacm.ABIVersion) {
		t.Fatalf("rdma_cm ABI %d, want %d..%d", v, rdmacm.MinABIVersion, rdmacm.ABIVersion)
	}
	b, err := rdmacm.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id, err := a.CreateID(42, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := b.MigrateID(id, a); err != nil || n != 0 {
		t.Fatalf("migrate: %d %v", n, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.GetEvent(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("get_event with nothing queued: %v", err)
	}
	if _, err := a.DestroyID(id); err == nil {
		t.Error("destroy on the old fd succeeded")
	}
	if n, err := b.DestroyID(id); err != nil || n != 0 {
		t.Fatalf("destroy: %d %v", n, err)
	}
}
