package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// Trap subscriptions (InformInfo Set and Report, IBA 13.4.8 and 15.2.5.12):
// the Session asks the SA for the traps a Subscription wants with one
// Set(InformInfo) per trap number, receives the SA's Report(Notice)
// requests on an agent of its own registered for the Report method, and
// answers each with a ReportResp, as IBA requires of a subscriber (the SA
// resends a Report until it gets one).

// DefaultReportBuffer is the number of Reports a Subscription holds for
// its reader when SubscribeOptions.Buffer is 0.
const DefaultReportBuffer = 64

// informRespTime is the RespTimeValue of the Session's InformInfos:
// 4.096 us * 2^18, about 1 s, for its ReportResps.
const informRespTime = 18

// ErrSubscriptionClosed is returned by Subscription.Next once the
// subscription is closed; it wraps net.ErrClosed.
var ErrSubscriptionClosed = fmt.Errorf("engine: subscription closed: %w", net.ErrClosed)

// SubscribeOptions say which traps a Subscription asks the SA for.
type SubscribeOptions struct {
	// Traps are generic trap numbers (smp.TrapGIDInService, ...); empty
	// subscribes to every generic trap (InformInfo.TrapNumber 0xFFFF).
	Traps []uint16
	// LIDBegin and LIDEnd, when LIDBegin is not 0, restrict the traps to
	// those whose IssuerLID is in [LIDBegin, LIDEnd] (LIDEnd 0: LIDBegin
	// alone). The SM's own traps (64 to 67) are issued by the SM's LID.
	// 0 means every issuer (InformInfo.LIDRangeBegin 0xFFFF).
	LIDBegin, LIDEnd uint16
	// SMLIDs, when not empty, are the SAs to subscribe at instead of the
	// port's SM's, each with the same InformInfos; one Subscription then
	// gets the Reports of all. On a planarized port each plane is a
	// subnet with an SM of its own (one OpenSM per plane), which forwards
	// its plane's traps only: subscribing at every plane's SM
	// (Session.PlaneSMLIDs) hears every plane.
	SMLIDs []uint16
	// Buffer is the number of Reports held until read; 0 means
	// DefaultReportBuffer. A Report arriving while the buffer is full is
	// answered and dropped (Subscription.Dropped counts them): the
	// Session never waits for a slow reader.
	Buffer int
}

// Report is one trap the SA forwarded to a Subscription: the Notice of its
// Report(Notice), with where it came from.
type Report struct {
	Notice smp.Notice
	From   fabric.Addr // the SA's LID and QP
	TID    uint64      // the Report's transaction ID
}

// informKey is one InformInfo the Session holds at the SA.
type informKey struct {
	trap             uint16 // smp.TrapAll: every trap
	lidBegin, lidEnd uint16 // lidBegin 0xFFFF: every issuer
	sa               uint16 // the SA's LID (SubscribeOptions.SMLIDs); 0: the port's SM's
}

// subState is the Session's side of its subscriptions.
type subState struct {
	setMu   sync.Mutex        // serializes InformInfo Sets; guards informs and retried
	informs map[informKey]int // subscriptions using each InformInfo
	// retried holds the InformInfos whose subscribing Set may have gone
	// out more than once (the transport retransmitted while it ran): a
	// try the SA carries out late can subscribe again after the
	// unsubscription (confirmGone). A transport that does not count its
	// retransmits (the kernel's) is not waited for.
	retried map[informKey]bool

	mu      sync.Mutex // guards the fields below
	agent   fabric.AgentID
	agentOK bool
	subs    []*Subscription
	recent  [64]uint64 // LID and TID of the last Reports, for resent ones
	nrecent int        // filled entries of recent
	next    int
	dups    uint64 // resent Reports answered again and not delivered
}

// Subscription receives the traps a Session subscribed to (Subscribe).
// Reports arrive on C; Close unsubscribes. It is safe for concurrent use.
type Subscription struct {
	s       *Session
	keys    []informKey
	all     bool            // every trap number
	traps   map[uint16]bool // else these
	lo, hi  uint16          // issuer LID range; lo 0: any
	opts    []CallOption
	ch      chan Report
	closed  bool // guarded by s.subs.mu
	dropped atomic.Uint64
	once    sync.Once
	err     error
}

