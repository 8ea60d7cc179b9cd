package sim

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

func saReq(t testing.TB, method uint8, attr uint16, mask uint64, tmpl []byte) []byte {
	t.Helper()
	tidSeq++
	b, err := sa.NewRequest(method, attr, tidSeq, mask, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mcmrByPKey is a Get of the MCMemberRecord of P_Key pkey.
func mcmrByPKey(t testing.TB, pkey uint16) []byte {
	tm := sa.NewMCMemberRecordTemplate().SetPKey(pkey)
	return saReq(t, mad.MethodGet, sa.AttrMCMemberRecord, tm.ComponentMask(), tm.Bytes())
}

func TestSASingleMADAnswers(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	r := attachRaw(t, f, "Hca3", 1)
	_, _, sm := f.SM()
	nodeTmpl := func(lid uint16) []byte {
		b := make([]byte, 112)
		fl, _, _ := sa.NodeRecord().Field("lid")
		fl.Put(b, uint64(lid))
		return b
	}
	badVersion := saReq(t, mad.MethodGet, sa.AttrNodeRecord, 0, nil)
	badVersion[2] = 1
	for _, c := range []struct {
		name   string
		req    []byte
		status uint16
	}{
		{"ClassPortInfo", saReq(t, mad.MethodGet, sa.AttrClassPortInfo, 0, nil), 0},
		{"Get NodeRecord by LID", saReq(t, mad.MethodGet, sa.AttrNodeRecord, 1, nodeTmpl(sm)), 0},
		{"Get without a match", saReq(t, mad.MethodGet, sa.AttrNodeRecord, 1, nodeTmpl(999)), sa.StatusNoRecords},
		{"Get matching several", saReq(t, mad.MethodGet, sa.AttrNodeRecord, 0, nil), sa.StatusTooManyRecords},
		{"unknown attribute", saReq(t, mad.MethodGet, 0x0016, 0, nil), mad.StatusMethodAttrUnsup},
		{"InformInfoRecord without subscriptions", saReq(t, mad.MethodGet, sa.AttrInformInfoRecord, 0, nil), sa.StatusNoRecords},
		{"InformInfo Set unsubscribing nothing", saReq(t, mad.MethodSet, sa.AttrInformInfo, 0, nil), sa.StatusReqInvalid},
		{"Set", saReq(t, mad.MethodSet, sa.AttrNodeRecord, 0, nil), mad.StatusMethodAttrUnsup},
		{"class version 1", badVersion, mad.StatusBadVersion},
		{"the IPoIB broadcast group", saReq(t, mad.MethodGet, sa.AttrMCMemberRecord, 0, nil), 0},
		{"the group by its P_Key's base", mcmrByPKey(t, 0x7fff), 0},
		{"no group of another P_Key", mcmrByPKey(t, 0x7ffe), sa.StatusNoRecords},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := r.one(sm, c.req)
			if resp == nil {
				t.Fatal("no answer")
			}
			if st := mad.StatusOf(resp); st != c.status || !mad.IsResponse(resp) || mad.TIDOf(resp) != mad.TIDOf(c.req) {
				t.Errorf("status %#04x method %#x, want status %#04x", st, mad.MethodOf(resp), c.status)
			}
			if rmpp.IsActive(resp) {
				t.Error("single-MAD answer with RMPP Active")
			}
		})
	}
	var cpi mad.ClassPortInfo
	if err := cpi.UnmarshalBinary(r.one(sm, saReq(t, mad.MethodGet, sa.AttrClassPortInfo, 0, nil))[sa.HeaderSize:]); err != nil || cpi.ClassVersion != 2 || cpi.RespTimeValue != saRespTime {
		t.Errorf("ClassPortInfo %+v %v", cpi, err)
	}
}

