package topo_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests run sessions and simulated fabrics, whose goroutines and
// timers must be gone when they end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
