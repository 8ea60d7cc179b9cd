package sa

import (
	"fmt"
	"slices"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// SA attribute IDs (mad-formats.md section 8).
const (
	AttrClassPortInfo    uint16 = 0x0001
	AttrNotice           uint16 = 0x0002
	AttrInformInfo       uint16 = 0x0003
	AttrNodeRecord       uint16 = 0x0011
	AttrPortInfoRecord   uint16 = 0x0012
	AttrSwitchInfoRecord uint16 = 0x0014
	AttrLFTRecord        uint16 = 0x0015
	AttrLinkRecord       uint16 = 0x0020
	AttrGUIDInfoRecord   uint16 = 0x0030
	AttrServiceRecord    uint16 = 0x0031
	AttrPKeyTableRecord  uint16 = 0x0033
	AttrPathRecord       uint16 = 0x0035
	AttrMCMemberRecord   uint16 = 0x0038
	AttrMultiPathRecord  uint16 = 0x003a
)

// Attr describes one SA attribute: its layout, the component number of
// each row (Comp, parallel to Layout.Fields, -1 for none) and the stride of
// its records in a GetTable response (AttributeOffset, 8-byte units).
type Attr struct {
	Layout *mad.Layout
	Comp   []int
	Stride int // AttributeOffset
}

// Name is the IBA name of the attribute.
func (a *Attr) Name() string { return a.Layout.Name }

// Field returns the row named by its IBA name or its snake_case key, and
// its component number.
func (a *Attr) Field(name string) (mad.Field, int, bool) {
	for i, f := range a.Layout.Fields {
		if f.Name == name || f.Key() == name {
			return f, a.Comp[i], true
		}
	}
	return mad.Field{}, -1, false
}

// Matches reports whether rec (a record of this attribute) equals the
// template tmpl in every component selected by mask. Components without a
// row (reserved) are ignored.
func (a *Attr) Matches(rec, tmpl []byte, mask uint64) bool {
	if mask == 0 {
		return true
	}
	for i, f := range a.Layout.Fields {
		c := a.Comp[i]
		if c < 0 || mask&(1<<uint(c)) == 0 {
			continue
		}
		if f.Numeric() {
			if f.Get(rec) != f.Get(tmpl) {
				return false
			}
		} else if string(f.Slice(rec)) != string(f.Slice(tmpl)) {
			return false
		}
	}
	return true
}

// shift returns the fields of l moved by bit bits, renamed by rename (nil
// keeps the names).
func shift(fs []mad.Field, bit int) []mad.Field {
	out := slices.Clone(fs)
	for i := range out {
		out[i].Bit += bit
	}
	return out
}

// gapComps numbers the rows of fs from first on, one per row, with a
// reserved gap between two rows also taking a number: the IBA rule that
// every field of an embedded attribute, reserved ones included, is one
// component (PortInfoRecord: M_Key 3 ... PortState 15, LMC 20).
func gapComps(fs []mad.Field, first, start int) []int {
	comps := make([]int, len(fs))
	c, end := first, start
	for i, f := range fs {
		if f.Bit > end {
			c++ // a reserved field
		}
		comps[i] = c
		c++
		end = f.End()
	}
	return comps
}

func seq(first, n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = first + i
	}
	return c
}

func none(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = -1
	}
	return c
}

// NodeRecord: mad-formats.md section 8 "NodeRecord (0x0011)": LID,
// reserved, NodeInfo at byte 4, NodeDescription at byte 44.
var (
	nrLID             = mad.Field{Name: "LID", Bit: 0, Width: 16}
	nrNodeInfoBit     = 32
	nrNodeDescription = mad.Field{Name: "NodeDescription", Bit: 352, Width: 512, Kind: mad.String}
	nrNodeInfo        = shift(smp.NodeInfoLayout.Fields, nrNodeInfoBit)
)

// NodeRecordLayout is NodeRecord, 108 bytes.
var NodeRecordLayout = mad.Layout{Name: "NodeRecord", ID: AttrNodeRecord, Size: 108,
	Fields: slices.Concat([]mad.Field{nrLID}, nrNodeInfo, []mad.Field{nrNodeDescription})}

