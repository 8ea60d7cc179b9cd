package sim

import (
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
)

// The subnet administrator of the simulated SM. It answers SA requests
// (class 0x03, version 2) LID-routed to the SM's port: Get and GetTable of
// the records of mad/sa, built from the fabric's live state and filtered
// by component mask, and GetMulti of PathRecords (MultiPathRecord is not
// modelled; a GetMulti is a double-sided RMPP exchange whose request holds
// one PathRecord template). Table responses are RMPP transfers: the SA is
// an rmpp.Sender per transfer and an rmpp.Receiver per multi-segment
// request, its ACK timers time.AfterFunc timers. Everything runs under
// f.mu; the segments a step produces are delivered after f.mu is released
// (saFlush), like the single response of an SMP.

// saServer is the SA's state, guarded by f.mu.
type saServer struct {
	informs                                   []*informSub // subscriptions, newest first (inform.go)
	reports                                   map[saKey]*pendingReport
	reportTID                                 uint32
	reportsSent, reportsAnswered, reportsLost uint64
	reportsResent                             uint64

	sends map[saKey]*saSend
	recvs map[saKey]*saRecv
	out   []*txn // routed segments waiting for delivery
	held  []*txn // segments Faults.Reorder holds back until the next one
	seg   []byte // scratch for building a segment
}

// saKey identifies a transfer: requester LID and TID.
type saKey struct {
	lid uint16
	tid uint64
}

type saSend struct {
	s     *rmpp.Sender
	dst   uint16
	sl    uint8
	timer *time.Timer
}

type saRecv struct {
	r     *rmpp.Receiver
	sl    uint8
	timer *time.Timer
}

// DefaultSAKey is the SM_Key of the simulated SM's SA when
// Options.SAKey is 0: OpenSM's default sa_key. As OpenSM, the SA drops
// requests carrying another non-zero SM_Key, answers P_KeyTableRecords
// only to requests carrying its key (else ERR_REQ_INVALID), zeroes the
// M_Key of PortInfoRecords and the QPN of InformInfoRecords for requests
// without a key, subscribes to security traps (256-259) only with one,
// and sends every answer with SM_Key 0.
const DefaultSAKey uint64 = 1

// saKeyValid is OpenSM's check of every SA MAD it receives (C15-0.1.5):
// an SM_Key of zero or its own.
func (f *Fabric) saKeyValid(b []byte) bool {
	k := sa.SMKeyOf(b)
	return k == 0 || k == f.saKey
}

// pirPortInfo is where a PortInfoRecord's PortInfo starts.
const pirPortInfo = 4

// saAckTimeout and saRetries are the SA's RMPP sender policy.
const (
	saAckTimeout = 200 * time.Millisecond
	saRetries    = 10
	saRespTime   = 16 // ClassPortInfo.RespTimeValue (4.096 us * 2^16 ~ 268 ms), what OpenSM 3.3 answers (mad/sa/testdata/classportinfo_get.hex)
)

