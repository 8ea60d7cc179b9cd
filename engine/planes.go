package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/internal/intmap"
	"github.com/ibscript/ibscript/topo"
)

// DiscoverPlanes discovers the fabric as Discover does; when the session's
// port is a planarized CA's (its SMPs go through another CA's port,
// PortAttr.SMIName: libibumad's SMI/GSI pair), it discovers every plane
// instead, through each plane port on f (each SMI port sharing the
// session's port GUID: the simulator's plane ports of one CA, or one SMI
// device per plane; its own for the session's plane, a session of the
// same Options on each other, closed after), and merges the walks by
// GUID (topo.MergePlanes): the CAs whose plane ports share one port GUID
// are planarized, each port has its plane (the number of the local plane
// port whose walk reached it), and Origin is the session's plane port. On
// any other port nothing changes. The merged Discovery has the walks'
// errors, SMPs, retransmits and recovered queries summed, Elapsed the
// whole, and is not the session's LastDiscovery. It keeps every node's
// and port's directed route from the first walk that reached it, with the
// plane port that walk started from (Route): a directed route is only good
// from the port it was found from, so Path answers for the nodes reached
// from the session's own plane port, and Target for every node, a node of
// another plane's from that plane's SMI port, which the session's SMP
// calls and sweeps send it from (Session.OnPort, opened for the call).
func (s *Session) DiscoverPlanes(ctx context.Context, f fabric.Fabric, opts *DiscoverOptions) (*Discovery, error) {
	local := s.tr.Port()
	if f == nil || local.SMIName == "" || local.SMIName == local.CAName {
		return s.Discover(ctx, opts)
	}
	ports, err := f.Ports(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: discover planes: %w", err)
	}
	start := time.Now()
	merged := &Discovery{routes: new(intmap.Map[PlaneRoute]), own: -1, fab: f}
	var walks []*topo.Fabric
	smi := planePorts(ports, local)
	planes := PlaneNumbers(smi)
	ownPlane := -1
	for i, p := range smi {
		d, err := s.discoverPlane(ctx, f, p.CAName, p.PortNum, opts)
		if err != nil {
			return nil, fmt.Errorf("engine: discover plane %d (%s port %d): %w", planes[i], p.CAName, p.PortNum, err)
		}
		own := p.CAName == local.SMIName && p.PortNum == local.SMIPort
		if own {
			merged.ownCA, merged.own = p.CAName, p.PortNum
			ownPlane = planes[i]
		}
		merged.keepRoutes(d, p.CAName, p.PortNum, planes[i], own)
		walks = append(walks, d.Fabric)
		merged.Errors = append(merged.Errors, d.Errors...)
		merged.MADs += d.MADs
		merged.Retransmits += d.Retransmits
		merged.Recovered += d.Recovered
	}
	if len(walks) == 0 {
		return s.Discover(ctx, opts)
	}
	if merged.Fabric, err = topo.MergePlanesAs(walks, planes); err != nil {
		return nil, err
	}
	// The first walk's node is the merged one; the origin is its port on
	// the session's own plane: port SMIPort when the plane ports are one
	// device's, else the port that plane's walk reached it by.
	if o := merged.Fabric.Origin; o != nil {
		if (ownPlane == local.SMIPort || ownPlane < 0) && local.SMIPort < len(o.Node.Ports) && o.Node.Ports[local.SMIPort] != nil {
			merged.Fabric.Origin = o.Node.Ports[local.SMIPort]
		} else if i := slices.IndexFunc(o.Node.Ports, func(p *topo.Port) bool { return p != nil && p.Remote != nil && int(p.Plane) == ownPlane }); i >= 0 {
			merged.Fabric.Origin = o.Node.Ports[i]
		}
	}
	merged.Elapsed = time.Since(start)
	return merged, nil
}

// planePorts returns the SMI plane ports among ports of the planarized CA
// whose GSI side is local: the ports sharing its port GUID but for its own
// and those with IsSMDisabled (libibumad's pairing), InfiniBand only.
func planePorts(ports []fabric.PortAttr, local fabric.PortAttr) []fabric.PortAttr {
	return slices.DeleteFunc(slices.Clone(ports), func(p fabric.PortAttr) bool {
		return p.PortGUID != local.PortGUID || p.RoCE() || p.CAName == local.CAName || p.CapMask&fabric.CapIsSMDisabled != 0
	})
}