// PortInfoRecord: "PortInfoRecord (0x0012)": EndportLID, PortNum, Options,
// PortInfo at byte 4.
var (
	pirEndportLID = mad.Field{Name: "EndportLID", Bit: 0, Width: 16}
	pirPortNum    = mad.Field{Name: "PortNum", Bit: 16, Width: 8}
	pirOptions    = mad.Field{Name: "Options", Bit: 24, Width: 8, Kind: mad.Hex}
	pirPortInfo   = shift(smp.PortInfoLayout.Fields, 32)
)

// PortInfoRecordLayout is PortInfoRecord, 68 bytes.
var PortInfoRecordLayout = mad.Layout{Name: "PortInfoRecord", ID: AttrPortInfoRecord, Size: 68,
	Fields: slices.Concat([]mad.Field{pirEndportLID, pirPortNum, pirOptions}, pirPortInfo)}

// PathRecord: "PathRecord (0x0035), 64 bytes".
var (
	prServiceID      = mad.Field{Name: "ServiceID", Bit: 0, Width: 64, Kind: mad.Hex}
	prDGID           = mad.Field{Name: "DGID", Bit: 64, Width: 128, Kind: mad.Bytes}
	prSGID           = mad.Field{Name: "SGID", Bit: 192, Width: 128, Kind: mad.Bytes}
	prDLID           = mad.Field{Name: "DLID", Bit: 320, Width: 16}
	prSLID           = mad.Field{Name: "SLID", Bit: 336, Width: 16}
	prRawTraffic     = mad.Field{Name: "RawTraffic", Bit: 352, Width: 1}
	prFlowLabel      = mad.Field{Name: "FlowLabel", Bit: 356, Width: 20, Kind: mad.Hex}
	prHopLimit       = mad.Field{Name: "HopLimit", Bit: 376, Width: 8}
	prTClass         = mad.Field{Name: "TClass", Bit: 384, Width: 8}
	prReversible     = mad.Field{Name: "Reversible", Bit: 392, Width: 1}
	prNumbPath       = mad.Field{Name: "NumbPath", Bit: 393, Width: 7}
	prPKey           = mad.Field{Name: "P_Key", Bit: 400, Width: 16, Kind: mad.Hex}
	prQoSClass       = mad.Field{Name: "QOSClass", Bit: 416, Width: 12}
	prSL             = mad.Field{Name: "SL", Bit: 428, Width: 4}
	prMTUSelector    = mad.Field{Name: "MTUSelector", Bit: 432, Width: 2}
	prMTU            = mad.Field{Name: "MTU", Bit: 434, Width: 6}
	prRateSelector   = mad.Field{Name: "RateSelector", Bit: 440, Width: 2}
	prRate           = mad.Field{Name: "Rate", Bit: 442, Width: 6}
	prPLTSelector    = mad.Field{Name: "PacketLifeTimeSelector", Bit: 448, Width: 2}
	prPacketLifeTime = mad.Field{Name: "PacketLifeTime", Bit: 450, Width: 6}
	prPreference     = mad.Field{Name: "Preference", Bit: 456, Width: 8}
)

// PathRecordLayout is PathRecord, 64 bytes.
var PathRecordLayout = mad.Layout{Name: "PathRecord", ID: AttrPathRecord, Size: 64,
	Fields: []mad.Field{prServiceID, prDGID, prSGID, prDLID, prSLID, prRawTraffic, prFlowLabel,
		prHopLimit, prTClass, prReversible, prNumbPath, prPKey, prQoSClass, prSL, prMTUSelector,
		prMTU, prRateSelector, prRate, prPLTSelector, prPacketLifeTime, prPreference}}

// pathComps: ServiceID takes components 0 and 1 (it was two reserved
// halves); selecting either compares the whole ID.
var pathComps = []int{0, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22}