// Subscribe asks the SA to forward the traps o names to this port
// (Set(InformInfo) with Subscribe 1, one per trap number; OpenSM forwards
// the traps switches and CAs send it and the ones it raises, 64 and 65
// when endports come and go) and returns the Subscription receiving them.
// Subscriptions of one Session to the same trap share one InformInfo at
// the SA, which forwards one Report per InformInfo a trap matches: a trap
// matching two of the Session's InformInfos (trap 128 and "every trap")
// reaches a Subscription holding both twice. A Set the SA refuses (OpenSM
// answers ERR_REQ_INVALID for security traps 256-259 without the SM_Key,
// for a LID range it does not know) fails Subscribe with a *StatusError,
// and the InformInfos already set for it are unsubscribed.
func (s *Session) Subscribe(ctx context.Context, o SubscribeOptions, opts ...CallOption) (*Subscription, error) {
	sub := &Subscription{s: s, all: len(o.Traps) == 0, lo: o.LIDBegin, hi: o.LIDEnd, opts: opts}
	if o.LIDBegin == 0 && o.LIDEnd != 0 {
		return nil, fmt.Errorf("engine: subscribe: LIDEnd %d without LIDBegin", o.LIDEnd)
	}
	if sub.lo != 0 && sub.hi == 0 {
		sub.hi = sub.lo
	}
	if sub.hi < sub.lo {
		return nil, fmt.Errorf("engine: subscribe: LID range %d-%d ends before it begins", sub.lo, sub.hi)
	}
	if o.Buffer < 0 {
		return nil, fmt.Errorf("engine: subscribe: Buffer %d is negative", o.Buffer)
	}
	if err := sub.setKeys(o); err != nil {
		return nil, err
	}
	buf := o.Buffer
	if buf == 0 {
		buf = DefaultReportBuffer
	}
	sub.ch = make(chan Report, buf)

	st := &s.subs
	st.setMu.Lock()
	defer st.setMu.Unlock()
	if err := s.openErr(); err != nil {
		return nil, fmt.Errorf("engine: subscribe: %w", err)
	}
	if err := s.reportAgent(ctx); err != nil {
		return nil, err
	}
	for i, k := range sub.keys {
		if st.informs[k] == 0 {
			rt0, _ := s.Retransmits()
			if err := s.inform(ctx, k, true, opts); err != nil {
				s.releaseInforms(ctx, sub.keys[:i], opts)
				return nil, err
			}
			if rt1, ok := s.Retransmits(); ok && rt1 != rt0 {
				if st.retried == nil {
					st.retried = map[informKey]bool{}
				}
				st.retried[k] = true
			}
		}
		if st.informs == nil {
			st.informs = map[informKey]int{}
		}
		st.informs[k]++
	}
	st.mu.Lock()
	st.subs = append(st.subs, sub)
	st.mu.Unlock()
	return sub, nil
}

// setKeys sets the InformInfo keys a subscription takes (a trap number or
// every trap, over its LID range, at each SM LID of o.SMLIDs or the port's
// SM) and the traps it wants.
func (sub *Subscription) setKeys(o SubscribeOptions) error {
	k := informKey{trap: smp.TrapAll, lidBegin: 0xFFFF}
	if sub.lo != 0 {
		k.lidBegin, k.lidEnd = sub.lo, sub.hi
	}
	if sub.all {
		sub.keys = []informKey{k}
	} else {
		sub.traps = map[uint16]bool{}
		for _, t := range o.Traps {
			if t == smp.TrapAll {
				return fmt.Errorf("engine: subscribe: trap number 0x%04x (leave Traps empty for every trap)", t)
			}
			if !sub.traps[t] {
				sub.traps[t] = true
				k.trap = t
				sub.keys = append(sub.keys, k)
			}
		}
	}
	if len(o.SMLIDs) > 0 {
		keys := sub.keys
		sub.keys = nil
		for i, l := range o.SMLIDs {
			if l == 0 || slices.Contains(o.SMLIDs[:i], l) {
				continue
			}
			for _, k := range keys {
				k.sa = l
				sub.keys = append(sub.keys, k)
			}
		}
	}
	return nil
}

