package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
)

// saQKey is the Q_Key of QP1, where the SA listens.
const saQKey = 0x80010000

// SARecords is the answer of an SA table query: the records (each
// AttributeOffset*8 bytes, aliasing Message) and the whole coalesced
// response message.
type SARecords struct {
	Attr    *sa.Attr
	Records [][]byte
	Message []byte
	// Truncated, when not nil, says records are missing from the answer
	// (see TruncatedError); Records holds the whole ones that arrived.
	Truncated *TruncatedError
}

// ErrTruncated matches a *TruncatedError with errors.Is.
var ErrTruncated = errors.New("SA answer truncated")

// TruncatedError is an SA answer that lacks, or may lack, records the
// peer had: it came as one MAD from a peer that did no RMPP (RMPP Active
// with type 0 and PayloadLength 0: OpenSM under ibsim, whose RMPP is left
// to a kernel umad2sim does not have), which holds the records that fit
// in 200 bytes and cannot say whether there were more; or its length cuts
// a record (a GetMultiResp carrying the request's PayloadLength, as
// OpenSM's does under ibsim). saquery prints such answers' first records
// and says nothing.
type TruncatedError struct {
	Method  uint8 // the request's
	Attr    string
	LID     uint16 // the SA's
	Records int    // whole records received
	Reason  string
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("engine: sa %s %s: answer from lid %d truncated: %d whole records received, %s",
		mad.MethodName(e.Method), e.Attr, e.LID, e.Records, e.Reason)
}

// Is matches ErrTruncated.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// saTruncation checks an SA answer msg of records stride bytes long (0:
// none) for the signs of a truncated answer; nil when it has none.
func saTruncation(msg []byte, stride int) *TruncatedError {
	var h rmpp.Header
	if stride == 0 || h.UnmarshalBinary(msg) != nil || !h.Active() {
		return nil // not an RMPP answer: a Get's single MAD
	}
	data := len(msg) - sa.HeaderSize
	whole := data / stride
	rest := msg[sa.HeaderSize+whole*stride:]
	if h.Type != rmpp.TypeData {
		// Nothing in the MAD says how many records the peer had. A
		// transport that knows the sender's length (ibsim passes
		// umad2sim's on) gives a shorter MAD when all of them fit; a
		// whole 256-byte one may have been cut: the bytes after its last
		// whole record are the next record's or, with OpenSM under ibsim,
		// whatever its buffer held.
		if len(msg) < mad.Size {
			return nil
		}
		return &TruncatedError{Records: whole, Reason: fmt.Sprintf(
			"the peer sent its answer as one MAD without RMPP (RMPP Active, type %d, PayloadLength %d, as OpenSM does under ibsim): records past the %d that fit in it were not sent", h.Type, h.Data2, whole)}
	}
	if len(rest) != 0 {
		return &TruncatedError{Records: whole, Reason: fmt.Sprintf(
			"its length (%d bytes of records, from PayloadLength %d) ends %d bytes into a %d-byte record", data, h.Data2, len(rest), stride)}
	}
	return nil
}

// saCall runs one SA request of attribute attrID to the SA at port's
// SMLID on the RMPP driver's agent, with opts' SM_Key and attribute
// modifier, and returns its whole answer; no answer in all tries is a
// *TimeoutError naming the SA's LID.
func (s *Session) saCall(ctx context.Context, req []byte, port fabric.PortAttr, attrID uint16, opts []CallOption) (*fabric.Packet, error) {
	c := s.callOpts(opts)
	sa.SetSMKey(req, c.smkey)
	mad.SetAttrMod(req, c.saMod)
	addr := fabric.Addr{LID: port.SMLID, QPN: 1, QKey: saQKey, SL: port.SMSL, PKeyIndex: c.pkeyIdx}
	resp, err := s.rmppCall(ctx, req, addr, c)
	if te, ok := err.(*TimeoutError); ok {
		te.Class, te.AttrID = mad.ClassSubnAdm, attrID
	}
	return resp, err
}

// rmppCall runs one request on the RMPP driver's agent for its class and
// version and returns its whole answer; no
// answer in all tries is a *TimeoutError naming the class, attribute and
// LID.
func (s *Session) rmppCall(ctx context.Context, req []byte, addr fabric.Addr, c callOpts) (*fabric.Packet, error) {
	resp, err := s.rmpp.Call(ctx, mad.MgmtClassOf(req), mad.ClassVersionOf(req), req, addr, c.timeout, c.retries)
	if err != nil {
		return nil, err
	}
	if resp.Status == fabric.StatusTimeout {
		return nil, &TimeoutError{TID: mad.TIDOf(resp.Data), Tries: c.retries + 1, Bounced: resp.Bounced,
			Class: mad.MgmtClassOf(req), AttrID: mad.AttrIDOf(req), Target: Target{Kind: ByLID, LID: addr.LID}}
	}
	return resp, nil
}

