package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// offsetsAllowed are the places that may read and write wire bytes at
// offsets written by hand (a path ending in "/" is a directory and all
// below it), each with its reason. Everywhere else a MAD's bytes are read
// and written through the schema: the generated types and layouts of mad,
// mad/smp, mad/perf, mad/sa, mad/cc and mad/cm (mad/internal/madgen), and
// mad's header accessors (AttrModOf, SetStatus, ...).
var offsetsAllowed = map[string]string{
	"mad/":                       "the schema's codecs and the hand-written header layouts: where the offsets live",
	"native/":                    "the kernel's ABI structs (ib_user_mad_hdr, rdma_cm's), each with its layout table; std only",
	"fabric/ibsim/":              "ibsim's datagram and control protocol (struct sim_request and friends, a sockaddr's port): the transport's wire",
	"sim/frame.go":               "the simulator's wire frame around a MAD (ibsim's wire, as fabric/ibsim reads it)",
	"fabric/fabric.go":           "fabric imports nothing of this module (std only): an Addr's GID as its 16 bytes",
	"fabric/fabrictest/suite.go": "the conformance suite's payload pattern (a TID after the header), no MAD field",
	"fabric/record/":             "the replay transport matches recorded requests on their wire bytes (TIDs, a DR SMP's path and header as a key)",
	"rdmacm/ibcm/iphdr.go":       "librdmacm's cma_hdr in the CM's private data: the RDMA CM's wire, no MAD attribute",
	"rdmacm/ibcm/channel.go":     "the node GUID as the 8 bytes of a REJ's ARI (an opaque byte array of the CM schema)",
	"internal/keytest/":          "the encodings of a secret key a test looks for in output, no wire format",
}

// offsetAllowed returns the entry of offsetsAllowed that covers rel.
func offsetAllowed(rel string) (string, bool) {
	for p := range offsetsAllowed {
		if rel == p || strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p) {
			return p, true
		}
	}
	return "", false
}

// handOffsets returns "file:line: what" for each place in f that reads or
// writes bytes at an offset written by hand: encoding/binary's BigEndian,
// a mad.Field literal placing a row (Bit, or fields by position) that the
// schema does not hold, and a be16/32/64-style helper (a function of one
// []byte returning an unsigned integer, named so: be16(b[40:42])) and a
// number assembled from bytes by hand (uint16(b[2])<<8 | uint16(b[3])).
func handOffsets(fset *token.FileSet, f *ast.File) []string {
	binaryName, madName := "", ""
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch path {
		case "encoding/binary":
			binaryName = name
		case module + "/mad":
			madName = name
		}
	}
	var out []string
	at := func(n ast.Node, what string) {
		out = append(out, fset.Position(n.Pos()).String()+": "+what)
	}
	isPkgSel := func(e ast.Expr, pkg, sel string) bool {
		s, ok := e.(*ast.SelectorExpr)
		if !ok || pkg == "" {
			return false
		}
		x, ok := s.X.(*ast.Ident)
		return ok && x.Name == pkg && s.Sel.Name == sel
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if isPkgSel(n, binaryName, "BigEndian") {
				at(n, "binary.BigEndian")
			}
		case *ast.CompositeLit:
			if !isPkgSel(n.Type, madName, "Field") {
				break
			}
			for _, e := range n.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					at(n, "a mad.Field literal by position")
					break
				}
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Bit" {
					at(n, "a mad.Field{Bit: ...} literal")
				}
			}
		case *ast.FuncDecl:
			if sliceHelper(n) {
				at(n, "a be16-style helper "+n.Name.Name+"([]byte) uintN")
			}
		case *ast.CallExpr:
			if f, ok := n.Fun.(*ast.Ident); ok && helperName.MatchString(f.Name) && len(n.Args) == 1 {
				if _, ok := n.Args[0].(*ast.SliceExpr); ok {
					at(n, "a be16-style helper on a slice: "+f.Name+"(b[x:y])")
				}
			}
		case *ast.BinaryExpr:
			if byteShift(n) {
				at(n, "a byte shifted into place by hand")
			}
		}
		return true
	})
	return out
}

