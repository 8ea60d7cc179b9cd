package rdmacm_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/native/rdmacm"
	"github.com/ibscript/ibscript/native/rdmacm/rdmacmtest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

func TestModelIDsEventsMigrate(t *testing.T) {
	k := rdmacmtest.New()
	a, b := rdmacm.NewChannel(k.Open()), rdmacm.NewChannel(k.Open())
	defer a.Close()
	defer b.Close()
	id1, err := a.CreateID(100, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := a.CreateID(200, rdmacm.PSUDP, rdmacm.QPTypeUD)
	if _, err := a.CreateID(1, 0x999, 2); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bad port space: %v", err)
	}
	// Events of id1 (0, 2) and id2 (1) queued; id1 fetches one.
	for i, id := range []uint32{id1, id2, id1} {
		k.Inject(id, rdmacm.Event{Event: uint32(i)})
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	ev, err := a.GetEvent(ctx)
	if err != nil || ev.ID != id1 || ev.UID != 100 || ev.Event != 0 {
		t.Fatalf("first event %+v %v", ev, err)
	}
	// Commands for id1 must now go to b; written to a they are EINVAL.
	n, err := b.MigrateID(id1, a)
	if err != nil || n != 1 {
		t.Fatalf("migrate: events_reported %d, %v", n, err)
	}
	if k.Owner(id1) != b.Fd() {
		t.Error("id1 not owned by b")
	}
	if err := a.Listen(id1, 1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("command on the old fd: %v", err)
	}
	// id1's unread event moved; id2's stayed.
	ev, err = b.GetEvent(ctx)
	if err != nil || ev.ID != id1 || ev.Event != 2 {
		t.Fatalf("moved event %+v %v", ev, err)
	}
	ev, err = a.GetEvent(ctx)
	if err != nil || ev.ID != id2 || ev.Event != 1 {
		t.Fatalf("stayed event %+v %v", ev, err)
	}
	// DESTROY_ID purges unread events and reports the count.
	k.Inject(id1, rdmacm.Event{Event: 9})
	if n, err := b.DestroyID(id1); err != nil || n != 2 {
		t.Fatalf("destroy: events_reported %d, %v", n, err)
	}
	short, cancel2 := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel2()
	if _, err := b.GetEvent(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a destroyed id's event survived: %v", err)
	}
	if _, err := b.DestroyID(id1); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("destroy twice: %v", err)
	}
	if _, err := b.MigrateID(id2, rdmacm.NewChannel(k.Open())); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("migrate naming a fd that does not own the id: %v", err)
	}
}

func TestModelErrnos(t *testing.T) {
	k := rdmacmtest.New()
	f := k.Open()
	defer f.Close()
	for _, c := range []struct {
		name string
		c    rdmacm.Command
		resp []byte
		want error
	}{
		{"GET_EVENT empty", rdmacm.GetEventCmd(), make([]byte, 336), syscall.EAGAIN},
		{"GET_EVENT small out", withOut(rdmacm.GetEventCmd(), 100), make([]byte, 100), syscall.ENOSPC},
		{"CREATE_ID small out", withOut(rdmacm.CreateIDCmd(1, rdmacm.PSTCP, 2), 2), make([]byte, 4), syscall.ENOSPC},
		{"GET_OPTION", rdmacm.Command{B: header(13, 0, 0)}, nil, syscall.ENOSYS},
		{"command 99", rdmacm.Command{B: header(99, 0, 0)}, nil, syscall.EINVAL},
		{"in beyond the write", rdmacm.Command{B: header(7, 8, 0)}, nil, syscall.EINVAL},
		{"unknown id", rdmacm.DisconnectCmd(77), nil, syscall.ENOENT},
		{"migrate from no fd", rdmacm.MigrateIDCmd(1, 99), make([]byte, 4), syscall.ENOENT},
	} {
		if err := f.Exec(c.c, c.resp); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	f.Close()
	if err := f.Exec(rdmacm.GetEventCmd(), make([]byte, 336)); !errors.Is(err, syscall.EBADF) {
		t.Errorf("after close: %v", err)
	}
}

func header(cmd uint32, in, out int) []byte {
	c := rdmacm.DisconnectCmd(0)
	b := c.B[:8]
	b[0], b[1], b[2], b[3] = byte(cmd), 0, 0, 0
	b[4], b[5], b[6], b[7] = byte(in), 0, byte(out), 0
	return b
}

func withOut(c rdmacm.Command, out int) rdmacm.Command {
	c.B[6], c.B[7] = byte(out), byte(out>>8)
	return c
}

// TestModelRequests: CONNECT_REQUEST makes a new id on the listener's fd,
// takes a backlog credit that GET_EVENT gives back, is counted on the
// listener, moves with it on MIGRATE_ID, and an unread one dies with it.
func TestModelRequests(t *testing.T) {
	k := rdmacmtest.New()
	a, b := rdmacm.NewChannel(k.Open()), rdmacm.NewChannel(k.Open())
	defer a.Close()
	defer b.Close()
	l, _ := a.CreateID(7, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if _, ok := k.Request(l, rdmacm.Event{}); ok {
		t.Fatal("a request on an id that does not listen")
	}
	if err := a.Listen(l, 1); err != nil {
		t.Fatal(err)
	}
	c1, ok := k.Request(l, rdmacm.Event{})
	if !ok {
		t.Fatal("refused with a credit left")
	}
	if _, ok := k.Request(l, rdmacm.Event{}); ok {
		t.Fatal("accepted beyond the backlog")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	ev, err := a.GetEvent(ctx)
	if err != nil || ev.UID != 7 || ev.ID != c1 || ev.Event != rdmacmtest.EventConnectRequest {
		t.Fatalf("%+v %v", ev, err)
	}
	c2, ok := k.Request(l, rdmacm.Event{})
	if !ok {
		t.Fatal("the credit did not come back")
	}
	if k.Owner(c2) != a.Fd() {
		t.Error("the new id is not on the listener's fd")
	}
	if _, err := b.MigrateID(l, a); err != nil {
		t.Fatal(err)
	}
	if k.Owner(c2) != b.Fd() {
		t.Error("the unread request's id stayed behind")
	}
	if n, err := b.DestroyID(l); err != nil || n != 1 {
		t.Fatalf("destroy listener: %d %v", n, err)
	}
	if k.Owner(c2) != -1 || k.Owner(c1) != a.Fd() {
		t.Errorf("owners after destroy: unread %d, fetched %d", k.Owner(c2), k.Owner(c1))
	}
}