// DoRMPP is Do on an agent registered for RMPP (the RMPP driver's own,
// for req's class and version; a vendor class's with the OpenIB OUI
// whatever OUI req names, as libibumad's umad_register registers), as a
// libibumad caller registered with rmpp_version 1 sends: the answer may
// be an RMPP message of many MADs, returned whole (ibsysstat's client,
// whose -o names any OUI, 0 too). Timeouts,
// retries, P_Key index and errors as Do's.
func (s *Session) DoRMPP(ctx context.Context, req *fabric.Packet, opts ...CallOption) (*fabric.Packet, error) {
	c, err := s.doOpts("do rmpp", req, opts)
	if err != nil {
		return nil, err
	}
	addr := req.Addr
	if addr.PKeyIndex == 0 {
		addr.PKeyIndex = c.pkeyIdx // as Do's, for a class that is no SMP's
	}
	return s.rmppCall(ctx, req.Data, addr, c)
}

// SAQuery runs one SA request (Get, GetTable, GetMulti ...) of attribute
// attr to the SM's SA (the port's SMLID): compMask selects the components
// of template (at most 200 bytes) that must match. Responses that span many
// RMPP segments are coalesced by the RMPP driver. A non-zero MAD status is
// a *StatusError; records are counted from AttributeOffset as rmpp.md
// says.
func (s *Session) SAQuery(ctx context.Context, method uint8, attr *sa.Attr, compMask uint64, template []byte, opts ...CallOption) (*SARecords, error) {
	req, err := sa.NewRequest(method, attr.Layout.ID, 0, compMask, template)
	if err != nil {
		return nil, err
	}
	port := s.tr.Port()
	if l := s.callOpts(opts).saLID; l != 0 {
		port.SMLID = l
	}
	if port.SMLID == 0 {
		return nil, fmt.Errorf("engine: sa %s %s: the port knows no SM (SMLID 0)", mad.MethodName(method), attr.Name())
	}
	resp, err := s.saCall(ctx, req, port, attr.Layout.ID, opts)
	if err != nil {
		return nil, fmt.Errorf("engine: sa %s %s: %w", mad.MethodName(method), attr.Name(), err)
	}
	if st := mad.StatusOf(resp.Data); st != 0 {
		se := &StatusError{Class: mad.ClassSubnAdm, Method: method, AttrID: attr.Layout.ID, Status: st, Target: Target{Kind: ByLID, LID: port.SMLID}}
		if txt := sa.StatusText(st); txt != "" {
			return nil, fmt.Errorf("sa %s %s: %s: %w", mad.MethodName(method), attr.Name(), txt, se)
		}
		return nil, se
	}
	recs, err := sa.Records(resp.Data)
	if err != nil {
		return nil, fmt.Errorf("engine: sa %s %s: %w", mad.MethodName(method), attr.Name(), err)
	}
	r := &SARecords{Attr: attr, Records: recs, Message: resp.Data}
	if te := saTruncation(resp.Data, int(sa.AttributeOffsetOf(resp.Data))*8); te != nil {
		te.Method, te.Attr, te.LID = method, attr.Name(), port.SMLID
		r.Truncated = te
	}
	return r, nil
}

// SAGetTable returns every record of attr matching template in the
// components of compMask (GetTable). When the answer lacks records (see
// TruncatedError) it returns the records that arrived and a
// *TruncatedError.
func (s *Session) SAGetTable(ctx context.Context, attr *sa.Attr, compMask uint64, template []byte, opts ...CallOption) ([][]byte, error) {
	r, err := s.SAQuery(ctx, mad.MethodGetTable, attr, compMask, template, opts...)
	if err != nil {
		return nil, err
	}
	if r.Truncated != nil {
		return r.Records, r.Truncated
	}
	return r.Records, nil
}

// SAGet returns the one record of attr matching template (Get); no match
// or several are *StatusErrors (SA status 3<<8, 4<<8).
func (s *Session) SAGet(ctx context.Context, attr *sa.Attr, compMask uint64, template []byte, opts ...CallOption) ([]byte, error) {
	r, err := s.SAQuery(ctx, mad.MethodGet, attr, compMask, template, opts...)
	if err != nil {
		return nil, err
	}
	if len(r.Records) == 0 {
		return nil, fmt.Errorf("engine: sa Get %s: response without a record", attr.Name())
	}
	return r.Records[0], nil
}

