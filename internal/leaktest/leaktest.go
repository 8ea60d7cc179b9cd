// Package leaktest checks that a test binary's goroutines have ended, as
// goleak.VerifyTestMain does, but gives them time to end on a loaded
// machine: goleak v1.3.0 looks for about 0.4 s, and has no option to look
// longer, so a goroutine a -race build on two busy cores takes a second
// to end read as a leak.
package leaktest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Grace is how long VerifyTestMain waits for goroutines to end after the
// tests pass. A goroutine that outlives it is a leak.
const Grace = 30 * time.Second

// VerifyTestMain runs the tests and, when they pass, fails the binary
// if goroutines other than the runtime's and the testing package's are
// still running Grace after them. Use it as TestMain.
func VerifyTestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := settle(Grace); err != nil {
			fmt.Fprintf(os.Stderr, "leaktest: goroutines still running %v after the tests: %v\n", Grace, err)
			code = 1
		}
	}
	os.Exit(code)
}

// settle waits up to d for goleak to find no goroutine left.
func settle(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		err := goleak.Find()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
