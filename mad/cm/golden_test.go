package cm_test

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/mad/madtest"
)

// TestGoldenBytes pins every message's codec: the bytes i*37+11 decoded
// (every Go field and its value) and the value encoded again (the wire
// bytes, reserved bits zero), then a value with every field at its largest
// encoded. testdata/codecs.golden was written by the hand-written codecs
// the generated ones replaced; it must not change.
func TestGoldenBytes(t *testing.T) {
	in := make([]byte, cm.MsgSize)
	for i := range in {
		in[i] = byte(i*37 + 11)
	}
	var sb strings.Builder
	for _, m := range msgs {
		v := m.new()
		if err := v.UnmarshalBinary(in); err != nil {
			t.Fatalf("%s: %v", m.layout.Name, err)
		}
		enc, err := v.AppendBinary(nil)
		if err != nil {
			t.Fatalf("%s: %v", m.layout.Name, err)
		}
		// The struct's fields, not its String method's text.
		fmt.Fprintf(&sb, "# %s\n&%+v\n%s", m.layout.Name, reflect.ValueOf(v).Elem().Interface(), hex.Dump(enc))
		ones := make([]byte, cm.MsgSize)
		for i := range ones {
			ones[i] = 0xff
		}
		w := m.new()
		if err := w.UnmarshalBinary(ones); err != nil {
			t.Fatalf("%s: %v", m.layout.Name, err)
		}
		enc, err = w.AppendBinary(nil)
		if err != nil {
			t.Fatalf("%s: %v", m.layout.Name, err)
		}
		fmt.Fprintf(&sb, "every field at its largest:\n%s", hex.Dump(enc))
	}
	madtest.GoldenText(t, "testdata/codecs.golden", sb.String())
}
