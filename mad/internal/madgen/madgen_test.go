package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscript/ibscript/mad"
)

// TestFresh fails when a generated file differs from what the schema
// generates now: run `go generate ./mad/` after changing the schema or the
// generator.
func TestFresh(t *testing.T) {
	for _, o := range outputs {
		want, err := generate(o.pkg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "..", o.path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate ./mad/`", o.path)
		}
	}
}

// TestSchema checks what the generator relies on: unique names and IDs per
// package, rows inside the attribute, no two rows on the same bits, one
// component number per row of a record.
func TestSchema(t *testing.T) {
	type key struct {
		pkg string
		id  uint16
	}
	ids := map[key]string{}
	names := map[string]bool{}
	for _, a := range all() {
		if a.Ref != "" {
			if find(a.Ref) == nil {
				t.Errorf("%s.%s refers to unknown %s", a.Pkg, a.Name, a.Ref)
			}
			continue
		}
		if names[a.Name] {
			t.Errorf("%s defined twice", a.Name)
		}
		names[a.Name] = true
		k := key{a.Pkg, a.ID}
		other, dup := ids[k]
		switch {
		case dup && !a.Alt:
			t.Errorf("%s and %s share ID %#04x in %s", other, a.Name, a.ID, a.Pkg)
		case !dup && a.Alt:
			t.Errorf("%s is an Alt layout of ID %#04x, which no attribute before it has", a.Name, a.ID)
		case !dup:
			ids[k] = a.Name
		}
		end := 0
		for _, r := range rows(a) {
			if r.f.Bit < end {
				t.Errorf("%s: row %v overlaps the one before", a.Name, r.f)
			}
			end = r.f.End()
			if end > 8*a.Size {
				t.Errorf("%s: row %v ends past %d bytes", a.Name, r.f, a.Size)
			}
		}
		if a.Pkg == "sa" && len(comps(a)) != len(rows(a)) {
			t.Errorf("%s: %d component numbers for %d rows", a.Name, len(comps(a)), len(rows(a)))
		}
	}
}

// TestDumpAndCounterTags checks the libibmad and counter tags: a dumped
// or counted row is a number of at most 64 bits, the exporter's series
// names are unique, and only counters carry Prom, Select and Cap.
func TestDumpAndCounterTags(t *testing.T) {
	prom := map[string]string{}
	for _, a := range all() {
		for _, f := range a.Fields {
			where := a.Name + "." + f.Name
			if (f.Dump != 0 || f.Counter) && (f.Width > 64 || f.Kind == mad.String || f.Kind == mad.Bytes) {
				t.Errorf("%s: dumped or counted but not a number of at most 64 bits", where)
			}
			if f.IB != "" && f.Dump == 0 {
				t.Errorf("%s: a libibmad name without a Dump", where)
			}
			if !f.Counter && (f.Prom != "" || f.Select != 0 || f.Cap != "") {
				t.Errorf("%s: Prom, Select or Cap on a row that is no Counter", where)
			}
			if f.Select < 0 || f.Select > 24 {
				t.Errorf("%s: Select %d is no CounterSelect bit", where, f.Select)
			}
			if f.Prom != "" {
				if other, dup := prom[f.Prom]; dup {
					t.Errorf("%s: series %s is %s's too", where, f.Prom, other)
				}
				prom[f.Prom] = where
			}
		}
	}
	if len(prom) == 0 {
		t.Error("no counter has a series name")
	}
}
