package umad_test

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// host has mlx5_0 (port 1 Active LID 1, port 2 Polling LID 0) and mlx5_1
// (port 1 Active, LID 2): umad0, umad1, umad2.
func host(o *umadtest.Options) *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(o))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5},
		umadtest.HostPort{Num: 2, LID: 0, State: 1, PhysState: 2})
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 2, State: 4, PhysState: 5})
	return h
}

func openPort(t *testing.T, h *umadtest.Host, ca string, port int) *umad.Port {
	t.Helper()
	p, err := umad.OpenPort(ca, port, &umad.Options{FS: h.FS, Open: h.Open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func mad(class, method uint8, tid uint64) []byte {
	m := make([]byte, umad.MADSize)
	m[0], m[1], m[2], m[3] = 1, class, 1, method
	binary.BigEndian.PutUint64(m[8:], tid)
	return m
}

func TestOpenPort(t *testing.T) {
	h := host(nil)
	p := openPort(t, h, "", 0)
	if p.CA() != "mlx5_0" || p.Num() != 1 || p.Path() != "/dev/infiniband/umad0" || p.HeaderSize() != umad.HeaderSize {
		t.Errorf("default port: %s %d %s header %d", p.CA(), p.Num(), p.Path(), p.HeaderSize())
	}
	if q := openPort(t, h, "mlx5_1", 0); q.Path() != "/dev/infiniband/umad2" {
		t.Errorf("mlx5_1: %s", q.Path())
	}
	if q := openPort(t, h, "mlx5_0", 2); q.Path() != "/dev/infiniband/umad1" {
		t.Errorf("mlx5_0/2: %s", q.Path())
	}
	o := &umad.Options{FS: h.FS, Open: h.Open}
	if _, err := umad.OpenPort("mlx5_0", 3, o); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("port without umad node: %v, want EINVAL", err)
	}
	if _, err := umad.OpenPort("nope", 0, o); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("unknown CA: %v, want ENODEV", err)
	}
	h.Deny("/dev/infiniband/umad2")
	_, err := umad.OpenPort("mlx5_1", 1, o)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/dev/infiniband/umad2") ||
		!strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "rdma group") {
		t.Errorf("permission: %v", err)
	}
	h.FS[umad.SysInfinibandMAD+"/abi_version"] = &fstest.MapFile{Data: []byte("4\n")}
	if _, err := umad.OpenPort("", 0, o); !errors.Is(err, syscall.EOPNOTSUPP) || !strings.Contains(err.Error(), "version 4") {
		t.Errorf("old ABI: %v", err)
	}
}

// Section 13 #15: the header size belongs to the port; a kernel without
// ENABLE_PKEY gives 56 bytes on its ports while another port has 64.
func TestHeaderSizePerPort(t *testing.T) {
	oldHost := host(&umadtest.Options{NoPKey: true})
	old := openPort(t, oldHost, "", 0)
	cur := openPort(t, host(nil), "", 0)
	if old.HeaderSize() != umad.HeaderSizeOld || cur.HeaderSize() != umad.HeaderSize {
		t.Fatalf("header sizes %d and %d, want 56 and 64", old.HeaderSize(), cur.HeaderSize())
	}
	// Register2 falls back to REGISTER_AGENT on ENOTTY; send and receive
	// work with the 56-byte header.
	id, err := old.Register2(umad.Agent{Class: 0x09, Version: 1, Methods: [2]uint64{1 << 5}})
	if err != nil {
		t.Fatal(err)
	}
	peer := openPort(t, oldHost, "mlx5_1", 1)
	pid, _ := peer.Register(0x09, 1, 0, [2]uint64{})
	if err := peer.Send(&umad.Header{Agent: uint32(pid), LID: 1, QPN: 1}, mad(0x09, 0x05, 9), nil); err != nil {
		t.Fatal(err)
	}
	var h umad.Header
	old.SetReadDeadline(time.Now().Add(time.Hour))
	m, err := old.Recv(&h, nil)
	if err != nil || int(h.Agent) != id || h.LID != 2 || len(m) != 256 || binary.BigEndian.Uint32(m[12:]) != 9 {
		t.Errorf("recv on the old header: %+v, %d bytes, %v", h, len(m), err)
	}
}