// saArrive handles a request that reached endport dst; it reports false
// when dst is not the SM's port or the MAD is not for the SA. f.mu is held.
func (f *Fabric) saArrive(dst *port, t *txn) bool {
	b := t.buf[:]
	if !f.hasSM || !f.isSMPort(dst) || mad.MgmtClassOf(b) != mad.ClassSubnAdm || t.qp != 1 {
		return false
	}
	if mad.ClassVersionOf(b) != sa.ClassVersion {
		makeResp(b, mad.StatusBadVersion)
		f.lidRespond(dst, t)
		return true
	}
	now := time.Now()
	key := saKey{t.slid, mad.TIDOf(b)}
	if rmpp.IsActive(b) {
		var h rmpp.Header
		_ = h.UnmarshalBinary(b)
		if h.Type == rmpp.TypeData {
			f.saData(key, t, now)
			return true
		}
		if s := f.sa.sends[key]; s != nil {
			f.saSendOut(key, s, s.s.Handle(&h, now))
			return true
		}
		if r := f.sa.recvs[key]; r != nil {
			// An ABORT or STOP of the request's sender ends the
			// receive; a direction-switch ACK after the answer was
			// all acknowledged changes nothing.
			f.saRecvOut(key, r, r.r.Handle(b, now))
			return true
		}
		return true // an ACK for nothing: not an error (rmpp.md 7)
	}
	switch mad.MethodOf(b) {
	case mad.MethodReport, mad.MethodTrap:
		// Not for the SA: the SA's own Reports to a subscriber on
		// its port, or a script's.
		return false
	}
	if mad.AttrIDOf(b) == sa.AttrInformInfo {
		if !f.saKeyValid(b) {
			return true // dropped, as every SA MAD with a wrong SM_Key
		}
		copy(b, f.saInformInfo(b, t.slid, t.qp, t.sl))
		f.lidRespond(dst, t)
		return true
	}
	if f.sa.sends[key] != nil {
		// A duplicate of a request whose answer is being sent (the
		// requester resent it before the first segment reached it): the
		// transfer goes on. Linux refuses the second answer the same way
		// (user_mad's is_duplicate: a response of the same TID and class
		// to the same destination while one is in progress).
		return true
	}
	resp := f.saAnswer(b, t.slid)
	if resp == nil {
		return true
	}
	if len(resp) <= mad.Size && !rmpp.IsActive(resp) {
		copy(b, resp)
		clear(b[len(resp):])
		f.lidRespond(dst, t)
		return true
	}
	f.saStart(key, resp, t.sl, 1)
	return true
}

// saData feeds a DATA segment of a multi-packet request (GetMulti).
func (f *Fabric) saData(key saKey, t *txn, now time.Time) {
	if f.sa.recvs == nil {
		f.sa.recvs = make(map[saKey]*saRecv)
	}
	r := f.sa.recvs[key]
	if r == nil {
		r = &saRecv{r: rmpp.NewReceiver(rmpp.ReceiverConfig{MaxLength: 1 << 20}), sl: t.sl}
		f.sa.recvs[key] = r
	}
	o := r.r.Handle(t.buf[:], now)
	f.saRecvOut(key, r, o)
	if o.Complete {
		// The answer starts at once with a window of one segment, as
		// Linux's does (init_newwin: the requester's direction-switch ACK
		// only raises the window, and a lost one costs nothing); the
		// switch ACK, when it comes, reaches the sender as an ACK of
		// segment 0 granting its window.
		if resp := f.saAnswer(r.r.Message(), key.lid); resp != nil {
			if len(resp) <= mad.Size && !rmpp.IsActive(resp) {
				f.saRoute(key.lid, t.sl, resp)
			} else {
				f.saStart(key, resp, t.sl, 1)
			}
		}
	}
}

func (f *Fabric) saRecvOut(key saKey, r *saRecv, o rmpp.Output) {
	if o.Ack {
		f.saRoute(key.lid, r.sl, r.r.Ack(nil))
	}
	if o.Control != 0 {
		f.saRoute(key.lid, r.sl, r.r.Control(nil, o.Control, o.ControlStatus))
	}
	if o.Done {
		if r.timer != nil {
			r.timer.Stop()
		}
		delete(f.sa.recvs, key)
		return
	}
	if !o.Timer.IsZero() {
		d := time.Until(o.Timer)
		if r.timer == nil {
			r.timer = time.AfterFunc(d, func() { f.saTimer(key) })
		} else {
			r.timer.Reset(d)
		}
	}
}

// saStart begins the RMPP transfer of resp to the requester.
func (f *Fabric) saStart(key saKey, resp []byte, sl uint8, window int) {
	s, err := rmpp.NewSender(resp, rmpp.SenderConfig{Window: window, Timeout: saAckTimeout, Retries: saRetries})
	if err != nil {
		return
	}
	if f.sa.sends == nil {
		f.sa.sends = make(map[saKey]*saSend)
	}
	if old := f.sa.sends[key]; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	st := &saSend{s: s, dst: key.lid, sl: sl}
	f.sa.sends[key] = st
	f.saSendOut(key, st, s.Start(time.Now()))
}

