package diag

import (
	"context"
	"fmt"
	"io"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// DumpFTs is dump_fts (and dump_lfts, dump_mfts): it discovers the
// fabric, then dumps the forwarding table of every switch in
// libibnetdisc's order (switches in reverse discovery order), each
// addressed by the directed route discovery reached it through, each
// unicast destination named from the discovery. A block that cannot be
// read is reported in the table's Errors and the dump goes on with the
// previous block's entries, as dump_fts does. d, when not nil, is a
// discovery to use instead of sweeping again.
func DumpFTs(ctx context.Context, e *Env, d *engine.Discovery, o *RouteOptions) ([]*ForwardingTable, error) {
	if o == nil {
		o = &RouteOptions{}
	}
	if d == nil {
		var err error
		if d, err = e.Discover(ctx); err != nil {
			return nil, fmt.Errorf("Failed to discover fabric: %w", err)
		}
	}
	s := e.Session
	var sws []*routeSwitch
	f := d.Fabric
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		n := f.Nodes[i]
		if n.Type != topo.Switch {
			continue
		}
		path, ok := d.Path(n.GUID)
		if !ok {
			continue
		}
		sw := &routeSwitch{
			target: engine.Target{Kind: engine.ByDR, Path: path},
			addr:   DRAddress(path, 0, 0), guid: n.GUID, desc: n.Desc, nports: n.NumPorts,
		}
		if len(n.Ports) > 0 && n.Ports[0] != nil {
			sw.lid = n.Ports[0].LID
		}
		sws = append(sws, sw)
	}
	r := &router{s: s, o: o, co: callOpts(o), names: e.NodeNames, unknown: "node info not available fabric scan"}
	// libibnetdisc read every switch's SwitchInfo during its scan.
	reqs := make([]engine.SweepReq, len(sws))
	for i, sw := range sws {
		reqs[i] = engine.SweepReq{Target: sw.target, Method: mad.MethodGet, AttrID: smp.AttrSwitchInfo}
	}
	// One pass, as libibnetdisc asks (engine.Passes(1)).
	infos := s.Sweep(ctx, reqs, nil, append(r.co[:len(r.co):len(r.co)], engine.Passes(1))...)
	resolve := resolveInFabric(f)
	var out []*ForwardingTable
	for i, sw := range sws {
		if err := infos[i].Err; err != nil {
			// libibnetdisc drops a switch whose SwitchInfo it cannot read.
			continue
		}
		if err := sw.si.UnmarshalBinary(infos[i].Data); err != nil {
			continue
		}
		if o.Multicast {
			out = append(out, r.multicast(ctx, sw))
		} else {
			out = append(out, r.unicast(ctx, sw, resolve))
		}
	}
	return out, nil
}

// WriteDumpFTs prints the tables as dump_fts does. script is "" for
// dump_fts, "dump_lfts" or "dump_mfts" for the wrapper scripts, which add
// their deprecation notice on stdout.
func WriteDumpFTs(w io.Writer, fts []*ForwardingTable, script string) error {
	for _, ft := range fts {
		if err := WriteIBRoute(w, ft); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, DumpFTsNotice(script))
	return err
}

// DumpFTsNotice is the deprecation notice the dump_lfts and dump_mfts
// scripts print on stdout after dump_fts, however it ended; "" for
// dump_fts.
func DumpFTsNotice(script string) string {
	switch script {
	case "dump_lfts":
		return "\n*** WARNING ***: this command has been replaced by dump_fts\n\n\n"
	case "dump_mfts":
		return "\n*** WARNING ***: this command has been replaced by dump_fts -M\n\n\n"
	}
	return ""
}
