package umad

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkLayout(t *testing.T, name string, l []abiField, total int) {
	t.Helper()
	end := 0
	for _, f := range l {
		if f.Offset != end {
			t.Errorf("%s.%s at %d, want %d (gap or overlap)", name, f.Name, f.Offset, end)
		}
		end = f.Offset + f.Size
	}
	if name == "reg_req" {
		end++ // one byte of tail padding
	}
	if end != total {
		t.Errorf("%s ends at %d, want %d", name, end, total)
	}
}

func TestLayouts(t *testing.T) {
	checkLayout(t, "ib_user_mad_hdr", headerLayout, HeaderSize)
	checkLayout(t, "reg_req", regReqLayout, RegReqSize)
	checkLayout(t, "reg_req2", regReq2Layout, RegReq2Size)
	for _, f := range headerLayout {
		if f.Name == "pkey_index" && f.Offset != HeaderSizeOld {
			t.Errorf("pkey_index at %d: ib_user_mad_hdr_old must end there (%d)", f.Offset, HeaderSizeOld)
		}
	}
}

// The example of umad-abi.md section 16.3, on a little-endian 64-bit host:
// reg_req for class 0x03, version 2, rmpp 1, no methods.
func TestRegReqGolden(t *testing.T) {
	r := RegReq{QPN: 1, Class: 0x03, Version: 2, RMPPVersion: 1}
	got := r.Marshal()
	want := make([]byte, RegReqSize)
	want[20], want[21], want[22], want[26] = 1, 0x03, 0x02, 0x01
	if !bytes.Equal(got[:], want) {
		t.Errorf("reg_req:\n%s\nwant:\n%s", hex.Dump(got[:]), hex.Dump(want))
	}
	// Methods Get (1), GetResp (0x81) and Trap (5), OUI 00:14:05, id 7.
	r = RegReq{ID: 7, QPN: 1, Class: 0x09, Version: 1, OUI: 0x001405, Methods: [2]uint64{1<<1 | 1<<5, 1 << 1}}
	got = r.Marshal()
	var w [RegReqSize]byte
	binary.NativeEndian.PutUint32(w[0:], 7)
	// The mask is 128 bits in native words; on little-endian hosts that is
	// bytes in bit order.
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		copy(w[4:], unhex(t, "22000000 00000000 02000000 00000000"))
	} else {
		putMask(w[4:20], r.Methods, longSize)
	}
	copy(w[20:], []byte{1, 0x09, 1, 0x00, 0x14, 0x05, 0})
	if got != w {
		t.Errorf("reg_req:\n%s\nwant:\n%s", hex.Dump(got[:]), hex.Dump(w[:]))
	}
	var back RegReq
	back.Unmarshal(got[:])
	if back != r {
		t.Errorf("round trip: %+v, want %+v", back, r)
	}
}

func TestMaskWords(t *testing.T) {
	m := [2]uint64{0x8000000000000001, 0x0000000100000002}
	for _, ws := range []uintptr{4, 8} {
		var b [16]byte
		putMask(b[:], m, ws)
		if got := getMask(b[:], ws); got != m {
			t.Errorf("word size %d: round trip %x, want %x", ws, got, m)
		}
	}
	// 32-bit words: word i holds bits 32i..32i+31.
	var b [16]byte
	putMask(b[:], m, 4)
	for i, want := range []uint32{1, 0x80000000, 2, 1} {
		if got := binary.NativeEndian.Uint32(b[4*i:]); got != want {
			t.Errorf("32-bit word %d = %#x, want %#x", i, got, want)
		}
	}
}

func TestRegReq2Golden(t *testing.T) {
	r := RegReq2{ID: 3, QPN: 1, Class: 0x30, Version: 1, Flags: FlagUserRMPP,
		Methods: [2]uint64{1 << 1, 0}, OUI: 0x001405, RMPPVersion: 1}
	got := r.Marshal()
	var w [RegReq2Size]byte
	binary.NativeEndian.PutUint32(w[0:], 3)
	binary.NativeEndian.PutUint32(w[4:], 1)
	w[8], w[9] = 0x30, 1
	binary.NativeEndian.PutUint32(w[12:], 1)
	binary.NativeEndian.PutUint64(w[16:], 2)
	binary.NativeEndian.PutUint32(w[32:], 0x001405) // host order, unlike reg_req
	w[36] = 1
	if got != w {
		t.Errorf("reg_req2:\n%s\nwant:\n%s", hex.Dump(got[:]), hex.Dump(w[:]))
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		want := unhex(t, `03000000 01000000 3001 0000 01000000
			0200000000000000 0000000000000000 05140000 01 000000`)
		if !bytes.Equal(got[:], want) {
			t.Errorf("little-endian reg_req2:\n%s\nwant:\n%s", hex.Dump(got[:]), hex.Dump(want))
		}
	}
	var back RegReq2
	back.Unmarshal(got[:])
	if back != r {
		t.Errorf("round trip: %+v, want %+v", back, r)
	}
}