func (f *Fabric) saSendOut(key saKey, st *saSend, o rmpp.Output) {
	o.Each(func(k int) {
		f.sa.seg = st.s.Segment(f.sa.seg[:0], k)
		f.saRoute(st.dst, st.sl, f.sa.seg)
	})
	if o.Control != 0 {
		f.saRoute(st.dst, st.sl, st.s.Control(nil, o.Control, o.ControlStatus))
	}
	if o.Done {
		if st.timer != nil {
			st.timer.Stop()
		}
		if f.sa.sends[key] == st {
			delete(f.sa.sends, key)
		}
		return
	}
	if !o.Timer.IsZero() {
		d := time.Until(o.Timer)
		if st.timer == nil {
			st.timer = time.AfterFunc(d, func() { f.saTimer(key) })
		} else {
			st.timer.Reset(d)
		}
	}
}

// saTimer ticks the transfers of key.
func (f *Fabric) saTimer(key saKey) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	now := time.Now()
	if s := f.sa.sends[key]; s != nil {
		f.saSendOut(key, s, s.s.Tick(now))
	}
	if r := f.sa.recvs[key]; r != nil {
		f.saRecvOut(key, r, r.r.Tick(now))
	}
	out := f.saTake()
	f.mu.Unlock()
	saFlush(out)
}

// saRoute LID-routes one SA MAD from the SM's port to dlid (the port of
// the plane SM whose plane routes dlid: planes.go); what arrives is kept
// for saFlush. f.mu is held.
func (f *Fabric) saRoute(dlid uint16, sl uint8, b []byte) {
	t := txnPool.Get().(*txn)
	copy(t.buf[:], b)
	sm := f.smToward(dlid)
	t.slid, t.qp, t.sl, t.grh = sm.lid, 1, sl, false
	f.lidRoute(sm, dlid, t)
	if t.to == nil {
		txnPool.Put(t)
		return
	}
	if in := f.inj; in != nil && (in.Loss > 0 || in.Duplicate > 0 || in.Reorder > 0) {
		// Faults on the SA's own MADs (RMPP segments and controls),
		// drawn per MAD as for responses: lost, duplicated, or held back
		// behind the next one the SA sends.
		r := in.rng(t.buf[:])
		lost, dup, hold := r.Float64() < in.Loss, r.Float64() < in.Duplicate, r.Float64() < in.Reorder
		if lost {
			in.stats.LostResponses++
			t.to = nil
			txnPool.Put(t)
			return
		}
		if dup {
			in.stats.Duplicated++
			c := txnPool.Get().(*txn)
			*c = *t
			f.sa.out = append(f.sa.out, c)
		}
		if hold {
			in.stats.Reordered++
			f.sa.held = append(f.sa.held, t)
			return
		}
	}
	f.sa.out = append(f.sa.out, t)
	f.sa.out = append(f.sa.out, f.sa.held...)
	f.sa.held = f.sa.held[:0]
}

// saTake returns the routed SA MADs waiting for delivery, those held back
// last. f.mu is held.
func (f *Fabric) saTake() []*txn {
	out := append(f.sa.out, f.sa.held...)
	f.sa.out, f.sa.held = nil, f.sa.held[:0]
	return out
}

// saFlush delivers MADs taken by saTake, f.mu released.
func saFlush(out []*txn) {
	for _, t := range out {
		t.out.Data = t.buf[:]
		t.to.Deliver(&t.out)
		t.to, t.out = nil, fabric.Packet{}
		txnPool.Put(t)
	}
}

