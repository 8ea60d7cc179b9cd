// Command madgen writes the attribute codecs of packages mad, mad/smp,
// mad/perf, mad/sa, mad/cc and mad/cm from one schema (schema_*.go): for each attribute
// its layout (the rows with bit offset, width, kind and doc, the modifier's
// meaning), its Go struct, zero-allocation UnmarshalBinary and AppendBinary,
// its attribute ID constant, and each package's ID/name index. Run it with
// `go generate ./mad/` from the module root; the test of this package fails
// when a generated file is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", ".", "module root")
	flag.Parse()
	for _, o := range outputs {
		src, err := generate(o.pkg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "madgen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(*root, o.path), src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "madgen:", err)
			os.Exit(1)
		}
	}
}
