package tests

import (
	"testing"

	"github.com/ibscript/ibscript/internal/leaktest"
)

// Every goroutine a session, port or REPL starts must be gone when the
// tests end.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
