package main

import (
	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/bindings/simmod"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/sim"
)

// simulatorOf returns the fault-injection handle of a sim backend (the
// Lua sim module), nil for others.
func simulatorOf(fab fabric.Fabric) bindings.Simulator {
	if f, ok := fab.(*sim.Fabric); ok {
		return simmod.Of(f)
	}
	return nil
}
