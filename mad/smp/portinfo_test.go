package smp_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// TestUnmarshalLink: the link fields decode as UnmarshalBinary decodes
// them, every other field stays zero, and a short buffer is refused.
func TestUnmarshalLink(t *testing.T) {
	for _, name := range []string{"portinfo_ca.hex"} {
		var full, link smp.PortInfo
		decodeCapture(t, name, &full)
		b, err := full.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		link.MKey = 99 // overwritten
		if err := link.UnmarshalLink(b); err != nil {
			t.Fatal(err)
		}
		want := smp.PortInfo{
			LID: full.LID, LMC: full.LMC, CapabilityMask: full.CapabilityMask,
			PortState: full.PortState, PortPhysicalState: full.PortPhysicalState,
			LinkWidthEnabled: full.LinkWidthEnabled, LinkWidthActive: full.LinkWidthActive,
			LinkSpeedEnabled: full.LinkSpeedEnabled, LinkSpeedActive: full.LinkSpeedActive,
			LinkSpeedExtEnabled: full.LinkSpeedExtEnabled, LinkSpeedExtActive: full.LinkSpeedExtActive,
			LinkWidthSupported: full.LinkWidthSupported, LinkSpeedSupported: full.LinkSpeedSupported,
			LinkSpeedExtSupported: full.LinkSpeedExtSupported, HOQLife: full.HOQLife, VLStallCount: full.VLStallCount,
			VLCap: full.VLCap, CapabilityMask2: full.CapabilityMask2, LinkSpeedExtActive2: full.LinkSpeedExtActive2,
			LinkSpeedExtSupported2: full.LinkSpeedExtSupported2, LinkSpeedExtEnabled2: full.LinkSpeedExtEnabled2,
		}
		if d := cmp.Diff(want, link); d != "" {
			t.Errorf("%s: UnmarshalLink (-want +got):\n%s", name, d)
		}
	}
	// Every bit set: each link field reads all ones at its width.
	ones := make([]byte, 64)
	for i := range ones {
		ones[i] = 0xff
	}
	var full, link smp.PortInfo
	if err := full.UnmarshalBinary(ones); err != nil {
		t.Fatal(err)
	}
	if err := link.UnmarshalLink(ones); err != nil {
		t.Fatal(err)
	}
	if link.LID != full.LID || link.LinkSpeedExtActive != full.LinkSpeedExtActive || link.LMC != full.LMC || link.CapabilityMask != full.CapabilityMask || link.VLCap != full.VLCap {
		t.Errorf("all ones: link %+v differs from full %+v", link, full)
	}
	if err := link.UnmarshalLink(make([]byte, 40)); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("40 bytes: %v, want ErrTruncated", err)
	}
}
