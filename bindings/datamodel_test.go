package bindings

import (
	"sort"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestDataModel: every documented table has exactly the documented
// fields (optional ones may be absent), read from a real one on the
// default fabric.
func TestDataModel(t *testing.T) {
	t.Chdir("..") // samples name files from the repository root, as the docs do
	for _, d := range dataModel {
		if d.Sample == "" {
			t.Errorf("%s has no sample", d.Name)
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			L, _, _ := newSimTestState(t)
			if err := DoString(L, "sample = "+d.Sample); err != nil {
				t.Fatalf("sample %s: %v", d.Sample, err)
			}
			tbl, ok := L.GetGlobal("sample").(*lua.LTable)
			if !ok {
				t.Fatalf("sample %s is %s, not a table", d.Sample, L.GetGlobal("sample").Type())
			}
			checkFields(t, d, tbl)
		})
	}
}

func checkFields(t *testing.T, d tableDoc, tbl *lua.LTable) {
	t.Helper()
	doc := map[string]fieldDoc{}
	for _, f := range d.Fields {
		doc[f.Key] = f
	}
	var extra []string
	have := map[string]bool{}
	tbl.ForEach(func(k, _ lua.LValue) {
		if HiddenKey(k) {
			return
		}
		have[k.String()] = true
		if _, ok := doc[k.String()]; !ok {
			extra = append(extra, k.String())
		}
	})
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("%s: fields not documented in bindings/datamodel.go: %s", d.Name, strings.Join(extra, ", "))
	}
	for _, f := range d.Fields {
		if !have[f.Key] && !f.Optional {
			t.Errorf("%s: documented field %q is missing", d.Name, f.Key)
		}
	}
}
