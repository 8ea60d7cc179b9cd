package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/mad"
)

// Field is one row of an attribute as the IBA table gives it: its name,
// bit offset and width from the start of the attribute (bit 0 is the top
// bit of byte 0), how it is shown, and a one-line doc.
type Field struct {
	Name  string   // IBA name: the Layout row and the source of the Lua key
	Bit   int      // bit offset
	Width int      // bits
	Kind  mad.Kind // Uint (default), Hex, String, Bytes
	Doc   string   // one line, also the Go field's comment
	// Enum names the values of the row (smpquery's texts where it prints
	// them); packages smp and perf export them through EnumName.
	Enum map[uint64]string

	// Dump is how libibmad's field dump (smpquery, perfquery, sminfo,
	// ibportstate) shows the row, and IB libibmad's name of it (default
	// Name; a table's entries add their index: "XmtDataSL0"); a row
	// without Dump is not in libibmad's dump. Package diag prints from
	// them.
	Dump mad.Dump
	IB   string

	// Counter marks a counter of a port (PortCounters and friends):
	// perf.Counters lists it, for perfquery and the exporter. Prom is the
	// exporter's series name of it (treydock/infiniband_exporter's, after
	// infiniband_{switch,hca}_port_; "" for none), Select its CounterSelect
	// bit plus one (bits 16 on: CounterSelect2; 0 for none) and Cap the
	// PMA capability (a perf constant) it needs, "" for none.
	Counter bool
	Prom    string
	Select  int
	Cap     string

	// Go is the Go struct field's name; default Name without underscores.
	Go string
	// Type overrides the Go type (default: bool for one bit, the smallest
	// uintN for numbers, mad.GID for 128-bit Bytes, [N]byte for other
	// Bytes, string for String).
	Type string

	// Count > 0 makes the row a table: Count entries Stride bits apart,
	// rows Name0 .. Name<Count-1> in the layout and one Go array.
	Count, Stride int

	// Embed names another attribute of the schema placed at Bit: its rows,
	// shifted, become rows of this one, and its Go type a struct field.
	Embed string

	// Var is the name of the row's mad.Field variable for hand-written
	// code of the package (default Prefix + Go); repeated and embedded rows
	// have none.
	Var string

	// Comp is the SA component number of the row (the first one of a
	// table, numbered on; of an embedded attribute, numbered with IBA's
	// rule that a reserved gap takes a number too); nil for none.
	Comp *int
}

// c is a component number.
func c(n int) *int { return &n }

// Partial is an extra decoder of a few fields (the others left zero): a
// hot path such as a discovery sweep's PortInfo.
type Partial struct {
	Method string
	Doc    string
	Fields []string // Go names
}

// Attr is one attribute or record.
type Attr struct {
	Pkg     string   // "mad", "smp", "perf", "sa"
	Name    string   // IBA name
	Aliases []string // other names it answers to (smpquery's, saquery's)
	ID      uint16
	Const   string // ID constant; default "Attr" + Name without underscores
	Size    int    // bytes
	MinSize int    // a decoder accepts this many bytes, rows past them zero (Notice in an SMP Trap)
	Mod     string // what the attribute modifier means
	Doc     string // the Go type's comment (whole sentences)
	Type    string // Go struct; "" for a record decoded through its layout only
	Layout  string // layout variable; default Name without underscores + "Layout"
	Prefix  string // prefix of the row variables
	Fields  []Field
	Partial []Partial

	// SA records: GapComps numbers the components of every row with the
	// reserved-gap rule (else each Field's Comp does); Stride is the
	// record stride in 8-byte units; SAVar names the sa.Attr.
	GapComps bool
	Stride   int
	SAVar    string

	// Alt marks a second layout of an ID another attribute of the package
	// holds (CongestionLog's CA layout): LayoutByName and CodecOf reach
	// it, LayoutByID, NewCodec and the ID constants name the first.
	Alt bool

	// Ref lists the attribute of another package this name names in this
	// package's index (perf's ClassPortInfo is mad's).
	Ref string
}

// ibName is libibmad's name of the row (entry i of a table, or -1).
func (f *Field) ibName(i int) string {
	if f.Dump == mad.DumpNone {
		return ""
	}
	n := f.IB
	if n == "" {
		n = f.Name
	}
	if i >= 0 {
		n += strconv.Itoa(i)
	}
	return n
}

func goName(s string) string { return strings.ReplaceAll(s, "_", "") }

func (a *Attr) constName() string {
	if a.Const != "" {
		return a.Const
	}
	return "Attr" + goName(a.Name)
}

// layoutVar is the unexported variable holding the layout, which the
// function layoutName returns.
func (a *Attr) layoutVar() string { return "layout" + strings.TrimSuffix(a.layoutName(), "Layout") }

func (a *Attr) layoutName() string {
	if a.Layout != "" {
		return a.Layout
	}
	return goName(a.Name) + "Layout"
}

func (f *Field) goField() string {
	if f.Go != "" {
		return f.Go
	}
	return goName(f.Name)
}

var schema []*Attr

// all is the schema: every attribute, by package.
func all() []*Attr {
	if schema == nil {
		schema = slices.Concat(madAttrs(), smpAttrs(), perfAttrs(), saAttrs(), ccAttrs(), cmAttrs())
	}
	return schema
}

// find returns the attribute defined under that IBA name.
func find(name string) *Attr {
	for _, a := range all() {
		if a.Name == name && a.Ref == "" {
			return a
		}
	}
	return nil
}
