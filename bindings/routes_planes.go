package bindings

import (
	"context"
	"fmt"
	"sort"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// routesOf reads the linear forwarding tables of d's switches and follows
// them (topo.AnalyzeRoutes). On the last fabric.discover{planes=true} of a
// planarized port it does so plane by plane: each plane is its own subnet,
// whose switches route that plane's LIDs alone (docs/planes.md), and its
// switches are read through its own plane port (a LID of another plane is
// not routed on the session's), from a discovery of that plane by that
// port. The planes' analyses are summed; a problem and an error name
// their plane.
func (e *Env) routesOf(ctx context.Context, d *engine.Discovery, progress func(done, total int)) (*topo.RouteAnalysis, []engine.TargetError, error) {
	ports := planePorts(d)
	if e.planes != d || len(ports) == 0 {
		lfts := e.sess.LFTs(ctx, d, progress)
		return topo.AnalyzeRoutes(d.Fabric, &lfts.ForwardingTables), lfts.Errors, nil
	}
	sum := &topo.RouteAnalysis{Hops: map[int]int{}}
	var errs []engine.TargetError
	for _, p := range ports {
		s, err := e.sess.OnPort(ctx, e.fab, p.CAName, p.PortNum)
		if err != nil {
			return nil, nil, fmt.Errorf("plane %d (%s port %d): %w", p.Plane, p.CAName, p.PortNum, err)
		}
		pd, err := s.Discover(ctx, &engine.DiscoverOptions{})
		if err == nil {
			lfts := s.LFTs(ctx, pd, progress)
			ra := topo.AnalyzeRoutes(pd.Fabric, &lfts.ForwardingTables)
			for i := range ra.Problems {
				ra.Problems[i].Detail = fmt.Sprintf("plane %d: %s", p.Plane, ra.Problems[i].Detail)
			}
			addRoutes(sum, ra)
			for _, te := range lfts.Errors {
				te.Path = fmt.Sprintf("plane %d: %s", p.Plane, te.Path)
				errs = append(errs, te)
			}
		}
		if s != e.sess {
			s.Close()
		}
		if err != nil {
			return nil, nil, fmt.Errorf("plane %d (%s port %d): %w", p.Plane, p.CAName, p.PortNum, err)
		}
	}
	return sum, errs, nil
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