// LinkRecord: "LinkRecord (0x0020), 8 bytes".
var (
	lrFromLID  = mad.Field{Name: "FromLID", Bit: 0, Width: 16}
	lrFromPort = mad.Field{Name: "FromPort", Bit: 16, Width: 8}
	lrToPort   = mad.Field{Name: "ToPort", Bit: 24, Width: 8}
	lrToLID    = mad.Field{Name: "ToLID", Bit: 32, Width: 16}
)

// LinkRecordLayout is LinkRecord, 8 bytes (the last 2 reserved).
var LinkRecordLayout = mad.Layout{Name: "LinkRecord", ID: AttrLinkRecord, Size: 8,
	Fields: []mad.Field{lrFromLID, lrFromPort, lrToPort, lrToLID}}

// SwitchInfoRecord: "SwitchInfoRecord (0x0014), 24 bytes": LID, reserved,
// SwitchInfo at byte 4.
var (
	sirLID        = mad.Field{Name: "LID", Bit: 0, Width: 16}
	sirSwitchInfo = shift(smp.SwitchInfoLayout.Fields, 32)
)

// SwitchInfoRecordLayout is SwitchInfoRecord, 24 bytes.
var SwitchInfoRecordLayout = mad.Layout{Name: "SwitchInfoRecord", ID: AttrSwitchInfoRecord, Size: 24,
	Fields: slices.Concat([]mad.Field{sirLID}, sirSwitchInfo)}

// LinearForwardingTableRecord: "LinearForwardingTableRecord (0x0015), 72
// bytes": LID, BlockNum, reserved, 64 port bytes.
var (
	lftrLID      = mad.Field{Name: "LID", Bit: 0, Width: 16}
	lftrBlockNum = mad.Field{Name: "BlockNum", Bit: 16, Width: 16}
	lftrPorts    = mad.Repeat(mad.Field{Name: "Port", Bit: 64, Width: 8}, 64, 8)
)

// LinearForwardingTableRecordLayout is LinearForwardingTableRecord.
var LinearForwardingTableRecordLayout = mad.Layout{Name: "LinearForwardingTableRecord", ID: AttrLFTRecord, Size: 72,
	Fields: slices.Concat([]mad.Field{lftrLID, lftrBlockNum}, lftrPorts)}

// GUIDInfoRecord (IBA table "GUIDInfoRecord", OpenSM ib_guidinfo_record_t):
// LID, BlockNum, two reserved fields, 8 GUIDs at byte 8.
var (
	girLID      = mad.Field{Name: "LID", Bit: 0, Width: 16}
	girBlockNum = mad.Field{Name: "BlockNum", Bit: 16, Width: 8}
	girGUIDs    = mad.Repeat(mad.Field{Name: "GUID", Bit: 64, Width: 64, Kind: mad.Hex}, 8, 64)
)

// GUIDInfoRecordLayout is GUIDInfoRecord, 72 bytes.
var GUIDInfoRecordLayout = mad.Layout{Name: "GUIDInfoRecord", ID: AttrGUIDInfoRecord, Size: 72,
	Fields: slices.Concat([]mad.Field{girLID, girBlockNum}, girGUIDs)}

// P_KeyTableRecord (IBA table "P_KeyTableRecord"): LID, BlockNum, PortNum,
// reserved, 32 P_Keys at byte 8.
var (
	pkrLID      = mad.Field{Name: "LID", Bit: 0, Width: 16}
	pkrBlockNum = mad.Field{Name: "BlockNum", Bit: 16, Width: 16}
	pkrPortNum  = mad.Field{Name: "PortNum", Bit: 32, Width: 8}
	pkrPKeys    = mad.Repeat(mad.Field{Name: "P_Key", Bit: 64, Width: 16, Kind: mad.Hex}, 32, 16)
)

// PKeyTableRecordLayout is P_KeyTableRecord, 72 bytes.
var PKeyTableRecordLayout = mad.Layout{Name: "P_KeyTableRecord", ID: AttrPKeyTableRecord, Size: 72,
	Fields: slices.Concat([]mad.Field{pkrLID, pkrBlockNum, pkrPortNum}, pkrPKeys)}

