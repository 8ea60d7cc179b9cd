package ibsimtest

import (
	"testing"

	"github.com/ibscript/ibscript/internal/leaktest"
)

// Every child process has a goroutine waiting for it (startProc); stop
// and Sim.Stop must end it.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
