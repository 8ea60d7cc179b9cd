package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
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
