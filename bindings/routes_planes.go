package bindings

import (
	"context"
	"fmt"
	"sort"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// routeError is a switch whose tables fabric.routes could not read: the
// switch when the error's target names one, and its plane on a merged
// planarized discovery (0 elsewhere).
type routeError struct {
	engine.TargetError
	Switch *topo.Node
	Plane  uint8
}

// routesOf reads the linear forwarding tables of d's switches and follows
// them (topo.AnalyzeRoutes). On the last fabric.discover{planes=true} of a
// planarized port it follows them plane by plane: each plane is its own
// subnet, whose switches route that plane's LIDs alone (docs/planes.md).
// Every plane's tables are read in one pass over the merged discovery,
// each switch of another plane through its own plane port (Target.Via);
// each plane's switches are then followed to the LIDs of its ports
// (topo.AnalyzePlaneRoutes). The planes' analyses are summed; a problem
// and an error name their plane.
func (e *Env) routesOf(ctx context.Context, d *engine.Discovery, progress func(done, total int)) (*topo.RouteAnalysis, []routeError) {
	var ports []engine.PlaneRoute
	if e.planes == d {
		ports = planePorts(d)
	}
	var lfts *engine.LFTs
	if len(ports) == 0 {
		lfts = e.sess.LFTs(ctx, d, progress)
	} else {
		blocks := planeBlocks(d.Fabric)
		lfts = e.sess.LFTsOf(ctx, d, func(sw *topo.Node, b int) bool {
			pl := nodePlane(sw)
			return pl == 0 || blocks[pl][b]
		}, progress)
	}
	errs := make([]routeError, len(lfts.Errors))
	bySwitch := switchesByTarget(d)
	for i, te := range lfts.Errors {
		errs[i] = routeError{TargetError: te, Switch: bySwitch[te.Path]}
	}
	if len(ports) == 0 {
		return topo.AnalyzeRoutes(d.Fabric, &lfts.ForwardingTables), errs
	}
	byPlane := map[uint8]*topo.ForwardingTables{}
	for i, sw := range lfts.Switches {
		pl := nodePlane(sw)
		if byPlane[pl] == nil {
			byPlane[pl] = &topo.ForwardingTables{}
		}
		byPlane[pl].Switches = append(byPlane[pl].Switches, sw)
		byPlane[pl].Ports = append(byPlane[pl].Ports, lfts.Ports[i])
	}
	sum := &topo.RouteAnalysis{Hops: map[int]int{}}
	for _, p := range ports {
		ft := byPlane[p.Plane]
		if ft == nil {
			ft = &topo.ForwardingTables{}
		}
		ra := topo.AnalyzePlaneRoutes(d.Fabric, ft, p.Plane)
		for i := range ra.Problems {
			ra.Problems[i].Detail = fmt.Sprintf("plane %d: %s", p.Plane, ra.Problems[i].Detail)
		}
		addRoutes(sum, ra)
	}
	for i := range errs {
		if sw := errs[i].Switch; sw != nil && nodePlane(sw) != 0 {
			errs[i].Plane = nodePlane(sw)
			errs[i].Path = fmt.Sprintf("plane %d: %s", errs[i].Plane, errs[i].Path)
		}
	}
	return sum, errs
}

// planeBlocks lists by plane the LFT blocks (LIDs 64b to 64b+63) that hold
// a LID of that plane's ports (each LID of an LMC range), the LIDs
// topo.AnalyzePlaneRoutes follows its switches to.
func planeBlocks(f *topo.Fabric) map[uint8]map[int]bool {
	out := map[uint8]map[int]bool{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || p.Plane == 0 || (n.Type == topo.Switch && p.Num != 0) {
				continue
			}
			if out[p.Plane] == nil {
				out[p.Plane] = map[int]bool{}
			}
			for k := 0; k < 1<<p.LMC; k++ {
				out[p.Plane][(int(p.LID)+k)/64] = true
			}
		}
	}
	return out
}

// switchesByTarget maps the target the table reads address each switch of
// d by (Discovery.SwitchTarget), as their errors' Path has it, to the
// switch; a target two switches share (a duplicate LID) names neither.
func switchesByTarget(d *engine.Discovery) map[string]*topo.Node {
	out := map[string]*topo.Node{}
	twice := map[string]bool{}
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		t, ok := d.SwitchTarget(n)
		if !ok {
			continue
		}
		k := t.String()
		if _, dup := out[k]; dup {
			twice[k] = true
		}
		out[k] = n
	}
	for k := range twice {
		delete(out, k)
	}
	return out
}

// nodePlane is the plane of n's ports when they all have the same one (a
// plane's switch, an ordinary CA on a plane), else 0 (a planarized CA, or
// a node of no plane).
func nodePlane(n *topo.Node) uint8 {
	pl := uint8(0)
	for _, p := range n.Ports {
		if p == nil || p.Plane == 0 {
			continue
		}
		if pl != 0 && p.Plane != pl {
			return 0
		}
		pl = p.Plane
	}
	return pl
}

// planePorts lists the plane ports a merged planarized discovery walked,
// by plane; none for any other discovery.
func planePorts(d *engine.Discovery) []engine.PlaneRoute {
	type port struct {
		ca  string
		num int
	}
	seen := map[port]bool{}
	var out []engine.PlaneRoute
	for _, n := range d.Fabric.Nodes {
		r, ok := d.Route(n.GUID)
		if !ok || r.CAName == "" || seen[port{r.CAName, r.PortNum}] {
			continue
		}
		seen[port{r.CAName, r.PortNum}] = true
		out = append(out, engine.PlaneRoute{Plane: r.Plane, CAName: r.CAName, PortNum: r.PortNum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Plane < out[j].Plane })
	return out
}

// addRoutes adds plane analysis a to sum.
func addRoutes(sum, a *topo.RouteAnalysis) {
	sum.Switches += a.Switches
	sum.LIDs += a.LIDs
	sum.Routes += a.Routes
	sum.Count += a.Count
	sum.Loops += a.Loops
	sum.Inherited += a.Inherited
	sum.Unknown += a.Unknown
	sum.Problems = append(sum.Problems, a.Problems...)
	for h, n := range a.Hops {
		sum.Hops[h] += n
	}
}