// openErr says why the Session cannot send (closed, peer gone), or nil.
func (s *Session) openErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.gone != nil:
		return s.gone
	case s.closed:
		return net.ErrClosed
	}
	return nil
}

// reportAgent registers the agent that receives the SA's Reports, once.
// st.setMu is held.
func (s *Session) reportAgent(ctx context.Context) error {
	st := &s.subs
	st.mu.Lock()
	ok := st.agentOK
	st.mu.Unlock()
	if ok {
		return nil
	}
	a := fabric.Agent{Class: mad.ClassSubnAdm, Version: sa.ClassVersion}.WithMethods(mad.MethodReport)
	id, err := s.tr.Register(ctx, a)
	if err != nil {
		return fmt.Errorf("engine: subscribe: register an agent for the SA's Reports (class 0x03 method Report; another program on this port may own it): %w", err)
	}
	st.mu.Lock()
	st.agent, st.agentOK = id, true
	st.mu.Unlock()
	return nil
}

// inform sends Set(InformInfo) for k with Subscribe 1 (on) or 0.
func (s *Session) inform(ctx context.Context, k informKey, on bool, opts []CallOption) error {
	ii := sa.Inform{
		LIDRangeBegin: k.lidBegin, LIDRangeEnd: k.lidEnd,
		IsGeneric: 1, Type: 0xFFFF, TrapNumber: k.trap,
		// The SA replaces QPN with the QP the Set came from (QP1) when
		// subscribing, and matches an unsubscription on it: say QP1.
		QPN: 1, RespTimeValue: informRespTime, ProducerType: 0xFFFFFF,
	}
	if on {
		ii.Subscribe = 1
	}
	tmpl, err := ii.MarshalBinary()
	if err != nil {
		return fmt.Errorf("engine: subscribe: %w", err)
	}
	if k.sa != 0 {
		opts = append(slices.Clone(opts), SALID(k.sa))
	}
	if _, err := s.SAQuery(ctx, mad.MethodSet, sa.InformInfo(), 0, tmpl, opts...); err != nil {
		what := "subscribe to"
		if !on {
			what = "unsubscribe from"
		}
		return fmt.Errorf("engine: %s %s: %w", what, k, err)
	}
	return nil
}

func (k informKey) String() string {
	t := "every trap"
	if k.trap != smp.TrapAll {
		t = fmt.Sprintf("trap %d", k.trap)
	}
	if k.lidBegin != 0xFFFF {
		t += fmt.Sprintf(" from LIDs %d-%d", k.lidBegin, k.lidEnd)
	}
	if k.sa != 0 {
		t += fmt.Sprintf(" at the SA of LID %d", k.sa)
	}
	return t
}

