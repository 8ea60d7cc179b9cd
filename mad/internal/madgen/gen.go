package main

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/mad"
)

// outputs maps each package to the generated file, relative to the module
// root.
var outputs = []struct{ pkg, path string }{
	{"mad", "mad/attrs_gen.go"},
	{"smp", "mad/smp/attrs_gen.go"},
	{"perf", "mad/perf/attrs_gen.go"},
	{"sa", "mad/sa/attrs_gen.go"},
	{saTemplatesPkg, "mad/sa/templates_gen.go"},
	{"cc", "mad/cc/attrs_gen.go"},
	{"cm", "mad/cm/attrs_gen.go"},
}

// row is one flattened layout row of an attribute.
type row struct {
	f    mad.Field
	src  *Field // the schema field it comes from (embedded rows: the embedded attribute's)
	idx  int    // entry of a repeated field, else -1
	emb  bool   // comes from an embedded attribute
	name string // Name of the row variable, "" for none
	comp int    // SA component number, -1 for none
}

// rows flattens a's fields into layout rows, in bit order.
func rows(a *Attr) []row {
	var out []row
	for i := range a.Fields {
		f := &a.Fields[i]
		switch {
		case f.Embed != "":
			e := find(f.Embed)
			if e == nil {
				panic(fmt.Sprintf("%s.%s embeds unknown %s", a.Name, f.Name, f.Embed))
			}
			c, end := -1, f.Bit
			if f.Comp != nil {
				c = *f.Comp
			}
			for _, r := range rows(e) {
				r.f.Bit += f.Bit
				r.emb, r.name, r.comp = true, "", -1
				if c >= 0 {
					if r.f.Bit > end {
						c++ // a reserved field takes a number too
					}
					r.comp = c
					c++
					end = r.f.End()
				}
				out = append(out, r)
			}
		case f.Count > 0:
			for j := range f.Count {
				comp := -1
				if f.Comp != nil {
					comp = *f.Comp + j
				}
				out = append(out, row{f: mad.Field{Name: f.Name + strconv.Itoa(j), Bit: f.Bit + j*f.Stride,
					Width: f.Width, Kind: f.Kind, Doc: f.Doc}, src: f, idx: j, comp: comp})
			}
		default:
			v := f.Var
			if v == "" {
				v = a.Prefix + f.goField()
			}
			comp := -1
			if f.Comp != nil {
				comp = *f.Comp
			}
			out = append(out, row{f: mad.Field{Name: f.Name, Bit: f.Bit, Width: f.Width, Kind: f.Kind, Doc: f.Doc},
				src: f, idx: -1, name: v, comp: comp})
		}
	}
	slices.SortStableFunc(out, func(x, y row) int { return x.f.Bit - y.f.Bit })
	if a.GapComps {
		c, end := 0, 0
		for i := range out {
			if out[i].f.Bit > end {
				c++
			}
			out[i].comp = c
			c++
			end = out[i].f.End()
		}
	}
	return out
}

// goType is the Go type of one entry of f (not the array).
func goType(a *Attr, f *Field) string {
	if f.Type != "" {
		return f.Type
	}
	q := "mad."
	if a.Pkg == "mad" {
		q = ""
	}
	switch {
	case f.Embed != "":
		e := find(f.Embed)
		if e.Pkg == a.Pkg {
			return e.Type
		}
		return e.Pkg + "." + e.Type
	case f.Kind == mad.String:
		return "string"
	case f.Kind == mad.Bytes && f.Width == 128:
		return q + "GID"
	case f.Kind == mad.Bytes:
		return fmt.Sprintf("[%d]byte", f.Width/8)
	case f.Width == 1:
		return "bool"
	case f.Width <= 8:
		return "uint8"
	case f.Width <= 16:
		return "uint16"
	case f.Width <= 32:
		return "uint32"
	}
	return "uint64"
}

func typeBits(t string) int {
	switch t {
	case "uint8":
		return 8
	case "uint16":
		return 16
	case "uint32":
		return 32
	case "uint64":
		return 64
	}
	return 0
}

// alignedGet is the load of the byte-aligned 8, 16, 32 or 64 bits at byte
// o of b, typed uint8 ... uint64; "" for another width.
func alignedGet(b string, o, width int) string {
	switch width {
	case 8:
		return fmt.Sprintf("%s[%d]", b, o)
	case 16, 32, 64:
		return fmt.Sprintf("binary.BigEndian.Uint%d(%s[%d:])", width, b, o)
	}
	return ""
}

