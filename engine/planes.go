package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/ibscript/ibscript/fabric"
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
// whole; it has no directed routes (Path and Target answer false) and is
// not the session's LastDiscovery.
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
	merged := &Discovery{}
	var walks []*topo.Fabric
	for _, p := range ports {
		if p.PortGUID != local.PortGUID || p.RoCE() || p.CAName == local.CAName || p.CapMask&fabric.CapIsSMDisabled != 0 {
			continue
		}
		d, err := s.discoverPlane(ctx, f, p.CAName, p.PortNum, opts)
		if err != nil {
			return nil, fmt.Errorf("engine: discover plane %d (%s port %d): %w", p.PortNum, p.CAName, p.PortNum, err)
		}
		walks = append(walks, d.Fabric)
		merged.Errors = append(merged.Errors, d.Errors...)
		merged.MADs += d.MADs
		merged.Retransmits += d.Retransmits
		merged.Recovered += d.Recovered
	}
	if len(walks) == 0 {
		return s.Discover(ctx, opts)
	}
	if merged.Fabric, err = topo.MergePlanes(walks); err != nil {
		return nil, err
	}
	// The first walk's node is the merged one.
	if o := merged.Fabric.Origin; o != nil && local.SMIPort < len(o.Node.Ports) && o.Node.Ports[local.SMIPort] != nil {
		merged.Fabric.Origin = o.Node.Ports[local.SMIPort]
	}
	merged.Elapsed = time.Since(start)
	return merged, nil
}

// discoverPlane discovers through plane port num of SMI CA ca: the session
// itself on its own plane port, else a session of its own on that port.
func (s *Session) discoverPlane(ctx context.Context, f fabric.Fabric, ca string, num int, opts *DiscoverOptions) (*Discovery, error) {
	if local := s.tr.Port(); ca == local.SMIName && num == local.SMIPort {
		return s.Discover(ctx, opts)
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
	defer ps.Close()
	return ps.Discover(ctx, opts)
}