// saClose stops the SA's timers. f.mu is held.
func (f *Fabric) saClose() {
	for _, s := range f.sa.sends {
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	for _, r := range f.sa.recvs {
		if r.timer != nil {
			r.timer.Stop()
		}
	}
	for _, r := range f.sa.reports {
		r.timer.Stop()
	}
	f.sa = saServer{}
}

// saAnswer builds the response to the SA request req (one MAD, or the
// reassembled GetMulti message) from requester LID from: a single MAD
// (RMPP inactive) for Get and errors, an RMPP message (Active set) for
// tables. nil means no answer.
func (f *Fabric) saAnswer(req []byte, from uint16) []byte {
	if len(req) < sa.HeaderSize || !f.saKeyValid(req) {
		return nil
	}
	method := mad.MethodOf(req)
	attrID := mad.AttrIDOf(req)
	single := func(st uint16, data []byte, stride int) []byte {
		r := make([]byte, mad.Size)
		copy(r, req[:sa.HeaderSize])
		sa.SetSMKey(r, 0)
		clear(r[rmpp.HeaderOff:rmpp.HeaderEnd])
		mad.SetMethod(r, method|mad.MethodResp)
		mad.SetStatus(r, st)
		sa.SetAttributeOffset(r, uint16(stride))
		copy(r[sa.HeaderSize:], data)
		return r
	}
	if attrID == sa.AttrClassPortInfo && method == mad.MethodGet {
		cpi := mad.ClassPortInfo{BaseVersion: 1, ClassVersion: sa.ClassVersion, CapabilityMask: 0x0602, RespTimeValue: saRespTime}
		d, _ := cpi.MarshalBinary()
		return single(0, d, 0)
	}
	attr, ok := sa.AttrByID(attrID)
	if !ok || attr == sa.ClassPortInfo() || attr == sa.InformInfo() {
		return single(mad.StatusMethodAttrUnsup, nil, 0)
	}
	if attr == sa.MultiPathRecord() {
		if method != mad.MethodGetMulti {
			return single(mad.StatusMethodAttrUnsup, nil, 0)
		}
		return f.saMultiPath(req, from, single)
	}
	switch method {
	case mad.MethodGet, mad.MethodGetTable:
	case mad.MethodGetMulti:
		if attr != sa.PathRecord() {
			return single(mad.StatusMethodAttrUnsup, nil, 0)
		}
	default:
		return single(mad.StatusMethodAttrUnsup, nil, 0)
	}
	if attr == sa.PKeyTableRecord() && sa.SMKeyOf(req) != f.saKey {
		// OpenSM's ERR 4608: P_KeyTableRecords only for a trusted
		// requester.
		return single(sa.StatusReqInvalid, nil, 0)
	}
	msg := f.saTable(req, attr, from)
	n := (len(msg) - sa.HeaderSize) / (attr.Stride * 8)
	if method == mad.MethodGet {
		switch {
		case n == 0:
			return single(sa.StatusNoRecords, nil, attr.Stride)
		case n > 1:
			return single(sa.StatusTooManyRecords, nil, attr.Stride)
		}
		return single(0, msg[sa.HeaderSize:], attr.Stride)
	}
	return saTableResponse(msg, method, attr.Stride)
}

// saTable is the request's header followed by the records of attr that
// match its template and component mask, with OpenSM's rules for
// PortInfoRecords. f.mu is held.
func (f *Fabric) saTable(req []byte, attr *sa.Attr, from uint16) []byte {
	stride := attr.Stride * 8
	tmpl := make([]byte, stride)
	copy(tmpl, req[sa.HeaderSize:])
	mask := sa.ComponentMaskOf(req)
	est := 64
	if mask == 0 && (attr == sa.NodeRecord() || attr == sa.GUIDInfoRecord()) {
		est = len(f.nodes) // a whole table: about one record per node
	}
	msg := make([]byte, sa.HeaderSize, sa.HeaderSize+est*stride)
	copy(msg, req[:sa.HeaderSize])
	// OpenSM's enhanced component mask: a PortInfoRecord request with
	// attribute modifier 1<<31 matches the ports having every
	// CapabilityMask bit of the template (saquery -s), not that mask
	// exactly.
	capMask, capComp := mad.Field{}, uint64(0)
	if attr == sa.PortInfoRecord() && mad.AttrModOf(req) == 1<<31 {
		fl, c, _ := attr.Field("CapabilityMask")
		if mask&(1<<c) != 0 {
			capMask, capComp = fl, 1<<c
			mask &^= capComp
		}
	}
	msg = f.saRecords(msg, attr, tmpl, mask, from)
	if capComp != 0 {
		want, kept := capMask.Get(tmpl), msg[:sa.HeaderSize]
		for r := msg[sa.HeaderSize:]; len(r) >= stride; r = r[stride:] {
			if capMask.Get(r[:stride])&want == want {
				kept = append(kept, r[:stride]...)
			}
		}
		msg = kept
	}
	sa.SetSMKey(msg, 0)
	if attr == sa.PortInfoRecord() && sa.SMKeyOf(req) == 0 {
		// OpenSM: the M_Key returned is zero but for a trusted request.
		for r := msg[sa.HeaderSize:]; len(r) >= stride; r = r[stride:] {
			piMKey.Put(r[pirPortInfo:], 0)
		}
	}
	return msg
}

// saTableResponse makes msg (the request's header and the records) the
// response to a table method: an RMPP message, Active, AttributeOffset
// the stride (8-byte units).
func saTableResponse(msg []byte, method uint8, stride int) []byte {
	mad.SetMethod(msg, method|mad.MethodResp)
	mad.SetStatus(msg, 0)
	clear(msg[rmpp.HeaderOff:rmpp.HeaderEnd])
	h := rmpp.Header{Version: rmpp.Version, Flags: rmpp.FlagActive}
	h.Put(msg)
	sa.SetAttributeOffset(msg, uint16(stride))
	return msg
}

// saMultiPath answers GetMulti(MultiPathRecord): the PathRecords between
// every source and destination GID the request lists that the forwarding
// tables connect.
func (f *Fabric) saMultiPath(req []byte, from uint16, single func(uint16, []byte, int) []byte) []byte {
	sgids, dgids, err := sa.MPRGIDs(req[sa.HeaderSize:])
	if err != nil || len(sgids) == 0 || len(dgids) == 0 {
		return single(sa.StatusInsufComps, nil, 0)
	}
	stride := sa.PathRecord().Stride * 8
	msg := make([]byte, sa.HeaderSize, sa.HeaderSize+len(sgids)*len(dgids)*stride)
	copy(msg, req[:sa.HeaderSize])
	_, cs, _ := sa.PathRecord().Field("SGID")
	_, cd, _ := sa.PathRecord().Field("DGID")
	tmpl := make([]byte, stride)
	for _, sg := range sgids {
		for _, dg := range dgids {
			clear(tmpl)
			copy(prSGID.Slice(tmpl), sg[:])
			copy(prDGID.Slice(tmpl), dg[:])
			msg = f.saRecords(msg, sa.PathRecord(), tmpl, 1<<cs|1<<cd, from)
		}
	}
	return saTableResponse(msg, mad.MethodGetMulti, sa.PathRecord().Stride)
}

// saRecords appends to msg, at the attribute's stride, every record of attr
// that matches tmpl in the components of mask (saRecordFills). f.mu is
// held.
func (f *Fabric) saRecords(msg []byte, attr *sa.Attr, tmpl []byte, mask uint64, from uint16) []byte {
	fill := saRecordFills[attr.Layout.ID]
	if fill == nil {
		return msg
	}
	q := &saQuery{attr: attr, tmpl: tmpl, mask: mask, from: from, msg: msg}
	fill(f, q)
	return q.msg
}

// endports returns the ports of n that hold a LID: a switch's port 0, a
// CA's ports with a LID. f.mu is held.
func (f *Fabric) endports(n *node) []*port {
	if n.typ == typeSwitch {
		if n.ports[0].lid == 0 {
			return nil
		}
		return n.ports[:1]
	}
	var eps []*port
	for _, p := range n.ports {
		if p != nil && p.lid != 0 {
			eps = append(eps, p)
		}
	}
	return eps
}

// smIngress is the LocalPortNum the SM saw in p's PortInfo: the port its
// SMPs enter n by (0 on the SM's own switch, the port towards the SM on
// other switches), p itself on a CA; OpenSM's PortInfoRecords keep it.
// The SM is that of p's plane (planes.go).
func (f *Fabric) smIngress(n *node, p *port) int {
	if n.typ != typeSwitch {
		return p.num
	}
	sm := f.smFor(p)
	if n == sm.node {
		return sm.num
	}
	lid := f.smLID
	if sm != f.smPort {
		lid = sm.lid
	}
	if e := n.egress(lid); e != nil {
		return e.num
	}
	return p.num
}

// lidOf is the LID of the endport p belongs to.
func (f *Fabric) lidOf(p *port) uint16 {
	if p.node.typ == typeSwitch {
		return p.node.ports[0].lid
	}
	return p.lid
}