// TestSAGetTableWindows plays the requester's RMPP receiver by hand: the SA
// sends segment 1 alone (window 1), then exactly up to each NewWindowLast
// granted, and the message holds one NodeRecord per node.
func TestSAGetTableWindows(t *testing.T) {
	f := mustLoad(t, "fattree-2000.net", nil)
	r := attachRaw(t, f, "h003-07", 1)
	_, _, sm := f.SM()
	got := r.send(sm, saReq(t, mad.MethodGetTable, sa.AttrNodeRecord, 0, nil))
	rc := rmpp.NewReceiver(rmpp.ReceiverConfig{})
	now := time.Now()
	rounds := 0
	for len(got) > 0 {
		rounds++
		var ack []byte
		first, last := 0, 0
		for i, p := range got {
			var h rmpp.Header
			_ = h.UnmarshalBinary(p.Data)
			if h.Type != rmpp.TypeData || mad.MethodOf(p.Data) != mad.MethodGetTableRes {
				t.Fatalf("round %d: got %v method %#x", rounds, h.Type, mad.MethodOf(p.Data))
			}
			if i == 0 {
				first = int(h.Data1)
			}
			last = int(h.Data1)
			if last > rc.NewWindowLast() && rc.NewWindowLast() > 0 {
				t.Fatalf("segment %d beyond the window %d", last, rc.NewWindowLast())
			}
			if o := rc.Handle(p.Data, now); o.Ack {
				ack = rc.Ack(nil)
			}
		}
		if rounds == 1 && (first != 1 || last != 1) {
			t.Fatalf("first window %d..%d, want segment 1 alone", first, last)
		}
		if ack == nil {
			t.Fatalf("round %d (%d..%d): nothing to ACK", rounds, first, last)
		}
		got = r.send(sm, ack)
	}
	recs, err := sa.Records(rc.Message())
	if err != nil || len(recs) != 2000 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	// ACK points at 1, 65, 129, ...: 1 + ceil((N-1)/64) rounds.
	n := (56 + 2000*112 - 56 + 199) / 200
	if want := 1 + (n-1+63)/64; rounds != want {
		t.Errorf("%d rounds for %d segments, want %d", rounds, n, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sa.sends) != 0 {
		t.Errorf("%d SA transfers left after the final ACK", len(f.sa.sends))
	}
}

// TestSAGetMulti is the double-sided exchange: the SA ACKs the request and
// starts its answer at once with a window of one segment, as Linux does
// (it does not wait for the direction-switch ACK, whose loss would stall
// the exchange); the switch ACK then only raises the window.
func TestSAGetMulti(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	r := attachRaw(t, f, "Hca3", 1)
	_, _, sm := f.SM()
	me := lidOf(t, f, "Hca3", 1)
	tmpl := make([]byte, 64)
	for name, v := range map[string]uint16{"slid": me, "dlid": sm} {
		fl, _, _ := sa.PathRecord().Field(name)
		fl.Put(tmpl, uint64(v))
	}
	req := saReq(t, mad.MethodGetMulti, sa.AttrPathRecord, 1<<4|1<<5, tmpl)
	s, err := rmpp.NewSender(req, rmpp.SenderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got := r.send(sm, s.Segment(nil, 1))
	if len(got) != 2 {
		t.Fatalf("%d MADs for the request segment, want its ACK and the answer", len(got))
	}
	var h rmpp.Header
	_ = h.UnmarshalBinary(got[0].Data)
	if h.Type != rmpp.TypeAck || h.Data1 != 1 || mad.MethodOf(got[0].Data) != mad.MethodGetMultiRes {
		t.Fatalf("got %+v method %#x, want ACK of segment 1", h, mad.MethodOf(got[0].Data))
	}
	_ = h.UnmarshalBinary(got[1].Data)
	recs, _ := sa.Records(got[1].Data[:sa.HeaderSize+64])
	if h.Type != rmpp.TypeData || h.Flags&rmpp.FlagLast == 0 || mad.MethodOf(got[1].Data) != mad.MethodGetMultiRes || len(recs) != 1 {
		t.Fatalf("response %+v method %#x", h, mad.MethodOf(got[1].Data))
	}
	if got = r.send(sm, rmpp.AppendSwitchAck(nil, req, 1)); len(got) != 0 {
		t.Fatalf("%d MADs after the direction switch, want none (the one-segment answer is out)", len(got))
	}
}

// TestSARetransmits: an unacknowledged window is sent again after the
// SA's ACK timeout; a STOP ends the transfer.
func TestSARetransmits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustLoad(t, "fattree-50.net", nil)
		r := attachRaw(t, f, "h001-02", 1)
		_, _, sm := f.SM()
		got := r.send(sm, saReq(t, mad.MethodGetTable, sa.AttrPortInfoRecord, 0, nil))
		if len(got) != 1 {
			t.Fatalf("%d segments in the first window", len(got))
		}
		time.Sleep(saAckTimeout)
		synctest.Wait()
		again := r.c.take()
		if len(again) != 1 || string(again[0].Data) != string(got[0].Data) {
			t.Fatalf("after the ACK timeout: %d MADs, want segment 1 again", len(again))
		}
		rc := rmpp.NewReceiver(rmpp.ReceiverConfig{})
		rc.Handle(got[0].Data, time.Now())
		if out := r.send(sm, rc.Control(nil, rmpp.TypeStop, rmpp.StatusResX)); len(out) != 0 {
			t.Errorf("%d MADs after STOP", len(out))
		}
		f.mu.Lock()
		n := len(f.sa.sends)
		f.mu.Unlock()
		if n != 0 {
			t.Errorf("%d transfers after STOP", n)
		}
		time.Sleep(10 * saAckTimeout)
		synctest.Wait()
		if late := r.c.take(); len(late) != 0 {
			t.Errorf("%d MADs after the stopped transfer", len(late))
		}
	})
}

