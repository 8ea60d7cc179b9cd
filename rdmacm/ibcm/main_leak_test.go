package ibcm

import (
	"testing"

	"github.com/ibscript/ibscript/internal/leaktest"
)

// Every goroutine a test starts here must be gone when the tests end.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