// alignedPut stores v (of the matching uint type) into the byte-aligned 8,
// 16, 32 or 64 bits at byte o of d; it reports false for another width.
func alignedPut(w *bytes.Buffer, d string, o, width int, v string) bool {
	switch width {
	case 8:
		fmt.Fprintf(w, "%s[%d] = %s\n", d, o, v)
	case 16, 32, 64:
		fmt.Fprintf(w, "binary.BigEndian.PutUint%d(%s[%d:], %s)\n", width, d, o, v)
	default:
		return false
	}
	return true
}

// getExpr is a uint64 expression reading the field at bit/width of b.
func getExpr(b string, bit, width int) string {
	o, r := bit/8, bit%8
	last := (bit + width - 1) / 8
	n := last - o + 1
	if r == 0 {
		if e := alignedGet(b, o, width); e != "" {
			if width == 64 {
				return e
			}
			return "uint64(" + e + ")"
		}
	}
	if n > 8 {
		panic(fmt.Sprintf("field at bit %d, %d bits, spans %d bytes", bit, width, n))
	}
	var load string
	switch n {
	case 1:
		load = fmt.Sprintf("uint64(%s[%d])", b, o)
	case 2:
		load = fmt.Sprintf("uint64(binary.BigEndian.Uint16(%s[%d:]))", b, o)
	case 4:
		load = fmt.Sprintf("uint64(binary.BigEndian.Uint32(%s[%d:]))", b, o)
	case 8:
		load = fmt.Sprintf("binary.BigEndian.Uint64(%s[%d:])", b, o)
	default:
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf("uint64(%s[%d])<<%d", b, o+i, 8*(n-1-i)))
		}
		load = "(" + strings.Join(parts, " | ") + ")"
	}
	expr := load
	if shift := 8*n - r - width; shift > 0 {
		expr = fmt.Sprintf("%s>>%d", load, shift)
	}
	if r > 0 {
		if expr == load {
			expr = fmt.Sprintf("%s&%#x", expr, uint64(1)<<width-1)
		} else {
			expr = fmt.Sprintf("(%s)&%#x", expr, uint64(1)<<width-1)
		}
	}
	return expr
}

// putLines stores the uint64 expression v, known to fit width bits, into
// the zeroed field at bit/width of d.
func putLines(w *bytes.Buffer, d string, bit, width int, v string) {
	o, r := bit/8, bit%8
	last := (bit + width - 1) / 8
	n := last - o + 1
	if r == 0 && alignedPut(w, d, o, width, fmt.Sprintf("uint%d(%s)", max(width, 8), v)) {
		return
	}
	if n > 8 {
		panic(fmt.Sprintf("field at bit %d, %d bits, spans %d bytes", bit, width, n))
	}
	shift := 8*n - r - width
	if n == 1 {
		fmt.Fprintf(w, "%s[%d] |= byte(%s) << %d\n", d, o, v, shift)
		return
	}
	fmt.Fprintf(w, "{\nx := %s << %d\n", v, shift)
	for i := range n {
		fmt.Fprintf(w, "%s[%d] |= byte(x >> %d)\n", d, o+i, 8*(n-1-i))
	}
	w.WriteString("}\n")
}

func lower(s string) string { return strings.ToLower(s) }

// recv is a method receiver's name for type t: its first letter, or its
// first two where one letter would be a local of the generated code (b,
// d, x, all).
func recv(t string) string {
	r := strings.ToLower(t[:1])
	switch r {
	case "a", "b", "d", "x":
		return strings.ToLower(t[:2])
	}
	return r
}

// fieldKind is the Go expression of a mad.Kind.
func fieldKind(q string, k mad.Kind) string {
	switch k {
	case mad.Hex:
		return q + "Hex"
	case mad.String:
		return q + "String"
	case mad.Bytes:
		return q + "Bytes"
	}
	return ""
}

func fieldLit(q string, f mad.Field) string {
	s := fmt.Sprintf("%sField{Name: %q, LuaKey: %q, Bit: %d, Width: %d", q, f.Name, mad.SnakeName(f.Name), f.Bit, f.Width)
	if k := fieldKind(q, f.Kind); k != "" {
		s += ", Kind: " + k
	}
	if f.Doc != "" {
		s += fmt.Sprintf(", Doc: %q", f.Doc)
	}
	return s + "}"
}

