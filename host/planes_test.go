package host

import (
	"bytes"
	"context"
	"fmt"
	"slices"
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

// TestDiscoverPlanesRoutes: the merged discovery of every plane keeps a
// directed route to every node and port, each from the plane port whose
// walk found it (engine.Discovery.Route): followed from that plane's SMI
// port (Session.OnPort), every route's NodeInfo is the node's, and every
// switch's route starts from the plane port of the switch's plane in the
// file. Path answers for the nodes reached from the session's own plane
// port, whose routes it can send; a switch of another plane has none, and
// the first such route sent from the session's own port reaches another
// node or none. Target answers for every node: the session sends a node
// of another plane its SMPs from that plane's port, and LFTs reads every
// plane's switches.
func TestDiscoverPlanesRoutes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const own = 3
	file := topologies + "fattree-xdr-4planes.net"
	want, err := topo.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, fmt.Sprintf("sim:%s?node=h000-01&port=%d", file, own), nil)
	var d *engine.Discovery
	if err == nil {
		defer h.Close()
		d, err = h.DiscoverPlanes(ctx, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	planeOf := map[uint64]uint8{}
	for _, n := range want.Nodes {
		if n.Type == topo.Switch {
			planeOf[n.GUID] = n.Ports[1].Plane
		}
	}
	sessions := map[int]*engine.Session{}
	defer func() {
		for _, s := range sessions {
			if s != h.Session() {
				s.Close()
			}
		}
	}()
	crossed := 0
	for _, n := range d.Fabric.Nodes {
		for _, g := range append([]uint64{n.GUID}, n.Ports[len(n.Ports)-1].GUID) {
			r, ok := d.Route(g)
			if !ok {
				t.Errorf("%s: no route to 0x%x", n.Desc, g)
				continue
			}
			if pl, sw := planeOf[n.GUID]; sw && (r.Plane != pl || r.PortNum != int(pl)) {
				t.Errorf("%s (plane %d): route from plane %d port %d", n.Desc, pl, r.Plane, r.PortNum)
			}
			s := sessions[r.PortNum]
			if s == nil {
				if s, err = h.Session().OnPort(ctx, h.Fabric(), r.CAName, r.PortNum); err != nil {
					t.Fatal(err)
				}
				sessions[r.PortNum] = s
			}
			ni, err := s.NodeInfo(ctx, r.Target())
			if err != nil || ni.NodeGUID != n.GUID {
				t.Errorf("%s: NodeInfo by %v from %s port %d: 0x%x, %v", n.Desc, r.Path, r.CAName, r.PortNum, ni.NodeGUID, err)
			}
			p, ok := d.Path(g)
			if ok != (r.PortNum == own) || ok && !slices.Equal(p, r.Path) {
				t.Errorf("%s: Path = %v, %v; its route is %v from port %d (the session's %d)", n.Desc, p, ok, r.Path, r.PortNum, own)
			}
			// Target is good from the session whatever the plane: the
			// engine sends it from its plane port.
			if tg, ok := d.Target(g); !ok {
				t.Errorf("%s: no Target", n.Desc)
			} else if ni, err := h.Session().NodeInfo(ctx, tg); err != nil || ni.NodeGUID != n.GUID {
				t.Errorf("%s: NodeInfo by %s: 0x%x, %v", n.Desc, tg, ni.NodeGUID, err)
			}
			if r.PortNum != own && g == n.GUID && crossed == 0 {
				if ni, err := h.Session().NodeInfo(ctx, r.Target()); err != nil || ni.NodeGUID != n.GUID {
					crossed++
				}
			}
		}
	}
	if len(sessions) != 4 || crossed == 0 {
		t.Errorf("routes from %d plane ports, %d of another plane's not good from the session's own; want 4 and some", len(sessions), crossed)
	}
	// The switches' tables of every plane, each read from its plane's
	// port (Session.Sweep of Targets of other planes).
	lfts := h.Session().LFTs(ctx, d, nil)
	if len(lfts.Errors) != 0 || len(lfts.Switches) != len(planeOf) {
		t.Errorf("LFTs: %d switches, errors %v; want %d, none", len(lfts.Switches), lfts.Errors, len(planeOf))
	}
}
