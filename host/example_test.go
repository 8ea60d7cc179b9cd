package host_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/host"
	"github.com/ibscript/ibscript/plan"
)

// Opening a fabric by URI, as --fabric does, and working on it from Go:
// discover it, read a port's counters, and run a small plan whose checks
// are Go code (the plan package is the report model and its writers; a
// Lua plan file runs through bindings.NewState on h.Session() and
// h.Fabric() instead).
func Example() {
	ctx := context.Background()
	h, err := host.Open(ctx, "sim:../tests/topologies/net.2sw2path4hca", &host.Options{
		Session: engine.Options{MaxMADs: 10_000}, // a runaway loop cannot flood the fabric
	})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	sess := h.Session()

	d, err := sess.Discover(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(d.Fabric.Nodes), "nodes,", len(d.Fabric.Links()), "links")

	// Plant symbol errors on a link through the simulator's controls, then
	// read them as perfquery would.
	if err := h.Sim().SetCounter("Hca3", 1, "SymbolErrorCounter", 12); err != nil {
		log.Fatal(err)
	}
	var lid uint16
	for _, n := range d.Fabric.Nodes {
		if n.Desc == "Hca3" {
			lid = n.EndPort(1).LID
		}
	}
	pc, err := sess.PortCounters(ctx, engine.LID(lid), 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("Hca3 port 1: SymbolErrorCounter", pc.SymbolErrorCounter)

	// A plan: every cabled port ACTIVE, and none with symbol errors.
	rep := plan.New("links")
	active := rep.Begin("links ACTIVE", "links")
	clean := rep.Begin("no symbol errors", "counters")
	for _, n := range d.Fabric.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			obj := &plan.Object{NodeDesc: n.Desc, Port: p.Num}
			if p.State == 4 {
				active.AddPass(1)
			} else {
				rep.Add(active.Name, active.Category, plan.Result{Status: plan.Fail, Message: "not ACTIVE", Object: obj})
			}
			pc, err := sess.PortCounters(ctx, engine.LID(n.EndPort(p.Num).LID), uint8(p.Num))
			switch {
			case err != nil:
				rep.Add(clean.Name, clean.Category, plan.Result{Status: plan.Error, Message: err.Error(), Object: obj})
			case pc.SymbolErrorCounter > 0:
				rep.Add(clean.Name, clean.Category, plan.Result{Status: plan.Fail, Message: fmt.Sprint(pc.SymbolErrorCounter, " symbol errors"), Object: obj})
			default:
				clean.AddPass(1)
			}
		}
	}
	rep.Finish()
	plan.WriteTAP(os.Stdout, rep)
	fmt.Println("exit status", rep.ExitCode())
	// Output:
	// 6 nodes, 6 links
	// Hca3 port 1: SymbolErrorCounter 12
	// TAP version 13
	// 1..2
	// ok 1 - links: links ACTIVE
	// not ok 2 - counters: no symbol errors
	//   ---
	//   status: fail
	//   category: "counters"
	//   passed: 11
	//   failed: 1
	//   failures:
	//     - message: "12 symbol errors"
	//       node_desc: "Hca3"
	//       port: 1
	//   ...
	// exit status 1
}