// NodeRecords returns every NodeRecord the SA knows; with a truncated
// answer, the records that arrived and a *TruncatedError.
func (s *Session) NodeRecords(ctx context.Context, opts ...CallOption) ([]sa.NodeRec, error) {
	recs, err := s.SAGetTable(ctx, sa.NodeRecord(), 0, nil, opts...)
	if err != nil && !errors.Is(err, ErrTruncated) {
		return nil, err
	}
	out := make([]sa.NodeRec, len(recs))
	for i, r := range recs {
		if err := out[i].UnmarshalBinary(r); err != nil {
			return nil, fmt.Errorf("engine: sa NodeRecord %d: %w", i, err)
		}
	}
	return out, err
}

// PathRecord returns the SA's PathRecord from slid to dlid.
func (s *Session) PathRecord(ctx context.Context, slid, dlid uint16, opts ...CallOption) (*sa.PathRec, error) {
	t := sa.NewPathRecordTemplate().SetSLID(slid).SetDLID(dlid).SetNumbPath(1)
	rec, err := s.SAGet(ctx, t.Attr(), t.ComponentMask(), t.Bytes(), opts...)
	if err != nil {
		return nil, err
	}
	var p sa.PathRec
	if err := p.UnmarshalBinary(rec); err != nil {
		return nil, fmt.Errorf("engine: sa PathRecord %d->%d: %w", slid, dlid, err)
	}
	return &p, nil
}

// MultiPathRecords asks the SA for the paths between every source and
// every destination GID with one GetMulti(MultiPathRecord): a
// double-sided RMPP exchange (rmpp.md section 7) whose request grows by 16
// bytes per GID and whose answer is PathRecords. When the answer lacks
// records (see TruncatedError) it returns the paths that arrived and a
// *TruncatedError.
func (s *Session) MultiPathRecords(ctx context.Context, sgids, dgids []mad.GID, opts ...CallOption) ([]sa.PathRec, error) {
	port := s.tr.Port()
	if port.SMLID == 0 {
		return nil, fmt.Errorf("engine: sa GetMulti MultiPathRecord: the port knows no SM (SMLID 0)")
	}
	req, _ := sa.NewRequest(mad.MethodGetMulti, sa.AttrMultiPathRecord, 0, 0, nil)
	_, cs, _ := sa.MultiPathRecord().Field("SGIDCount")
	_, cd, _ := sa.MultiPathRecord().Field("DGIDCount")
	sa.SetComponentMask(req, 1<<cs|1<<cd)
	req, err := sa.AppendMPR(req[:sa.HeaderSize], make([]byte, sa.MultiPathRecordLayout().Size), sgids, dgids)
	if err != nil {
		return nil, fmt.Errorf("engine: sa GetMulti MultiPathRecord: %w", err)
	}
	h := rmpp.Header{Version: rmpp.Version, Flags: rmpp.FlagActive}
	h.Put(req)
	resp, err := s.saCall(ctx, req, port, sa.AttrMultiPathRecord, opts)
	if err != nil {
		if te, ok := err.(*TimeoutError); ok {
			// An RMPP request is sent once (its segments are resent);
			// the call waited its whole budget for the answer.
			te.Tries = 1
		}
		return nil, fmt.Errorf("engine: sa GetMulti MultiPathRecord: %w", err)
	}
	if st := mad.StatusOf(resp.Data); st != 0 {
		return nil, &StatusError{Class: mad.ClassSubnAdm, Method: mad.MethodGetMulti, AttrID: sa.AttrMultiPathRecord, Status: st, Target: Target{Kind: ByLID, LID: port.SMLID}}
	}
	recs, err := sa.Records(resp.Data)
	if err != nil {
		return nil, fmt.Errorf("engine: sa GetMulti MultiPathRecord: %w", err)
	}
	out := make([]sa.PathRec, len(recs))
	for i, r := range recs {
		if err := out[i].UnmarshalBinary(r); err != nil {
			return nil, fmt.Errorf("engine: sa MultiPathRecord answer %d: %w", i, err)
		}
	}
	if te := saTruncation(resp.Data, int(sa.AttributeOffsetOf(resp.Data))*8); te != nil {
		te.Method, te.Attr, te.LID = mad.MethodGetMulti, "MultiPathRecord", port.SMLID
		return out, te
	}
	return out, nil
}
