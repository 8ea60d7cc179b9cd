package sa_test

import (
	"encoding/binary"
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// keyBytes marks, in a buffer of n bytes, the bytes of every key field of
// l placed at byte off: what mad.MaskKeys must zero, taken from the
// layouts (the tables cited from IBA) rather than from MaskKeys' own
// offsets.
func keyBytes(mark []bool, l *mad.Layout, off int) {
	for _, f := range l.Fields {
		if !mad.IsKeyField(f.Name) {
			continue
		}
		for i := off + f.Bit/8; i < off+f.End()/8 && i < len(mark); i++ {
			mark[i] = true
		}
	}
}

// checkMasked fails unless b is all 0xff but for the marked bytes, which
// are zero.
func checkMasked(t *testing.T, what string, b []byte, mark []bool) {
	t.Helper()
	for i := range b {
		want := byte(0xff)
		if mark[i] {
			want = 0
		}
		if b[i] != want {
			t.Errorf("%s: byte %d = %#02x, want %#02x", what, i, b[i], want)
		}
	}
}

func ones(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xff
	}
	return b
}

func setHeader(b []byte, class uint8, attr uint16) {
	b[0], b[1] = 1, class
	binary.BigEndian.PutUint16(b[16:], attr)
}

func TestMaskKeysSMP(t *testing.T) {
	for _, c := range []struct {
		name  string
		class uint8
		frame *mad.Layout
		attr  uint16
		data  *mad.Layout
	}{
		{"LID PortInfo", mad.ClassSubnLID, smp.SMPLayout(), smp.AttrPortInfo, smp.PortInfoLayout()},
		{"DR PortInfo", mad.ClassSubnDR, smp.DRSMPLayout(), smp.AttrPortInfo, smp.PortInfoLayout()},
		{"DR SMInfo", mad.ClassSubnDR, smp.DRSMPLayout(), smp.AttrSMInfo, smp.SMInfoLayout()},
		{"LID NodeInfo", mad.ClassSubnLID, smp.SMPLayout(), smp.AttrNodeInfo, smp.NodeInfoLayout()},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := ones(mad.Size)
			setHeader(b, c.class, c.attr)
			mark := make([]bool, len(b))
			keyBytes(mark, c.frame, 0)
			keyBytes(mark, c.data, mad.SMPDataOff)
			want := ones(mad.Size)
			setHeader(want, c.class, c.attr)
			if !mad.MaskKeys(b) {
				t.Fatal("MaskKeys reported no change")
			}
			for i := range b {
				if !mark[i] && b[i] != want[i] {
					t.Errorf("byte %d changed to %#02x", i, b[i])
				}
				if mark[i] && b[i] != 0 {
					t.Errorf("key byte %d = %#02x", i, b[i])
				}
			}
			if mad.MaskKeys(b) {
				t.Error("second MaskKeys changed bytes")
			}
		})
	}
}

// TestMaskKeysSARecords segments a GetTable answer of PortInfoRecords the
// way RMPP does (200 payload bytes after the 56-byte SA header in every
// segment), masks each segment, and checks that the reassembled payload
// lost exactly each record's M_Key; the same payload as one reassembled
// message (the kernel's RMPP) too.
func TestMaskKeysSARecords(t *testing.T) {
	var pir *sa.Attr
	for _, a := range sa.Attrs() {
		if a.Layout.ID == sa.AttrPortInfoRecord {
			pir = a
		}
	}
	if pir == nil {
		t.Fatal("no PortInfoRecord")
	}
	stride := pir.Stride * 8
	const records = 13 // 13*72 = 936 bytes: 5 segments, keys across segment edges
	payload := ones(records * stride)
	mark := make([]bool, len(payload))
	for r := range records {
		keyBytes(mark, pir.Layout, r*stride)
	}
	hdr := func(b []byte, seg int) {
		setHeader(b, mad.ClassSubnAdm, sa.AttrPortInfoRecord)
		b[3] = mad.MethodGetTableRes
		b[25], b[26] = 1, 0x01 // RMPP DATA, active
		binary.BigEndian.PutUint32(b[28:], uint32(seg))
		binary.BigEndian.PutUint16(b[44:], uint16(pir.Stride))
	}
	got := make([]byte, 0, len(payload))
	const per = mad.Size - sa.HeaderSize
	for seg := 1; (seg-1)*per < len(payload); seg++ {
		b := ones(mad.Size)
		hdr(b, seg)
		n := copy(b[sa.HeaderSize:], payload[(seg-1)*per:])
		mad.MaskKeys(b)
		for i := 36; i < 44; i++ {
			if b[i] != 0 {
				t.Fatalf("segment %d: SM_Key byte %d = %#02x", seg, i, b[i])
			}
		}
		got = append(got, b[sa.HeaderSize:sa.HeaderSize+n]...)
	}
	checkMasked(t, "segmented", got, mark)

	whole := ones(sa.HeaderSize + len(payload))
	hdr(whole, 1)
	mad.MaskKeys(whole)
	checkMasked(t, "reassembled", whole[sa.HeaderSize:], mark)
}

func FuzzMaskKeys(f *testing.F) {
	b := ones(mad.Size)
	setHeader(b, mad.ClassSubnAdm, sa.AttrPortInfoRecord)
	f.Add(b)
	f.Add(b[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		mad.MaskKeys(b)
		if mad.MaskKeys(b) {
			t.Fatal("MaskKeys is not idempotent")
		}
	})
}
