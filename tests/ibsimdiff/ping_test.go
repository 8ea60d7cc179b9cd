package ibsimdiff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad"
)

// ibping's MADs: vendor range 2 class 0x32, class version 1, Get, with
// the OpenIB OUI; the responder answers with its host name in the vendor
// data (MAD offset 40).
const (
	pingClass   = 0x32
	pingVersion = 1
	pingOUI     = 0x001405
	vendorData  = 40
)

// pingResponder answers ibping on tr until tr is closed, with name.
func pingResponder(t *testing.T, tr fabric.Transport, name string) (served func() int) {
	t.Helper()
	a := fabric.Agent{Class: pingClass, Version: pingVersion, OUI: pingOUI}
	return responder(t, tr, a, func(r []byte) bool {
		clear(r[vendorData:])
		copy(r[vendorData:], name)
		return true
	})
}

// responder registers agent a (its Get method) on tr and, until tr is
// closed, answers each Get request of a's class that fill accepts with a
// GetResp: the request, status 0, its data as fill leaves it (the TID
// stays as received: its top bits route the answer). served reports how
// many answers went out.
func responder(t *testing.T, tr fabric.Transport, a fabric.Agent, fill func(r []byte) bool) (served func() int) {
	t.Helper()
	id, err := tr.Register(t.Context(), a.WithMethods(mad.MethodGet))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	wg.Go(func() {
		var p fabric.Packet
		for {
			if err := tr.Recv(context.Background(), &p); err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			if p.Status != 0 || mad.IsResponse(p.Data) || mad.MgmtClassOf(p.Data) != a.Class {
				continue
			}
			r := append([]byte(nil), p.Data...)
			r[3] = mad.MethodGetResp
			r[4], r[5] = 0, 0
			if !fill(r) {
				continue
			}
			if tr.Send(context.Background(), &fabric.Packet{Agent: id, Addr: p.Addr, Data: r}) == nil {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { tr.Close(); wg.Wait() })
	return func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestIBPingToIbscript: infiniband-diags' ibping gets its pongs from a
// responder on an ibsim Transport attached with issm (ibsim forwards QP1
// requests to issm clients only: a plain client cannot serve them).
func TestIBPingToIbscript(t *testing.T) {
	s := shared.Get(t, topo2sw, nil)
	tr, err := ibsim.Open(t.Context(), s.Sock, &ibsim.Options{Node: "Hca2", ISSM: true})
	if err != nil {
		t.Fatal(err)
	}
	lid := tr.Port().LID
	served := pingResponder(t, tr, "ibscript-pong")
	out := run(t, s, "Hca1", "ibping", "-f", "-c", "3", "-t", "1000", strconv.Itoa(int(lid)))
	if !regexp.MustCompile(`(?m)^--- ibscript-pong \(Lid `+strconv.Itoa(int(lid))+`\) ibping statistics ---`).Match(out) || served() != 3 {
		t.Errorf("ibping: responder served %d, want 3; output:\n%s", served(), out)
	}
	if !bytes.Contains(out, []byte("3 packets transmitted, 3 received, 0% packet loss")) {
		t.Errorf("ibping summary:\n%s", out)
	}
}

// TestPingIBPingServer: an engine transaction pings `ibping -S` (run with
// SIM_SET_ISSM=1, without which ibsim would not forward it the request) and
// gets its host name back. OpenSM is stopped first on a private fabric
// (its LIDs and routes stay): with IsSM set on the server's port, OpenSM
// would query it with SMInfo, which crashes umad2sim and hangs the sweep.
func TestPingIBPingServer(t *testing.T) {
	ibsimTest := privateSM(t, topo2sw)
	ibsimTest.StopSM()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	state, srvOut := ibpingServer(t, ctx, ibsimTest, "Hca3")
	sess, _ := session(t, ibsimTest, "Hca2", nil, nil)
	target := portLID(t, sess, "Hca3")
	tr, err := ibsim.Open(ctx, ibsimTest.Sock, &ibsim.Options{Node: "Hca1"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	host, _ := os.Hostname()
	// engine.Session.Do registers agents without an OUI, which a vendor
	// range 2 class needs; ping on the Transport directly.
	id, err := tr.Register(ctx, fabric.Agent{Class: pingClass, Version: pingVersion, OUI: pingOUI})
	if err != nil {
		t.Fatal(err)
	}
	req := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: pingClass, ClassVersion: pingVersion, Method: mad.MethodGet}).Put(req)
	req[37], req[38], req[39] = pingOUI>>16, pingOUI>>8&0xff, pingOUI&0xff
	// The server needs a moment to attach: ping until it answers, with a
	// deadline.
	resp := fabric.Packet{Data: make([]byte, 0, mad.Size)}
	for tid := uint64(1); ; tid++ {
		mad.SetTID(req, tid)
		if err := tr.Send(ctx, &fabric.Packet{Agent: id, Timeout: 100 * time.Millisecond, Addr: fabric.Addr{LID: target, QPN: 1, QKey: 0x80010000}, Data: req}); err != nil {
			t.Fatal(err)
		}
		if err := tr.Recv(ctx, &resp); err != nil {
			att, _ := ibsimTest.Console(context.Background(), "Attached")
			t.Fatalf("ping ibping -S at lid %d: %v; server %s, output: %q; transport %+v; attached clients:\n%s", target, err, state(), srvOut(), tr.Stats(), att)
		}
		if resp.Status == 0 {
			break
		}
	}
	got := string(mad.TrimNUL(resp.Data[vendorData:]))
	if mad.StatusOf(resp.Data) != 0 || !strings.HasPrefix(got, host) {
		t.Errorf("pong status %#x data %q, want the server's host name %q", mad.StatusOf(resp.Data), got, host)
	}
}

// ibpingServer starts the C `ibping -S` on node: cServer's.
func ibpingServer(t *testing.T, ctx context.Context, s *ibsimtest.Sim, node string) (state, output func() string) {
	t.Helper()
	srv, err := s.Command(ctx, node, "ibping", "-S")
	if err != nil {
		t.Fatal(err)
	}
	return cServer(t, ctx, srv)
}

// cServer starts a C tool's server (ibping -S, ibsysstat -S; srv from
// ibsimtest's Command) with SIM_SET_ISSM=1, without which ibsim would not
// forward it requests, and returns once it waits in its receive loop;
// state says whether it still runs, output is what it printed. It is
// killed when the test ends.
func cServer(t *testing.T, ctx context.Context, srv *exec.Cmd) (state, output func() string) {
	t.Helper()
	srv.Env = append(srv.Env, "SIM_SET_ISSM=1")
	var mu sync.Mutex
	var out bytes.Buffer
	w := writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(b) })
	srv.Stdout, srv.Stderr = w, w
	output = func() string { mu.Lock(); defer mu.Unlock(); return out.String() }
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { srv.Wait(); close(exited) }()
	t.Cleanup(func() {
		srv.Process.Kill()
		<-exited
	})
	state = func() string {
		select {
		case <-exited:
			return "exited: " + srv.ProcessState.String()
		default:
			return "running"
		}
	}
	// A request reaching the server before it registered its agent
	// crashes umad2sim (SIGSEGV, seen here), so nothing is sent to it
	// until its main thread waits in umad2sim's emulated poll (a futex),
	// which it reaches only after registering.
	wchan := fmt.Sprintf("/proc/%d/task/%d/wchan", srv.Process.Pid, srv.Process.Pid)
	for {
		if b, _ := os.ReadFile(wchan); strings.Contains(string(b), "futex") {
			return state, output
		}
		if state() != "running" || ctx.Err() != nil {
			t.Fatalf("%s did not reach its receive loop: %s, output %q", strings.Join(srv.Args, " "), state(), output())
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
