package cc_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
)

// TestNewRequestBytes: a CC Get as ibccquery sends it (libibmad's
// cc_query_status_via): base version 1, class 0x21, class version 2,
// method, TID, attribute, modifier, CC_Key at byte 24, data zero.
func TestNewRequestBytes(t *testing.T) {
	var buf [mad.Size]byte
	b, err := cc.NewRequest(buf[:], mad.MethodGet, 0x0102030405060708, cc.AttrSwitchPortCongestionSetting, 1, 0x1122334455667788)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString("01210201000000000102030405060708001500000000000111223344556677880000")
	if !bytes.Equal(b[:len(want)], want) || !bytes.Equal(b[len(want):], make([]byte, mad.Size-len(want))) {
		t.Errorf("request\n%x\nwant\n%x", b, want)
	}
	if cc.Key(b) != 0x1122334455667788 {
		t.Errorf("Key = %#x", cc.Key(b))
	}
	if d := cc.Data(b); len(d) != 192 || &d[0] != &b[64] {
		t.Errorf("Data: %d bytes", len(d))
	}
	b, _ = cc.NewRequest(buf[:], mad.MethodGet, 1, cc.AttrCongestionLog, 0, 0)
	if d := cc.Data(b); len(d) != 224 || &d[0] != &b[32] {
		t.Errorf("CongestionLog Data: %d bytes", len(d))
	}
	if _, err := cc.NewRequest(make([]byte, 10), mad.MethodGet, 1, cc.AttrTimestamp, 0, 0); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("short buffer: %v", err)
	}
	if cc.Data(make([]byte, 100)) != nil || cc.Key(nil) != 0 {
		t.Error("short MAD: data or key")
	}
}

// TestMaskKeysCC: the CC_Key of the header and of CongestionKeyInfo's
// data are zeroed; other attributes' data is left alone.
func TestMaskKeysCC(t *testing.T) {
	var buf [mad.Size]byte
	b, _ := cc.NewRequest(buf[:], mad.MethodSet, 1, cc.AttrCongestionKeyInfo, 0, 0xdeadbeef)
	ki := cc.CongestionKeyInfo{CCKey: 0xfeedface12345678, CCKeyLeasePeriod: 60}
	if _, err := ki.AppendBinary(cc.Data(b)[:0]); err != nil {
		t.Fatal(err)
	}
	if !mad.MaskKeys(b) {
		t.Fatal("nothing masked")
	}
	var got cc.CongestionKeyInfo
	if err := got.UnmarshalBinary(cc.Data(b)); err != nil {
		t.Fatal(err)
	}
	if cc.Key(b) != 0 || got.CCKey != 0 || got.CCKeyLeasePeriod != 60 {
		t.Errorf("after MaskKeys: header key %#x, CongestionKeyInfo %+v", cc.Key(b), got)
	}
	b, _ = cc.NewRequest(buf[:], mad.MethodSet, 1, cc.AttrTimestamp, 0, 0)
	cc.Data(b)[0] = 0xff
	if mad.MaskKeys(b) || cc.Data(b)[0] != 0xff {
		t.Error("Timestamp data masked")
	}
}

// TestLogLayout: CongestionLog's layout is chosen by LogType.
func TestLogLayout(t *testing.T) {
	for _, tc := range []struct {
		d    []byte
		want *mad.Layout
	}{{[]byte{1}, cc.CongestionLogLayout()}, {[]byte{2}, cc.CongestionLogCALayout()}} {
		if l, err := cc.LogLayout(tc.d); err != nil || l != tc.want {
			t.Errorf("LogType %d: %v %v", tc.d[0], l, err)
		}
	}
	for _, d := range [][]byte{nil, {0}, {3}} {
		if _, err := cc.LogLayout(d); err == nil {
			t.Errorf("LogType %v: no error", d)
		}
	}
	if cc.LayoutByName("CongestionLogCA") != cc.CongestionLogCALayout() || cc.LayoutByID(cc.AttrCongestionLog) != cc.CongestionLogLayout() {
		t.Error("index")
	}
}
