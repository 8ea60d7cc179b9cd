package host

import (
	"context"
	"fmt"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// DiscoverPlanes discovers the fabric as Session().Discover does; when the
// session's port is a planarized CA's (its SMPs go through another CA's
// port, PortAttr.SMIName: libibumad's SMI/GSI pair), it discovers every
// plane instead, through each plane port of that SMI CA (the ports sharing
// the session's port GUID), and merges them by GUID (topo.MergePlanes): the
// CAs whose plane ports share one port GUID are planarized, each port has
// its plane (the number of the local plane port whose walk reached it). On
// any other port nothing changes. The merged Discovery has the walks'
// errors, SMPs, retransmits and recovered queries summed, its Elapsed the
// whole; it has no directed routes (Path, Target answer false).
func (h *Host) DiscoverPlanes(ctx context.Context, opts *engine.DiscoverOptions) (*engine.Discovery, error) {
	local := h.tr.Port()
	if local.SMIName == "" || local.SMIName == local.CAName {
		return h.sess.Discover(ctx, opts)
	}
	ports, err := h.fab.Ports(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: discover planes: %w", err)
	}
	start := time.Now()
	merged := &engine.Discovery{}
	var walks []*topo.Fabric
	for _, p := range ports {
		if p.CAName != local.SMIName || p.PortGUID != local.PortGUID || p.RoCE() {
			continue
		}
		d, err := h.discoverPlane(ctx, p.PortNum, local.SMIPort, opts)
		if err != nil {
			return nil, fmt.Errorf("host: discover plane %d (%s port %d): %w", p.PortNum, p.CAName, p.PortNum, err)
		}
		walks = append(walks, d.Fabric)
		merged.Errors = append(merged.Errors, d.Errors...)
		merged.MADs += d.MADs
		merged.Retransmits += d.Retransmits
		merged.Recovered += d.Recovered
	}
	if len(walks) == 0 {
		return h.sess.Discover(ctx, opts)
	}
	if merged.Fabric, err = topo.MergePlanes(walks); err != nil {
		return nil, err
	}
	// The origin is the session's own plane port (the first walk's node
	// is the merged one).
	if o := merged.Fabric.Origin; o != nil && local.SMIPort < len(o.Node.Ports) && o.Node.Ports[local.SMIPort] != nil {
		merged.Fabric.Origin = o.Node.Ports[local.SMIPort]
	}
	merged.Elapsed = time.Since(start)
	return merged, nil
}

// discoverPlane discovers through the SMI CA's plane port num: on the
// session's own port (own, its SMI port) the session, else a session of
// its own on that port, closed after.
func (h *Host) discoverPlane(ctx context.Context, num, own int, opts *engine.DiscoverOptions) (*engine.Discovery, error) {
	if num == own {
		return h.sess.Discover(ctx, opts)
	}
	tr, err := h.fab.Open(ctx, h.tr.Port().SMIName, num)
	if err != nil {
		return nil, err
	}
	so := h.so
	s, err := engine.New(tr, &so)
	if err != nil {
		tr.Close()
		return nil, err
	}
	defer s.Close()
	return s.Discover(ctx, opts)
}