// FuzzSA sends arbitrary SA MADs (and then the same bytes as an RMPP
// segment) to the SM's SA: nothing may panic, and no transfer survives
// the fabric's Close.
func FuzzSA(f *testing.F) {
	for _, attr := range []uint16{sa.AttrNodeRecord, sa.AttrPathRecord, sa.AttrMultiPathRecord, sa.AttrLFTRecord, sa.AttrPKeyTableRecord} {
		for _, m := range []uint8{mad.MethodGet, mad.MethodGetTable, mad.MethodGetMulti} {
			b, _ := sa.NewRequest(m, attr, 1, 0x3, nil)
			f.Add(b, uint64(0x30))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mask uint64) {
		fab, err := Default(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer fab.Close()
		_, _, sm := fab.SM()
		r := attachRaw(t, fab, "node002", 1)
		b := make([]byte, mad.Size)
		copy(b, data)
		b[0], b[1], b[2] = 1, mad.ClassSubnAdm, sa.ClassVersion
		b[3] &^= mad.MethodResp
		sa.SetComponentMask(b, mask)
		for _, active := range []bool{false, true} {
			if active {
				b[24], b[26] = rmpp.Version, b[26]|rmpp.FlagActive
			}
			for _, p := range r.send(sm, b) {
				if len(p.Data) != mad.Size || mad.MgmtClassOf(p.Data) != mad.ClassSubnAdm {
					t.Fatalf("answer of %d bytes, class %#x", len(p.Data), mad.MgmtClassOf(p.Data))
				}
			}
		}
	})
}

// TestSAMatchesOpenSM sends the queries captured from OpenSM under ibsim on
// the same topology (mad/sa/testdata) and compares the answers field by
// field, HOQLife included (OpenSM's leaf_head_of_queue_lifetime, 16, on
// switch ports facing CAs).
func TestSAMatchesOpenSM(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	raws := map[string]*raw{} // one raw client per port: deliveries go to the first
	for _, c := range []struct {
		file   string
		from   string // where the probe ran
		attr   *sa.Attr
		method uint8
		mask   uint64
		ignore []string
	}{
		{"pathrecord_get", "Switch1", sa.PathRecord(), mad.MethodGet, 1<<4 | 1<<5 | 1<<12, nil},
		{"pathrecord_hca1_lid1", "Hca1", sa.PathRecord(), mad.MethodGet, 1<<4 | 1<<5 | 1<<12, nil},
		{"pathrecord_hca1_lid2", "Hca1", sa.PathRecord(), mad.MethodGet, 1<<4 | 1<<5 | 1<<12, nil},
		{"pathrecord_hca1_lid3", "Hca1", sa.PathRecord(), mad.MethodGet, 1<<4 | 1<<5 | 1<<12, nil},
		{"pathrecord_hca1_lid4", "Hca1", sa.PathRecord(), mad.MethodGet, 1<<4 | 1<<5 | 1<<12, nil},
		{"pathrecord_hca1_lid5", "Hca1", sa.PathRecord(), mad.MethodGet, 1<<4 | 1<<5 | 1<<12, nil},
		{"pathrecord_hca1_lid6", "Hca1", sa.PathRecord(), mad.MethodGet, 1<<4 | 1<<5 | 1<<12, nil},
		{"noderecord_get", "Switch1", sa.NodeRecord(), mad.MethodGet, 1, nil},
		{"portinforecord_get", "Switch1", sa.PortInfoRecord(), mad.MethodGet, 3, nil},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := raws[c.from]
			if r == nil {
				num := 1
				if c.from == "Switch1" {
					num = 0
				}
				r = attachRaw(t, f, c.from, num)
				raws[c.from] = r
			}
			want := madtest.ReadCapture(t, "../mad/sa/testdata/"+c.file+".hex").Bytes
			// The capture is the response; its data is a record matching
			// the query, so it serves as the template.
			req := saReq(t, c.method, c.attr.Layout.ID, c.mask, want[sa.HeaderSize:sa.HeaderSize+c.attr.Layout.Size])
			got := r.one(1, req)
			if got == nil || mad.StatusOf(got) != 0 {
				t.Fatalf("no answer or status %#x", mad.StatusOf(got))
			}
			wr, gr := want[sa.HeaderSize:], got[sa.HeaderSize:]
			for _, fl := range c.attr.Layout.Fields {
				if slices.Contains(c.ignore, fl.Key()) {
					continue
				}
				var w, g string
				if fl.Numeric() {
					w, g = fl.Format(fl.Get(wr), nil), fl.Format(fl.Get(gr), nil)
				} else {
					w, g = fl.Format(0, fl.Slice(wr)), fl.Format(0, fl.Slice(gr))
				}
				if w != g {
					t.Errorf("%s: OpenSM %s, sim %s", fl.Key(), w, g)
				}
			}
		})
	}
}

