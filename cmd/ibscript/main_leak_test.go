package main

import (
	"os"
	"testing"

	"github.com/ibscript/ibscript/internal/leaktest"
)

// replChildEnv makes the test binary run as ibscript itself: the REPL's
// pseudo-terminal tests and the signal tests re-execute it with this set.
const replChildEnv = "IBSCRIPT_TEST_REPL_CHILD"

func init() {
	if os.Getenv(replChildEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
}

// Every goroutine a session, port or REPL starts must be gone when the
// tests end.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