// ServiceRecord: "ServiceRecord (0x0031), 176 bytes".
var (
	srServiceID   = mad.Field{Name: "ServiceID", Bit: 0, Width: 64, Kind: mad.Hex}
	srServiceGID  = mad.Field{Name: "ServiceGID", Bit: 64, Width: 128, Kind: mad.Bytes}
	srServicePKey = mad.Field{Name: "ServiceP_Key", Bit: 192, Width: 16, Kind: mad.Hex}
	srLease       = mad.Field{Name: "ServiceLease", Bit: 224, Width: 32}
	srServiceKey  = mad.Field{Name: "ServiceKey", Bit: 256, Width: 128, Kind: mad.Bytes}
	srServiceName = mad.Field{Name: "ServiceName", Bit: 384, Width: 512, Kind: mad.String}
	srData8       = mad.Repeat(mad.Field{Name: "ServiceData8_", Bit: 896, Width: 8, Kind: mad.Hex}, 16, 8)
	srData16      = mad.Repeat(mad.Field{Name: "ServiceData16_", Bit: 1024, Width: 16, Kind: mad.Hex}, 8, 16)
	srData32      = mad.Repeat(mad.Field{Name: "ServiceData32_", Bit: 1152, Width: 32, Kind: mad.Hex}, 4, 32)
	srData64      = mad.Repeat(mad.Field{Name: "ServiceData64_", Bit: 1280, Width: 64, Kind: mad.Hex}, 2, 64)
)

// ServiceRecordLayout is ServiceRecord, 176 bytes.
var ServiceRecordLayout = mad.Layout{Name: "ServiceRecord", ID: AttrServiceRecord, Size: 176,
	Fields: slices.Concat([]mad.Field{srServiceID, srServiceGID, srServicePKey, srLease, srServiceKey, srServiceName},
		srData8, srData16, srData32, srData64)}

// MCMemberRecord: "MCMemberRecord (0x0038), 52 bytes".
var (
	mcrMGID         = mad.Field{Name: "MGID", Bit: 0, Width: 128, Kind: mad.Bytes}
	mcrPortGID      = mad.Field{Name: "PortGID", Bit: 128, Width: 128, Kind: mad.Bytes}
	mcrQKey         = mad.Field{Name: "Q_Key", Bit: 256, Width: 32, Kind: mad.Hex}
	mcrMLID         = mad.Field{Name: "MLID", Bit: 288, Width: 16, Kind: mad.Hex}
	mcrMTUSelector  = mad.Field{Name: "MTUSelector", Bit: 304, Width: 2}
	mcrMTU          = mad.Field{Name: "MTU", Bit: 306, Width: 6}
	mcrTClass       = mad.Field{Name: "TClass", Bit: 312, Width: 8}
	mcrPKey         = mad.Field{Name: "P_Key", Bit: 320, Width: 16, Kind: mad.Hex}
	mcrRateSelector = mad.Field{Name: "RateSelector", Bit: 336, Width: 2}
	mcrRate         = mad.Field{Name: "Rate", Bit: 338, Width: 6}
	mcrPLTSelector  = mad.Field{Name: "PacketLifeTimeSelector", Bit: 344, Width: 2}
	mcrPacketLife   = mad.Field{Name: "PacketLifeTime", Bit: 346, Width: 6}
	mcrSL           = mad.Field{Name: "SL", Bit: 352, Width: 4}
	mcrFlowLabel    = mad.Field{Name: "FlowLabel", Bit: 356, Width: 20, Kind: mad.Hex}
	mcrHopLimit     = mad.Field{Name: "HopLimit", Bit: 376, Width: 8}
	mcrScope        = mad.Field{Name: "Scope", Bit: 384, Width: 4}
	mcrJoinState    = mad.Field{Name: "JoinState", Bit: 388, Width: 4, Kind: mad.Hex}
	mcrProxyJoin    = mad.Field{Name: "ProxyJoin", Bit: 392, Width: 1}
)

