// Package rocetest names the two Soft-RoCE ports of the real-kernel
// test stage (tests/kernelvm) to the tests that run there: the guest
// sets IBSCRIPT_TEST_ROCE to "CA/PORT/IP,CA/PORT/IP", two ports whose
// traffic reaches each other (rxe0 and rxe1 on the two ends of a veth
// pair), and Pair finds each address's GID index in sysfs.
package rocetest

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/syncbuf"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// Env is the variable naming the pair.
const Env = "IBSCRIPT_TEST_ROCE"

// End is one port of the pair.
type End struct {
	CA       string
	Port     int
	IP       netip.Addr // the netdev's address (IPv6 in the stage: its GIDs match)
	GID      [16]byte   // the RoCE GID of IP
	GIDIndex uint8      // its index in the port's GID table
}

func (e End) String() string {
	return fmt.Sprintf("%s/%d %s (GID index %d)", e.CA, e.Port, e.IP, e.GIDIndex)
}

// ModelHost is the stage's pair on the kernel model: rxe0 and rxe1, link
// layer Ethernet, LID 0, GID index 1 the IPv4-mapped GID of 10.0.0.N and
// index 2 fd00::N; the Ends name them by their fd00:: addresses.
func ModelHost() (*umadtest.Host, [2]End) {
	h := umadtest.NewHost(umadtest.New(nil))
	var ends [2]End
	for i, n := range []string{"rxe0", "rxe1"} {
		v4 := netip.MustParseAddr(fmt.Sprintf("::ffff:10.0.0.%d", i+1)).As16()
		ip := netip.MustParseAddr(fmt.Sprintf("fd00::%d", i+1))
		h.AddCA(n, 1, 0x5054_00ff_fe12_3400+uint64(i)<<8, umadtest.HostPort{Num: 1, State: 4, PhysState: 5,
			LinkLayer: "Ethernet", GIDs: [][16]byte{v4, ip.As16()}})
		ends[i] = End{CA: n, Port: 1, IP: ip, GID: ip.As16(), GIDIndex: 2}
	}
	return h, ends
}

// Pair returns the two ports $IBSCRIPT_TEST_ROCE names, or skips the
// test when it is unset (a host without the stage's pair); a malformed
// value or an address without a GID fails the test.
func Pair(t testing.TB) [2]End {
	t.Helper()
	v := os.Getenv(Env)
	if v == "" {
		t.Skipf("$%s is unset: these tests need two Soft-RoCE ports that reach each other (tests/kernelvm/run sets them up)", Env)
	}
	ends, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ends {
		idx, err := gidIndex(ends[i].CA, ends[i].Port, ends[i].GID)
		if err != nil {
			t.Fatalf("$%s: %v", Env, err)
		}
		ends[i].GIDIndex = idx
	}
	return ends
}

// Parse reads "CA/PORT/IP,CA/PORT/IP" (GID indexes left 0).
func Parse(v string) ([2]End, error) {
	var ends [2]End
	parts := strings.Split(v, ",")
	if len(parts) != 2 {
		return ends, fmt.Errorf("$%s=%q: want two CA/PORT/IP separated by a comma", Env, v)
	}
	for i, p := range parts {
		f := strings.SplitN(p, "/", 3)
		if len(f) != 3 {
			return ends, fmt.Errorf("$%s: %q is not CA/PORT/IP", Env, p)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 || n > 255 {
			return ends, fmt.Errorf("$%s: %q: port %q", Env, p, f[1])
		}
		ip, err := netip.ParseAddr(f[2])
		if err != nil {
			return ends, fmt.Errorf("$%s: %q: %v", Env, p, err)
		}
		ends[i] = End{CA: f[0], Port: n, IP: ip, GID: ip.As16()}
	}
	return ends, nil
}

// gidIndex finds gid in /sys/class/infiniband/CA/ports/PORT/gids/.
func gidIndex(ca string, port int, gid [16]byte) (uint8, error) {
	dir := fmt.Sprintf("/sys/class/infiniband/%s/ports/%d/gids", ca, port)
	want := netip.AddrFrom16(gid)
	for i := range 256 {
		b, err := os.ReadFile(fmt.Sprintf("%s/%d", dir, i))
		if err != nil {
			break
		}
		if a, err := netip.ParseAddr(strings.TrimSpace(string(b))); err == nil && a == want {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("%s has no GID %s", dir, want)
}

// LibrdmacmConnects asks librdmacm itself whether this kernel connects
// from client to server by IP address: tests/kernelvm/cpeer.c (cpeer on
// $PATH in the guest) as server on server:port and as client from
// client. It returns "" when they connected, else why not, with what
// both printed (a test then skips what the kernel refuses to C programs
// too); without cpeer it returns "" and the test runs as elsewhere.
func LibrdmacmConnects(t testing.TB, client, server netip.Addr, port uint16) string {
	t.Helper()
	cpeer, err := exec.LookPath("cpeer")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, cpeer, "server", server.String(), fmt.Sprint(port), "accept")
	var so syncbuf.Buffer
	srv.Stdout = &so
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200 && !strings.Contains(so.String(), "listening"); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	co, cerr := exec.CommandContext(ctx, cpeer, "client", client.String(), server.String(), fmt.Sprint(port)).Output()
	if cerr != nil || !strings.Contains(string(co), "CONNECT_RESPONSE") {
		srv.Process.Kill()
		srv.Wait()
		return fmt.Sprintf("librdmacm cannot connect from %v to %v on this kernel either (client: %v):\n%s\nserver:\n%s", client, server, cerr, co, so.String())
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("librdmacm from %v to %v: server %v:\n%s\nclient:\n%s", client, server, err, so.String(), co)
	}
	return ""
}

// CPeerCase connects one side of a test with librdmacm (tests/kernelvm/
// cpeer.c at cpeer): ip is the test's address (rxe0) and librdmacm's
// (rxe1), port the RDMA CM port, accept whether the passive side accepts.
type CPeerCase func(t *testing.T, cpeer string, ip [2]netip.Addr, port uint16, accept bool)

// EachCPeer runs the four librdmacm cases — the test's side connects and
// librdmacm accepts or rejects, then librdmacm connects and the test's side
// accepts or rejects — over IPv4 and IPv6 between the Soft-RoCE pair, on
// ports from base+1. A family librdmacm cannot connect by itself in the
// guest skips, naming what it met (LibrdmacmConnects). Elsewhere it skips
// (Pair).
func EachCPeer(t *testing.T, base uint16, connects, cConnects CPeerCase) {
	ends := Pair(t)
	cpeer := CPeerPath(t)
	ip4 := [2]netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")}
	port := base
	for _, fam := range []struct {
		name string
		ip   [2]netip.Addr
	}{{"IPv4", ip4}, {"IPv6", [2]netip.Addr{ends[0].IP, ends[1].IP}}} {
		port++
		if why := LibrdmacmConnects(t, fam.ip[0], fam.ip[1], port); why != "" {
			t.Run(fam.name, func(t *testing.T) { t.Skip(why) })
			continue
		}
		for _, c := range []struct {
			name   string
			fn     CPeerCase
			accept bool
		}{
			{"GoConnects", connects, true}, {"GoConnectsCRejects", connects, false},
			{"CConnects", cConnects, true}, {"CConnectsGoRejects", cConnects, false},
		} {
			port++
			t.Run(fam.name+"/"+c.name, func(t *testing.T) { c.fn(t, cpeer, fam.ip, port, c.accept) })
		}
	}
}