// releaseInforms drops one use of each of keys and unsubscribes those no
// subscription uses any more. st.setMu is held.
func (s *Session) releaseInforms(ctx context.Context, keys []informKey, opts []CallOption) error {
	st := &s.subs
	var errs []error
	var gone []informKey
	for _, k := range keys {
		if st.informs[k] > 1 {
			st.informs[k]--
			continue
		}
		delete(st.informs, k)
		err := s.inform(ctx, k, false, opts)
		var se *StatusError
		if errors.As(err, &se) && se.Status == sa.StatusReqInvalid {
			// The SA holds no such subscription: what was asked. OpenSM
			// answers so when a retried unsubscription's first try
			// removed it.
			err = nil
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		gone = append(gone, k)
	}
	s.confirmGone(ctx, gone, opts)
	return errors.Join(errs...)
}

// confirmGone reads the SA's InformInfoRecords of this port and
// unsubscribes again from those of keys still there, twice at most. A
// Set(InformInfo) subscribing that the SA took late — a try the engine
// gave up on and retried, queued at an SA that serves requests from
// several threads (OpenSM) — can be carried out after the unsubscription
// and leave a subscription nobody holds. An SA that does not answer the
// query leaves keys as they are: the unsubscriptions were confirmed.
func (s *Session) confirmGone(ctx context.Context, keys []informKey, opts []CallOption) {
	settle := false
	for _, k := range keys {
		if s.subs.retried[k] {
			settle = true
			delete(s.subs.retried, k)
		}
	}
	if settle {
		// A subscribing Set went out more than once: give a late try
		// the time one call's tries take before reading what the SA
		// holds.
		t := time.NewTimer(s.tryBudget())
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	attr := sa.InformInfoRecord()
	gidF, _, _ := attr.Field("SubscriberGID")
	p := s.tr.Port()
	tmpl := make([]byte, attr.Layout.Size)
	gid := gidF.Slice(tmpl)
	for i := range 8 {
		gid[i] = byte(p.GIDPrefix >> (56 - 8*i))
		gid[8+i] = byte(p.PortGUID >> (56 - 8*i))
	}
	for range 2 {
		if len(keys) == 0 {
			return
		}
		rows, err := s.SAGetTable(ctx, attr, 1<<0, tmpl, opts...) // component 0: SubscriberGID
		if err != nil {
			s.log.Debug("engine: unsubscribe: InformInfoRecords not read", "err", err)
			return
		}
		held := map[informKey]bool{}
		for _, row := range rows {
			r := sa.Record{Attr: attr}
			if r.UnmarshalBinary(row) != nil {
				continue
			}
			trap, _ := r.Get("TrapNumber")
			lo, _ := r.Get("LIDRangeBegin")
			hi, _ := r.Get("LIDRangeEnd")
			k := informKey{trap: uint16(trap), lidBegin: uint16(lo)}
			if k.lidBegin != 0xFFFF {
				k.lidEnd = uint16(hi)
			}
			held[k] = true
		}
		left := keys[:0:0]
		for _, k := range keys {
			if !held[k] {
				continue
			}
			s.log.Debug("engine: unsubscribe: the SA still holds it; again", "inform", k.String())
			if err := s.inform(ctx, k, false, opts); err == nil {
				left = append(left, k)
			}
		}
		keys = left
	}
}

// C returns the channel Reports arrive on; it is closed by Close.
func (sub *Subscription) C() <-chan Report { return sub.ch }

// Next returns the next Report, waiting until one arrives, ctx ends (its
// error) or the subscription is closed (ErrSubscriptionClosed).
func (sub *Subscription) Next(ctx context.Context) (Report, error) {
	select {
	case r, ok := <-sub.ch:
		if !ok {
			return Report{}, ErrSubscriptionClosed
		}
		return r, nil
	case <-ctx.Done():
		return Report{}, ctx.Err()
	}
}

// Dropped returns the number of Reports dropped because the buffer was
// full.
func (sub *Subscription) Dropped() uint64 { return sub.dropped.Load() }

// Close unsubscribes (Set(InformInfo) with Subscribe 0 for each InformInfo
// no other subscription of the Session uses) and closes C. It waits at
// most the Session's timeout and retries for each Set, then reads the
// SA's InformInfoRecords of the port and unsubscribes again from what is
// still there (after waiting one call's tries when a subscribing Set was
// retransmitted: a late try subscribes again); the error names the
// InformInfos the SA did not confirm. It is idempotent; Session.Close
// closes the subscriptions still open.
func (sub *Subscription) Close() error {
	sub.once.Do(func() {
		s, st := sub.s, &sub.s.subs
		st.mu.Lock()
		sub.closed = true
		if i := slices.Index(st.subs, sub); i >= 0 {
			st.subs = slices.Delete(st.subs, i, i+1)
		}
		close(sub.ch)
		st.mu.Unlock()
		st.setMu.Lock()
		defer st.setMu.Unlock()
		// Each unsubscription, the settle after a retried subscription
		// and the check of what the SA holds (confirmGone).
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(sub.keys)+2)*s.callBudget()+s.tryBudget())
		defer cancel()
		if err := s.openErr(); err != nil {
			// Nothing can be sent: the SA drops the subscription when
			// the port leaves the subnet (OpenSM does).
			for _, k := range sub.keys {
				if st.informs[k]--; st.informs[k] <= 0 {
					delete(st.informs, k)
				}
			}
			return
		}
		sub.err = s.releaseInforms(ctx, sub.keys, sub.opts)
	})
	return sub.err
}