// saTable asks the SA directly (no transport) and returns the answer's
// status and records.
func saTable(t *testing.T, f *Fabric, method uint8, attr *sa.Attr, mask uint64, set map[string]uint64) (uint16, [][]byte) {
	t.Helper()
	tmpl := make([]byte, attr.Layout.Size)
	for k, v := range set {
		fl, _, ok := attr.Field(k)
		if !ok {
			t.Fatalf("%s has no field %s", attr.Layout.Name, k)
		}
		fl.Put(tmpl, v)
	}
	f.mu.Lock()
	resp := f.saAnswer(saReq(t, method, attr.Layout.ID, mask, tmpl), 1)
	f.mu.Unlock()
	if resp == nil {
		t.Fatal("no answer")
	}
	st := mad.StatusOf(resp)
	if method == mad.MethodGet {
		if st != 0 {
			return st, nil
		}
		return st, [][]byte{resp[sa.HeaderSize : sa.HeaderSize+attr.Layout.Size]}
	}
	var recs [][]byte
	for b := resp[sa.HeaderSize:]; len(b) >= attr.Stride*8; b = b[attr.Stride*8:] {
		recs = append(recs, b[:attr.Layout.Size])
	}
	return st, recs
}

func recVal(t *testing.T, attr *sa.Attr, r []byte, name string) uint64 {
	t.Helper()
	fl, _, ok := attr.Field(name)
	if !ok {
		t.Fatalf("%s has no field %s", attr.Layout.Name, name)
	}
	return fl.Get(r)
}

