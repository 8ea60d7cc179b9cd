package engine

import (
	"context"
	"fmt"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// MFTs are the multicast forwarding tables of the switches of a fabric,
// read by Session.MFTs.
type MFTs struct {
	topo.MulticastTables
	// Errors are the switches (or blocks) that did not answer.
	Errors []TargetError
}

// mcastMin is the first multicast LID (IBA 4.1).
const mcastMin = 0xc000

// MFTs reads the MulticastForwardingTable of every switch of d, all
// switches concurrently: its MLIDs up to SwitchInfo.MulticastFDBTop when
// the switch sets it (0xc000 or more), else up to its MulticastFDBCap, as
// ibroute -M reads them; each block of 32 MLIDs in 16-port positions.
// MLIDs no port forwards are left out.
func (s *Session) MFTs(ctx context.Context, d *Discovery, progress func(done, total int)) *MFTs {
	res := &MFTs{}
	sws, targets, infos := s.switchInfos(ctx, d, &res.Errors)
	type blk struct{ sw, block, pos int }
	var reqs []SweepReq
	var where []blk
	for i, si := range infos {
		if si == nil {
			continue
		}
		end := mcastMin + int(si.MulticastFDBCap) - 1
		if top := int(si.MulticastFDBTop); top >= mcastMin && top < end {
			end = top
		}
		for b := 0; mcastMin+b*32 <= end; b++ {
			for pos := range (sws[i].NumPorts + 16) / 16 {
				reqs = append(reqs, SweepReq{Target: targets[i], Method: mad.MethodGet, AttrID: smp.AttrMulticastForwardingTable, AttrMod: uint32(pos)<<28 | uint32(b)})
				where = append(where, blk{i, b, pos})
			}
		}
	}
	blocks := s.Sweep(ctx, reqs, progress, Passes(sweepPasses))
	groups := make([]map[uint16]topo.PortMask, len(sws))
	failed := blockAnswers(blocks, targets, func(k int) int { return where[k].sw }, &res.Errors, func(k int, data []byte) {
		w := where[k]
		if groups[w.sw] == nil {
			groups[w.sw] = map[uint16]topo.PortMask{}
		}
		addMFTBlock(groups[w.sw], w.block, w.pos, data)
	})
	for i, n := range sws {
		if infos[i] != nil && !failed[i] {
			res.Switches = append(res.Switches, n)
			if groups[i] == nil {
				groups[i] = map[uint16]topo.PortMask{}
			}
			res.Groups = append(res.Groups, groups[i])
		}
	}
	return res
}

// blockAnswers goes through the answers to a sweep of the switches'
// (targets') table blocks, block k of switch swOf(k): fn gets each
// answer's data; the first block of a switch that did not answer goes to
// errs and marks the switch failed (its table is then not used).
func blockAnswers(blocks []SweepResult, targets []Target, swOf func(k int) int, errs *[]TargetError, fn func(k int, data []byte)) (failed []bool) {
	failed = make([]bool, len(targets))
	for k, r := range blocks {
		sw := swOf(k)
		if r.Err == nil {
			fn(k, r.Data)
		} else if !failed[sw] {
			*errs = append(*errs, TargetError{Path: targets[sw].String(), Err: r.Err})
			failed[sw] = true
		}
	}
	return failed
}

// addMFTBlock adds one MFT block's port masks (32 big-endian 16-bit
// masks, IBA 14.2.5.12) at its position to g.
func addMFTBlock(g map[uint16]topo.PortMask, block, pos int, data []byte) {
	// A short answer's missing entries read as zero, as no ports.
	full := make([]byte, smp.MulticastForwardingTableLayout().Size)
	copy(full, data)
	var t smp.MulticastForwardingTable
	_ = t.UnmarshalBinary(full) // full holds the whole attribute
	for m, bits := range t.PortMask {
		if bits == 0 {
			continue
		}
		mlid := uint16(mcastMin + block*32 + m)
		pm := g[mlid]
		for b := range 16 {
			if bits&(1<<b) != 0 {
				pm.Set(pos*16 + b)
			}
		}
		g[mlid] = pm
	}
}

// switchInfos reads the SwitchInfo of every switch of d it can address,
// nil where it did not answer (the error added to errs).
func (s *Session) switchInfos(ctx context.Context, d *Discovery, errs *[]TargetError) ([]*topo.Node, []Target, []*smp.SwitchInfo) {
	var sws []*topo.Node
	var targets []Target
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		if t, ok := d.SwitchTarget(n); ok {
			sws = append(sws, n)
			targets = append(targets, t)
		}
	}
	reqs := make([]SweepReq, len(sws))
	for i, t := range targets {
		reqs[i] = SweepReq{Target: t, Method: mad.MethodGet, AttrID: smp.AttrSwitchInfo}
	}
	infos := make([]*smp.SwitchInfo, len(sws))
	for i, r := range s.Sweep(ctx, reqs, nil, Passes(sweepPasses)) {
		var si smp.SwitchInfo
		err := r.Err
		if err == nil {
			err = si.UnmarshalBinary(r.Data)
		}
		if err != nil {
			*errs = append(*errs, TargetError{Path: targets[i].String(), Err: err})
			continue
		}
		infos[i] = &si
	}
	return sws, targets, infos
}