// generate returns the formatted source of pkg's generated file.
func generate(pkg string) ([]byte, error) {
	if pkg == saTemplatesPkg {
		return generateSATemplates()
	}
	var attrs []*Attr
	for _, a := range all() {
		if a.Pkg == pkg {
			attrs = append(attrs, a)
		}
	}
	slices.SortStableFunc(attrs, func(x, y *Attr) int { return int(attrID(x)) - int(attrID(y)) })
	q := "mad."
	if pkg == "mad" {
		q = ""
	}
	var w bytes.Buffer
	fmt.Fprintf(&w, "// Code generated by mad/internal/madgen from its schema; DO NOT EDIT.\n\npackage %s\n\n", pkg)
	w.WriteString("import (\n\"encoding/binary\"\n")
	if pkg == "smp" || pkg == "perf" || pkg == "cc" || pkg == "cm" {
		w.WriteString("\"strings\"\n")
	}
	if pkg != "mad" {
		w.WriteString("\n\"github.com/ibscript/ibscript/mad\"\n")
	}
	if needs(attrs, "smp") && pkg != "smp" {
		w.WriteString("\"github.com/ibscript/ibscript/mad/smp\"\n")
	}
	w.WriteString(")\n\n")
	w.WriteString("var _ = binary.BigEndian\n\n")

	// Attribute IDs.
	w.WriteString("// Attribute IDs of the attributes in the schema.\nconst (\n")
	for _, a := range attrs {
		if a.Ref == "" && a.ID != 0 && !a.Alt {
			fmt.Fprintf(&w, "%s uint16 = %#04x // %s\n", a.constName(), a.ID, a.Name)
		}
	}
	w.WriteString(")\n\n")

	for _, a := range attrs {
		if a.Ref != "" {
			continue
		}
		genAttr(&w, q, a)
	}
	genIndex(&w, pkg, q, attrs)
	genDumpIndex(&w, q, attrs)
	genCounters(&w, attrs)
	src, err := format.Source(w.Bytes())
	if err != nil {
		return w.Bytes(), fmt.Errorf("%s: %v", pkg, err)
	}
	return src, nil
}

func attrID(a *Attr) uint16 {
	if a.Ref != "" {
		return find(a.Ref).ID
	}
	return a.ID
}

func needs(attrs []*Attr, pkg string) bool {
	for _, a := range attrs {
		for _, f := range a.Fields {
			if f.Embed != "" && find(f.Embed).Pkg == pkg && a.Type != "" {
				return true
			}
		}
	}
	return false
}

func genAttr(w *bytes.Buffer, q string, a *Attr) {
	rs := rows(a)
	lname := lower(a.Name)
	// Row variables.
	var named []row
	for _, r := range rs {
		if r.name != "" {
			named = append(named, r)
		}
	}
	if len(named) > 0 {
		fmt.Fprintf(w, "// %s rows (IBA table %q).\nvar (\n", a.Name, a.Name)
		for _, r := range named {
			fmt.Fprintf(w, "%s = %s\n", r.name, fieldLit(q, r.f))
		}
		w.WriteString(")\n\n")
	}
	// Layout.
	fmt.Fprintf(w, "// %s returns the layout of the %s attribute (%#04x, %d bytes). It is\n// shared and must not be modified.\nfunc %s() *%sLayout { return &%s }\n\n", a.layoutName(), a.Name, a.ID, a.Size, a.layoutName(), q, a.layoutVar())
	fmt.Fprintf(w, "var %s = %sLayout{\nName: %q,\nID: %s,\nSize: %d,\n", a.layoutVar(), q, a.Name, idExpr(a), a.Size)
	if a.Mod != "" {
		fmt.Fprintf(w, "Mod: %q,\n", a.Mod)
	}
	if a.Doc != "" {
		fmt.Fprintf(w, "Doc: %q,\n", firstSentence(a.Doc))
	}
	fmt.Fprintf(w, "Fields: []%sField{\n", q)
	for _, r := range rs {
		if r.name != "" {
			fmt.Fprintf(w, "%s,\n", r.name)
		} else {
			fmt.Fprintf(w, "%s,\n", fieldLit(q, r.f))
		}
	}
	w.WriteString("},\n}\n\n")
	if a.Type == "" {
		return
	}
	genDumpRows(w, q, a, rs)
	genStruct(w, q, a)
	genDecode(w, q, a, lname, rs)
	genEncode(w, q, a, lname, rs)
	for _, p := range a.Partial {
		genPartial(w, q, a, p)
	}
}

