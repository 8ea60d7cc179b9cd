package topo_test

import (
	"testing"

	"github.com/ibscript/ibscript/internal/leaktest"
)

// The tests run sessions and simulated fabrics, whose goroutines and
// timers must be gone when they end.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
