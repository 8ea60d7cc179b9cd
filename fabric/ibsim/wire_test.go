package ibsim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad"
)

// The offsets and byte orders below are those of ibsim 0.10's structs on a
// little-endian 64-bit host (ibsim/sim.h: struct sim_ctl, struct sim_request).

func TestCtlLayout(t *testing.T) {
	c := simCtl{Magic: ctlMagic, ClientID: 0x04030201, Type: ctlGetPortInfo, Len: 0x44}
	c.Data[0], c.Data[63] = 0xaa, 0xbb
	b := c.Marshal()
	if len(b) != ctlSize || ctlSize != 80 {
		t.Fatalf("sim_ctl is %d bytes, want 80", len(b))
	}
	want := map[int][]byte{
		0:  {0xef, 0xbe, 0xad, 0xde}, // magic, host order
		4:  {1, 2, 3, 4},             // clientid
		8:  {8, 0, 0, 0},             // type
		12: {0x44, 0, 0, 0},          // len
		16: {0xaa},                   // data[0]
		79: {0xbb},                   // data[63]
	}
	for off, w := range want {
		if got := b[off : off+len(w)]; !bytes.Equal(got, w) {
			t.Errorf("offset %d: % x, want % x", off, got, w)
		}
	}
	var d simCtl
	if err := d.Unmarshal(b); err != nil || d != c {
		t.Errorf("round trip: %+v %v, want %+v", d, err, c)
	}
	if err := d.Unmarshal(b[:79]); err == nil {
		t.Error("Unmarshal of 79 bytes: no error")
	}
}

func TestClientInfoLayout(t *testing.T) {
	var b [ctlDataSize]byte
	ci := clientInfo{ID: 0x11223344, QP: 5, ISSM: 1, NodeID: "Hca1"}
	if err := ci.Put(b[:]); err != nil {
		t.Fatal(err)
	}
	if clientInfoSize != 44 {
		t.Fatalf("sim_client_info is %d bytes, want 44", clientInfoSize)
	}
	if got := binary.LittleEndian.Uint32(b[0:]); got != 0x11223344 {
		t.Errorf("id @0 = %#x", got)
	}
	if got := binary.LittleEndian.Uint32(b[4:]); got != 5 {
		t.Errorf("qp @4 = %d", got)
	}
	if got := binary.LittleEndian.Uint32(b[8:]); got != 1 {
		t.Errorf("issm @8 = %d", got)
	}
	if got := b[12:17]; !bytes.Equal(got, []byte("Hca1\x00")) {
		t.Errorf("nodeid @12 = %q", got)
	}
	var d clientInfo
	d.Get(b[:])
	if d != ci {
		t.Errorf("round trip %+v, want %+v", d, ci)
	}
	long := clientInfo{NodeID: "0123456789012345678901234567890x"} // 32 chars: no room for the NUL
	if err := long.Put(b[:]); err == nil {
		t.Error("a 32-character node id was accepted")
	}
	ok := clientInfo{NodeID: "0123456789012345678901234567890"} // 31
	if err := ok.Put(b[:]); err != nil || b[12+31] != 0 {
		t.Errorf("31-character node id: %v, NUL %#x", err, b[12+31])
	}
}

func TestRequestLayout(t *testing.T) {
	r := simRequest{DLID: 0x1234, SLID: 0xfffe, DQP: 1, SQP: 0x00a0b0c0, Status: statusDropped, Length: 256}
	r.MAD[0], r.MAD[255] = 1, 0x7f
	b := make([]byte, requestSize)
	for i := range b {
		b[i] = 0xee // Put must clear the padding and the LID fields' upper halves
	}
	r.Put(b)
	if requestSize != 288 {
		t.Fatalf("sim_request is %d bytes, want 288", requestSize)
	}
	want := map[int][]byte{
		0:   {0x12, 0x34, 0, 0},       // dlid: big-endian u16 in a u32
		4:   {0xff, 0xfe, 0, 0},       // slid
		8:   {0, 0, 0, 1},             // dqp, big-endian
		12:  {0, 0xa0, 0xb0, 0xc0},    // sqp
		16:  {0, 0, 0, 110},           // status
		20:  {0, 0, 0, 0},             // padding before the 8-aligned length
		24:  {0, 0, 0, 0, 0, 0, 1, 0}, // length, big-endian u64
		32:  {1},                      // mad[0]
		287: {0x7f},                   // mad[255]
	}
	for off, w := range want {
		if got := b[off : off+len(w)]; !bytes.Equal(got, w) {
			t.Errorf("offset %d: % x, want % x", off, got, w)
		}
	}
	var d simRequest
	if err := d.Get(b); err != nil || d != r {
		t.Errorf("round trip %+v %v", d, err)
	}
	if err := d.Get(b[:287]); err == nil {
		t.Error("Get of 287 bytes: no error")
	}
}

// TestOpenWithoutIbsim: no ibsim on the socket name gives an error naming
// it, at once, that says nobody listens there (ErrNoServer) and names no
// environment variable (the library reads none; the CLI adds the hint).
func TestOpenWithoutIbsim(t *testing.T) {
	_, err := Open(t.Context(), "ibscript-test-no-such-ibsim", nil)
	if err == nil {
		t.Fatal("Open without an ibsim succeeded")
	}
	if !strings.Contains(err.Error(), `ibsim "ibscript-test-no-such-ibsim"`) || strings.Contains(err.Error(), "\x00") {
		t.Errorf("error %q: want it to name the ibsim, without NUL bytes", err)
	}
	if !errors.Is(err, ErrNoServer) || strings.Contains(err.Error(), "IBSIM_SOCKNAME") {
		t.Errorf("error %q: want ErrNoServer, no environment variable named", err)
	}
}

// TestValidLength: a received MAD is as long as its sender said (OpenSM
// under umad2sim gives its answer's length, cut at 256), except an RMPP
// segment, whose PayloadLength the RMPP driver reads, and a length no MAD
// can have.
func TestValidLength(t *testing.T) {
	var saResp, saSegment, smp [mad.Size]byte
	saResp[1] = mad.ClassSubnAdm
	saResp[26] = 1 // RMPP Active, type 0: OpenSM's one-MAD answer
	saSegment[1], saSegment[25], saSegment[26] = mad.ClassSubnAdm, 1, 1
	smp[1] = mad.ClassSubnLID
	for _, tc := range []struct {
		name string
		n    uint64
		m    *[mad.Size]byte
		want int
	}{
		{"SA answer of one record", 56 + 32, &saResp, 88},
		{"SA answer cut at 256", 256, &saResp, 256},
		{"RMPP DATA segment", 100, &saSegment, 256},
		{"no length", 0, &smp, 256},
		{"shorter than a header", 10, &smp, 256},
		{"longer than a MAD", 4096, &smp, 256},
		{"short SMP", 64, &smp, 64},
	} {
		if got := validLength(tc.n, tc.m); got != tc.want {
			t.Errorf("%s: validLength(%d) = %d, want %d", tc.name, tc.n, got, tc.want)
		}
	}
}
