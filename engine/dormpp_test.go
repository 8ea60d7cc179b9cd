package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// TestDoRMPPRefusesAndTimesOut: DoRMPP refuses a request longer than a
// MAD, as Do does, and a vendor-class request (its agent registered with
// the request's OUI) nobody answers is a *TimeoutError naming the class,
// the attribute, the LID and the tries. A whole multi-MAD answer is
// diag's TestSysstatRMPPOnSimulator.
func TestDoRMPPRefusesAndTimesOut(t *testing.T) {
	s, _ := simSessionOpts(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1, &engine.Options{Timeout: 20 * time.Millisecond, Retries: 1})
	if _, err := s.DoRMPP(t.Context(), &fabric.Packet{Data: make([]byte, mad.Size+1)}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("a %d-byte request: %v, want ErrInvalid", mad.Size+1, err)
	}
	req := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: 0x33, ClassVersion: 1, Method: mad.MethodGet, AttrID: 0x11}).Put(req)
	mad.SetVendorOUI(req, 0x001405)
	_, err := s.DoRMPP(t.Context(), &fabric.Packet{Addr: fabric.Addr{LID: 999, QPN: 1, QKey: 0x80010000}, Data: req})
	var te *engine.TimeoutError
	if !errors.As(err, &te) || te.Class != 0x33 || te.AttrID != 0x11 || te.Target.LID != 999 || te.Tries != 2 || !errors.Is(err, fabric.ErrTimeout) {
		t.Errorf("to LID 999: %v (%+v), want a timeout of class 0x33 attribute 0x11 to LID 999 after 2 tries", err, te)
	}
}
