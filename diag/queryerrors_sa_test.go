package diag

import (
	"fmt"
	"testing"
)

// TestSLPathTemplateGolden: path_record_query's PathRecord template and
// component mask are the bytes the hand-built template had (captured
// before it was built with sa.PathRecordTemplate): from the local port's
// GID, reversible, one path, to -D's port's GID when given.
func TestSLPathTemplateGolden(t *testing.T) {
	for _, c := range []struct {
		guid, dguid uint64
		toD         bool
		mask        uint64
		tmpl        string
	}{
		{0x2c90300000001, 0x0, false, 0x1808, "000000000000000000000000000000000000000000000000fe800000000000000002c90300000001000000000000000000810000000000000000000000000000"},
		{0x2c90300000001, 0x8f10400411a08, true, 0x180c, "0000000000000000fe800000000000000008f10400411a08fe800000000000000002c90300000001000000000000000000810000000000000000000000000000"},
	} {
		mask, tmpl := slPathTemplate(0xfe80000000000000, c.guid, c.dguid, c.toD)
		if mask != c.mask || fmt.Sprintf("%x", tmpl) != c.tmpl {
			t.Errorf("to %#x (%v): mask %#x %x\nwant mask %#x %s", c.dguid, c.toD, mask, tmpl, c.mask, c.tmpl)
		}
	}
}
