package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// FuzzTransmit sends arbitrary MADs into the default fabric, from a CA and
// from a switch: nothing may panic, and every port keeps its invariants.
func FuzzTransmit(f *testing.F) {
	seed := func(lid uint16, b []byte) { f.Add(lid, b) }
	t := f
	seed(fabric.PermissiveLID, drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 1, 33, 2))
	seed(fabric.PermissiveLID, drReq(t, mad.MethodSet, smp.AttrPortInfo, 1, 0, 1))
	seed(fabric.PermissiveLID, drReq(t, mad.MethodSet, smp.AttrLinearForwardingTable, 3, 0, 1))
	seed(3, drReq(t, mad.MethodGet, smp.AttrSwitchInfo, 0))
	seed(5, perfReq(t, mad.MethodSet, perf.AttrPortCounters, 0xff))
	seed(9, fabrictest.NewMAD(1, mad.MethodGet, 1))
	b := drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 2)
	smp.SetDrSLID(b, 1)
	seed(18, b)
	f.Fuzz(func(t *testing.T, lid uint16, data []byte) {
		fab, err := Default(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer fab.Close()
		for _, at := range []struct {
			node string
			port int
		}{{"node001", 1}, {"leaf02", 0}} {
			r := attachRaw(t, fab, at.node, at.port)
			if len(data) > mad.Size {
				data = data[:mad.Size]
			}
			err := r.w.Transmit(&fabric.Packet{Addr: fabric.Addr{LID: lid}, Data: data})
			if (len(data) < mad.HeaderSize) != (err != nil) {
				t.Fatalf("%d bytes: %v", len(data), err)
			}
			// Send it again: Sets may have changed the fabric.
			_ = r.w.Transmit(&fabric.Packet{Addr: fabric.Addr{LID: lid}, Data: data})
		}
		for _, n := range fab.nodes {
			for _, p := range n.ports {
				if p != nil && p.lid != uint16(piLID.Get(p.pi[:])) {
					t.Fatalf("%v: cached LID out of step", p)
				}
			}
		}
	})
}

// FuzzNew builds a simulator on every topology the parser accepts.
func FuzzNew(f *testing.F) {
	files, _ := filepath.Glob(topology("net*"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Add(DefaultTopologyText(), true)
	f.Fuzz(func(t *testing.T, text []byte, bare bool) {
		tf, err := topo.Parse("fuzz.net", strings.NewReader(string(text)))
		if err != nil {
			return
		}
		fab, err := New(tf, &Options{Bare: bare})
		if err != nil {
			return
		}
		defer fab.Close()
		node, port, _ := fab.SM()
		r := attachRaw(t, fab, node, port)
		r.dr(smp.AttrNodeInfo, 0, 0, 1, 1)
		for _, n := range fab.Topology().Nodes {
			if l := n.EndPort(1); l != nil && l.LID != 0 {
				r.lid(l.LID, smp.AttrNodeInfo, 0)
			}
		}
	})
}
