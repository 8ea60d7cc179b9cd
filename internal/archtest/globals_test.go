package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// exportedVars returns "file:line: name" for each exported package-level
// variable of the parsed file f, sentinel errors (names starting with
// "Err") excepted: an embedder could reassign or modify any other, and
// the library with it (a layout, a list of key fields, a table of names).
// Export functions that return the value, or a copy of it, instead.
func exportedVars(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if n.IsExported() && !strings.HasPrefix(n.Name, "Err") {
					out = append(out, fset.Position(n.Pos()).String()+": "+n.Name)
				}
			}
		}
	}
	return out
}

// libraryDir reports whether the package in dir (relative to the module
// root) is one embedders import: not cmd, internal or the test suites.
func libraryDir(rel string) bool {
	for _, p := range []string{"cmd", "internal", "tests", "bench", "scripts", "deploy", "docs"} {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return false
		}
	}
	return true
}

// TestNoExportedMutableVars: no library package exports a package-level
// variable other than a sentinel error.
func TestNoExportedMutableVars(t *testing.T) {
	files := eachSourceFile(t, libraryDir, func(fset *token.FileSet, _ string, f *ast.File) {
		for _, v := range exportedVars(fset, f) {
			t.Errorf("%s: an exported mutable package-level variable (make it a function or unexport it)", v)
		}
	})
	if files < 50 {
		t.Fatalf("read only %d library files", files)
	}
}

// eachSourceFile parses every non-test Go file of the repository in the
// directories keep accepts (nil: all; .git and testdata never) and calls
// fn with it and its slash-separated path from the repository's root. It
// returns how many files it read.
func eachSourceFile(t *testing.T, keep func(rel string) bool, fn func(fset *token.FileSet, rel string, f *ast.File)) int {
	t.Helper()
	fset := token.NewFileSet()
	root := "../.."
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "testdata" || rel != "." && keep != nil && !keep(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		fn(fset, rel, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestExportedVarsCatches makes sure the check would see one.
func TestExportedVarsCatches(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", `package x

import "errors"

var ErrGone = errors.New("gone")

var (
	NodeRecord = struct{ Stride int }{14}
	hidden     = 1
)

var KeyNames = []string{"M_Key"}
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := exportedVars(fset, f)
	if len(got) != 2 || !strings.HasSuffix(got[0], ": NodeRecord") || !strings.HasSuffix(got[1], ": KeyNames") {
		t.Errorf("found %q, want NodeRecord and KeyNames", got)
	}
}