// MCMemberRecordLayout is MCMemberRecord, 52 bytes.
var MCMemberRecordLayout = mad.Layout{Name: "MCMemberRecord", ID: AttrMCMemberRecord, Size: 52,
	Fields: []mad.Field{mcrMGID, mcrPortGID, mcrQKey, mcrMLID, mcrMTUSelector, mcrMTU, mcrTClass, mcrPKey,
		mcrRateSelector, mcrRate, mcrPLTSelector, mcrPacketLife, mcrSL, mcrFlowLabel, mcrHopLimit,
		mcrScope, mcrJoinState, mcrProxyJoin}}

// InformInfo (IBA table "InformInfo", 36 bytes; OpenSM ib_inform_info_t,
// generic form): subscribed with Set, so it has no component numbers.
var (
	iiGID              = mad.Field{Name: "GID", Bit: 0, Width: 128, Kind: mad.Bytes}
	iiLIDRangeBegin    = mad.Field{Name: "LIDRangeBegin", Bit: 128, Width: 16}
	iiLIDRangeEnd      = mad.Field{Name: "LIDRangeEnd", Bit: 144, Width: 16}
	iiIsGeneric        = mad.Field{Name: "IsGeneric", Bit: 176, Width: 8}
	iiSubscribe        = mad.Field{Name: "Subscribe", Bit: 184, Width: 8}
	iiType             = mad.Field{Name: "Type", Bit: 192, Width: 16}
	iiTrapNumber       = mad.Field{Name: "TrapNumber", Bit: 208, Width: 16}
	iiQPN              = mad.Field{Name: "QPN", Bit: 224, Width: 24, Kind: mad.Hex}
	iiRespTimeValue    = mad.Field{Name: "RespTimeValue", Bit: 251, Width: 5}
	iiProducerTypeVend = mad.Field{Name: "ProducerType", Bit: 264, Width: 24, Kind: mad.Hex}
)

// InformInfoLayout is InformInfo, 36 bytes.
var InformInfoLayout = mad.Layout{Name: "InformInfo", ID: AttrInformInfo, Size: 36,
	Fields: []mad.Field{iiGID, iiLIDRangeBegin, iiLIDRangeEnd, iiIsGeneric, iiSubscribe, iiType,
		iiTrapNumber, iiQPN, iiRespTimeValue, iiProducerTypeVend}}

// MultiPathRecord (IBA table "MultiPathRecord"; OpenSM ib_multipath_rec_t):
// 24 bytes of path properties followed by SGIDCount source and DGIDCount
// destination GIDs (16 bytes each). The layout is the fixed part; MPRGIDs
// reads the GIDs.
var (
	mprRawTraffic    = mad.Field{Name: "RawTraffic", Bit: 0, Width: 1}
	mprFlowLabel     = mad.Field{Name: "FlowLabel", Bit: 4, Width: 20, Kind: mad.Hex}
	mprHopLimit      = mad.Field{Name: "HopLimit", Bit: 24, Width: 8}
	mprTClass        = mad.Field{Name: "TClass", Bit: 32, Width: 8}
	mprReversible    = mad.Field{Name: "Reversible", Bit: 40, Width: 1}
	mprNumbPath      = mad.Field{Name: "NumbPath", Bit: 41, Width: 7}
	mprPKey          = mad.Field{Name: "P_Key", Bit: 48, Width: 16, Kind: mad.Hex}
	mprQoSClass      = mad.Field{Name: "QOSClass", Bit: 64, Width: 12}
	mprSL            = mad.Field{Name: "SL", Bit: 76, Width: 4}
	mprMTUSelector   = mad.Field{Name: "MTUSelector", Bit: 80, Width: 2}
	mprMTU           = mad.Field{Name: "MTU", Bit: 82, Width: 6}
	mprRateSelector  = mad.Field{Name: "RateSelector", Bit: 88, Width: 2}
	mprRate          = mad.Field{Name: "Rate", Bit: 90, Width: 6}
	mprPLTSelector   = mad.Field{Name: "PacketLifeTimeSelector", Bit: 96, Width: 2}
	mprPacketLife    = mad.Field{Name: "PacketLifeTime", Bit: 98, Width: 6}
	mprServiceID8MSB = mad.Field{Name: "ServiceID8MSB", Bit: 104, Width: 8, Kind: mad.Hex}
	mprIndependence  = mad.Field{Name: "IndependenceSelector", Bit: 112, Width: 2}
	mprSGIDCount     = mad.Field{Name: "SGIDCount", Bit: 120, Width: 8}
	mprDGIDCount     = mad.Field{Name: "DGIDCount", Bit: 128, Width: 8}
	mprServiceID56   = mad.Field{Name: "ServiceID56LSB", Bit: 136, Width: 56, Kind: mad.Hex}
)

