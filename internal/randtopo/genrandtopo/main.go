// Command genrandtopo prints the random ibsim topology of a seed
// (internal/randtopo): `go run ./internal/randtopo/genrandtopo 7 >
// net.rand-7`, to start ibsim on a seed TestRandomTopologies found a
// difference on (with the LMC it says on stderr).
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/ibscript/ibscript/internal/randtopo"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genrandtopo SEED")
		os.Exit(2)
	}
	seed, err := strconv.ParseUint(os.Args[1], 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "genrandtopo: seed %q: not an unsigned number\n", os.Args[1])
		os.Exit(2)
	}
	f := randtopo.Generate(seed)
	fmt.Print(f.Text)
	if f.LMC > 0 {
		fmt.Fprintf(os.Stderr, "genrandtopo: seed %d: OpenSM runs with --lmc %d\n", seed, f.LMC)
	}
}
