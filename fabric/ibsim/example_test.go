package ibsim_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/ibsim"
)

// Opening a session on a running ibsim (started as `ibsim -s net.2sw2path4hca`,
// with its socket name in IBSIM_SOCKNAME), attached as the node "Hca1".
// The example is compiled, not run: it needs the ibsim daemon.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := ibsim.NewFabric(os.Getenv("IBSIM_SOCKNAME"), &ibsim.Options{Node: "Hca1"})
	defer f.Close() // gives the client slot back to ibsim
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		log.Fatal(err)
	}
	sess, err := engine.New(tr, nil) // ibsim never times out: the session's timers do
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	d, err := sess.Discover(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(d.Fabric.Nodes), "nodes")
}
