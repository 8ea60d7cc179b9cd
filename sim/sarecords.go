package sim

import (
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// The SA's records, one fill per record kind: saRecordFills maps an
// attribute ID to the method that lists its records. A kind without an
// entry has no records (ServiceRecord: nothing registers a service). A new record kind is its entry and its
// method, here.
var saRecordFills = map[uint16]func(*Fabric, *saQuery){
	sa.AttrNodeRecord:                     (*Fabric).saNodeRecords,
	sa.AttrPortInfoRecord:                 (*Fabric).saPortInfoRecords,
	sa.AttrLinkRecord:                     (*Fabric).saLinkRecords,
	sa.AttrSwitchInfoRecord:               (*Fabric).saSwitchInfoRecords,
	sa.AttrLFTRecord:                      (*Fabric).saLFTRecords,
	sa.AttrGUIDInfoRecord:                 (*Fabric).saGUIDInfoRecords,
	sa.AttrPKeyTableRecord:                (*Fabric).saPKeyTableRecords,
	sa.AttrSMInfoRecord:                   (*Fabric).saSMInfoRecords,
	sa.AttrSLtoVLMappingTableRecord:       (*Fabric).saSLtoVLRecords,
	sa.AttrVLArbitrationTableRecord:       (*Fabric).saVLArbRecords,
	sa.AttrMulticastForwardingTableRecord: (*Fabric).saMFTRecords,
	sa.AttrInformInfoRecord:               (*Fabric).saInformInfoRecords,
	sa.AttrPathRecord:                     (*Fabric).saPathRecords,
	sa.AttrMCMemberRecord:                 (*Fabric).saMCMemberRecords,
}

// saQuery collects the records of one query: those that match the
// template in the components of the mask, appended to msg at the
// attribute's stride.
type saQuery struct {
	attr *sa.Attr
	tmpl []byte
	mask uint64
	from uint16 // the requester's LID
	msg  []byte
}

// addMask appends a zero record, filled by fill, that stays if it matches
// the template in the components of m.
func (q *saQuery) addMask(m uint64, fill func(r []byte)) {
	n := len(q.msg)
	q.msg = append(q.msg, make([]byte, q.attr.Stride*8)...)
	r := q.msg[n:]
	fill(r)
	if !q.attr.Matches(r, q.tmpl, m) {
		q.msg = q.msg[:n]
	}
}

// add appends a record that matches the query's mask.
func (q *saQuery) add(fill func(r []byte)) { q.addMask(q.mask, fill) }

// field is the attribute's row name.
func (q *saQuery) field(name string) mad.Field { fl, _, _ := q.attr.Field(name); return fl }

// comp is the component bit of the row name.
func (q *saQuery) comp(name string) uint64 { _, c, _ := q.attr.Field(name); return 1 << c }

// saNodeRecords lists the NodeRecords. f.mu is held.
func (f *Fabric) saNodeRecords(q *saQuery) {
	lid, desc := q.field("LID"), q.field("NodeDescription")
	for _, n := range f.nodes {
		for _, p := range f.endports(n) {
			q.add(func(r []byte) {
				lid.Put(r, uint64(p.lid))
				ni := r[4:44]
				copy(ni, n.ni[:40])
				niPortGUID.Put(ni, p.guid)
				niLocalPortNum.Put(ni, uint64(p.num))
				copy(desc.Slice(r), n.nd[:])
			})
		}
	}
}

// saPortInfoRecords lists the PortInfoRecords. f.mu is held.
func (f *Fabric) saPortInfoRecords(q *saQuery) {
	elid, pnum := q.field("EndportLID"), q.field("PortNum")
	f.eachRecordPort(func(n *node, ep, p *port) {
		q.add(func(r []byte) {
			elid.Put(r, uint64(ep.lid))
			pnum.Put(r, uint64(p.num))
			copy(r[4:68], p.pi[:])
			piLocalPortNum.Put(r[4:], uint64(f.smIngress(n, p)))
		})
	})
}

// eachRecordPort calls fn with each port that has per-port records
// (PortInfo, P_KeyTable) and the endport whose LID they carry: every
// port of a switch (with its port 0), a CA's ports with a LID.
func (f *Fabric) eachRecordPort(fn func(n *node, ep, p *port)) {
	for _, n := range f.nodes {
		for _, ep := range f.endports(n) {
			for _, p := range n.ports {
				if p != nil && (n.typ == typeSwitch || p == ep) {
					fn(n, ep, p)
				}
			}
		}
	}
}

// saLinkRecords lists the LinkRecords. f.mu is held.
func (f *Fabric) saLinkRecords(q *saQuery) {
	fl, fp, tp, tl := q.field("FromLID"), q.field("FromPort"), q.field("ToPort"), q.field("ToLID")
	for _, n := range f.nodes {
		for _, p := range n.ports {
			if p == nil || p.remote == nil || p.num == 0 || !p.up(false) {
				continue
			}
			from, to := f.lidOf(p), f.lidOf(p.remote)
			if from == 0 || to == 0 {
				continue
			}
			q.add(func(r []byte) {
				fl.Put(r, uint64(from))
				fp.Put(r, uint64(p.num))
				tp.Put(r, uint64(p.remote.num))
				tl.Put(r, uint64(to))
			})
		}
	}
}

// saSwitchInfoRecords lists the SwitchInfoRecords. f.mu is held.
func (f *Fabric) saSwitchInfoRecords(q *saQuery) {
	lid := q.field("LID")
	for _, n := range f.nodes {
		if n.sw != nil && n.ports[0].lid != 0 {
			q.add(func(r []byte) {
				lid.Put(r, uint64(n.ports[0].lid))
				copy(r[4:24], n.sw.si[:20])
			})
		}
	}
}

// saLFTRecords lists the LinearForwardingTableRecords. f.mu is held.
func (f *Fabric) saLFTRecords(q *saQuery) {
	lid, blk := q.field("LID"), q.field("BlockNum")
	for _, n := range f.nodes {
		if n.sw == nil || n.ports[0].lid == 0 {
			continue
		}
		n.sw.table() // filled before the records are
		for b := 0; b*64 <= int(n.sw.top); b++ {
			q.add(func(r []byte) {
				lid.Put(r, uint64(n.ports[0].lid))
				blk.Put(r, uint64(b))
				for i := range 64 {
					l := b*64 + i
					v := byte(0xff)
					if l < len(n.sw.lft) && l <= int(n.sw.top) {
						v = n.sw.lft[l]
					}
					r[8+i] = v
				}
			})
		}
	}
}

// saGUIDInfoRecords lists the GUIDInfoRecords. f.mu is held.
func (f *Fabric) saGUIDInfoRecords(q *saQuery) {
	lid, g0 := q.field("LID"), q.field("GUID0")
	for _, n := range f.nodes {
		for _, p := range f.endports(n) {
			q.add(func(r []byte) {
				lid.Put(r, uint64(p.lid))
				g0.Put(r, p.guid)
			})
		}
	}
}

// saPKeyTableRecords lists the PKeyTableRecords. f.mu is held.
func (f *Fabric) saPKeyTableRecords(q *saQuery) {
	lid, pn, k0 := q.field("LID"), q.field("PortNum"), q.field("P_Key0")
	f.eachRecordPort(func(_ *node, ep, p *port) {
		q.add(func(r []byte) {
			lid.Put(r, uint64(ep.lid))
			pn.Put(r, uint64(p.num))
			for i := 0; i < 32 && i < p.pkeyCap(); i++ {
				fk := k0
				fk.Bit += 16 * i
				fk.Put(r, uint64(p.pkey(i)))
			}
		})
	})
}

// saSMInfoRecords lists the SMInfoRecords. f.mu is held.
func (f *Fabric) saSMInfoRecords(q *saQuery) {
	// OpenSM's: its own SMInfo (SM_Key blank: the requester gave none)
	// and those of the other SMs it polls. Its own is the SM of the
	// requester's plane (planes.go).
	lid := q.field("LID")
	if sm := f.smToward(q.from); f.hasSM && sm.lid != 0 {
		q.add(func(r []byte) {
			lid.Put(r, uint64(sm.lid))
			si := smp.SMInfo{GUID: sm.guid, ActCount: f.actCount, SMState: smp.SMStateMaster}
			_, _ = si.AppendBinary(r[4:4])
		})
	}
	for p, si := range f.extraSMs {
		if p.lid == 0 {
			continue
		}
		q.add(func(r []byte) {
			lid.Put(r, uint64(p.lid))
			si.SMKey = 0
			_, _ = si.AppendBinary(r[4:4])
		})
	}
}

// saSLtoVLRecords lists the SLtoVLMappingTableRecords. f.mu is held.
func (f *Fabric) saSLtoVLRecords(q *saQuery) {
	// OpenSM's: a switch has one record per output and input port
	// pair, port 0 included; a CA port one with both port numbers 0,
	// whatever ports the request names. The tables are the SM's
	// copies, all zero: with QoS off OpenSM neither reads nor programs
	// them, and neither does the simulated SM.
	lid, in, out := q.field("LID"), q.field("InputPortNum"), q.field("OutputPortNum")
	caMask := q.mask &^ (q.comp("InputPortNum") | q.comp("OutputPortNum"))
	for _, n := range f.nodes {
		for _, ep := range f.endports(n) {
			if n.typ != typeSwitch {
				q.addMask(caMask, func(r []byte) { lid.Put(r, uint64(ep.lid)) })
				continue
			}
			for o := 0; o <= n.numPorts; o++ {
				for i := 0; i <= n.numPorts; i++ {
					if n.ports[o] == nil || n.ports[i] == nil {
						continue
					}
					q.add(func(r []byte) {
						lid.Put(r, uint64(ep.lid))
						in.Put(r, uint64(i))
						out.Put(r, uint64(o))
					})
				}
			}
		}
	}
}

// saVLArbRecords lists the VLArbitrationTableRecords. f.mu is held.
func (f *Fabric) saVLArbRecords(q *saQuery) {
	// OpenSM's: blocks 1 to 4 of each port of a switch (port 0
	// included), of a CA's own port whatever port the request names;
	// the tables are all zero as for SLtoVL.
	lid, pn, blk := q.field("LID"), q.field("OutputPortNum"), q.field("BlockNum")
	caMask := q.mask &^ q.comp("OutputPortNum")
	for _, n := range f.nodes {
		for _, ep := range f.endports(n) {
			ports, m := n.ports, q.mask
			if n.typ != typeSwitch {
				ports, m = []*port{ep}, caMask
			}
			for _, p := range ports {
				if p == nil {
					continue
				}
				for b := 1; b <= 4; b++ {
					q.addMask(m, func(r []byte) {
						lid.Put(r, uint64(ep.lid))
						pn.Put(r, uint64(p.num))
						blk.Put(r, uint64(b))
					})
				}
			}
		}
	}
}

// saMFTRecords lists the MulticastForwardingTableRecords. f.mu is held.
func (f *Fabric) saMFTRecords(q *saQuery) {
	// OpenSM's rules: each switch lists its blocks up to the last one
	// holding a port, every position (16 ports) of each. OpenSM lists
	// the tables it programmed (none on ibsim: its groups have no
	// members); the simulator lists the switches' tables, empty until
	// a Set.
	lid, pos, blk := q.field("LID"), q.field("Position"), q.field("BlockNum")
	for _, n := range f.nodes {
		if n.sw == nil || n.ports[0].lid == 0 {
			continue
		}
		last := -1
		for k, v := range f.mfts[n] {
			if k>>4 > last && v != ([64]byte{}) {
				last = k >> 4
			}
		}
		for b := 0; b <= last; b++ {
			for ps := 0; ps < (n.numPorts+16)/16; ps++ {
				q.add(func(r []byte) {
					lid.Put(r, uint64(n.ports[0].lid))
					pos.Put(r, uint64(ps))
					blk.Put(r, uint64(b))
					v := f.mfts[n][b<<4|ps]
					copy(r[8:], v[:])
				})
			}
		}
	}
}

// saInformInfoRecords lists the InformInfoRecords. f.mu is held.
func (f *Fabric) saInformInfoRecords(q *saQuery) {
	f.informRecords(q.add, sa.SMKeyOf(q.msg))
}

// saPathRecords lists the PathRecords. f.mu is held.
func (f *Fabric) saPathRecords(q *saQuery) {
	// NumbPath and the selectors are not compared (saPaths applies them).
	tmplMask := q.mask
	q.mask &^= prSelectorComps
	f.saPaths(q.tmpl, tmplMask, q.from, q.add)
}

// The IPoIB broadcast group OpenSM creates for its default partition
// (P_Key 0xffff) when it starts, with its defaults: MTU 2048 (4) and
// rate 10 Gb/s (3), "exactly" (selector 2), packet lifetime 18, Q_Key
// 0x0b1b, link-local scope; no member joins it on the simulator (nor on
// ibsim, whose hosts run no IPoIB).
var ipoibBroadcastMGID = [16]byte{0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 12: 0xff, 0xff, 0xff, 0xff}

// saMCMemberRecords lists the MCMemberRecords: the groups without
// members are listed once, with a zero PortGID, as OpenSM lists them;
// one group, of P_Key 0xffff.
// f.mu is held.
func (f *Fabric) saMCMemberRecords(q *saQuery) {
	if !f.hasSM || f.smPort.lid == 0 {
		return
	}
	rows := []struct {
		row string
		v   uint64
	}{{"Q_Key", 0x0b1b}, {"MLID", 0xc000}, {"MTUSelector", 2}, {"MTU", 4}, {"P_Key", 0xffff},
		{"RateSelector", 2}, {"Rate", 3}, {"PacketLifeTimeSelector", 2}, {"PacketLifeTime", 18}, {"Scope", 2}}
	// OpenSM compares a P_Key's base, not its membership bit: --pkey
	// 0x7fff finds the group of 0xffff (through ibsim), 0x7ffe nothing.
	mask, pkey := q.mask, q.field("P_Key")
	if pc := q.comp("P_Key"); mask&pc != 0 {
		if pkey.Get(q.tmpl)&0x7fff != 0x7fff {
			return
		}
		mask &^= pc
	}
	mgid := q.field("MGID")
	q.addMask(mask, func(r []byte) {
		copy(mgid.Slice(r), ipoibBroadcastMGID[:])
		for _, x := range rows {
			q.field(x.row).Put(r, x.v)
		}
	})
}
