package sim

import (
	"cmp"
	"slices"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// Event forwarding, as OpenSM does it (osm_sa_informinfo.c, osm_inform.c):
// Set(InformInfo) subscribes the requester's address to the traps an
// InformInfo matches; every trap the SM receives (ibsim's switches send
// trap 128 when a link changes) or raises (64 and 65 when its sweep finds
// an endport appear or vanish) is sent as a Report(Notice) to each
// matching subscription, resent until a ReportResp with its TID comes
// back (OpenSM's transaction timeout and retries).

// Report policy: OpenSM's default transaction_timeout and retries.
const (
	reportTimeout = 200 * time.Millisecond
	reportRetries = 3
	// reportTIDBase is where OpenSM's trap_fwd_trans_id starts.
	reportTIDBase = 0x02DAB000
)

// informSub is one subscription the SA holds (OpenSM's osm_infr_t).
type informSub struct {
	ii  sa.Inform // as stored: QPN is the QP the Set came from
	gid mad.GID   // SubscriberGID
	lid uint16    // report address: the requester's LID, QP and SL
	qp  uint32
	sl  uint8
	sm  *port // the SM it was made through: its plane's (planes.go)
}

// sameAddr and sameInform are OpenSM's match_inf_rec: the subscription a
// Set names is the one with the same report address and InformInfo (GID,
// or LID range when the GID is zero; type, generic, trap number or device
// ID, QPN and response time, producer or vendor).
func (s *informSub) same(o *informSub) bool {
	if s.lid != o.lid || s.qp != o.qp || s.sl != o.sl {
		return false
	}
	a, b := &s.ii, &o.ii
	if b.GID != (mad.GID{}) {
		if a.GID != b.GID {
			return false
		}
	} else if a.LIDRangeBegin != b.LIDRangeBegin || a.LIDRangeEnd != b.LIDRangeEnd {
		return false
	}
	return a.Type == b.Type && a.IsGeneric == b.IsGeneric && a.TrapNumber == b.TrapNumber &&
		a.QPN == b.QPN && a.RespTimeValue == b.RespTimeValue && a.ProducerType == b.ProducerType
}

// wants is OpenSM's match_notice_to_inf_rec without the P_Key check
// (every port of the simulator is in the default partition).
func (s *informSub) wants(n *smp.Notice) bool {
	ii := &s.ii
	if ii.GID != (mad.GID{}) {
		if ii.GID != n.IssuerGID {
			return false
		}
	} else if ii.LIDRangeBegin != 0xFFFF && (n.IssuerLID < ii.LIDRangeBegin || n.IssuerLID > ii.LIDRangeEnd) {
		return false
	}
	if (ii.IsGeneric != 0) != n.IsGeneric {
		return false
	}
	if ii.Type != 0xFFFF && ii.Type != uint16(n.Type) {
		return false
	}
	if ii.TrapNumber != 0xFFFF && ii.TrapNumber != n.TrapNumber {
		return false // generic: TrapNumber; vendor: DeviceID
	}
	return ii.ProducerType == 0xFFFFFF || ii.ProducerType == n.ProducerType
}

// pendingReport is a Report waiting for its ReportResp.
type pendingReport struct {
	msg   []byte
	sl    uint8
	tries int
	timer *time.Timer
}

// saInformInfo answers Set(InformInfo) from the port at LID from (QP qp,
// SL sl), as OpenSM's infr_rcv_process_set_method. f.mu is held.
func (f *Fabric) saInformInfo(req []byte, from uint16, qp uint32, sl uint8) []byte {
	resp := make([]byte, mad.Size)
	copy(resp, req[:sa.HeaderSize])
	clear(resp[rmpp.HeaderOff:rmpp.HeaderEnd])
	sa.SetSMKey(resp, 0)
	mad.SetMethod(resp, mad.MethodGetResp)
	fail := func(st uint16) []byte {
		mad.SetStatus(resp, st)
		return resp
	}
	if mad.MethodOf(req) != mad.MethodSet {
		return fail(mad.StatusMethodAttrUnsup)
	}
	var ii sa.Inform
	if ii.UnmarshalBinary(req[sa.HeaderSize:]) != nil {
		return fail(sa.StatusReqInvalid)
	}
	src := f.livePortByLID(from)
	if src == nil {
		return fail(sa.StatusReqInvalid) // ERR 4308: unknown LID
	}
	if ii.Subscribe > 1 {
		return fail(sa.StatusReqInvalid) // ERR 430A
	}
	if sa.SMKeyOf(req) == 0 && ii.IsGeneric != 0 && ii.TrapNumber >= smp.TrapBadMKey && ii.TrapNumber <= smp.TrapBadSwitchPKey {
		return fail(sa.StatusReqInvalid) // ERR 430B: security traps need the SM_Key
	}
	sub := &informSub{ii: ii, gid: mad.NewGID(gidPrefix, src.guid), lid: from, qp: qp, sl: sl, sm: f.smToward(from)}
	if ii.Subscribe == 1 {
		sub.ii.QPN = qp
	}
	i := slices.IndexFunc(f.sa.informs, func(s *informSub) bool { return s.same(sub) })
	switch {
	case ii.Subscribe == 1:
		if !f.informValid(&ii) {
			return fail(sa.StatusReqInvalid) // ERR 4305
		}
		if i >= 0 {
			f.sa.informs[i] = sub
		} else {
			f.sa.informs = slices.Insert(f.sa.informs, 0, sub) // OpenSM inserts at the head
		}
	case i < 0:
		return fail(sa.StatusReqInvalid) // ERR 4307: no such subscription
	default:
		f.sa.informs = slices.Delete(f.sa.informs, i, i+1)
	}
	// o13-12.1.1: the answer is a copy of the request's InformInfo.
	copy(resp[sa.HeaderSize:], req[sa.HeaderSize:sa.HeaderSize+sa.InformInfoLayout().Size])
	sa.SetAttributeOffset(resp, uint16(sa.InformInfo().Stride))
	return resp
}

// informValid is OpenSM's validate_ports_access_rights without the P_Key
// checks: a GID must name a port the SM knows, a LID range must begin
// below the end of its LID table. f.mu is held.
func (f *Fabric) informValid(ii *sa.Inform) bool {
	if ii.GID != (mad.GID{}) {
		for _, n := range f.nodes {
			for _, p := range n.ports {
				if p != nil && p.guid == ii.GID.GUID() {
					return true
				}
			}
		}
		return false
	}
	if ii.LIDRangeBegin == 0xFFFF {
		return true
	}
	eps, _ := f.reachBy(true)
	var top uint16
	for _, p := range eps {
		top = max(top, p.lid+uint16(1)<<p.lmc-1)
	}
	return ii.LIDRangeBegin <= top
}

// livePortByLID returns the endport the SM reaches that owns lid, or nil.
// f.mu is held.
func (f *Fabric) livePortByLID(lid uint16) *port {
	eps, _ := f.reachBy(true)
	for _, p := range eps {
		if p.lid != 0 && p.owns(lid) {
			return p
		}
	}
	return nil
}

// informRecords appends the InformInfoRecords matching tmpl in the
// components of mask, as OpenSM's infr_rcv_process_get_method: one per
// subscription, Enum 0, the InformInfo's QPN zeroed for a requester
// without an SM_Key. f.mu is held.
func (f *Fabric) informRecords(add func(fill func(r []byte)), smKey uint64) {
	gid, _, _ := sa.InformInfoRecord().Field("SubscriberGID")
	emb, _, _ := sa.InformInfoRecord().Field("GID") // the embedded InformInfo's first row
	for _, s := range f.sa.informs {
		add(func(r []byte) {
			copy(gid.Slice(r), s.gid[:])
			ii := s.ii
			if smKey == 0 {
				ii.QPN = 0
			}
			_, _ = ii.AppendBinary(r[emb.Bit/8 : emb.Bit/8])
		})
	}
}

// saReportResp takes a ReportResp that reached the SM's port: the Report
// of that TID to that LID is answered. It reports false when no Report
// waits for it. f.mu is held.
func (f *Fabric) saReportResp(t *txn) bool {
	key := saKey{t.slid, mad.TIDOf(t.buf[:])}
	r := f.sa.reports[key]
	if r == nil {
		return false
	}
	if !f.saKeyValid(t.buf[:]) {
		return true // dropped: the Report is resent
	}
	r.timer.Stop()
	delete(f.sa.reports, key)
	f.sa.reportsAnswered++
	return true
}

// report sends n, a trap SM port sm received or raised, to every
// subscription made through sm that wants it, as OpenSM's
// osm_report_notice, subscribers the SM no longer reaches skipped (on a
// planarized fabric each plane's SM forwards its plane's traps to its own
// subscribers: planes.go). The MADs are delivered by saFlush. f.mu is
// held.
func (f *Fabric) report(n *smp.Notice, sm *port) {
	if len(f.sa.informs) == 0 {
		return
	}
	var body [sa.HeaderSize + 80]byte
	if _, err := n.AppendBinary(body[sa.HeaderSize:sa.HeaderSize]); err != nil {
		return
	}
	for _, s := range f.sa.informs {
		if s.sm != sm || !s.wants(n) || f.livePortByLID(s.lid) == nil {
			continue
		}
		f.sa.reportTID++
		if f.sa.reportTID == 0 {
			f.sa.reportTID++
		}
		tid := uint64(f.sa.reportTID)
		msg := make([]byte, mad.Size)
		copy(msg, body[:])
		h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnAdm, ClassVersion: sa.ClassVersion,
			Method: mad.MethodReport, TID: tid, AttrID: sa.AttrNotice}
		h.Put(msg)
		key := saKey{s.lid, tid}
		if f.sa.reports == nil {
			f.sa.reports = map[saKey]*pendingReport{}
		}
		r := &pendingReport{msg: msg, sl: s.sl}
		r.timer = time.AfterFunc(reportTimeout, func() { f.reportTimer(key) })
		f.sa.reports[key] = r
		f.sa.reportsSent++
		f.saRoute(s.lid, s.sl, msg)
	}
}

