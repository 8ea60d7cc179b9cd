// Command genfattree writes a two-level fat tree in ibsim's net-file
// format on stdout, as the ibsim rig's gen-fattree.py does (package
// fattree), for --fabric sim:FILE or ibsim -s:
//
//	go run ./internal/fattree/genfattree -leaves 250 -spines 50 -hosts 63 > ft16k.net
//	go run ./internal/fattree/genfattree -preset 2000 > ft2000.net
//	go run ./internal/fattree/genfattree -preset 2000 -xdr > ft2000-xdr.net
//	go run ./internal/fattree/genfattree -preset 2000 -xdr -planes 4 > ft2000-xdr-4planes.net
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ibscript/ibscript/internal/fattree"
)

func main() {
	var s fattree.Spec
	fs := flag.NewFlagSet("genfattree", flag.ContinueOnError)
	fs.IntVar(&s.Leaves, "leaves", 0, "leaf switches")
	fs.IntVar(&s.Spines, "spines", 0, "spine switches")
	fs.IntVar(&s.Hosts, "hosts", 0, "hosts per leaf")
	fs.IntVar(&s.LinksPerSpine, "links-per-spine", 1, "parallel links from each leaf to each spine")
	fs.BoolVar(&s.XDR, "xdr", false, "4x XDR links (extspeed=0x2f; the embedded simulator, not ibsim)")
	fs.IntVar(&s.Planes, "planes", 0, "planarized: this many planes (2-8), hosts with a port per plane (the embedded simulator's)")
	preset := fs.String("preset", "", "2000 or 7968: the rig's fat trees")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	switch *preset {
	case "":
	case "2000":
		s = fattree.Spec{Leaves: 64, Spines: 16, Hosts: 30, LinksPerSpine: 1, XDR: s.XDR, Planes: s.Planes}
	case "7968":
		s = fattree.Spec{Leaves: 248, Spines: 32, Hosts: 31, LinksPerSpine: 1, XDR: s.XDR, Planes: s.Planes}
	default:
		fmt.Fprintf(os.Stderr, "genfattree: -preset %q: want 2000 or 7968\n", *preset)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	if err := s.Write(w); err != nil {
		fmt.Fprintf(os.Stderr, "genfattree: %v\n", err)
		os.Exit(2)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "genfattree: %v\n", err)
		os.Exit(2)
	}
	if f := s.IbsimFlags(); len(f) > 0 && s.Planes == 0 {
		fmt.Fprintf(os.Stderr, "genfattree: %d nodes; ibsim needs %s\n", s.Nodes(), strings.Join(f, " "))
	}
}
