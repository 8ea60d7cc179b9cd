package diag_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
)

// TestIBPingOUI: the client sends the OUI it is given, 0 too, as ibping
// -o does (C's oui = strtoul(optarg), no default in between): a server
// for the OpenIB OUI answers OUI 0x1001405 (its low 24 bits, what
// IB_VEND2_OUI_F keeps) but not OUI 0, which its port answers as the
// kernel answers a class nobody serves (status 0x000C: lost). A server
// for OUI 0 is refused, as the kernel refuses a vendor agent without
// an OUI.
func TestIBPingOUI(t *testing.T) {
	_, env, lid, _ := servedPair(t, func(ctx context.Context, env *diag.Env) (uint64, error) {
		return diag.IBPingServe(ctx, env, diag.PingOUI, "pong.example")
	})
	ping := func(oui uint32) *diag.IBPing {
		t.Helper()
		r, err := diag.IBPingRun(t.Context(), env, diag.IBPingOptions{Target: engine.LID(lid), Count: 1, Flood: true, OUI: oui})
		if err != nil {
			t.Fatalf("ibping -o %#x: %v", oui, err)
		}
		return r
	}
	// The server registers its agent on its own goroutine.
	for deadline := time.Now().Add(10 * time.Second); ping(diag.PingOUI).Received == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the server answered no ping with the OpenIB OUI in 10s")
		}
	}
	if r := ping(0); r.Transmitted != 1 || r.Received != 0 {
		t.Errorf("ibping -o 0: %d sent, %d answered; want 1, 0 (OUI 0 goes out as 0)", r.Transmitted, r.Received)
	}
	if r := ping(0x1001405); r.Received != 1 || r.Host != "pong.example" {
		t.Errorf("ibping -o 0x1001405: %d answered by %q; want 1 by pong.example (the low 24 bits)", r.Received, r.Host)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := diag.IBPingServe(ctx, env, 0, "pong.example")
	var te *diag.ToolError
	if !errors.As(err, &te) || te.Msg != "can't serve class 50 on this port" {
		t.Errorf("ibping -S -o 0: %v; want a *ToolError \"can't serve class 50 on this port\"", err)
	}
}
