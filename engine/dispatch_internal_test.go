package engine

import (
	"bytes"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// TestDispatchQueuesWholeCompletion: a completion queued while another
// is being dispatched keeps all its bytes, also when it is longer than
// one MAD (a transport handing over a reassembled RMPP message); before,
// the queued copy was cut to mad.Size.
func TestDispatchQueuesWholeCompletion(t *testing.T) {
	s := &Session{}
	s.dispatching.Store(true) // another goroutine is dispatching
	for _, n := range []int{mad.Size, 3*mad.Size - 20} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		s.dispatch(&fabric.Packet{Data: data})
		q := s.dq[len(s.dq)-1]
		if !bytes.Equal(q.p.Data, data) {
			t.Errorf("queued %d-byte completion: got %d bytes back, want them all", n, len(q.p.Data))
		}
		data[0]++ // the queue holds a copy, not the transport's buffer
		if q.p.Data[0] == data[0] {
			t.Errorf("queued %d-byte completion shares the transport's buffer", n)
		}
	}
}
