package leaktest

import (
	"testing"
	"time"
)

func TestMain(m *testing.M) { VerifyTestMain(m) }

// TestSettleWaits: a goroutine that ends a second after the check begins
// (longer than goleak's own look) is not a leak; one that never ends is,
// once the grace is over.
func TestSettleWaits(t *testing.T) {
	done := make(chan struct{})
	go func() {
		time.Sleep(time.Second)
		close(done)
	}()
	if err := settle(Grace); err != nil {
		t.Errorf("a goroutine ending after a second: %v", err)
	}
	<-done
	stop := make(chan struct{})
	go func() { <-stop }()
	if err := settle(200 * time.Millisecond); err == nil {
		t.Error("a goroutine that never ends was not found")
	}
	close(stop)
	if err := settle(Grace); err != nil {
		t.Error(err)
	}
}
