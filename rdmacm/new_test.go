package rdmacm_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/rdmacm"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

// provider is the simulator with a platform RDMA CM whose OpenCM fails
// with err.
type provider struct {
	*sim.Fabric
	err error
}

func (p provider) OpenCM() (fabric.CMDevice, error) { return nil, p.err }

// TestNewPicksTheDevice: a fabric whose platform has no RDMA CM
// (errors.ErrUnsupported) gets the user-space IB CM; any other OpenCM
// error is New's, naming it; nil arguments are refused.
func TestNewPicksTheDevice(t *testing.T) {
	f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := simtest.Session(t, f, nil)
	if _, err := rdmacm.New(nil, s, nil); err == nil {
		t.Error("New with a nil fabric")
	}
	if _, err := rdmacm.New(f, nil, nil); err == nil {
		t.Error("New with a nil session")
	}
	for _, c := range []struct {
		err      error
		platform bool
		fails    bool
	}{
		{fmt.Errorf("no device: %w", errors.ErrUnsupported), false, false},
		{fmt.Errorf("rdma_cm: %w", fs.ErrPermission), false, true},
	} {
		cm, err := rdmacm.New(provider{f, c.err}, s, nil)
		if c.fails {
			if !errors.Is(err, fs.ErrPermission) {
				t.Errorf("OpenCM failing with %v: New %v", c.err, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("OpenCM failing with %v: %v", c.err, err)
		}
		if cm.Platform() != c.platform {
			t.Errorf("OpenCM failing with %v: Platform %v", c.err, cm.Platform())
		}
		// The user-space IB CM works on the fabric.
		ch, err := cm.CreateEventChannel()
		if err != nil {
			t.Fatal(err)
		}
		id, err := cm.CreateID(ch, rdmacm.PSTCP, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := cm.Listen(t.Context(), id, 0); err != nil {
			t.Fatal(err)
		}
		if a := id.LocalAddr(); a.LID != 0 || a.GID != ([16]byte{}) || a.Port < 32768 {
			t.Errorf("a listener bound by listen: %v, want the wildcard address and an ephemeral port", a)
		}
		if err := cm.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
