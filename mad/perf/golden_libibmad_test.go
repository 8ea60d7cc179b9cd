package perf_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
)

// TestGoldenLibibmad decodes the bytes i*37+11 as both layouts of
// PortExtendedSpeedsCounters with their generated codecs, re-encodes them
// and prints each row as perfquery -T would; testdata/libibmad.golden is
// what libibmad itself printed for the same bytes
// (testdata/libibmad_golden.py), row for row: the same fields at the same
// places, libibmad's "Ctr" spelled "Counter" here.
func TestGoldenLibibmad(t *testing.T) {
	golden, err := os.ReadFile("testdata/libibmad.golden")
	if err != nil {
		t.Fatal(err)
	}
	in := make([]byte, 192)
	for i := range in {
		in[i] = byte(i*37 + 11)
	}
	sections := strings.Split(strings.TrimPrefix(string(golden), "# "), "\n# ")
	if len(sections) != 2 {
		t.Fatalf("%d sections in the golden, want 2", len(sections))
	}
	for _, sec := range sections {
		name, body, _ := strings.Cut(sec, "\n")
		t.Run(name, func(t *testing.T) {
			l := perf.LayoutByName(name)
			if l == nil {
				t.Fatalf("no layout %q", name)
			}
			v := perf.CodecOf(l)
			if err := v.UnmarshalBinary(in); err != nil {
				t.Fatal(err)
			}
			enc, err := v.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := l.Each(enc, func(f mad.Field, x uint64, _ []byte) {
				val := fmt.Sprint(x)
				if f.Kind == mad.Hex {
					val = fmt.Sprintf("0x%0*x", (f.Width+7)/8*2, x)
				}
				got = append(got, f.Name+":"+val)
			}); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
				k, val, _ := strings.Cut(line, ":")
				want = append(want, strings.ReplaceAll(k, "Ctr", "Counter")+":"+strings.TrimLeft(val, "."))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("ibscript:\n%s\nlibibmad:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
