package plan

import (
	"testing"

	"go.uber.org/goleak"
)

// The reporters start no goroutines; goleak keeps it so.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