func sampleHeader() Header {
	h := Header{Agent: 2, Status: 110, TimeoutMS: 100, Retries: 3, Length: 320, QPN: 1, QKey: 0x80010000,
		LID: 0x1234, SL: 5, PathBits: 1, GRHPresent: true, GIDIndex: 2, HopLimit: 63, TrafficClass: 7,
		FlowLabel: 0xabcde, PKeyIndex: 0x0102}
	for i := range h.GID {
		h.GID[i] = byte(0xf0 + i)
	}
	return h
}

func TestHeaderGolden(t *testing.T) {
	h := sampleHeader()
	// Little-endian host: host-order fields are little-endian, __be fields
	// big-endian.
	want := unhex(t, `
		02000000 6e000000 64000000 03000000 40010000
		00000001 80010000 1234 05 01 01 02 3f 07
		f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
		000abcde 0201 000000000000`)
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("golden bytes are for little-endian hosts")
	}
	b := make([]byte, HeaderSize)
	h.Put(b, HeaderSize)
	if !bytes.Equal(b, want) {
		t.Errorf("64-byte header:\n%s\nwant:\n%s", hex.Dump(b), hex.Dump(want))
	}
	old := make([]byte, HeaderSizeOld)
	h.Put(old, HeaderSizeOld)
	if !bytes.Equal(old, want[:HeaderSizeOld]) {
		t.Errorf("56-byte header:\n%s\nwant:\n%s", hex.Dump(old), hex.Dump(want[:HeaderSizeOld]))
	}
	var back Header
	back.Decode(b, HeaderSize)
	if back != h {
		t.Errorf("decode 64: %+v, want %+v", back, h)
	}
	back.Decode(old, HeaderSizeOld)
	h.PKeyIndex = 0
	if back != h {
		t.Errorf("decode 56: %+v, want %+v", back, h)
	}
}

// Every layout field is where Put writes the matching Header field.
func TestHeaderLayoutMatchesPut(t *testing.T) {
	h := sampleHeader()
	b := make([]byte, HeaderSize)
	h.Put(b, HeaderSize)
	get := func(f abiField) uint64 {
		v := b[f.Offset : f.Offset+f.Size]
		switch {
		case f.Size == 1:
			return uint64(v[0])
		case f.Size == 2 && f.BigEndian:
			return uint64(binary.BigEndian.Uint16(v))
		case f.Size == 2:
			return uint64(binary.NativeEndian.Uint16(v))
		case f.Size == 4 && f.BigEndian:
			return uint64(binary.BigEndian.Uint32(v))
		case f.Size == 4:
			return uint64(binary.NativeEndian.Uint32(v))
		}
		return 0
	}
	want := map[string]uint64{"id": 2, "status": 110, "timeout_ms": 100, "retries": 3, "length": 320, "qpn": 1,
		"qkey": 0x80010000, "lid": 0x1234, "sl": 5, "path_bits": 1, "grh_present": 1, "gid_index": 2,
		"hop_limit": 63, "traffic_class": 7, "flow_label": 0xabcde, "pkey_index": 0x0102}
	for _, f := range headerLayout {
		if w, ok := want[f.Name]; ok && get(f) != w {
			t.Errorf("%s at %d = %#x, want %#x", f.Name, f.Offset, get(f), w)
		}
	}
}

func FuzzHeaderRoundTrip(f *testing.F) {
	b := make([]byte, HeaderSize)
	h := sampleHeader()
	h.Put(b, HeaderSize)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < HeaderSize {
			return
		}
		b = b[:HeaderSize]
		var h Header
		h.Decode(b, HeaderSize)
		out := make([]byte, HeaderSize)
		h.Put(out, HeaderSize)
		var h2 Header
		h2.Decode(out, HeaderSize)
		if h != h2 {
			t.Errorf("decode(put(decode(b))) = %+v, want %+v", h2, h)
		}
	})
}

// TestHeaderGoldenRoCE: the header of a MAD to an agent on a RoCE port, as
// libibumad's umad_set_addr(u, 0, 1, 0, 0x80010000) and umad_set_grh with
// the peer's GID fd00::2, source gid_index 2, hop limit 64, traffic class
// 0x20 and flow label 0x12345 (host order, stored big-endian) write it.
func TestHeaderGoldenRoCE(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("golden bytes are for little-endian hosts")
	}
	h := Header{Agent: 1, TimeoutMS: 1000, Retries: 2, QPN: 1, QKey: 0x80010000, GRHPresent: true,
		GIDIndex: 2, HopLimit: 64, TrafficClass: 0x20, FlowLabel: 0x12345,
		GID: [16]byte{0: 0xfd, 15: 2}}
	want := unhex(t, `
		01000000 00000000 e8030000 02000000 00000000
		00000001 80010000 0000 00 00 01 02 40 20
		fd000000000000000000000000000002
		00012345 0000 000000000000`)
	b := make([]byte, HeaderSize)
	h.Put(b, HeaderSize)
	if !bytes.Equal(b, want) {
		t.Errorf("RoCE header:\n%s\nwant:\n%s", hex.Dump(b), hex.Dump(want))
	}
	var back Header
	back.Decode(want, HeaderSize)
	if back != h {
		t.Errorf("decode: %+v, want %+v", back, h)
	}
}