// Section 13 #7, #13, #14: real errnos from send, register, unregister.
func TestRealErrnos(t *testing.T) {
	h := host(nil)
	p := openPort(t, h, "", 0)
	q := openPort(t, h, "", 0) // a second fd of the same port
	id, err := p.Register(0x09, 1, 0, [2]uint64{1 << 1})
	if err != nil || id != 0 {
		t.Fatalf("Register = %d, %v", id, err)
	}
	_, err = q.Register(0x09, 1, 0, [2]uint64{1 << 1})
	var re *umad.RegisterError
	if !errors.Is(err, syscall.EINVAL) || !errors.As(err, &re) || re.Op != "REGISTER_AGENT" {
		t.Errorf("method conflict: %v, want EINVAL (not libibumad's EPERM)", err)
	}
	_, err = q.Register2(umad.Agent{Class: 0x09, Version: 1, Flags: 0x4})
	if !errors.As(err, &re) || re.Flags != umad.FlagUserRMPP || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("unknown flags: %v (flags %#x), want EINVAL with the supported mask", err, re.Flags)
	}
	if _, err := q.Register2(umad.Agent{Class: 0x30}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("vendor class without OUI: %v", err)
	}
	if _, err := q.RegisterOUI(0x09, 0, 0x001405, [2]uint64{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("RegisterOUI of a non-vendor class: %v", err)
	}
	if id, err := q.RegisterOUI(0x30, 0, 0x001405, [2]uint64{1 << 1}); err != nil || id != 0 {
		t.Errorf("RegisterOUI: %d, %v", id, err)
	}
	if err := p.Unregister(5); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("unregister unknown: %v, want EINVAL (not -1)", err)
	}
	if err := p.Send(&umad.Header{Agent: 3}, mad(0x09, 1, 1), nil); !errors.Is(err, syscall.EIO) {
		t.Errorf("send from an empty slot: %v, want EIO", err)
	}
	if err := p.Send(&umad.Header{Agent: 40}, mad(0x09, 1, 1), nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("send from agent 40: %v, want EINVAL (not libibumad's EIO)", err)
	}
	if err := p.Send(&umad.Header{Agent: 0}, mad(0x09, 1, 1)[:35], nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("35-byte MAD: %v, want EINVAL", err)
	}
}

// Section 13 #1-#4 and #6: recv and poll.
func TestRecvAndPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := host(nil)
		p := openPort(t, h, "", 0)
		id, _ := p.Register(0x09, 1, 0, [2]uint64{1 << 5})
		// #2: an empty wait is ETIMEDOUT; #1: the read side says "nothing
		// yet" with a deadline, never EAGAIN.
		start := time.Now()
		if err := p.Poll(250 * time.Millisecond); !errors.Is(err, syscall.ETIMEDOUT) || time.Since(start) != 250*time.Millisecond {
			t.Errorf("poll: %v after %v", err, time.Since(start))
		}
		p.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := p.Read(make([]byte, 1024)); !errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.EAGAIN) {
			t.Errorf("read with nothing queued: %v", err)
		}
		p.SetReadDeadline(time.Time{})
		kp := h.Port("/dev/infiniband/umad0")
		kp.Inject(umadtest.Addr{LID: 9, QPN: 1}, mad(0x09, 0x05, 1))
		if err := p.Poll(-1); err != nil {
			t.Errorf("poll with a record: %v", err)
		}
		// #3: a buffer below header + 256 is refused without reading.
		if _, err := p.Read(make([]byte, umad.HeaderSize+255)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("short buffer: %v", err)
		}
		var hd umad.Header
		if m, err := p.Recv(&hd, nil); err != nil || binary.BigEndian.Uint64(m[8:]) != 1 {
			t.Fatalf("the record stayed queued: %v", err)
		}
		// #4: ENOSPC gives the needed MAD length; Recv grows and re-reads.
		big := make([]byte, 1000)
		copy(big, mad(0x09, 0x05, 2))
		kp.Inject(umadtest.Addr{LID: 9, QPN: 1}, big)
		buf := make([]byte, umad.HeaderSize+umad.MADSize)
		_, err := p.Read(buf)
		var ns *umad.NoSpaceError
		if !errors.As(err, &ns) || ns.Need != 1000 || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("long message: %v", err)
		}
		dst := make([]byte, 0, 16)
		m, err := p.Recv(&hd, dst)
		if err != nil || len(m) != 1000 || int(hd.Agent) != id || hd.Length != umad.HeaderSize+1000 {
			t.Errorf("Recv of a long message: %d bytes, %+v, %v", len(m), hd, err)
		}
		// Close unblocks a pending Recv.
		done := make(chan error)
		go func() {
			_, err := p.Recv(&hd, nil)
			done <- err
		}()
		synctest.Wait()
		p.Close()
		if err := <-done; !errors.Is(err, os.ErrClosed) {
			t.Errorf("Recv after Close: %v", err)
		}
		// #6: poll on a closed port is an error, not "ready".
		if err := p.Poll(0); !errors.Is(err, os.ErrClosed) {
			t.Errorf("poll after close: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// A timed-out send comes back with status 110 and the 24-byte MAD header.
func TestTimeoutRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := host(nil)
		p := openPort(t, h, "", 0)
		id, _ := p.Register(0x09, 1, 0, [2]uint64{})
		start := time.Now()
		if err := p.Send(&umad.Header{Agent: uint32(id), TimeoutMS: 100, Retries: 2, LID: 99, QPN: 1}, mad(0x09, 1, 0x77), nil); err != nil {
			t.Fatal(err)
		}
		var hd umad.Header
		m, err := p.Recv(&hd, nil)
		if err != nil || hd.Status != umad.StatusTimedOut || len(m) != 24 || uint32(binary.BigEndian.Uint64(m[8:])) != 0x77 ||
			time.Since(start) != 300*time.Millisecond {
			t.Errorf("timeout record after %v: %+v, % x, %v", time.Since(start), hd, m, err)
		}
	})
}

