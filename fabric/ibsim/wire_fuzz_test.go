package ibsim

import (
	"bytes"
	"testing"

	"github.com/ibscript/ibscript/mad/madtest"
)

// FuzzDatagram feeds arbitrary datagrams to the decoders of what ibsim
// sends: sim_request (data socket), sim_ctl (control socket) and the
// sim_client_info in a CONNECT reply. A decoder never panics, refuses
// exactly the datagrams of the wrong size, and what it decodes encodes
// back to the same bytes (sim_request's padding and the unused halves of
// its LID words excepted: Put writes them as zero).
func FuzzDatagram(f *testing.F) {
	// MADs ibsim 0.10 answered, captured by the rig, as its data
	// socket delivers them.
	for _, c := range madtest.Captures(f, "../../mad/smp/testdata/*.hex") {
		r := simRequest{DLID: 3, SLID: 2, DQP: 0, SQP: 0, Length: uint64(len(c.Bytes))}
		copy(r.MAD[:], c.Bytes)
		b := make([]byte, requestSize)
		r.Put(b)
		f.Add(b)
		r.Status = statusDropped
		b = make([]byte, requestSize)
		r.Put(b)
		f.Add(b)
	}
	// A CONNECT reply: slot 3, attached to "Hca1".
	c := simCtl{Magic: ctlMagic, ClientID: 3, Type: ctlConnect, Len: clientInfoSize}
	if err := (&clientInfo{ID: 3, NodeID: "Hca1"}).Put(c.Data[:]); err != nil {
		f.Fatal(err)
	}
	f.Add(c.Marshal())
	f.Add(bytes.Repeat([]byte{0xff}, ctlSize))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r simRequest
		err := r.Get(b)
		if (err == nil) != (len(b) == requestSize) {
			t.Fatalf("Get of %d bytes: err %v", len(b), err)
		}
		if err == nil {
			out := make([]byte, requestSize)
			r.Put(out)
			want := bytes.Clone(b)
			for _, pad := range [][2]int{{2, 4}, {6, 8}, {20, 24}} {
				clear(want[pad[0]:pad[1]])
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("request round trip:\n got % x\nwant % x", out, want)
			}
			var again simRequest
			if err := again.Get(out); err != nil || again != r {
				t.Fatalf("request decode(encode) = %+v, %v; want %+v", again, err, r)
			}
		}

		var c simCtl
		err = c.Unmarshal(b)
		if (err == nil) != (len(b) == ctlSize) {
			t.Fatalf("Unmarshal of %d bytes: err %v", len(b), err)
		}
		if err != nil {
			return
		}
		if out := c.Marshal(); !bytes.Equal(out, b) {
			t.Fatalf("control round trip:\n got % x\nwant % x", out, b)
		}
		var ci clientInfo
		ci.Get(c.Data[:])
		var d [ctlDataSize]byte
		err = ci.Put(d[:])
		if (err == nil) != (len(ci.NodeID) < nodeIDSize) {
			t.Fatalf("client info with a %d-byte node id: Put err %v", len(ci.NodeID), err)
		}
		if err == nil {
			var back clientInfo
			back.Get(d[:])
			if back != ci {
				t.Fatalf("client info round trip: %+v, want %+v", back, ci)
			}
		}
	})
}
