package main

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a session, port or REPL starts must be gone when the
// tests end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
