package host

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// TestDiscoverPlanes: from a planarized host's plane port, DiscoverPlanes
// finds every plane's nodes (the topology file's 24: 8 hosts, 4 planes of 4
// switches), marks every host planarized with each port on its plane, and
// each switch's ports on the plane the file gives it; from a port of an
// ordinary fabric it is Session().Discover, the same text.
func TestDiscoverPlanes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	file := topologies + "fattree-xdr-4planes.net"
	want, err := topo.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range []int{1, 3} {
		h, err := Open(ctx, fmt.Sprintf("sim:%s?node=h000-01&port=%d", file, port), nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := h.DiscoverPlanes(ctx, nil)
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Errors) > 0 {
			t.Errorf("port %d: errors %v", port, d.Errors)
		}
		f := d.Fabric
		if len(f.Nodes) != len(want.Nodes) {
			t.Fatalf("port %d: %d nodes, want %d", port, len(f.Nodes), len(want.Nodes))
		}
		if f.Origin == nil || f.Origin.Num != port {
			t.Errorf("port %d: origin %v, want the plane port %d", port, f.Origin, port)
		}
		if f.Planes() != 4 {
			t.Errorf("port %d: %d planes, want 4", port, f.Planes())
		}
		got := make(map[uint64]*topo.Node, len(f.Nodes))
		for _, n := range f.Nodes {
			got[n.GUID] = n
		}
		for _, w := range want.Nodes {
			n := got[w.GUID]
			if n == nil {
				t.Errorf("port %d: %s (0x%x) not found", port, w.Desc, w.GUID)
				continue
			}
			if n.Planarized != w.Planarized {
				t.Errorf("port %d: %s planarized %v, want %v", port, w.Desc, n.Planarized, w.Planarized)
			}
			for i, wp := range w.Ports {
				if wp == nil || wp.Remote == nil {
					continue
				}
				p := n.Ports[i]
				switch {
				case p == nil:
					t.Errorf("port %d: %s port %d not found", port, w.Desc, i)
				case p.Plane != wp.Plane:
					t.Errorf("port %d: %s port %d on plane %d, want %d", port, w.Desc, i, p.Plane, wp.Plane)
				case p.Remote == nil || p.Remote.Node.GUID != wp.Remote.Node.GUID || p.Remote.Num != wp.Remote.Num:
					t.Errorf("port %d: %s port %d cabled to %v, want %s port %d", port, w.Desc, i, p.Remote, wp.Remote.Node.Desc, wp.Remote.Num)
				case p.Remote.Remote != p:
					t.Errorf("port %d: %s port %d: the link is not kept at both ends", port, w.Desc, i)
				}
			}
		}
		var b bytes.Buffer
		if err := topo.WriteIBNetDiscover(&b, f, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "# planarized \"H-") {
			t.Errorf("port %d: the discovered fabric's text has no # planarized line:\n%s", port, b.String())
		}
		back, err := topo.Parse("discovered", strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("port %d: the discovered text does not load back: %v", port, err)
		}
		if back.Planes() != 4 {
			t.Errorf("port %d: loaded back, %d planes", port, back.Planes())
		}
	}

	// An ordinary fabric: the same as Session().Discover.
	h, err := Open(ctx, "sim:"+topologies+"net.2sw2path4hca?node=Hca3&port=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var d, merged *engine.Discovery
	var texts [2]bytes.Buffer
	for i, discover := range []func(context.Context, *engine.DiscoverOptions) (*engine.Discovery, error){h.DiscoverPlanes, h.Session().Discover} {
		if d, err = discover(ctx, nil); err == nil {
			err = topo.WriteIBNetDiscover(&texts[i], d.Fabric, nil)
		}
		if i == 0 {
			merged = d
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if a, b := texts[0].String(), texts[1].String(); a != b || strings.Contains(a, "planarized") {
		t.Errorf("an ordinary fabric: DiscoverPlanes\n%s\nSession().Discover\n%s", a, b)
	}
	for _, n := range merged.Fabric.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Plane != 0 || n.Planarized {
				t.Errorf("an ordinary fabric: %s has a plane", n.Desc)
			}
		}
	}
}
