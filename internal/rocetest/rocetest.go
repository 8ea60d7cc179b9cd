// Package rocetest names the two Soft-RoCE ports of the real-kernel
// test stage (tests/kernelvm) to the tests that run there: the guest
// sets IBSCRIPT_TEST_ROCE to "CA/PORT/IP,CA/PORT/IP", two ports whose
// traffic reaches each other (rxe0 and rxe1 on the two ends of a veth
// pair), and Pair finds each address's GID index in sysfs.
package rocetest

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
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