// MultiPathRecordLayout is the fixed part of MultiPathRecord, 24 bytes.
var MultiPathRecordLayout = mad.Layout{Name: "MultiPathRecord", ID: AttrMultiPathRecord, Size: 24,
	Fields: []mad.Field{mprRawTraffic, mprFlowLabel, mprHopLimit, mprTClass, mprReversible, mprNumbPath,
		mprPKey, mprQoSClass, mprSL, mprMTUSelector, mprMTU, mprRateSelector, mprRate, mprPLTSelector,
		mprPacketLife, mprServiceID8MSB, mprIndependence, mprSGIDCount, mprDGIDCount, mprServiceID56}}

// MPRGIDs returns the source and destination GIDs of a MultiPathRecord
// (SGIDCount then DGIDCount GIDs after the fixed part), or an error
// wrapping mad.ErrTruncated when b is too short for them.
func MPRGIDs(b []byte) (sgids, dgids []mad.GID, err error) {
	if err := MultiPathRecordLayout.Check(b); err != nil {
		return nil, nil, err
	}
	ns, nd := int(mprSGIDCount.Get(b)), int(mprDGIDCount.Get(b))
	if need := MultiPathRecordLayout.Size + 16*(ns+nd); len(b) < need {
		return nil, nil, fmt.Errorf("multipathrecord: %w (have %d, need %d for %d+%d GIDs)", mad.ErrTruncated, len(b), need, ns, nd)
	}
	gid := func(i int) mad.GID {
		var g mad.GID
		copy(g[:], b[MultiPathRecordLayout.Size+16*i:])
		return g
	}
	for i := range ns {
		sgids = append(sgids, gid(i))
	}
	for i := range nd {
		dgids = append(dgids, gid(ns+i))
	}
	return sgids, dgids, nil
}

// AppendMPR appends a MultiPathRecord: the fixed part fixed (24 bytes, its
// GID counts overwritten) and the GIDs.
func AppendMPR(b, fixed []byte, sgids, dgids []mad.GID) ([]byte, error) {
	if len(fixed) < MultiPathRecordLayout.Size || len(sgids) > 255 || len(dgids) > 255 {
		return b, fmt.Errorf("multipathrecord: %d-byte fixed part, %d+%d GIDs: %w", len(fixed), len(sgids), len(dgids), mad.ErrRange)
	}
	n := len(b)
	b = append(b, fixed[:MultiPathRecordLayout.Size]...)
	mprSGIDCount.Put(b[n:], uint64(len(sgids)))
	mprDGIDCount.Put(b[n:], uint64(len(dgids)))
	for _, g := range sgids {
		b = append(b, g[:]...)
	}
	for _, g := range dgids {
		b = append(b, g[:]...)
	}
	return b, nil
}

