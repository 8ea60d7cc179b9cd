package ibsimtest

import (
	"testing"

	"go.uber.org/goleak"
)

// Every child process has a goroutine waiting for it (startProc); stop
// and Sim.Stop must end it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