// TestSATableRecordsAsOpenSM: SLtoVL, VL arbitration, MFT and InformInfo
// records follow OpenSM's rules (osm_sa_slvl_record.c, osm_sa_vlarb_record.c,
// osm_sa_mft_record.c, osm_sa_informinfo.c).
func TestSATableRecordsAsOpenSM(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	sw, ca := lidOf(t, f, "Switch1", 0), lidOf(t, f, "Hca1", 1)
	var swPorts, swCount, caCount int // ports of a switch (port 0 included)
	f.mu.Lock()
	for _, n := range f.nodes {
		if n.typ == typeSwitch {
			swCount++
			swPorts = n.numPorts + 1
		} else {
			caCount += len(f.endports(n))
		}
	}
	f.mu.Unlock()
	slvl, vla, mft, iir := sa.SLtoVLMappingTableRecord(), sa.VLArbitrationTableRecord(), sa.MulticastForwardingTableRecord(), sa.InformInfoRecord()
	zero := func(what string, attr *sa.Attr, recs [][]byte) {
		t.Helper()
		for _, r := range recs {
			for _, b := range r[8:] {
				if b != 0 {
					t.Fatalf("%s: table % x, want OpenSM's zero copy", what, r[8:])
				}
			}
		}
	}

	// SLtoVL: every in/out pair of a switch, one record per CA port.
	st, recs := saTable(t, f, mad.MethodGetTable, slvl, 0, nil)
	if want := swCount*swPorts*swPorts + caCount; st != 0 || len(recs) != want {
		t.Fatalf("SLtoVL table: status %#x, %d records, want %d", st, len(recs), want)
	}
	zero("SLtoVL table", slvl, recs)
	all := uint64(7) // LID, InputPortNum, OutputPortNum
	st, recs = saTable(t, f, mad.MethodGet, slvl, all, map[string]uint64{"LID": uint64(sw), "InputPortNum": 1, "OutputPortNum": 2})
	if st != 0 || recVal(t, slvl, recs[0], "LID") != uint64(sw) || recVal(t, slvl, recs[0], "InputPortNum") != 1 || recVal(t, slvl, recs[0], "OutputPortNum") != 2 {
		t.Errorf("switch SLtoVL 1->2: status %#x %v", st, recs)
	}
	// A CA's record has both port numbers 0, whatever the request named
	// (saquery SL2VL <ca>/1/2 lists it).
	st, recs = saTable(t, f, mad.MethodGet, slvl, all, map[string]uint64{"LID": uint64(ca), "InputPortNum": 1, "OutputPortNum": 2})
	if st != 0 || recVal(t, slvl, recs[0], "LID") != uint64(ca) || recVal(t, slvl, recs[0], "InputPortNum") != 0 || recVal(t, slvl, recs[0], "OutputPortNum") != 0 {
		t.Errorf("CA SLtoVL: status %#x %v", st, recs)
	}
	if st, _ = saTable(t, f, mad.MethodGet, slvl, all, map[string]uint64{"LID": uint64(sw), "InputPortNum": uint64(swPorts), "OutputPortNum": 1}); st != sa.StatusNoRecords {
		t.Errorf("switch SLtoVL from a port past the switch's: status %#x, want no records", st)
	}

	// VL arbitration: blocks 1-4 of every switch port and of each CA port.
	st, recs = saTable(t, f, mad.MethodGetTable, vla, 0, nil)
	if want := 4 * (swCount*swPorts + caCount); st != 0 || len(recs) != want {
		t.Fatalf("VLArb table: status %#x, %d records, want %d", st, len(recs), want)
	}
	zero("VLArb table", vla, recs)
	st, recs = saTable(t, f, mad.MethodGet, vla, 7, map[string]uint64{"LID": uint64(ca), "OutputPortNum": 9, "BlockNum": 2})
	if st != 0 || recVal(t, vla, recs[0], "OutputPortNum") != 1 || recVal(t, vla, recs[0], "BlockNum") != 2 {
		t.Errorf("CA VLArb block 2: status %#x %v (OpenSM gives the CA's port whatever port is asked)", st, recs)
	}
	if st, recs = saTable(t, f, mad.MethodGetTable, vla, 3, map[string]uint64{"LID": uint64(sw), "OutputPortNum": 3}); st != 0 || len(recs) != 4 {
		t.Errorf("switch port 3 VLArb: status %#x, %d records, want 4", st, len(recs))
	}
	if st, recs = saTable(t, f, mad.MethodGetTable, vla, 5, map[string]uint64{"LID": uint64(sw), "BlockNum": 5}); st != 0 || len(recs) != 0 {
		t.Errorf("VLArb block 5: status %#x, %d records, want none", st, len(recs))
	}

	// MFT: nothing until a block holds a port; then every position of
	// every block up to it.
	if st, recs = saTable(t, f, mad.MethodGetTable, mft, 0, nil); st != 0 || len(recs) != 0 {
		t.Fatalf("MFT table before a Set: status %#x, %d records", st, len(recs))
	}
	r := attachRaw(t, f, "Hca1", 1)
	blk := make([]byte, 64)
	blk[2*3+1] = 0x06 // MLID 0xC000+32+3 leaves by ports 1 and 2
	ok(t, r.set(sw, smp.AttrMulticastForwardingTable, 1, blk))
	positions := (swPorts + 15) / 16
	st, recs = saTable(t, f, mad.MethodGetTable, mft, 0, nil)
	if st != 0 || len(recs) != 2*positions {
		t.Fatalf("MFT table after a Set: status %#x, %d records, want %d", st, len(recs), 2*positions)
	}
	st, recs = saTable(t, f, mad.MethodGet, mft, 1|1<<1|1<<3, map[string]uint64{"LID": uint64(sw), "Position": 0, "BlockNum": 1})
	if st != 0 || !slices.Equal(recs[0][8:], blk) {
		t.Errorf("MFT block 1 position 0: status %#x %v", st, recs)
	}
	if st, _ = saTable(t, f, mad.MethodGet, mft, 1<<3, map[string]uint64{"BlockNum": 2}); st != sa.StatusNoRecords {
		t.Errorf("MFT block past the last in use: status %#x, want no records", st)
	}

	// InformInfoRecord: no subscriptions.
	if st, recs = saTable(t, f, mad.MethodGetTable, iir, 0, nil); st != 0 || len(recs) != 0 {
		t.Errorf("InformInfoRecord table: status %#x, %d records", st, len(recs))
	}
}
