package export

import (
	"bytes"
	"io"
	"testing"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/topo"
)

// BenchmarkExport16k: every format of a 16,050-node fat tree (250 leaves
// of 63 hosts, 50 spines), from the parsed fabric.
func BenchmarkExport16k(b *testing.B) {
	var text bytes.Buffer
	if err := (fattree.Spec{Leaves: 250, Spines: 50, Hosts: 63, LinksPerSpine: 1}).Write(&text); err != nil {
		b.Fatal(err)
	}
	f, err := topo.Parse("ft16k.net", bytes.NewReader(text.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	for _, format := range Formats() {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				if err := Write(io.Discard, f, format, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
