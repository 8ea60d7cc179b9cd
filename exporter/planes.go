package exporter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// A planarized port's exporter (Options.Fabric) serves every port series
// with one more label, the port's plane: each such family has a twin of
// the same name and help with "plane" as its last label, and an exporter
// serves (and describes) one of the two sets only, so that a registry
// sees one label set per name and an ordinary fabric's output is what it
// was.

// planeLabel is the label a planarized port's exporter adds to the port
// series: the number of the plane the port is on (topo.Port.Plane).
const planeLabel = "plane"

// withPlane gives f its plane twin and returns f.
func (f *family) withPlane() *family {
	f.plane = newFamily(f.name, f.help, f.typ, append(append([]string(nil), f.labels...), planeLabel)...)
	f.plane.twin = true
	return f
}

// serves reports whether the exporter serves family f: a plane twin when
// it sweeps every plane, the family it twins otherwise.
func (e *Exporter) serves(f *family) bool {
	if e.planes {
		return f.plane == nil
	}
	return !f.twin
}

// emitPort emits a series of port p's family f: with p's plane as the
// last label (f's twin) when the exporter sweeps every plane.
func (e *Exporter) emitPort(em emitter, f *family, p *topo.Port, v float64, lv ...string) {
	if !e.planes {
		em.emit(f, v, lv...)
		return
	}
	em.emit(f.plane, v, append(lv, strconv.Itoa(int(p.Plane)))...)
}

// planePort is a local plane port: port num of SMI CA ca.
type planePort struct {
	ca  string
	num int
}

// planePortsOf maps each plane of the merged planarized discovery d to
// the local plane port its walk started from (the routes of its
// switches, engine.Discovery.Route).
func planePortsOf(d *engine.Discovery) map[int]planePort {
	out := map[int]planePort{}
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		if r, ok := d.Route(n.GUID); ok && r.CAName != "" {
			out[int(r.Plane)] = planePort{r.CAName, r.PortNum}
		}
	}
	return out
}

// planeSession returns the session on the local port of plane (of plan
// pl's discovery) for SMPs to that plane's nodes: the exporter's own on
// its plane, else one opened on first use (engine.Session.OnPort) and
// kept until Run ends.
func (e *Exporter) planeSession(ctx context.Context, pl *sweepPlan, plane int) (*engine.Session, error) {
	if plane == e.ownPlane {
		return e.sess, nil
	}
	pp, ok := pl.planePorts[plane]
	if !ok {
		return nil, fmt.Errorf("exporter: plane %d: the discovery reached no switch of it: %w", plane, engine.ErrNotFound)
	}
	e.planeMu.Lock()
	defer e.planeMu.Unlock()
	if s := e.planeSess[pp]; s != nil {
		return s, nil
	}
	s, err := e.sess.OnPort(ctx, e.opts.Fabric, pp.ca, pp.num)
	if err != nil || s == e.sess {
		return s, err
	}
	if e.planeSess == nil {
		e.planeSess = map[planePort]*engine.Session{}
	}
	e.planeSess[pp] = s
	return s, nil
}

// closePlanes closes the sessions planeSession opened.
func (e *Exporter) closePlanes() {
	e.planeMu.Lock()
	defer e.planeMu.Unlock()
	for k, s := range e.planeSess {
		s.Close()
		delete(e.planeSess, k)
	}
}

// sweepOnPlanes answers reqs as the session's Sweep does, but sends each
// SMP among them through the session on the plane port of planes[i] (the
// plane of the port it reads) when the exporter sweeps every plane: the
// session's own SMPs reach its plane only. GMPs go through the session's
// GSI side, whatever plane they are for, and so do SMPs to a port of no
// known plane (0: a discovery that found no other plane port).
func (e *Exporter) sweepOnPlanes(ctx context.Context, pl *sweepPlan, reqs []engine.SweepReq, planes []int) []engine.SweepResult {
	if !e.planes {
		return e.sess.Sweep(ctx, reqs, nil)
	}
	by := map[int][]int{} // request indices by plane; 0: the session's
	var order []int
	for i, r := range reqs {
		plane := 0
		if r.Class == engine.SweepSMP && planes[i] != 0 && planes[i] != e.ownPlane {
			plane = planes[i]
		}
		if by[plane] == nil {
			order = append(order, plane)
		}
		by[plane] = append(by[plane], i)
	}
	res := make([]engine.SweepResult, len(reqs))
	for _, plane := range order {
		idx := by[plane]
		s, err := e.sess, error(nil)
		if plane != 0 {
			s, err = e.planeSession(ctx, pl, plane)
		}
		if err != nil {
			for _, i := range idx {
				res[i].Err = err
			}
			continue
		}
		sub := make([]engine.SweepReq, len(idx))
		for k, i := range idx {
			sub[k] = reqs[i]
		}
		for k, r := range s.Sweep(ctx, sub, nil) {
			res[idx[k]] = r
		}
	}
	return res
}