func TestPoweredOffSystem(t *testing.T) {
	// No /sys/class/infiniband_mad at all: OpenPort says the ABI is
	// unreadable and names the file.
	_, err := umad.OpenPort("", 0, &umad.Options{FS: fstest.MapFS{}, Open: func(string) (umad.Dev, error) {
		t.Fatal("no device should be opened")
		return nil, nil
	}})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "abi_version") {
		t.Errorf("no umad: %v", err)
	}
}

func TestOpenISSM(t *testing.T) {
	h := host(nil)
	o := &umad.Options{FS: h.FS, Open: h.Open}
	d, path, err := umad.OpenISSM("mlx5_1", 0, o)
	if err != nil || path != "/dev/infiniband/issm2" {
		t.Fatalf("OpenISSM = %s, %v", path, err)
	}
	kp := h.Port("/dev/infiniband/umad2")
	if !kp.IsSM() {
		t.Error("IsSM not set while issm is open")
	}
	if _, _, err := umad.OpenISSM("mlx5_1", 1, o); !errors.Is(err, syscall.EAGAIN) || !strings.Contains(err.Error(), "issm2") {
		t.Errorf("second opener: %v, want EAGAIN naming issm2", err)
	}
	d.Close()
	if kp.IsSM() {
		t.Error("IsSM still set after Close")
	}
	h.Deny("/dev/infiniband/issm0")
	if _, _, err := umad.OpenISSM("", 0, o); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "root") {
		t.Errorf("denied issm: %v", err)
	}
}

// fakeDev answers reads with ENOSPC and a fixed length.
type fakeDev struct {
	umad.Dev
	need  uint32
	reads int
}

func (d *fakeDev) Ioctl(uint32, []byte) error { return nil }
func (d *fakeDev) Close() error               { return nil }
func (d *fakeDev) Read(b []byte) (int, error) {
	d.reads++
	binary.NativeEndian.PutUint32(b[16:], d.need)
	return 0, &fs.PathError{Op: "read", Path: "fake", Err: syscall.ENOSPC}
}

// The receive buffer grows to what ENOSPC asks for, and a device that
// keeps asking for no more than the buffer already holds cannot loop Recv.
func TestRecvGrowthTerminates(t *testing.T) {
	for _, need := range []uint32{0, 10, umad.HeaderSize + 256, umad.HeaderSize + 5000} {
		d := &fakeDev{need: need}
		p, err := umad.NewPort(d, "fake", "x", 1)
		if err != nil {
			t.Fatal(err)
		}
		var h umad.Header
		_, err = p.Recv(&h, nil)
		if err == nil || d.reads > 2 {
			t.Errorf("need %d: %v after %d reads", need, err, d.reads)
		}
	}
}