// The attributes, by ID.
var (
	NodeRecord                  = Attr{&NodeRecordLayout, slices.Concat([]int{0}, gapComps(nrNodeInfo, 2, 32), []int{14}), 14}
	PortInfoRecord              = Attr{&PortInfoRecordLayout, slices.Concat([]int{0, 1, 2}, gapComps(pirPortInfo, 3, 32)), 9}
	PathRecord                  = Attr{&PathRecordLayout, pathComps, 8}
	LinkRecord                  = Attr{&LinkRecordLayout, seq(0, 4), 1}
	SwitchInfoRecord            = Attr{&SwitchInfoRecordLayout, slices.Concat([]int{0}, gapComps(sirSwitchInfo, 2, 32)), 3}
	LinearForwardingTableRecord = Attr{&LinearForwardingTableRecordLayout, slices.Concat([]int{0, 1}, none(64)), 9}
	GUIDInfoRecord              = Attr{&GUIDInfoRecordLayout, slices.Concat([]int{0, 1}, seq(4, 8)), 9}
	PKeyTableRecord             = Attr{&PKeyTableRecordLayout, slices.Concat([]int{0, 1, 2}, none(32)), 9}
	ServiceRecord               = Attr{&ServiceRecordLayout, slices.Concat([]int{0, 1, 2, 4, 5, 6}, seq(7, 30)), 22}
	MCMemberRecord              = Attr{&MCMemberRecordLayout, seq(0, 18), 7}
	InformInfo                  = Attr{&InformInfoLayout, none(10), 5}
	ClassPortInfo               = Attr{&mad.ClassPortInfoLayout, none(len(mad.ClassPortInfoLayout.Fields)), 9}
	// MultiPathRecord is queried with GetMulti; its responses are
	// PathRecords (stride 8). Stride here is its fixed part's.
	MultiPathRecord = Attr{&MultiPathRecordLayout, gapComps(MultiPathRecordLayout.Fields, 0, 0), 3}
)

var attrs = []*Attr{&ClassPortInfo, &InformInfo, &NodeRecord, &PortInfoRecord, &SwitchInfoRecord,
	&LinearForwardingTableRecord, &LinkRecord, &GUIDInfoRecord, &ServiceRecord, &PKeyTableRecord,
	&PathRecord, &MCMemberRecord, &MultiPathRecord}

// Attrs lists the SA attributes this package knows, by ID.
func Attrs() []*Attr { return slices.Clone(attrs) }

// AttrByID returns the attribute with that ID.
func AttrByID(id uint16) (*Attr, bool) {
	for _, a := range attrs {
		if a.Layout.ID == id {
			return a, true
		}
	}
	return nil, false
}

// AttrByName returns the attribute named as the IBA names it
// ("NodeRecord"), case-insensitively.
func AttrByName(name string) (*Attr, bool) {
	for _, a := range attrs {
		if equalFold(a.Layout.Name, name) {
			return a, true
		}
	}
	return nil, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// MaxRecordSize is the largest record (ServiceRecord).
const MaxRecordSize = 176

// Record is any SA record as its layout sees it: decoding keeps the bits
// of the layout's rows and zeroes the reserved ones, encoding writes them
// back. It is the generic codec behind every record; NodeRecord and
// PathRecord also have typed structs.
type Record struct {
	Attr *Attr
	Data [MaxRecordSize]byte
}

// UnmarshalBinary decodes r.Attr's record from b without allocating.
func (r *Record) UnmarshalBinary(b []byte) error {
	l := r.Attr.Layout
	if err := l.Check(b); err != nil {
		return err
	}
	r.Data = [MaxRecordSize]byte{}
	for _, f := range l.Fields {
		if f.Bit%8 == 0 && f.Width%8 == 0 {
			copy(f.Slice(r.Data[:]), f.Slice(b))
		} else {
			f.Put(r.Data[:], f.Get(b))
		}
	}
	return nil
}

// AppendBinary appends the record's Layout.Size bytes.
func (r *Record) AppendBinary(b []byte) ([]byte, error) {
	if r.Attr == nil {
		return b, fmt.Errorf("sa: record without an attribute: %w", mad.ErrRange)
	}
	return append(b, r.Data[:r.Attr.Layout.Size]...), nil
}

// Get returns the numeric field named name.
func (r *Record) Get(name string) (uint64, bool) {
	f, _, ok := r.Attr.Field(name)
	if !ok || !f.Numeric() {
		return 0, false
	}
	return f.Get(r.Data[:]), true
}
