package kernel_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/kernel"
)

// Opening a session on a real HCA through the kernel's umad devices: the
// default port as umad_get_port(NULL, 0) picks it. The example is
// compiled, not run: it needs InfiniBand hardware and access to
// /dev/infiniband/umad*.
func Example() {
	if !kernel.HasPorts(os.DirFS("/")) {
		log.Fatal("no InfiniBand ports")
	}
	ctx := context.Background()
	f := kernel.New(nil)
	defer f.Close()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		log.Fatal(err) // names the device file and the permission needed
	}
	sess, err := engine.New(tr, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	ni, err := sess.NodeInfo(ctx, engine.DR(0)) // the local node
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("0x%016x\n", ni.NodeGUID)
}
