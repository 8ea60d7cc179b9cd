package exporter

import (
	"testing"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// TestLinkSpeedAndRate: a port's speed label and data rate as
// treydock/infiniband_exporter makes them of ibnetdiscover -p's text: a
// 4x link whose MlnxExtPortInfo has FDR10 active (PortInfo says QDR) is
// "FDR10" at 10 Gb/s a lane; an extended speed wins over FDR10, as in
// ibnetdiscover.
func TestLinkSpeedAndRate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     topo.Port
		speed string
		rate  float64 // bytes per second
	}{
		{"QDR", topo.Port{WidthActive: 2, SpeedActive: 4}, "QDR", 4e9},
		{"FDR10", topo.Port{WidthActive: 2, SpeedActive: 4, MlnxSpeedActive: smp.MlnxSpeedFDR10}, "FDR10", 5e9},
		{"1x FDR10", topo.Port{WidthActive: 1, SpeedActive: 4, MlnxSpeedActive: smp.MlnxSpeedFDR10}, "FDR10", 1.25e9},
		{"EDR over FDR10", topo.Port{WidthActive: 2, SpeedActive: 4, SpeedExtActive: 2, MlnxSpeedActive: smp.MlnxSpeedFDR10}, "EDR", 12.5e9},
		{"unknown", topo.Port{WidthActive: 2}, "", 0},
	} {
		if s, r := speedText(&tc.p), rateBytes(&tc.p); s != tc.speed || r != tc.rate {
			t.Errorf("%s: speed %q rate %g, want %q and %g", tc.name, s, r, tc.speed, tc.rate)
		}
	}
}
