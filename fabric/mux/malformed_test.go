package mux_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
)

// quietWire answers nothing and keeps what the Mux transmits.
type quietWire struct {
	mu   sync.Mutex
	sent int
}

func (w *quietWire) Transmit(*fabric.Packet) error {
	w.mu.Lock()
	w.sent++
	w.mu.Unlock()
	return nil
}

func (w *quietWire) Close() error { return nil }

// TestMalformedLogged: every malformed MAD is counted and logged at debug
// level with what was wrong, its length and its source LID and QP; with
// the logger above debug, nothing is logged.
func TestMalformedLogged(t *testing.T) {
	long := append(gmp(mad.ClassPerf, mad.MethodGet, 1), 0)
	v2 := gmp(mad.ClassPerf, mad.MethodGet, 1)
	v2[0] = 2
	vendor := gmp(0x30, mad.MethodGet, 1)[:32]
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, `why="shorter than the 24-byte MAD header" len=0 slid=7 sqp=1`},
		{"short", make([]byte, 23), `why="shorter than the 24-byte MAD header" len=23 slid=7 sqp=1`},
		{"long", long, `why="longer than 256 bytes" len=257 slid=7 sqp=1`},
		{"base version", v2, `why="base version 2, not 1" len=256 slid=7 sqp=1`},
		{"vendor without OUI", vendor, `why="vendor class 0x30 shorter than its 40-byte header (no OUI)" len=32 slid=7 sqp=1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logBuf bytes.Buffer
			lg := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			m := mux.New(&quietWire{}, fabric.PortAttr{LID: 1}, &mux.Options{Logger: lg})
			defer m.Close()
			m.Deliver(&fabric.Packet{Addr: fabric.Addr{LID: 7, QPN: 1}, Data: tc.data})
			if got := m.Stats().Malformed; got != 1 {
				t.Errorf("Malformed = %d, want 1", got)
			}
			line := logBuf.String()
			if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, `msg="mux: malformed MAD dropped"`) ||
				!strings.Contains(line, tc.want) || strings.Count(line, "\n") != 1 {
				t.Errorf("log:\n%s\nwant one debug line with %s", line, tc.want)
			}

			logBuf.Reset()
			quiet := mux.New(&quietWire{}, fabric.PortAttr{LID: 1},
				&mux.Options{Logger: slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelInfo}))})
			defer quiet.Close()
			quiet.Deliver(&fabric.Packet{Addr: fabric.Addr{LID: 7, QPN: 1}, Data: tc.data})
			if quiet.Stats().Malformed != 1 || logBuf.Len() != 0 {
				t.Errorf("info-level logger: Malformed %d, log %q", quiet.Stats().Malformed, logBuf.String())
			}
		})
	}
}

// FuzzDeliver hands arbitrary bytes to a Mux as MADs received from the
// wire, between a request and its valid response: nothing panics, a
// malformed MAD is counted (and only those), and the agent still gets
// its response.
func FuzzDeliver(f *testing.F) {
	for _, dir := range []string{"../../mad/smp/testdata/*.hex", "../../mad/perf/testdata/*.hex"} {
		for _, c := range madtest.Captures(f, dir) {
			f.Add(c.Bytes)
		}
	}
	f.Add(gmp(mad.ClassPerf, mad.MethodGetResp, 1<<32|7))
	f.Add(gmp(0x30, mad.MethodGet, 1)[:40])
	f.Add(gmp(0x30, mad.MethodGet, 1)[:39])
	f.Add([]byte{1})
	f.Add([]byte{})
	lg := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		w := &quietWire{}
		m := mux.New(w, fabric.PortAttr{LID: 1}, &mux.Options{AnswerUnowned: true, Logger: lg})
		defer m.Close()
		req, err := m.Register(ctx, fabric.Agent{Class: mad.ClassPerf, Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []fabric.Agent{
			fabric.Agent{Class: mad.ClassSubnLID, Version: 1}.WithMethods(mad.MethodGet, mad.MethodSet),
			fabric.Agent{Class: 0x30, Version: 1, OUI: 0x1405}.WithMethods(mad.MethodGet),
		} {
			if _, err := m.Register(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		get := gmp(mad.ClassPerf, mad.MethodGet, 7)
		if err := m.Send(ctx, &fabric.Packet{Agent: req, Timeout: time.Hour, Data: get}); err != nil {
			t.Fatal(err)
		}
		tid := uint64(1)<<32 | 7 // the agent's hi_tid is 1

		m.Deliver(&fabric.Packet{Addr: fabric.Addr{LID: 9, QPN: 1}, Data: b})
		// A vendor-class request needs its OUI to be routed; a response
		// is matched by TID alone.
		malformed := len(b) < mad.HeaderSize || len(b) > mad.Size || b[0] != 1 ||
			(mad.MgmtClassOf(b) >= mad.ClassVendorLo && mad.MgmtClassOf(b) <= mad.ClassVendorHi &&
				!mad.IsResponse(b) && len(b) < 40)
		if want := map[bool]uint64{true: 1}[malformed]; m.Stats().Malformed != want {
			t.Fatalf("% x: Malformed = %d, want %d", b, m.Stats().Malformed, want)
		}

		resp := gmp(mad.ClassPerf, mad.MethodGetResp, tid)
		m.Deliver(&fabric.Packet{Addr: fabric.Addr{LID: 9, QPN: 1}, Data: resp})
		// Drain the queue without blocking: a cancelled context still
		// returns what is queued.
		done, cancel := context.WithCancel(ctx)
		cancel()
		got := false
		var p fabric.Packet
		for m.Recv(done, &p) == nil {
			if p.Agent == req {
				if got || p.Status != 0 || mad.TIDOf(p.Data) != tid || mad.MgmtClassOf(p.Data) != mad.ClassPerf {
					t.Fatalf("% x: agent got status %d TID %#x class %#x (second completion: %v)",
						b, p.Status, mad.TIDOf(p.Data), mad.MgmtClassOf(p.Data), got)
				}
				got = true
			}
		}
		if !got {
			t.Fatalf("% x: the agent never got its response (stats %+v)", b, m.Stats())
		}
	})
}
