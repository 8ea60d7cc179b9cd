package ibsimdiff

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

// freeUDPRange finds a port p after the port after (0: anywhere) with
// p..p+10 free on UDP (ibsim's remote mode binds the control port and ten
// data ports after it).
func freeUDPRange(t *testing.T, after int) int {
	t.Helper()
	for base := 20000 + os.Getpid()%20000; base < 60000; base += 97 {
		if base <= after {
			continue
		}
		var held []*net.UDPConn
		ok := true
		for p := base; p <= base+10; p++ {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: p})
			if err != nil {
				ok = false
				break
			}
			held = append(held, c)
		}
		for _, c := range held {
			c.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free UDP port range")
	return 0
}

// TestUDPMode: the client in ibsim's remote (UDP) mode discovers what
// ibnetdiscover discovers through umad2sim's remote mode.
func TestUDPMode(t *testing.T) {
	ibsimtest.Require(t)
	// The ports were free when looked at; another process on the
	// machine can bind one before ibsim does ("can't bind ...: Address
	// already in use"): then ibsim is started on the next free range.
	var s *ibsimtest.Sim
	var err error
	port := 0
	for try := 1; ; try++ {
		port = freeUDPRange(t, port)
		s, err = ibsimtest.Start(t.Context(), t.TempDir(), topo2sw, &ibsimtest.Options{UDPPort: port})
		if err == nil || try == 3 || !strings.Contains(err.Error(), "Address already in use") {
			break
		}
		t.Logf("ibsim -r -l %d: %v; on the next free range (try %d of 3)", port, err, try+1)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	tr, err := ibsim.Open(t.Context(), "", &ibsim.Options{Node: "Hca2", Server: "127.0.0.1:" + strconv.Itoa(port)})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := engine.New(tr, nil)
	if err != nil {
		tr.Close()
		t.Fatal(err)
	}
	defer sess.Close()
	d, err := sess.Discover(t.Context(), nil)
	if err != nil || len(d.Errors) > 0 {
		t.Fatalf("discover over UDP: %v %v", err, d.Errors)
	}
	var got bytes.Buffer
	topo.WriteIBNetDiscover(&got, d.Fabric, nil)
	ref := run(t, s, "Hca2", "ibnetdiscover")
	if w, g := normDate(string(ref)), normDate(got.String()); w != g {
		t.Errorf("over UDP the engine's discovery differs from ibnetdiscover:\n%s", lineDiff(w, g))
	}
	if len(d.Fabric.Nodes) != 6 {
		t.Errorf("%d nodes, want 6", len(d.Fabric.Nodes))
	}
}