// tryBudget is how long one call's tries with the default options take
// (a second for sessions that wait forever).
func (s *Session) tryBudget() time.Duration {
	if s.defaults.timeout <= 0 {
		return time.Second
	}
	return s.defaults.timeout * time.Duration(s.defaults.retries+1)
}

// callBudget is the longest one call with the default options may take:
// every try's timeout, with a floor for sessions that wait forever.
func (s *Session) callBudget() time.Duration {
	if s.defaults.timeout <= 0 {
		return 10 * time.Second
	}
	return s.defaults.timeout*time.Duration(s.defaults.retries+1) + time.Second
}

// closeSubscriptions closes every open subscription (Session.Close).
func (s *Session) closeSubscriptions() {
	st := &s.subs
	st.mu.Lock()
	subs := slices.Clone(st.subs)
	st.mu.Unlock()
	for _, sub := range subs {
		if err := sub.Close(); err != nil {
			s.log.Warn("engine: close: unsubscribe", "err", err)
		}
	}
}

// unsolicited handles a request that reached one of the Session's agents:
// only the Report agent receives any. A Report(Notice) is answered with a
// ReportResp carrying the same Notice, then delivered to the subscriptions
// it matches, unless it repeats one already delivered (the SA resends a
// Report whose ReportResp it missed).
func (s *Session) unsolicited(p *fabric.Packet) {
	b := p.Data
	if mad.MgmtClassOf(b) != mad.ClassSubnAdm || mad.MethodOf(b) != mad.MethodReport ||
		mad.AttrIDOf(b) != sa.AttrNotice || len(b) < sa.HeaderSize+smp.NoticeSMPSize {
		s.log.Debug("engine: dropped unsolicited MAD", "agent", int(p.Agent), "class", mad.MgmtClassOf(b),
			"method", mad.MethodOf(b), "attr", mad.AttrIDOf(b), "len", len(b))
		return
	}
	var r Report
	if err := r.Notice.UnmarshalBinary(b[sa.HeaderSize:]); err != nil {
		return // checked by the length above
	}
	r.From, r.TID = p.Addr, mad.TIDOf(b)
	st := &s.subs
	st.mu.Lock()
	agent := st.agent
	st.mu.Unlock()
	resp := make([]byte, len(b))
	copy(resp, b)
	mad.SetMethod(resp, mad.MethodReportResp)
	mad.SetStatus(resp, 0)
	to := p.Addr
	if to.QPN == 0 {
		to.QPN = 1
	}
	to.QKey = saQKey
	if err := s.tr.Send(context.Background(), &fabric.Packet{Agent: agent, Addr: to, Data: resp}); err != nil {
		s.log.Debug("engine: ReportResp not sent", "to", to.LID, "tid", r.TID, "err", err)
	}
	key := uint64(p.Addr.LID)<<48 ^ r.TID
	st.mu.Lock()
	defer st.mu.Unlock()
	if slices.Contains(st.recent[:st.nrecent], key) {
		st.dups++
		return
	}
	st.recent[st.next] = key
	st.next = (st.next + 1) % len(st.recent)
	st.nrecent = max(st.nrecent, st.next)
	for _, sub := range st.subs {
		if !sub.matches(&r.Notice) {
			continue
		}
		select {
		case sub.ch <- r:
		default:
			sub.dropped.Add(1)
		}
	}
}

// matches reports whether n is a trap sub asked for.
func (sub *Subscription) matches(n *smp.Notice) bool {
	if !n.IsGeneric || (!sub.all && !sub.traps[n.TrapNumber]) {
		return false
	}
	return sub.lo == 0 || (n.IssuerLID >= sub.lo && n.IssuerLID <= sub.hi)
}