// helperName matches the names of be16-style helpers: a number read from
// the start of a slice, which callers feed hand offsets (be32(b[4:8])).
var helperName = regexp.MustCompile(`^(be|get|read|u|uint|ntoh[ls]?)(16|24|32|64)$`)

// sliceHelper reports whether fd is a be16-style helper: a function (no
// method) named so, of one []byte, returning an unsigned integer.
func sliceHelper(fd *ast.FuncDecl) bool {
	ft := fd.Type
	if fd.Recv != nil || !helperName.MatchString(fd.Name.Name) || ft.Params == nil || len(ft.Params.List) != 1 ||
		len(ft.Params.List[0].Names) > 1 || ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
		return false
	}
	a, ok := ft.Params.List[0].Type.(*ast.ArrayType)
	if !ok || a.Len != nil {
		return false
	}
	if e, ok := a.Elt.(*ast.Ident); !ok || e.Name != "byte" && e.Name != "uint8" {
		return false
	}
	r, ok := ft.Results.List[0].Type.(*ast.Ident)
	return ok && slices.Contains([]string{"uint16", "uint32", "uint64"}, r.Name)
}

// byteShift reports whether e is a byte of a slice shifted into place by
// hand: uint16(b[i]) << 8, the bytes of a big-endian number assembled one
// by one.
func byteShift(e *ast.BinaryExpr) bool {
	if e.Op != token.SHL {
		return false
	}
	c, ok := e.X.(*ast.CallExpr)
	if !ok || len(c.Args) != 1 {
		return false
	}
	if f, ok := c.Fun.(*ast.Ident); !ok || !slices.Contains([]string{"uint16", "uint32", "uint64"}, f.Name) {
		return false
	}
	if _, ok := c.Args[0].(*ast.IndexExpr); !ok {
		return false
	}
	n, ok := e.Y.(*ast.BasicLit)
	if !ok || n.Kind != token.INT {
		return false
	}
	v, err := strconv.Atoi(n.Value)
	return err == nil && v > 0 && v%8 == 0
}

// TestNoHandOffsets: outside the wire layers (offsetsAllowed), no code
// reads or writes MAD bytes at hand-written offsets; the schema's types
// and layouts do (issue 32 item 3). Tests may build raw bytes.
func TestNoHandOffsets(t *testing.T) {
	used := map[string]bool{}
	files := eachSourceFile(t, nil, func(fset *token.FileSet, rel string, f *ast.File) {
		found := handOffsets(fset, f)
		if p, ok := offsetAllowed(rel); ok {
			used[p] = used[p] || len(found) > 0
			return
		}
		for _, s := range found {
			t.Errorf("%s: a hand-written offset: read and write MADs through the schema's types and layouts (mad/internal/madgen), or list the file in offsetsAllowed with its reason if it is a wire layer", s)
		}
	})
	if files < 100 {
		t.Fatalf("read only %d files", files)
	}
	for p := range offsetsAllowed {
		if !used[p] {
			t.Logf("offsetsAllowed[%q] covers no hand offset now: remove it", p)
		}
	}
}

// TestHandOffsetsCatches makes sure the check sees each form.
func TestHandOffsetsCatches(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", `package x

import (
	bin "encoding/binary"

	"github.com/ibscript/ibscript/mad"
)

var row = mad.Field{Name: "LID", Bit: 128, Width: 16}
var pos = mad.Field{"LID", "lid", 128, 16, 0, ""}
var fine = mad.Field{Name: "LID"}

func be16(b []byte) uint16 { return bin.BigEndian.Uint16(b) }

func lid(b []byte) uint16 { return uint16(b[40])<<8 | uint16(b[41]) }

func mod(b []byte) uint32 { return u32(b[20:24]) }

func ok(b []byte, n int) uint16 { return uint16(n) << 8 }
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := handOffsets(fset, f)
	want := []string{"x.go:9:11: a mad.Field{Bit: ...} literal", "x.go:10:11: a mad.Field literal by position",
		"x.go:13:1: a be16-style helper be16([]byte) uintN", "x.go:13:37: binary.BigEndian",
		"x.go:15:36: a byte shifted into place by hand", "x.go:17:36: a be16-style helper on a slice: u32(b[x:y])"}
	if !slices.Equal(got, want) {
		t.Errorf("found\n%q\nwant\n%q", got, want)
	}
}
