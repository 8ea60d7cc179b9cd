package diag

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad"
)

var updateSAPrints = flag.Bool("update-sa-prints", false, "rewrite testdata/sa_prints.golden")

// saPrintRecords are records of every size saquery prints: zeros, ones,
// and pseudo-random bytes (a fixed seed), whole and cut short.
func saPrintRecords() [][]byte {
	rng := rand.New(rand.NewPCG(32, 9))
	var out [][]byte
	out = append(out, make([]byte, 176), []byte(strings.Repeat("\xff", 176)))
	for range 4 {
		b := make([]byte, 176)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		// A printable description and service name in some records.
		copy(b[44:], "node-desc\x00")
		copy(b[48+64:], "")
		out = append(out, b)
	}
	out = append(out, out[5][:20], out[4][:3])
	return out
}

// TestSAPrintsGolden: every section type saquery prints (records and
// print forms) prints the records of saPrintRecords as in
// testdata/sa_prints.golden, captured from the offset-reading printers
// before they read the records through the schema's layouts.
func TestSAPrintsGolden(t *testing.T) {
	var b strings.Builder
	nodeRecs := saPrintRecords()[2:4]
	for _, k := range saKinds {
		types := []string{k.Name}
		for f := range k.forms {
			types = append(types, f)
		}
		slices.Sort(types)
		for _, typ := range types {
			for i, rec := range saPrintRecords() {
				for _, v := range []struct {
					capMask2  uint32
					requested string
					names     map[uint64]string
				}{{0, "", nil}, {1 << 3, "0x" + fmt.Sprintf("%x", uint16(pad36(rec)[36])<<8|uint16(pad36(rec)[37])), map[uint64]string{mad.GID(pad36(rec)[8:24]).GUID(): "mapped"}}} {
					r := &SAResult{capMask2: v.capMask2, requested: v.requested, names: v.names, nodeRecs: nodeRecs}
					var out strings.Builder
					w := bufio.NewWriter(&out)
					r.writeRecord(w, typ, rec)
					w.Flush()
					fmt.Fprintf(&b, "== %s record %d (%d bytes) cap2 %#x requested %q\n%s", typ, i, len(rec), v.capMask2, v.requested, out.String())
				}
			}
		}
	}
	checkGolden(t, filepath.Join("testdata", "sa_prints.golden"), b.String(), *updateSAPrints)
}

// pad36 is the record with at least 38 bytes (the MLID of an
// MCMemberRecord at 36).
func pad36(b []byte) []byte {
	if len(b) < 38 {
		return append(append([]byte(nil), b...), make([]byte, 38-len(b))...)
	}
	return b
}
