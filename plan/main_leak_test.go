package plan

import (
	"testing"

	"github.com/ibscript/ibscript/internal/leaktest"
)

// The reporters start no goroutines; goleak keeps it so.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
