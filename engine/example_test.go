package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
)

// Using the engine without Lua: open the embedded simulator's default
// port, run typed queries and a discovery.
func Example() {
	f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	tr, err := f.Open(ctx, "", 0) // the default port: the SM's, on Switch1
	if err != nil {
		log.Fatal(err)
	}
	sess, err := engine.New(tr, nil) // the session owns tr from here on
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	ni, err := sess.NodeInfo(ctx, engine.LID(2))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("LID 2: node 0x%016x, %d ports\n", ni.NodeGUID, ni.NumPorts)

	t, _ := engine.ParseTarget("dr:0,3")
	desc, err := sess.NodeDesc(ctx, t)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dr:0,3 is", desc.NodeString)

	d, err := sess.Discover(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(d.Fabric.Nodes), "nodes,", len(d.Fabric.Links()), "links,", len(d.Errors), "errors")
	// Output:
	// LID 2: node 0x0000000000100000, 2 ports
	// dr:0,3 is Switch2
	// 6 nodes, 6 links, 0 errors
}