// PlaneSMLIDs returns the SM LIDs of the planes of the session's port
// when it is a planarized CA's (its SMI side another CA's port, as
// DiscoverPlanes finds them): each SMI plane port's SMLID, in port order,
// each once; nil on any other port. Each plane is a subnet with an SM of
// its own (a site runs one OpenSM per plane), which answers SA requests
// and forwards traps for its plane alone: SubscribeOptions.SMLIDs and
// SALID reach them through the session's GSI side.
func (s *Session) PlaneSMLIDs(ctx context.Context, f fabric.Fabric) ([]uint16, error) {
	local := s.tr.Port()
	if f == nil || local.SMIName == "" || local.SMIName == local.CAName {
		return nil, nil
	}
	ports, err := f.Ports(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: plane SM LIDs: %w", err)
	}
	var lids []uint16
	for _, p := range planePorts(ports, local) {
		if p.SMLID != 0 && !slices.Contains(lids, p.SMLID) {
			lids = append(lids, p.SMLID)
		}
	}
	return lids, nil
}

// PlaneNumbers returns the plane of each of a planarized CA's SMI plane
// ports smi (the SMI ports sharing its port GUID), as DiscoverPlanes
// numbers them. The kernel gives a planarized HCA one SMI device, a sub
// device of the aggregated one (RDMA_DEVICE_TYPE_SMI, its parent
// RDMA_NLDEV_ATTR_PARENT_NAME), with a port per plane, and port N is plane
// N: mlx5 sends a MAD of SMI port N with plane_index N (Linux 026a425990af,
// "RDMA/mlx5: Support plane device and driver APIs to add and delete it";
// a parent takes one SMI device, a second is EEXIST). So when the ports are
// on one device, a port's plane is its number. Spread over several SMI
// devices (which mlx5 does not make; libibumad's umad_get_smi_gsi_pairs
// then pairs the GSI device with the last of them), each numbering its
// ports from 1, the numbers would repeat: the ports are then numbered 1,
// 2, ... in libibumad's device order (umad_get_cas_names: by name, as
// alphasort in the C locale) and port order. docs/planes.md.
func PlaneNumbers(smi []fabric.PortAttr) []int {
	planes := make([]int, len(smi))
	oneDevice := true
	for i, p := range smi {
		planes[i] = p.PortNum
		oneDevice = oneDevice && p.CAName == smi[0].CAName
	}
	if oneDevice {
		return planes
	}
	order := make([]int, len(smi))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := strings.Compare(smi[a].CAName, smi[b].CAName); c != 0 {
			return c
		}
		return cmp.Compare(smi[a].PortNum, smi[b].PortNum)
	})
	for n, i := range order {
		planes[i] = n + 1
	}
	return planes
}

// PlaneRoute is a directed route of a merged planarized discovery
// (Session.DiscoverPlanes): Path (smpquery -D convention) starts from
// port PortNum of CA CAName, the local SMI plane port whose walk found
// the node, on plane Plane.
type PlaneRoute struct {
	Plane   uint8
	CAName  string
	PortNum int
	Path    []uint8
}

// Target is the directed-route target of r, to be sent from its plane
// port (a Session on CAName/PortNum).
func (r PlaneRoute) Target() Target { return Target{Kind: ByDR, Path: r.Path} }

// Route returns the directed route to the node or port with the given
// GUID and the local plane port it starts from: from a merged planarized
// discovery (Session.DiscoverPlanes) for every plane; from any other
// discovery, its Path from the session's port (CAName "").
func (d *Discovery) Route(guid uint64) (PlaneRoute, bool) {
	if d.routes != nil {
		return d.routes.Get(guid)
	}
	p, ok := d.Path(guid)
	return PlaneRoute{Path: p}, ok
}

// keepRoutes adds the routes of walk w of plane plane, from plane port num
// of SMI CA ca, that no earlier walk had (own: every one, the session's
// own plane port's routes first): the node's and its ports' GUIDs. It runs
// before topo.MergePlanes takes w's nodes.
func (d *Discovery) keepRoutes(w *Discovery, ca string, num, plane int, own bool) {
	keep := func(g uint64) {
		if _, seen := d.routes.Get(g); seen && !own {
			return
		}
		if p, ok := w.Path(g); ok {
			d.routes.Set(g, PlaneRoute{Plane: uint8(plane), CAName: ca, PortNum: num, Path: p})
		}
	}
	for _, n := range w.Fabric.Nodes {
		keep(n.GUID)
		for _, pt := range n.Ports {
			if pt != nil && pt.GUID != 0 && pt.GUID != n.GUID {
				keep(pt.GUID)
			}
		}
	}
}