func idExpr(a *Attr) string {
	if a.ID == 0 {
		return "0"
	}
	return a.constName()
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func comment(w *bytes.Buffer, text string) {
	words := strings.Fields(text)
	line := "//"
	for _, x := range words {
		if len(line)+1+len(x) > 76 && line != "//" {
			w.WriteString(line + "\n")
			line = "//"
		}
		line += " " + x
	}
	w.WriteString(line + "\n")
}

func genStruct(w *bytes.Buffer, q string, a *Attr) {
	comment(w, a.Doc)
	fmt.Fprintf(w, "type %s struct {\n", a.Type)
	for i := range a.Fields {
		f := &a.Fields[i]
		t := goType(a, f)
		if f.Count > 0 {
			t = fmt.Sprintf("[%d]%s", f.Count, t)
		}
		fmt.Fprintf(w, "%s %s", f.goField(), t)
		if f.Doc != "" {
			fmt.Fprintf(w, " // %s", f.Doc)
		}
		w.WriteString("\n")
	}
	w.WriteString("}\n\n")
}

// valueExpr is the decode expression of one entry (bit is absolute).
func valueExpr(t string, bit, width int) string {
	if t == "bool" {
		return getExpr("b", bit, width) + " != 0"
	}
	if bit%8 == 0 && width == typeBits(t) {
		return alignedGet("b", bit/8, width)
	}
	return t + "(" + getExpr("b", bit, width) + ")"
}

func genDecode(w *bytes.Buffer, q string, a *Attr, lname string, rs []row) {
	r := recv(a.Type)
	need := a.Size
	if a.MinSize > 0 {
		need = a.MinSize
		fmt.Fprintf(w, "// UnmarshalBinary decodes %s from the first %d bytes of b without\n// allocating. A b of %d to %d bytes decodes with the rows past byte %d\n// zero. It returns an error wrapping %sErrTruncated when b is shorter than\n// %d bytes.\n",
			r, a.Size, a.MinSize, a.Size-1, a.MinSize, q, a.MinSize)
	} else {
		fmt.Fprintf(w, "// UnmarshalBinary decodes %s from the first %d bytes of b", r, a.Size)
		if hasString(a) {
			w.WriteString(", allocating\n// only when a text differs from the one r holds")
		} else {
			w.WriteString(" without\n// allocating")
		}
		fmt.Fprintf(w, ". It returns an error wrapping %sErrTruncated when b is\n// shorter.\n", q)
	}
	fmt.Fprintf(w, "func (%s *%s) UnmarshalBinary(b []byte) error {\n", r, a.Type)
	fmt.Fprintf(w, "if err := %s.CheckMin(b, %d); err != nil {\nreturn err\n}\n", a.layoutVar(), need)
	fmt.Fprintf(w, "_ = b[%d]\n", need-1)
	var tail []*Field
	for i := range a.Fields {
		f := &a.Fields[i]
		end := f.Bit + f.Width
		if f.Count > 0 {
			end = f.Bit + (f.Count-1)*f.Stride + f.Width
		}
		if end > 8*need {
			tail = append(tail, f)
			continue
		}
		decodeField(w, a, r, f)
	}
	if len(tail) > 0 {
		fmt.Fprintf(w, "if len(b) < %d {\n", a.Size)
		for _, f := range tail {
			fmt.Fprintf(w, "%s.%s = %s{}\n", r, f.goField(), zeroType(a, f))
		}
		fmt.Fprintf(w, "return nil\n}\n_ = b[%d]\n", a.Size-1)
		for _, f := range tail {
			decodeField(w, a, r, f)
		}
	}
	w.WriteString("return nil\n}\n\n")
}

func zeroType(a *Attr, f *Field) string {
	t := goType(a, f)
	if f.Count > 0 {
		t = fmt.Sprintf("[%d]%s", f.Count, t)
	}
	return t
}

func hasString(a *Attr) bool {
	for _, f := range a.Fields {
		if f.Kind == mad.String && f.Type == "" {
			return true
		}
	}
	return false
}

func decodeField(w *bytes.Buffer, a *Attr, r string, f *Field) {
	t := goType(a, f)
	dst := r + "." + f.goField()
	switch {
	case f.Embed != "":
		fmt.Fprintf(w, "if err := %s.UnmarshalBinary(b[%d:]); err != nil {\nreturn err\n}\n", dst, f.Bit/8)
	case f.Kind == mad.String && t == "string":
		fmt.Fprintf(w, "if s := %sTrimNUL(b[%d:%d]); string(s) != %s {\n%s = string(s)\n}\n", qual(a), f.Bit/8, (f.Bit+f.Width)/8, dst, dst)
	case f.Kind == mad.String || f.Kind == mad.Bytes:
		fmt.Fprintf(w, "copy(%s[:], b[%d:%d])\n", dst, f.Bit/8, (f.Bit+f.Width)/8)
	case f.Count > 0:
		for j := range f.Count {
			fmt.Fprintf(w, "%s[%d] = %s\n", dst, j, valueExpr(t, f.Bit+j*f.Stride, f.Width))
		}
	default:
		fmt.Fprintf(w, "%s = %s\n", dst, valueExpr(t, f.Bit, f.Width))
	}
}

func qual(a *Attr) string {
	if a.Pkg == "mad" {
		return ""
	}
	return "mad."
}

func genEncode(w *bytes.Buffer, q string, a *Attr, lname string, rs []row) {
	r := recv(a.Type)
	fmt.Fprintf(w, "// AppendBinary appends the %d-byte attribute to b, reserved bits zero. It\n// returns an error wrapping %sErrRange, and b unchanged, when a value does\n// not fit its row.\n", a.Size, q)
	fmt.Fprintf(w, "func (%s *%s) AppendBinary(b []byte) ([]byte, error) {\n", r, a.Type)
	// Range checks first, in table order, so a failure leaves b as it was.
	for i := range a.Fields {
		f := &a.Fields[i]
		t := goType(a, f)
		src := r + "." + f.goField()
		switch {
		case f.Embed != "":
		case f.Kind == mad.String && t == "string":
			fmt.Fprintf(w, "if len(%s) > %d {\nreturn b, %sLengthError(%q, %q, len(%s), %d)\n}\n", src, f.Width/8, q, lname, f.Name, src, f.Width/8)
		case f.Kind == mad.String || f.Kind == mad.Bytes:
		case typeBits(t) > f.Width:
			max := uint64(1)<<f.Width - 1
			if f.Count > 0 {
				for j := range f.Count {
					fmt.Fprintf(w, "if %s[%d] > %#x {\nreturn b, %sRangeError(%q, %q, uint64(%s[%d]), %#x)\n}\n", src, j, max, q, lname, f.Name+strconv.Itoa(j), src, j, max)
				}
			} else {
				fmt.Fprintf(w, "if %s > %#x {\nreturn b, %sRangeError(%q, %q, uint64(%s), %#x)\n}\n", src, max, q, lname, f.Name, src, max)
			}
		}
	}
	fmt.Fprintf(w, "all, d := %s.Append(b)\n_ = d[%d]\n", a.layoutVar(), a.Size-1)
	for i := range a.Fields {
		f := &a.Fields[i]
		t := goType(a, f)
		src := r + "." + f.goField()
		o, e := f.Bit/8, (f.Bit+f.Width)/8
		switch {
		case f.Embed != "":
			fmt.Fprintf(w, "if _, err := %s.AppendBinary(d[%d:%d]); err != nil {\nreturn b, err\n}\n", src, o, o)
		case f.Kind == mad.String || f.Kind == mad.Bytes:
			if t == "string" {
				fmt.Fprintf(w, "copy(d[%d:%d], %s)\n", o, e, src)
			} else {
				fmt.Fprintf(w, "copy(d[%d:%d], %s[:])\n", o, e, src)
			}
		case f.Count > 0:
			for j := range f.Count {
				putValue(w, t, f.Bit+j*f.Stride, f.Width, fmt.Sprintf("%s[%d]", src, j))
			}
		default:
			putValue(w, t, f.Bit, f.Width, src)
		}
	}
	w.WriteString("return all, nil\n}\n\n")
	fmt.Fprintf(w, "// MarshalBinary returns the %d-byte attribute.\nfunc (%s *%s) MarshalBinary() ([]byte, error) { return %s.AppendBinary(nil) }\n\n", a.Size, r, a.Type, r)
	fmt.Fprintf(w, "// AttrLayout returns the layout of the attribute, %s.\nfunc (*%s) AttrLayout() *%sLayout { return &%s }\n\n", a.layoutName(), a.Type, q, a.layoutVar())
	if !handStringer[a.Type] {
		fmt.Fprintf(w, "// String shows the attribute field by field, as the REPL prints it (Layout.Text).\nfunc (%s *%s) String() string {\nb, err := %s.MarshalBinary()\nif err != nil {\nreturn %q + \": \" + err.Error()\n}\nreturn %s.Text(b)\n}\n\n", r, a.Type, r, a.Type, a.layoutVar())
	}
}

// handStringer names the types whose String method is written by hand
// (NodeDescription reads as its text).
var handStringer = map[string]bool{"NodeDescription": true}

func putValue(w *bytes.Buffer, t string, bit, width int, src string) {
	if t == "bool" {
		if width != 1 {
			panic("bool of more than one bit")
		}
		fmt.Fprintf(w, "if %s {\nd[%d] |= %#x\n}\n", src, bit/8, 0x80>>(bit%8))
		return
	}
	if bit%8 == 0 && width == typeBits(t) && alignedPut(w, "d", bit/8, width, src) {
		return
	}
	if (bit+width-1)/8 == bit/8 && t == "uint8" {
		if s := 8 - bit%8 - width; s > 0 {
			fmt.Fprintf(w, "d[%d] |= %s << %d\n", bit/8, src, s)
		} else {
			fmt.Fprintf(w, "d[%d] |= %s\n", bit/8, src)
		}
		return
	}
	putLines(w, "d", bit, width, "uint64("+src+")")
}

func genPartial(w *bytes.Buffer, q string, a *Attr, p Partial) {
	r := recv(a.Type)
	comment(w, p.Doc)
	fmt.Fprintf(w, "func (%s *%s) %s(b []byte) error {\n", r, a.Type, p.Method)
	fmt.Fprintf(w, "if err := %s.Check(b); err != nil {\nreturn err\n}\n_ = b[%d]\n*%s = %s{\n", a.layoutVar(), a.Size-1, r, a.Type)
	for _, name := range p.Fields {
		var f *Field
		for i := range a.Fields {
			if a.Fields[i].goField() == name {
				f = &a.Fields[i]
			}
		}
		if f == nil || f.Count > 0 || f.Embed != "" || f.Kind == mad.String || f.Kind == mad.Bytes {
			panic(fmt.Sprintf("%s.%s: %s is not a numeric field", a.Type, p.Method, name))
		}
		fmt.Fprintf(w, "%s: %s,\n", name, valueExpr(goType(a, f), f.Bit, f.Width))
	}
	w.WriteString("}\nreturn nil\n}\n\n")
}

func genIndex(w *bytes.Buffer, pkg, q string, attrs []*Attr) {
	if pkg == "mad" {
		return
	}
	ref := func(a *Attr) string {
		if a.Ref != "" {
			r := find(a.Ref)
			return r.Pkg + "." + r.layoutName() + "()"
		}
		return "&" + a.layoutVar()
	}
	if pkg == "sa" {
		w.WriteString("// The attributes, by ID.\nvar (\n")
		for _, a := range attrs {
			fmt.Fprintf(w, "attr%s = Attr{%s, %#v, %d}\n", a.SAVar, ref(a), comps(a), a.Stride)
		}
		w.WriteString(")\n\n")
		for _, a := range attrs {
			id := a.ID
			if a.Ref != "" {
				id = find(a.Ref).ID
			}
			fmt.Fprintf(w, "// %s returns the SA attribute %s (0x%04x). The Attr is shared and\n// must not be modified.\nfunc %s() *Attr { return &attr%s }\n\n", a.SAVar, a.Name, id, a.SAVar, a.SAVar)
		}
		w.WriteString("// aliases are the other names records answer to (saquery's).\nvar aliases = map[string]*Attr{\n")
		for _, a := range attrs {
			for _, al := range a.Aliases {
				fmt.Fprintf(w, "%q: &attr%s,\n", strings.ToLower(al), a.SAVar)
			}
		}
		w.WriteString("}\n\nvar attrs = []*Attr{")
		for _, a := range attrs {
			fmt.Fprintf(w, "&attr%s, ", a.SAVar)
		}
		w.WriteString("}\n\n")
		return
	}
	fmt.Fprintf(w, "// Layouts returns the layouts of the attributes this package decodes, in\n// attribute ID order. The slice is new on every call; the layouts it points\n// to are shared and must not be modified.\nfunc Layouts() []*mad.Layout {\nreturn []*mad.Layout{\n")
	for _, a := range attrs {
		fmt.Fprintf(w, "%s,\n", ref(a))
	}
	w.WriteString("}\n}\n\n")
	w.WriteString("// LayoutByID returns the layout of the attribute id, or nil when this\n// package does not decode it. The layout is shared and must not be modified.\nfunc LayoutByID(id uint16) *mad.Layout {\nswitch id {\n")
	for _, a := range attrs {
		if a.Alt {
			continue
		}
		c := a.constName()
		if a.Ref != "" {
			c = "Attr" + goName(a.Ref)
		}
		fmt.Fprintf(w, "case %s:\nreturn %s\n", c, ref(a))
	}
	w.WriteString("}\nreturn nil\n}\n\n")
	w.WriteString("// NewCodec returns a new zero value of the Go type of the attribute id,\n// or nil when this package has none.\nfunc NewCodec(id uint16) mad.Codec {\nswitch id {\n")
	for _, a := range attrs {
		t := a
		c := a.constName()
		if a.Ref != "" {
			t = find(a.Ref)
			c = "Attr" + goName(a.Ref)
		}
		if t.Type == "" || a.Alt {
			continue
		}
		typ := t.Type
		if t.Pkg != pkg {
			typ = t.Pkg + "." + typ
		}
		fmt.Fprintf(w, "case %s:\nreturn new(%s)\n", c, typ)
	}
	w.WriteString("}\nreturn nil\n}\n\n")
	genCodecOf(w, attrs)
	w.WriteString("// enumNames are the value names the schema gives rows, by attribute ID\n// and row (IBA name).\nvar enumNames = map[uint16]map[string]map[uint64]string{\n")
	for _, a := range attrs {
		if a.Ref != "" || a.Alt {
			continue
		}
		var rowsWith []string
		for _, r := range rows(a) {
			if r.src != nil && r.src.Enum != nil && !r.emb {
				rowsWith = append(rowsWith, r.f.Name)
			}
		}
		if len(rowsWith) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: {\n", a.constName())
		for _, r := range rows(a) {
			if r.src == nil || r.src.Enum == nil || r.emb {
				continue
			}
			fmt.Fprintf(w, "%q: {", r.f.Name)
			keys := make([]uint64, 0, len(r.src.Enum))
			for k := range r.src.Enum {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "%d: %q, ", k, r.src.Enum[k])
			}
			w.WriteString("},\n")
		}
		w.WriteString("},\n")
	}
	w.WriteString("}\n\n")
	w.WriteString("// EnumName returns the schema's name of value v of the row field (its\n// IBA name) of attribute id, e.g. \"Active\" for PortInfo's PortState 4,\n// and whether there is one.\nfunc EnumName(id uint16, field string, v uint64) (string, bool) {\nname, ok := enumNames[id][field][v]\nreturn name, ok\n}\n\n")
	w.WriteString("// EnumNames returns every value name of the row field of attribute id,\n// nil when the schema names none. The map is shared and must not be\n// modified.\nfunc EnumNames(id uint16, field string) map[uint64]string { return enumNames[id][field] }\n\n")
	w.WriteString("// LayoutByName returns the layout of the attribute its IBA name names\n// (\"PortInfo\") or one of its aliases (smpquery's, e.g.\n// \"SL2VLMappingTable\"), case-insensitively, or nil.\nfunc LayoutByName(name string) *mad.Layout {\nfor _, l := range Layouts() {\nif strings.EqualFold(l.Name, name) {\nreturn l\n}\n}\nswitch strings.ToLower(name) {\n")
	for _, a := range attrs {
		for _, al := range a.Aliases {
			fmt.Fprintf(w, "case %q:\nreturn %s\n", strings.ToLower(al), ref(a))
		}
	}
	w.WriteString("}\nreturn nil\n}\n\n")
}

func comps(a *Attr) []int {
	l := a
	if a.Ref != "" {
		l = find(a.Ref)
	}
	var out []int
	for _, r := range rows(l) {
		if a.Ref != "" {
			r.comp = -1
		}
		out = append(out, r.comp)
	}
	return out
}

// genCodecOf writes CodecOf for a package with a second layout of an ID
// (Attr.Alt), which NewCodec cannot tell apart by ID.
func genCodecOf(w *bytes.Buffer, attrs []*Attr) {
	if !slices.ContainsFunc(attrs, func(a *Attr) bool { return a.Alt }) {
		return
	}
	w.WriteString("// CodecOf returns a new zero value of the Go type of layout l (one of\n// Layouts), or nil for another layout. Unlike NewCodec it tells apart the\n// layouts that share an attribute ID.\nfunc CodecOf(l *mad.Layout) mad.Codec {\nswitch l {\n")
	for _, a := range attrs {
		t := a
		if a.Ref != "" {
			t = find(a.Ref)
		}
		if t.Type == "" {
			continue
		}
		typ := t.Type
		if t.Pkg != a.Pkg {
			typ = t.Pkg + "." + typ
		}
		l := "&" + a.layoutVar()
		if a.Ref != "" {
			l = t.Pkg + "." + t.layoutName() + "()"
		}
		fmt.Fprintf(w, "case %s:\nreturn new(%s)\n", l, typ)
	}
	w.WriteString("}\nreturn nil\n}\n\n")
}

// dumpRows are the rows of a that libibmad's field dump shows (not those
// of an embedded attribute: an SA record's PortInfo is not dumped).
func dumpRows(a *Attr, rs []row) []row {
	var out []row
	for _, r := range rs {
		if !r.emb && r.src.Dump != mad.DumpNone {
			out = append(out, r)
		}
	}
	return out
}

// genDumpRows writes the attribute's libibmad dump table.
func genDumpRows(w *bytes.Buffer, q string, a *Attr, rs []row) {
	ds := dumpRows(a, rs)
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(w, "// %s is what libibmad's field dump shows of %s: its rows in libibmad's\n// order, with libibmad's names and dumpers.\nvar %s = []%sDumpRow{\n", dumpVar(a), a.Name, dumpVar(a), q)
	for _, r := range ds {
		f := r.name
		if f == "" {
			f = fieldLit(q, r.f)
		}
		fmt.Fprintf(w, "{IB: %q, Dump: %s%s, Field: %s},\n", r.src.ibName(r.idx), q, r.src.Dump, f)
	}
	w.WriteString("}\n\n")
}

func dumpVar(a *Attr) string { return "dump" + strings.TrimSuffix(a.layoutName(), "Layout") }

// genDumpIndex writes DumpRows, the package's index of its dump tables.
func genDumpIndex(w *bytes.Buffer, q string, attrs []*Attr) {
	var with []*Attr
	for _, a := range attrs {
		if a.Ref == "" && a.Type != "" && len(dumpRows(a, rows(a))) > 0 {
			with = append(with, a)
		}
	}
	if len(with) == 0 {
		return
	}
	fmt.Fprintf(w, "// DumpRows returns the rows of layout l (one of Layouts) that libibmad's\n// field dump (smpquery, perfquery, sminfo, ibportstate) shows, in its order,\n// with its names and dumpers; nil for a layout it does not dump. The slice\n// is shared and must not be modified.\nfunc DumpRows(l *%sLayout) []%sDumpRow {\nswitch l {\n", q, q)
	for _, a := range with {
		fmt.Fprintf(w, "case &%s:\nreturn %s\n", a.layoutVar(), dumpVar(a))
	}
	w.WriteString("}\nreturn nil\n}\n\n")
}

// genCounters writes the package's counters table (the rows marked
// Counter, attribute by attribute in schema order) and Counters.
func genCounters(w *bytes.Buffer, attrs []*Attr) {
	var rs []row
	var of []*Attr
	for _, a := range all() { // schema order, not attribute ID order
		if a.Ref != "" || !slices.Contains(attrs, a) {
			continue
		}
		for _, r := range rows(a) {
			if !r.emb && r.src.Counter {
				rs, of = append(rs, r), append(of, a)
			}
		}
	}
	if len(rs) == 0 {
		return
	}
	w.WriteString("// counters are the port counters of the schema, attribute by attribute.\nvar counters = []Counter{\n")
	for i, r := range rs {
		f := r.name
		if f == "" {
			f = fieldLit("mad.", r.f)
		}
		fmt.Fprintf(w, "{Attr: %s, Field: %s", idExpr(of[i]), f)
		if r.src.Dump != mad.DumpNone {
			fmt.Fprintf(w, ", IB: %q", r.src.ibName(r.idx))
		}
		if r.src.Prom != "" {
			fmt.Fprintf(w, ", Prom: %q", r.src.Prom)
		}
		if r.src.Select != 0 {
			fmt.Fprintf(w, ", Select: %d", r.src.Select)
		}
		if r.src.Cap != "" {
			fmt.Fprintf(w, ", Cap: %s", r.src.Cap)
		}
		w.WriteString("},\n")
	}
	w.WriteString("}\n\n// Counters returns the port counters of PortCounters, PortCountersExtended,\n// PortRcvErrorDetails and PortXmitDiscardDetails: perfquery's and the\n// exporter's table. The slice is shared and must not be modified.\nfunc Counters() []Counter { return counters }\n\n")
}