// SL2VLs are SLtoVLMappingTables read by Session.SL2VLs.
type SL2VLs struct {
	topo.SL2VLTables
	// Errors are the tables that could not be read.
	Errors []TargetError
}

// SL2VLs reads the SLtoVLMappingTables a credit-loop analysis needs: on
// every switch, each pair of a cabled input port and an output port
// linked to another switch (modifier in<<8 | out); on every CA and
// router port with a LID, its own table. A switch with P inter-switch
// links and C cabled ports costs C*P queries.
func (s *Session) SL2VLs(ctx context.Context, d *Discovery, progress func(done, total int)) *SL2VLs {
	res := &SL2VLs{SL2VLTables: topo.SL2VLTables{Tables: map[topo.SL2VLKey][16]uint8{}}}
	var reqs []SweepReq
	var keys []topo.SL2VLKey
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.Switch {
			for _, p := range n.Ports {
				if p != nil && p.LID != 0 {
					reqs = append(reqs, SweepReq{Target: LID(p.LID), Method: mad.MethodGet, AttrID: smp.AttrSLtoVLMappingTable})
					keys = append(keys, topo.SL2VLKey{Node: n, Out: uint8(p.Num)})
				}
			}
			continue
		}
		t, ok := d.SwitchTarget(n)
		if !ok {
			continue
		}
		for in, pi := range n.Ports {
			for out, po := range n.Ports {
				if in == 0 || in == out || pi == nil || pi.Remote == nil || po == nil || po.Remote == nil || po.Remote.Node.Type != topo.Switch {
					continue
				}
				reqs = append(reqs, SweepReq{Target: t, Method: mad.MethodGet, AttrID: smp.AttrSLtoVLMappingTable, AttrMod: uint32(in)<<8 | uint32(out)})
				keys = append(keys, topo.SL2VLKey{Node: n, In: uint8(in), Out: uint8(out)})
			}
		}
	}
	for i, r := range s.Sweep(ctx, reqs, progress, Passes(sweepPasses)) {
		if r.Err == nil && len(r.Data) < 8 {
			r.Err = fmt.Errorf("SLtoVLMappingTable %d/%d: %w (have %d bytes, need 8)", keys[i].In, keys[i].Out, mad.ErrTruncated, len(r.Data))
		}
		if r.Err != nil {
			res.Errors = append(res.Errors, TargetError{Path: reqs[i].Target.String(), Err: r.Err})
			continue
		}
		var v [16]uint8
		for sl := range 16 {
			v[sl] = r.Data[sl/2] >> (4 * (1 - sl%2)) & 0xf
		}
		res.Tables[keys[i]] = v
	}
	return res
}
