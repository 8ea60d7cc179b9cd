package bindings_test

import (
	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/bindings/simmod"
)

// The internal tests' sim module runs over simmod, as embedders' does.
func init() { bindings.SimulatorOf = simmod.Of }
