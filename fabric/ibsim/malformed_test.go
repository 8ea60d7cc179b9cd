package ibsim

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/internal/syncbuf"
	"github.com/ibscript/ibscript/mad"
)

// TestMalformedFromIbsim: a datagram of the wrong size and a MAD with a
// bad base version, arriving from ibsim ahead of a valid response, are
// counted and logged at debug level; the agent still gets its response.
func TestMalformedFromIbsim(t *testing.T) {
	f := newFake(t)
	var logBuf syncbuf.Buffer
	lg := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tr, err := Open(t.Context(), f.sock, &Options{Node: "Hca9", Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	f.mu.Lock()
	to := f.client
	f.mu.Unlock()
	// Written before the request goes out, so they reach the client first.
	if _, err := f.out.WriteToUnix(make([]byte, 100), to); err != nil {
		t.Fatal(err)
	}
	bad := simRequest{SLID: 5, SQP: 1, Length: mad.Size}
	bad.MAD[0], bad.MAD[1] = 2, 0x09 // base version 2
	b := make([]byte, requestSize)
	bad.Put(b)
	if _, err := f.out.WriteToUnix(b, to); err != nil {
		t.Fatal(err)
	}

	if _, _, p, err := getLID5(t, tr, time.Minute); err != nil || p.Status != 0 || uint32(mad.TIDOf(p.Data)) != 0x42 {
		t.Fatalf("response: %v status %d TID %#x", err, p.Status, mad.TIDOf(p.Data))
	}
	if st := tr.Stats(); st.BadPacket != 1 || st.Malformed != 1 {
		t.Errorf("stats %+v, want 1 bad datagram and 1 malformed MAD", st)
	}
	log := logBuf.String()
	for _, want := range []string{
		`level=DEBUG msg="ibsim: malformed datagram dropped" len=100 want=288 from="ibsim \"` + f.sock + `\""`,
		`level=DEBUG msg="mux: malformed MAD dropped" why="base version 2, not 1" len=256 slid=5 sqp=1`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// getLID5 registers an agent of class 0x09 on tr and sends LID 5 (QP 1)
// a Get with TID 0x42 that waits timeout: it returns the agent, the
// request and what tr receives first.
func getLID5(t *testing.T, tr fabric.Transport, timeout time.Duration) (fabric.AgentID, []byte, fabric.Packet, error) {
	t.Helper()
	ctx := t.Context()
	id, err := tr.Register(ctx, fabric.Agent{Class: 0x09, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: 0x09, ClassVersion: 1, Method: mad.MethodGet, TID: 0x42}).Put(req)
	if err := tr.Send(ctx, &fabric.Packet{Agent: id, Timeout: timeout, Addr: fabric.Addr{LID: 5, QPN: 1}, Data: req}); err != nil {
		t.Fatal(err)
	}
	var p fabric.Packet
	err = tr.Recv(ctx, &p)
	return id, req, p, err
}