// reportTimer resends a Report no ReportResp answered, or gives it up
// after reportRetries.
func (f *Fabric) reportTimer(key saKey) {
	f.mu.Lock()
	r := f.sa.reports[key]
	if f.closed || r == nil {
		f.mu.Unlock()
		return
	}
	if r.tries == reportRetries {
		delete(f.sa.reports, key)
		f.sa.reportsLost++
		f.mu.Unlock()
		return
	}
	r.tries++
	f.sa.reportsResent++
	r.timer.Reset(reportTimeout)
	f.saRoute(key.lid, r.sl, r.msg)
	out := f.saTake()
	f.mu.Unlock()
	saFlush(out)
}

// linkTraps raises what a link change makes OpenSM send: trap 128 from
// each switch at an end that changed (ibsim sends it from port 0 of a
// switch whose link is linked or unlinked; OpenSM forwards it with the
// switch's GUID as IssuerGID), then, after the sweep it starts, trap 65
// for each endport reached before and not now, 64 for each one reached
// now and not before. f.mu is held.
func (f *Fabric) linkTraps(ends []*port, before []*port) {
	if !f.hasSM {
		return
	}
	after, _ := f.reachBy(true)
	is := make(map[*port]bool, len(after))
	for _, p := range after {
		is[p] = true
	}
	for _, e := range ends {
		if e.node.typ != typeSwitch {
			continue
		}
		p0 := e.node.ports[0]
		if p0.lid == 0 || !is[p0] {
			continue // ibsim sends none from a switch without a LID; it cannot reach an SM it is cut off from
		}
		n := smp.Notice{IsGeneric: true, Type: smp.NoticeUrgent, ProducerType: smp.ProducerSwitch,
			TrapNumber: smp.TrapLinkStateChange, IssuerLID: p0.lid, IssuerGID: mad.NewGID(gidPrefix, p0.guid)}
		n.SetDetailsSwitchLID(p0.lid)
		f.report(&n, f.smFor(p0))
	}
	was := make(map[*port]bool, len(before))
	for _, p := range before {
		was[p] = true
	}
	gone := slices.DeleteFunc(slices.Clone(before), func(p *port) bool { return is[p] })
	came := slices.DeleteFunc(slices.Clone(after), func(p *port) bool { return was[p] })
	// OpenSM walks its port GUID table (drop manager, then the new
	// ports): by GUID.
	byGUID := func(a, b *port) int { return cmp.Compare(a.guid, b.guid) }
	slices.SortFunc(gone, byGUID)
	slices.SortFunc(came, byGUID)
	for _, set := range []struct {
		ports []*port
		trap  uint16
	}{{gone, smp.TrapGIDOutOfService}, {came, smp.TrapGIDInService}} {
		for _, p := range set.ports {
			sm := f.smFor(p)
			n := smp.Notice{IsGeneric: true, Type: smp.NoticeSubnetMgmt, ProducerType: smp.ProducerClassMgr,
				TrapNumber: set.trap, IssuerLID: sm.lid, IssuerGID: mad.NewGID(gidPrefix, sm.guid)}
			n.SetDetailsGID(mad.NewGID(gidPrefix, p.guid))
			f.report(&n, sm)
		}
	}
}

// ReportStats counts the SA's Reports (event forwarding).
type ReportStats struct {
	Sent     uint64 // Reports sent (resends not counted)
	Answered uint64 // Reports a ReportResp answered
	Resent   uint64 // Reports sent again for want of a ReportResp
	Lost     uint64 // Reports given up after their retries
	Pending  int    // Reports waiting for a ReportResp now
	Subs     int    // subscriptions the SA holds
}

// ReportStats returns the SA's Report counts.
func (f *Fabric) ReportStats() ReportStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return ReportStats{Sent: f.sa.reportsSent, Answered: f.sa.reportsAnswered, Resent: f.sa.reportsResent, Lost: f.sa.reportsLost,
		Pending: len(f.sa.reports), Subs: len(f.sa.informs)}
}