// discoverPlane discovers through plane port num of SMI CA ca: the session
// itself on its own plane port, else a session of its own on that port.
func (s *Session) discoverPlane(ctx context.Context, f fabric.Fabric, ca string, num int, opts *DiscoverOptions) (*Discovery, error) {
	ps, err := s.OnPort(ctx, f, ca, num)
	if err != nil {
		return nil, err
	}
	if ps != s {
		defer ps.Close()
	}
	return ps.Discover(ctx, opts)
}

// OnPort returns a Session on port num of CA ca of f with s's Options: s
// itself when that is s's port (or the SMI side of its pair), else a new
// Session on the port f.Open opens, which the caller closes. It is how a
// route of a merged planarized discovery (PlaneRoute) is followed from its
// plane port.
func (s *Session) OnPort(ctx context.Context, f fabric.Fabric, ca string, num int) (*Session, error) {
	if local := s.tr.Port(); ca == local.SMIName && num == local.SMIPort || ca == local.CAName && num == local.PortNum {
		return s, nil
	}
	tr, err := f.Open(ctx, ca, num)
	if err != nil {
		return nil, err
	}
	o := s.opts
	ps, err := New(tr, &o)
	if err != nil {
		tr.Close()
		return nil, err
	}
	return ps, nil
}

// viaCall runs one SMP transaction of a target whose directed route starts
// from another plane port (Target.Via) on a session of its own on that
// port, opened for the call and closed after, and returns its result as
// an op of s (which the caller releases).
func (s *Session) viaCall(ctx context.Context, t Target, method uint8, attrID uint16, attrMod uint32, data []byte, opts []CallOption) (*op, error) {
	v := t.Via
	ps, err := s.OnPort(ctx, v.Fabric, v.CAName, v.PortNum)
	if err != nil {
		return nil, fmt.Errorf("engine: %s: %w", t, err)
	}
	if ps != s {
		defer ps.Close()
	}
	t.Via = nil
	o, err := ps.smpCall(ctx, t, method, attrID, attrMod, data, opts)
	if err != nil {
		return nil, err
	}
	c := s.getOp()
	c.resp, c.rn, c.status = o.resp, o.rn, o.status
	c.class, c.method, c.attrID, c.attrMod, c.target = o.class, o.method, o.attrID, o.attrMod, o.target
	ps.release(o)
	return c, nil
}

// sweepPlanes is Sweep of requests some of which start from another plane
// port (Target.Via, a merged planarized discovery's routes): each plane
// port's requests run on a session of their own on it, opened for the
// sweep and closed after, the others on s. A plane port that cannot be
// opened is its requests' error. progress counts every request.
func (s *Session) sweepPlanes(ctx context.Context, reqs []SweepReq, progress func(done, total int), opts []CallOption) []SweepResult {
	type port struct {
		ca  string
		num int
	}
	groups := map[port][]int{}
	vias := map[port]*Via{}
	var order []port
	for i, r := range reqs {
		var k port
		if v := r.Target.Via; v != nil {
			k = port{v.CAName, v.PortNum}
			vias[k] = v
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	res := make([]SweepResult, len(reqs))
	done := 0
	for _, k := range order {
		idx := groups[k]
		sub := make([]SweepReq, len(idx))
		for j, i := range idx {
			sub[j] = reqs[i]
			sub[j].Target.Via = nil
		}
		ps, err := s, error(nil)
		if v := vias[k]; v != nil {
			ps, err = s.OnPort(ctx, v.Fabric, v.CAName, v.PortNum)
		}
		var got []SweepResult
		if err == nil {
			base := done
			var p func(int, int)
			if progress != nil {
				p = func(d, _ int) { progress(base+d, len(reqs)) }
			}
			got = ps.Sweep(ctx, sub, p, opts...)
			if ps != s {
				ps.Close()
			}
		}
		for j, i := range idx {
			if err != nil {
				res[i].Err = fmt.Errorf("engine: plane port %s port %d: %w", k.ca, k.num, err)
			} else {
				res[i] = got[j]
			}
		}
		done += len(idx)
	}
	return res
}
