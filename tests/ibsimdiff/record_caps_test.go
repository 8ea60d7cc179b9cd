package ibsimdiff

import (
	"bytes"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/fabric/record"
)

// TestRecordKeepsCaps: --record on ibsim keeps the transport's
// capabilities (window, handler, retransmission count, ibsim's exit
// noticed), so a recorded run drives ibsim as an unrecorded one does;
// answers handed over by the handler are recorded as Recv's were.
func TestRecordKeepsCaps(t *testing.T) {
	s := private(t, topoFat50)
	tr, err := ibsim.Open(t.Context(), s.Sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := record.NewRecorder(tr, &buf)
	if err != nil {
		tr.Close()
		t.Fatal(err)
	}
	fabrictest.TestCapsPassed(t, tr.Caps(), rec.Caps())
	sess, err := engine.New(rec, nil)
	if err != nil {
		rec.Close()
		t.Fatal(err)
	}
	d, err := sess.Discover(t.Context(), nil)
	if err != nil || len(d.Errors) > 0 {
		t.Fatalf("discover: %v %v", err, d.Errors)
	}
	if _, ok := sess.Retransmits(); !ok {
		t.Error("Session.Retransmits over a recorded ibsim transport does not count")
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	recvs := 0
	for _, e := range r.Events {
		if e.Op == record.OpRecv {
			recvs++
		}
	}
	if recvs < d.MADs {
		t.Errorf("recording holds %d answers for %d SMPs", recvs, d.MADs)
	}
}
