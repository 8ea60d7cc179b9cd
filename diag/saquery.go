package diag

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
)

// SACommand is what saquery was asked for besides a record query.
type SACommand int

const (
	SAQueryRecords  SACommand = iota // a record query (NodeRecord by default)
	SANodeRecords                    // -N, -L, -l, -G, -O, -U, -D
	SAClassPortInfo                  // -c
	SAIsSM                           // -s
	SAMCGroups                       // -g
	SAMCMembers                      // -m
)

// SANodePrint is how saquery prints node records (-L, -l, -G, -O, -U,
// -D; SANodeAll by default).
type SANodePrint int

const (
	SANodeAll        SANodePrint = iota
	SANodeLIDOnly                // -L
	SANodeUniqueLID              // -l
	SANodeGUIDOnly               // -G
	SANodeAllDesc                // -D
	SANodeNameOfLID              // -O
	SANodeNameOfGUID             // -U
)

// SAQueryOptions are saquery's options. Unset numbers keep saquery's
// defaults: use NewSAQueryOptions.
type SAQueryOptions struct {
	Command   SACommand
	NodePrint SANodePrint
	// QueryType is the record asked for by option (-p, -S, -I, -x,
	// --src-to-dst, --sgid-to-dgid): a query name as Args[0] takes one.
	// Empty: Args[0] when it names a query, else NodeRecord.
	QueryType string
	// Args are the positional arguments: [query-name] [name | lid | guid
	// | the query's lid/port/block selector].
	Args []string
	// SrcToDst is --src-to-dst "src:dst" (names or LIDs); SGIDToDGID is
	// --sgid-to-dgid "sgid-dgid".
	SrcToDst, SGIDToDGID string

	// PathRecord and MCMemberRecord selectors (--slid, --dlid, --mlid,
	// --sgid, --dgid, --gid, --mgid, -r, -n, --pkey, -Q, --sl, -M, -R,
	// --pkt_lifetime, -q, -T, -F, -H, --scope, -J, -X, --service_id); -1
	// in the int ones means unset, as in saquery.
	SLID, DLID, MLID      uint16
	SGID, DGID, GID, MGID [16]byte
	Reversible, NumbPath  int
	PKey                  uint16
	QoSClass, SL          int
	MTU, Rate, PktLife    uint8
	QKey                  uint32
	TClass                uint8
	FlowLabel             uint32
	HopLimit              int
	Scope, JoinState      uint8
	ProxyJoin             int
	ServiceID             uint64
	ShowKeys              bool // -K: print keys instead of <not displayed>
	NameMap               map[uint64]string
	Timeout               time.Duration // -t (saquery's default is 1000 ms)
	SMKey                 uint64        // --smkey
	smKeySet              bool
}

// NewSAQueryOptions returns saquery's defaults.
func NewSAQueryOptions() *SAQueryOptions {
	return &SAQueryOptions{Reversible: -1, NumbPath: -1, QoSClass: -1, SL: -1, HopLimit: -1, ProxyJoin: -1}
}

// SAQueryName is one of saquery's query names, its alias and the
// arguments it takes.
type SAQueryName struct{ Name, Alias, Usage string }

// SAQueryNames returns saquery's query names and aliases, in its order.
func SAQueryNames() []SAQueryName { return slices.Clone(saQueryNames) }

var saQueryNames = []SAQueryName{
	{"ClassPortInfo", "CPI", ""},
	{"NodeRecord", "NR", "[lid]"},
	{"PortInfoRecord", "PIR", "[[lid]/[port]/[options]]"},
	{"SL2VLTableRecord", "SL2VL", "[[lid]/[in_port]/[out_port]]"},
	{"PKeyTableRecord", "PKTR", "[[lid]/[port]/[block]]"},
	{"VLArbitrationTableRecord", "VLAR", "[[lid]/[port]/[block]]"},
	{"InformInfoRecord", "IIR", "[subscriber_gid]"},
	{"LinkRecord", "LR", "[[from_lid]/[from_port]] [[to_lid]/[to_port]]"},
	{"ServiceRecord", "SR", ""},
	{"PathRecord", "PR", ""},
	{"MCMemberRecord", "MCMR", ""},
	{"LFTRecord", "LFTR", "[[lid]/[block]]"},
	{"MFTRecord", "MFTR", "[[mlid]/[position]/[block]]"},
	{"GUIDInfoRecord", "GIR", "[[lid]/[block]]"},
	{"SwitchInfoRecord", "SWIR", "[lid]"},
	{"SMInfoRecord", "SMIR", "[lid]"},
}

// findSAQuery is saquery's find_query: a name or alias, any case.
func findSAQuery(name string) (string, bool) {
	for _, q := range saQueryNames {
		if strings.EqualFold(name, q.Name) || strings.EqualFold(name, q.Alias) {
			return q.Name, true
		}
	}
	return "", false
}

// SAResult is what saquery printed: sections of records, each with the
// record type it dumps; the JSON form of saquery.
type SAResult struct {
	Sections []SASection `json:"sections"`
	// Warnings say where the answer may lack records (an SA that sent a
	// multi-MAD answer as one MAD, as OpenSM does under ibsim).
	Warnings []string `json:"warnings,omitempty"`
	// Exit is saquery's exit status (0, or the errno it exits with).
	Exit int `json:"exit"`
	// Error is what saquery said on stderr before exiting with Exit.
	Error string `json:"error,omitempty"`

	names     map[uint64]string
	capMask2  uint32 // the SA's ClassPortInfo CapabilityMask2, for SwitchInfoRecord
	requested string
	nodeRecs  [][]byte // for MCMemberRecord member dumps
}

// SASection is a list of records of one type printed one way.
type SASection struct {
	// Title is a line saquery prints before the records ("IsSM ports").
	Title string `json:"title,omitempty"`
	// Type is the record type: "NodeRecord", "PathRecord", ..., or a
	// print form: "NodeLID", "NodeGUID", "NodeName", "NodeDesc",
	// "MCGroup", "MCMember", "IsSMPort".
	Type    string     `json:"type"`
	Records []SARecord `json:"records"`
}

// SARecord is one record: its fields by name, and its bytes.
type SARecord struct {
	Fields map[string]any `json:"fields"`
	raw    []byte
}

// SAError is saquery's failure: the message it prints on stderr and the
// status it exits with.
type SAError struct {
	Exit int
	Msg  string
}

func (e *SAError) Error() string { return e.Msg }

const (
	errnoEIO       = 5
	errnoEINVAL    = 22
	errnoENONET    = 64
	errnoETIMEDOUT = 110
)

type saQuerier struct {
	s   *engine.Session
	o   *SAQueryOptions
	co  []engine.CallOption
	res *SAResult
}

// saAttrs are the attributes of the record types by query name.
var saAttrs = map[string]*sa.Attr{
	"ClassPortInfo": sa.ClassPortInfo(), "NodeRecord": sa.NodeRecord(), "PortInfoRecord": sa.PortInfoRecord(),
	"SL2VLTableRecord": sa.SLtoVLMappingTableRecord(), "PKeyTableRecord": sa.PKeyTableRecord(),
	"VLArbitrationTableRecord": sa.VLArbitrationTableRecord(), "InformInfoRecord": sa.InformInfoRecord(),
	"LinkRecord": sa.LinkRecord(), "ServiceRecord": sa.ServiceRecord(), "PathRecord": sa.PathRecord(),
	"MCMemberRecord": sa.MCMemberRecord(), "LFTRecord": sa.LinearForwardingTableRecord(),
	"MFTRecord": sa.MulticastForwardingTableRecord(), "GUIDInfoRecord": sa.GUIDInfoRecord(),
	"SwitchInfoRecord": sa.SwitchInfoRecord(), "SMInfoRecord": sa.SMInfoRecord(),
}

// getTable is get_any_records: a GetTable of attr with the template and
// component mask. A failed query becomes saquery's message and status.
func (q *saQuerier) getTable(ctx context.Context, attr *sa.Attr, mask uint64, tmpl []byte, mod uint32) ([][]byte, error) {
	co := q.co
	if mod != 0 {
		co = append(append([]engine.CallOption(nil), co...), engine.SAAttrMod(mod))
	}
	recs, err := q.s.SAGetTable(ctx, attr, mask, tmpl, co...)
	var te *engine.TruncatedError
	if errors.As(err, &te) {
		q.res.Warnings = append(q.res.Warnings, te.Error())
		return recs, nil
	}
	if err != nil {
		return nil, saFailure(err)
	}
	return recs, nil
}

// saFailure is how saquery reports a failed query: a status as
// sa_report_err (exit EIO), a timeout or transport error as "Query SA
// failed" with its errno.
func saFailure(err error) error {
	var se *engine.StatusError
	if errors.As(err, &se) {
		return &SAError{Exit: errnoEIO, Msg: saStatusText(se.Status)}
	}
	code := errnoEIO
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		code = errnoETIMEDOUT
	}
	return &SAError{Exit: code, Msg: "Query SA failed: " + err.Error()}
}

func isTimeout(err error) bool {
	var te *engine.TimeoutError
	return errors.As(err, &te)
}

var saErrText = []string{"SA_NO_ERROR", "SA_ERR_NO_RESOURCES", "SA_ERR_REQ_INVALID", "SA_ERR_NO_RECORDS",
	"SA_ERR_TOO_MANY_RECORDS", "SA_ERR_REQ_INVALID_GID", "SA_ERR_REQ_INSUFFICIENT_COMPONENTS",
	"SA_ERR_REQ_DENIED", "SA_ERR_STATUS_PRIO_SUGGESTED", "SA_ERR_UNKNOWN"}

var madInvText = []string{"MAD No invalid fields", "MAD Bad version", "MAD Method specified is not supported",
	"MAD Method/Attribute combination is not supported", "MAD Reserved", "MAD Reserved", "MAD Reserved",
	"MAD Invalid value in Attribute field(s) or Attribute Modifier", "MAD UNKNOWN ERROR"}

// saStatusText is sa_report_err's line.
func saStatusText(status uint16) string {
	st := int(status & 0xff)
	madErr, saErr := "", ""
	if st != 0 {
		busy, redir := "", ""
		if st&1 != 0 {
			busy = "BUSY"
		}
		if st&2 != 0 {
			redir = "Redirection Required"
		}
		madErr = fmt.Sprintf(" (%s; %s; %s)", busy, redir, madInvText[min(st>>2, len(madInvText)-1)])
	}
	if hi := int(status >> 8); hi != 0 {
		saErr = fmt.Sprintf(" SA(%s)", saErrText[min(hi, len(saErrText)-1)])
	}
	return fmt.Sprintf("ERROR: Query result returned 0x%04x, %s%s", status, madErr, saErr)
}

// SAQuery runs saquery: it resolves the names and LIDs of the arguments
// (a name through the SA's NodeRecords), asks the SA what the options
// say and returns the records as saquery prints them. A failure saquery
// reports (a bad argument, an SA error status, a timeout) is an
// *SAError with its message and exit status; the records printed before
// it are in the result.
func SAQuery(ctx context.Context, e *Env, o *SAQueryOptions) (*SAResult, error) {
	if o == nil {
		o = NewSAQueryOptions()
	}
	if e == nil || e.Session == nil {
		return nil, errors.New("diag: saquery: no session (the tool needs a fabric)")
	}
	q := &saQuerier{s: e.Session, o: o, res: &SAResult{names: e.NodeNames}}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = time.Second
	}
	// One try, as saquery sends (umad_send without retries).
	q.co = []engine.CallOption{engine.Timeout(timeout), engine.Retries(0)}
	if o.SMKey != 0 {
		q.co = append(q.co, engine.SMKey(o.SMKey))
	}
	err := q.run(ctx)
	var se *SAError
	if errors.As(err, &se) {
		q.res.Exit, q.res.Error = se.Exit, se.Msg
	}
	return q.res, err
}

func (q *saQuerier) run(ctx context.Context) error {
	o := q.o
	args := o.Args
	qt := o.QueryType
	numbPath := o.NumbPath
	sgid, dgid := o.SGID, o.DGID
	var srcName, dstName string
	if o.SrcToDst != "" {
		var ok bool
		srcName, dstName, ok = strings.Cut(o.SrcToDst, ":")
		if !ok {
			return &SAError{Exit: 2, Msg: fmt.Sprintf("--src-to-dst %q: want src:dst", o.SrcToDst)}
		}
		numbPath, qt = 0x7f, "PathRecord"
	}
	if o.SGIDToDGID != "" {
		a, b, ok := strings.Cut(o.SGIDToDGID, "-")
		ga, ea := parseGID(a)
		gb, eb := parseGID(b)
		if !ok || ea != nil || eb != nil {
			return &SAError{Exit: 2, Msg: fmt.Sprintf("--sgid-to-dgid %q: want sgid-dgid, two IPv6-format GIDs", o.SGIDToDGID)}
		}
		sgid, dgid, numbPath, qt = ga, gb, 0x7f, "PathRecord"
	}
	if qt != "" {
		name, ok := findSAQuery(qt)
		if !ok {
			return &SAError{Exit: errnoEINVAL, Msg: fmt.Sprintf("Unknown query type %s", qt)}
		}
		qt = name
	}
	if qt == "" && o.Command == SAQueryRecords {
		if len(args) > 0 {
			if name, ok := findSAQuery(args[0]); ok {
				qt, args = name, args[1:]
			}
		}
		if qt == "" {
			qt = "NodeRecord"
		}
	}
	var requestedLID uint16
	var requestedGUID uint64
	requestedName, haveLID, haveGUID := "", false, false
	if len(args) > 0 {
		switch o.NodePrint {
		case SANodeNameOfLID:
			v, _ := parseCULong(args[0])
			requestedLID, haveLID = uint16(v), true
		case SANodeNameOfGUID:
			requestedGUID, _ = parseCULong(args[0])
			haveGUID = true
		default:
			requestedName = args[0]
		}
	}
	q.res.requested = requestedName
	switch {
	case (o.NodePrint == SANodeLIDOnly || o.NodePrint == SANodeUniqueLID || o.NodePrint == SANodeGUIDOnly) && requestedName == "":
		return &SAError{Exit: 2, Msg: "ERROR: name not specified"}
	case o.NodePrint == SANodeNameOfLID && !haveLID:
		return &SAError{Exit: 2, Msg: "ERROR: lid not specified"}
	case o.NodePrint == SANodeNameOfGUID && !haveGUID:
		return &SAError{Exit: 2, Msg: "ERROR: guid not specified"}
	case o.NodePrint == SANodeNameOfLID && requestedLID == 0:
		return &SAError{Exit: 2, Msg: "ERROR: lid invalid"}
	}
	// saquery's sa_get_handle: a port that knows no SM (MasterSMLID 0:
	// no SM reached it) is a panic before any query, status 255.
	if pa := q.s.Port(); pa.SMLID == 0 {
		return &SAError{Exit: 255, Msg: fmt.Sprintf("No SM/SA found on port %d (its MasterSMLID is 0): Failed to bind to the SA", pa.PortNum)}
	}
	slid, dlid := o.SLID, o.DLID
	if srcName != "" {
		l, err := q.getLID(ctx, srcName)
		if err != nil {
			return err
		}
		slid = l
	}
	if dstName != "" {
		l, err := q.getLID(ctx, dstName)
		if err != nil {
			return err
		}
		dlid = l
	}
	var cpi []byte
	if o.Command == SAClassPortInfo || qt == "ClassPortInfo" || qt == "SwitchInfoRecord" {
		r, err := q.s.SAQuery(ctx, mad.MethodGet, sa.ClassPortInfo(), 0, nil, q.co...)
		if err != nil {
			f := saFailure(err).(*SAError)
			f.Msg += "\nFailed to query SA:ClassPortInfo"
			return f
		}
		// A Get's answer is the attribute itself, whatever its
		// AttributeOffset says.
		cpi = r.Message[sa.HeaderSize:]
		q.res.capMask2 = binary.BigEndian.Uint32(cpi[4:8]) >> 5
	}
	switch o.Command {
	case SANodeRecords:
		return q.nodeRecords(ctx, requestedName, requestedLID, requestedGUID)
	case SAClassPortInfo:
		q.section("", "ClassPortInfo", [][]byte{cpi})
		return nil
	case SAIsSM:
		for i, c := range []struct {
			title string
			cap   uint32
		}{{"IsSM ports", 0x2}, {"\nIsSMdisabled ports", 0x400}} {
			mask, tmpl := isSMTemplate(c.cap)
			recs, err := q.getTable(ctx, sa.PortInfoRecord(), mask, tmpl, 1<<31)
			if err != nil {
				return err
			}
			q.section(c.title, "IsSMPort", recs)
			_ = i
		}
		return nil
	case SAMCGroups:
		recs, err := q.getTable(ctx, sa.MCMemberRecord(), 0, nil, 0)
		if err != nil {
			return err
		}
		q.section("", "MCGroup", recs)
		return nil
	case SAMCMembers:
		recs, err := q.getTable(ctx, sa.MCMemberRecord(), 0, nil, 0)
		if err != nil {
			return err
		}
		nrs, err := q.getTable(ctx, sa.NodeRecord(), 0, nil, 0)
		if err != nil {
			return err
		}
		q.res.nodeRecs = nrs
		q.section("", "MCMember", recs)
		return nil
	}
	p := saParams{o: o, slid: slid, dlid: dlid, numbPath: numbPath, sgid: sgid, dgid: dgid}
	return q.query(ctx, qt, args, &p, cpi)
}

// isSMTemplate is saquery -s's PortInfoRecord: the ports whose
// CapabilityMask has the bits of cap (with attribute modifier 1<<31,
// OpenSM's enhanced component mask).
func isSMTemplate(cap uint32) (uint64, []byte) {
	t := sa.NewPortInfoRecordTemplate()
	_ = t.Set("CapabilityMask", uint64(cap))
	return t.ComponentMask(), t.Bytes()
}

type saParams struct {
	o          *SAQueryOptions
	slid, dlid uint16
	numbPath   int
	sgid, dgid [16]byte
}

func (q *saQuerier) section(title, typ string, recs [][]byte) {
	sec := SASection{Title: title, Type: typ, Records: []SARecord{}}
	attrType := typ
	switch typ {
	case "NodeLID", "NodeGUID", "NodeName", "NodeDesc":
		attrType = "NodeRecord"
	case "MCGroup", "MCMember":
		attrType = "MCMemberRecord"
	case "IsSMPort":
		attrType = "PortInfoRecord"
	}
	for _, r := range recs {
		sec.Records = append(sec.Records, SARecord{Fields: saFields(saAttrs[attrType], r), raw: r})
	}
	q.res.Sections = append(q.res.Sections, sec)
}

// saFields decodes a record by its attribute's layout for JSON: numbers,
// or text where the layout formats the field (GIDs, descriptions). Keys
// (M_Key, SM_Key, ServiceKey) are never given.
func saFields(attr *sa.Attr, r []byte) map[string]any {
	m := map[string]any{}
	if attr == nil {
		return m
	}
	_ = attr.Layout.Each(r, func(f mad.Field, v uint64, raw []byte) {
		k := f.Key()
		if mad.IsKeyField(f.Name) || f.Name == "ServiceKey" {
			m[k] = "<not displayed>"
			return
		}
		switch {
		case f.Numeric() && f.Width == 64:
			m[k] = GUID(v) // 64-bit values as "0x..." strings, as GUIDs
		case f.Numeric():
			m[k] = v
		default:
			m[k] = f.Format(v, raw)
		}
	})
	return m
}

// getLID is saquery's get_lid: a name (starting with a letter) is looked
// up in the SA's NodeRecords by description, else the argument is a LID.
func (q *saQuerier) getLID(ctx context.Context, name string) (uint16, error) {
	if name == "" {
		return 0, nil
	}
	if c := name[0]; (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
		recs, err := q.getTable(ctx, sa.NodeRecord(), 0, nil, 0)
		if err != nil {
			return 0, err
		}
		for _, r := range recs {
			if len(r) >= 108 && strncmp64(name, r[44:108]) {
				return binary.BigEndian.Uint16(r[0:2]), nil
			}
		}
		return 0, &SAError{Exit: errnoENONET, Msg: fmt.Sprintf("Failed to find lid for \"%s\": Machine is not on the network", name)}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(cNumberPrefix(name)), 0, 64)
	if err != nil || v <= 0 || v > 0xffff {
		return 0, &SAError{Exit: errnoEINVAL, Msg: fmt.Sprintf("Invalid lid specified: \"%s\"", name)}
	}
	return uint16(v), nil
}

// strncmp64 is strncmp(name, desc, 64) == 0 for a 64-byte description.
func strncmp64(name string, desc []byte) bool {
	d := cString(desc)
	if len(name) > 64 {
		name = name[:64]
	}
	return name == d
}

// cNumberPrefix is the leading part of s strtol reads (sign, 0x, digits).
func cNumberPrefix(s string) string {
	s = strings.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	hex := false
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		hex = true
		i += 2
	}
	j := i
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || hex && (s[j] >= 'a' && s[j] <= 'f' || s[j] >= 'A' && s[j] <= 'F')) {
		j++
	}
	if j == i {
		return "0"
	}
	return s[:j]
}

// parseCULong is strtoul(s, NULL, 0): the leading number, 0 when none.
func parseCULong(s string) (uint64, bool) {
	p := cNumberPrefix(s)
	neg := strings.HasPrefix(p, "-")
	p = strings.TrimLeft(p, "+-")
	v, err := strconv.ParseUint(p, 0, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func parseGID(s string) ([16]byte, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return [16]byte{}, fmt.Errorf("GID %q is not an IPv6-format address", s)
	}
	return a.As16(), nil
}

// lidAndPorts is parse_lid_and_ports: "lid/port1/port2", each part
// optional (-1 when absent or not a number).
func (q *saQuerier) lidAndPorts(ctx context.Context, s string) (lid uint16, p1, p2 int, err error) {
	p1, p2 = -1, -1
	parts := strings.SplitN(s, "/", 3)
	if lid, err = q.getLID(ctx, parts[0]); err != nil {
		return
	}
	num := func(t string) int {
		p := cNumberPrefix(t)
		if p == "0" && !strings.HasPrefix(strings.TrimLeft(t, " \t+-"), "0") {
			return -1
		}
		v, _ := parseCULong(t)
		return int(int32(uint32(v)))
	}
	if len(parts) > 1 {
		p1 = num(parts[1])
	}
	if len(parts) > 2 {
		p2 = num(parts[2])
	}
	return
}

func (q *saQuerier) nodeRecords(ctx context.Context, name string, lid uint16, guid uint64) error {
	o := q.o
	recs, err := q.getTable(ctx, sa.NodeRecord(), 0, nil, 0)
	if err != nil {
		return err
	}
	typ := map[SANodePrint]string{SANodeLIDOnly: "NodeLID", SANodeUniqueLID: "NodeLID", SANodeGUIDOnly: "NodeGUID",
		SANodeNameOfLID: "NodeName", SANodeNameOfGUID: "NodeName", SANodeAllDesc: "NodeDesc"}[o.NodePrint]
	if typ == "" {
		typ = "NodeRecord"
	}
	var out [][]byte
	for _, r := range recs {
		if len(r) < 108 {
			continue
		}
		switch o.NodePrint {
		case SANodeAllDesc:
			if r[4+2] == 1 { // CAs only
				out = append(out, r)
			}
		case SANodeNameOfLID:
			if binary.BigEndian.Uint16(r[0:2]) == lid {
				out = append(out, r)
			}
		case SANodeNameOfGUID:
			if binary.BigEndian.Uint64(r[4+20:4+28]) == guid {
				out = append(out, r)
			}
		default:
			desc := r[44:108]
			mapped := remapName(q.res.names, binary.BigEndian.Uint64(r[4+12:4+20]), cString(desc))
			if name == "" || strncmp64(name, desc) || strncmp64(name, []byte(mapped)) {
				out = append(out, r)
				if o.NodePrint == SANodeUniqueLID {
					q.section("", typ, out)
					return nil
				}
			}
		}
	}
	title := ""
	if o.NodePrint == SANodeAllDesc {
		title = "   LID \"name\"\n================"
	}
	q.section(title, typ, out)
	return nil
}

// given reports whether an option saquery leaves at -1 when unset was
// given, compared at the width of its field as saquery's
// CHECK_AND_SET_VAL compares it (int8, int16, int32): 255 is "unset"
// for an 8-bit field.
func given(v int, width int) bool { return uint64(uint32(v))&(1<<width-1) != 1<<width-1 }

// saSelectors are the rows of the numbers after the LID of a "lid/a/b"
// selector, as saquery's query handlers set them (MFTRecord's position
// and block: see selectorTemplate).
var saSelectors = map[string][2]string{
	"PortInfoRecord":           {"PortNum", "Options"},
	"SL2VLTableRecord":         {"InputPortNum", "OutputPortNum"},
	"VLArbitrationTableRecord": {"OutputPortNum", "BlockNum"},
	"PKeyTableRecord":          {"PortNum", "BlockNum"},
	"LFTRecord":                {"BlockNum"},
	"GUIDInfoRecord":           {"BlockNum"},
	"LinkRecord":               {"FromPort"},
}

// saArgs is what a record query's positional arguments select, resolved:
// "lid/a/b" (p1, p2 -1 when absent), LinkRecord's second "to_lid/to_port",
// InformInfoRecord's SubscriberGID.
type saArgs struct {
	lid    uint16
	p1, p2 int
	toLID  uint16
	toPort int
	to     bool
	gid    [16]byte
	hasGID bool
}

// query runs one record query with its selectors, as saquery's query_*
// handlers build them.
func (q *saQuerier) query(ctx context.Context, qt string, args []string, p *saParams, cpi []byte) error {
	if qt == "ClassPortInfo" {
		q.section("", "ClassPortInfo", [][]byte{cpi})
		return nil
	}
	a := saArgs{p1: -1, p2: -1, toPort: -1}
	switch qt {
	case "ServiceRecord", "PathRecord", "MCMemberRecord":
		// no positional selector
	case "InformInfoRecord":
		if len(args) > 0 {
			g, err := parseGID(args[0])
			if err != nil {
				return &SAError{Exit: errnoEINVAL, Msg: fmt.Sprintf("Invalid SubscriberGID specified: \"%s\"", args[0])}
			}
			a.gid, a.hasGID = g, true
		}
	default:
		if len(args) > 0 {
			var err error
			if a.lid, a.p1, a.p2, err = q.lidAndPorts(ctx, args[0]); err != nil {
				return err
			}
		}
		if qt == "LinkRecord" && len(args) > 1 {
			tl, tp, _, err := q.lidAndPorts(ctx, args[1])
			if err != nil {
				return err
			}
			a.toLID, a.toPort, a.to = tl, tp, true
		}
	}
	mask, tmpl := saTemplate(qt, &a, p)
	recs, err := q.getTable(ctx, saAttrs[qt], mask, tmpl, 0)
	if err != nil {
		return err
	}
	q.section("", qt, recs)
	return nil
}

// saTemplate is the template and component mask of a record query, as
// saquery's query_* handlers build them.
func saTemplate(qt string, a *saArgs, p *saParams) (uint64, []byte) {
	var t *sa.Template
	switch qt {
	case "PathRecord":
		t = &pathRecordTemplate(p).Template
	case "MCMemberRecord":
		t = &mcMemberTemplate(p.o).Template
	default:
		t = selectorTemplate(qt, a)
	}
	return t.ComponentMask(), t.Bytes()
}

// selectorTemplate is the template of a query with positional selectors:
// "lid/a/b" (every such record starts with its LID), LinkRecord's
// "to_lid/to_port", InformInfoRecord's GID.
func selectorTemplate(qt string, a *saArgs) *sa.Template {
	t := sa.NewTemplate(saAttrs[qt])
	switch qt {
	case "ServiceRecord":
		return t // no positional selector
	case "InformInfoRecord":
		if a.hasGID {
			_ = t.SetBytes("SubscriberGID", a.gid[:])
		}
		return t
	}
	if a.lid != 0 {
		_ = t.Set(t.Attr().Layout.Fields[0].Name, uint64(a.lid))
	}
	// The two numbers after the LID ("lid/port/block"), where the
	// query's record has them: unset (-1 at the field's width, as
	// saquery's CHECK_AND_SET_VAL compares) leaves them out.
	for k, row := range saSelectors[qt] {
		if row == "" {
			continue
		}
		if f, _, _ := t.Attr().Field(row); given([2]int{a.p1, a.p2}[k], f.Width) {
			_ = t.Set(row, uint64([2]int{a.p1, a.p2}[k]))
		}
	}
	switch qt {
	case "MFTRecord":
		// Position and block: saquery packs them in one 16-bit word,
		// the block cut to its 9 bits.
		if int16(a.p2) != -1 {
			_ = t.Set("BlockNum", uint64(uint16(a.p2)&0x01ff))
		}
		if int8(a.p1) != -1 {
			_ = t.Set("Position", uint64(uint8(a.p1)))
		}
	case "LinkRecord":
		if a.to && a.toLID != 0 {
			_ = t.Set("ToLID", uint64(a.toLID))
		}
		if a.to && int8(a.toPort) != -1 {
			_ = t.Set("ToPort", uint64(uint8(a.toPort)))
		}
	}
	return t
}

// cWord is a member of saquery's C struct of a record that starts at the
// row named: saquery writes some whole (a PathRecord's hop_flow_raw,
// num_path_revers, an MCMemberRecord's scope_state), so a value wider
// than its row spills into the next rows as it does, and selects their
// components apart.
func cWord(attr *sa.Attr, row string, width int) mad.Field {
	f, _, _ := attr.Field(row)
	return mad.Field{Name: row, Bit: f.Bit, Width: width}
}

// pathRecordTemplate is query_path_records' template: the PathRecord
// selectors, as saquery's CHECK_AND_SET macros set them: a value given
// (non-zero) with its component bits (MTU, rate and packet lifetime
// carry their selector bit too).
func pathRecordTemplate(p *saParams) *sa.PathRecordTemplate {
	o := p.o
	t := sa.NewPathRecordTemplate()
	attr := t.Attr()
	if o.ServiceID != 0 {
		t.SetServiceID(o.ServiceID)
		t.SelectComponent(1) // ServiceID's second half
	}
	if p.sgid != ([16]byte{}) {
		t.SetSGID(p.sgid)
	}
	if p.dgid != ([16]byte{}) {
		t.SetDGID(p.dgid)
	}
	if p.slid != 0 {
		t.SetSLID(p.slid)
	}
	if p.dlid != 0 {
		t.SetDLID(p.dlid)
	}
	// hop_flow_raw: the hop limit's 32 bits, the flow label's low 8
	// above them.
	var hfr uint32
	if given(o.HopLimit, 32) {
		hfr = uint32(o.HopLimit)
		_ = t.Select("HopLimit")
	}
	if uint8(o.FlowLabel) != 0 {
		hfr |= uint32(uint8(o.FlowLabel)) << 8
		_ = t.Select("FlowLabel")
	}
	_ = t.Put(cWord(attr, "RawTraffic", 32), uint64(hfr))
	if o.TClass != 0 {
		t.SetTClass(o.TClass)
	}
	// num_path_revers: the number of paths' 8 bits, reversible on top.
	var npr uint8
	if given(p.numbPath, 8) {
		npr = uint8(p.numbPath)
		_ = t.Select("NumbPath")
	}
	if given(o.Reversible, 8) {
		npr |= uint8(o.Reversible) << 7
		_ = t.Select("Reversible")
	}
	_ = t.Put(cWord(attr, "Reversible", 8), uint64(npr))
	if o.PKey != 0 {
		t.SetPKey(o.PKey)
	}
	if given(o.SL, 16) {
		t.SetSL(uint8(o.SL))
	}
	if o.QoSClass != -1 {
		t.SetQoSClass(uint16(o.QoSClass))
	}
	// MTU, rate and packet lifetime: a byte each, the selector its top
	// two bits.
	if o.MTU != 0 {
		t.SetMTUSelector(o.MTU >> 6).SetMTU(o.MTU)
	}
	if o.Rate != 0 {
		t.SetRateSelector(o.Rate >> 6).SetRate(o.Rate)
	}
	if o.PktLife != 0 {
		t.SetPacketLifeTimeSelector(o.PktLife >> 6).SetPacketLifeTime(o.PktLife)
	}
	return t
}

// mcMemberTemplate is query_mcmember_records' template, as saquery's
// CHECK_AND_SET macros set it.
func mcMemberTemplate(o *SAQueryOptions) *sa.MCMemberRecordTemplate {
	t := sa.NewMCMemberRecordTemplate()
	if o.MGID != ([16]byte{}) {
		t.SetMGID(o.MGID)
	}
	if o.GID != ([16]byte{}) {
		t.SetPortGID(o.GID)
	}
	if o.MLID != 0 {
		t.SetMLID(o.MLID)
	}
	if o.QKey != 0 {
		t.SetQKey(o.QKey)
	}
	if o.MTU != 0 {
		t.SetMTUSelector(o.MTU >> 6).SetMTU(o.MTU)
	}
	if o.Rate != 0 {
		t.SetRateSelector(o.Rate >> 6).SetRate(o.Rate)
	}
	if o.PktLife != 0 {
		t.SetPacketLifeTimeSelector(o.PktLife >> 6).SetPacketLifeTime(o.PktLife)
	}
	if o.TClass != 0 {
		t.SetTClass(o.TClass)
	}
	if o.PKey != 0 {
		t.SetPKey(o.PKey)
	}
	if given(o.SL, 8) {
		t.SetSL(uint8(o.SL))
	}
	if uint8(o.FlowLabel) != 0 {
		t.SetFlowLabel(uint32(uint8(o.FlowLabel)))
	}
	if given(o.HopLimit, 8) {
		t.SetHopLimit(uint8(o.HopLimit))
	}
	// scope_state: the join state's 8 bits, the scope above them.
	if o.JoinState != 0 {
		_ = t.Select("JoinState")
	}
	if o.Scope != 0 {
		_ = t.Select("Scope")
	}
	_ = t.Put(cWord(t.Attr(), "Scope", 8), uint64(o.JoinState|o.Scope<<4))
	if given(o.ProxyJoin, 8) {
		// saquery sets the byte's low bit (a C bit-field), not the row's.
		_ = t.Put(cWord(t.Attr(), "ProxyJoin", 8), uint64(uint8(o.ProxyJoin)&1))
		_ = t.Select("ProxyJoin")
	}
	return t
}

// inetNtop6 is glibc's inet_ntop(AF_INET6) of a 16-byte GID (GIDString).
func inetNtop6(b []byte) string { return GIDString(be64(b[0:8]), be64(b[8:16])) }

const notDisplayed = "<not displayed>"

// WriteSAQuery prints a result as saquery prints it on stdout.
func WriteSAQuery(w io.Writer, r *SAResult) error {
	bw := bufio.NewWriter(w)
	for _, sec := range r.Sections {
		if sec.Title != "" {
			bw.WriteString(sec.Title + "\n")
		}
		for _, rec := range sec.Records {
			r.writeRecord(bw, sec.Type, rec.raw)
		}
	}
	return bw.Flush()
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

var saNodeTypes = [...]string{"UNKNOWN", "Channel Adapter", "Switch", "Router"}

func (r *SAResult) name(guid uint64, desc []byte) string {
	return remapName(r.names, guid, cString(desc))
}

func (r *SAResult) writeRecord(w *bufio.Writer, typ string, b []byte) {
	pad := func(n int) []byte { // records shorter than their C struct read as zeros
		if len(b) < n {
			b = append(append([]byte(nil), b...), make([]byte, n-len(b))...)
		}
		return b
	}
	switch typ {
	case "NodeRecord", "NodeLID", "NodeGUID", "NodeName", "NodeDesc":
		b = pad(108)
		ni := b[4:44]
		name := r.name(be64(ni[12:20]), b[44:108])
		switch typ {
		case "NodeLID":
			fmt.Fprintf(w, "%d\n", be16(b[0:2]))
			return
		case "NodeGUID":
			fmt.Fprintf(w, "0x%016x\n", be64(ni[20:28]))
			return
		case "NodeName":
			fmt.Fprintf(w, "%s\n", name)
			return
		case "NodeDesc":
			fmt.Fprintf(w, "%6d  \"%s\"\n", be16(b[0:2]), name)
			return
		}
		nt := ni[2]
		if nt > 3 {
			nt = 0
		}
		fmt.Fprintf(w, "NodeRecord dump:\n"+
			"\t\tlid.....................%d\n"+
			"\t\treserved................0x%X\n"+
			"\t\tbase_version............0x%X\n"+
			"\t\tclass_version...........0x%X\n"+
			"\t\tnode_type...............%s\n"+
			"\t\tnum_ports...............%d\n"+
			"\t\tsys_guid................0x%016x\n"+
			"\t\tnode_guid...............0x%016x\n"+
			"\t\tport_guid...............0x%016x\n"+
			"\t\tpartition_cap...........0x%X\n"+
			"\t\tdevice_id...............0x%X\n"+
			"\t\trevision................0x%X\n"+
			"\t\tport_num................%d\n"+
			"\t\tvendor_id...............0x%X\n"+
			"\t\tNodeDescription.........%s\n",
			be16(b[0:2]), be16(b[2:4]), ni[0], ni[1], saNodeTypes[nt], ni[3],
			be64(ni[4:12]), be64(ni[12:20]), be64(ni[20:28]), be16(ni[28:30]), be16(ni[30:32]), be32(ni[32:36]),
			ni[36], be32(ni[36:40])&0xffffff, name)
	case "PathRecord":
		b = pad(64)
		fmt.Fprintf(w, "PathRecord dump:\n"+
			"\t\tservice_id..............0x%016x\n"+
			"\t\tdgid....................%s\n"+
			"\t\tsgid....................%s\n"+
			"\t\tdlid....................%d\n"+
			"\t\tslid....................%d\n"+
			"\t\thop_flow_raw............0x%X\n"+
			"\t\ttclass..................0x%X\n"+
			"\t\tnum_path_revers.........0x%X\n"+
			"\t\tpkey....................0x%X\n"+
			"\t\tqos_class...............0x%X\n"+
			"\t\tsl......................0x%X\n"+
			"\t\tmtu.....................0x%X\n"+
			"\t\trate....................0x%X\n"+
			"\t\tpkt_life................0x%X\n"+
			"\t\tpreference..............0x%X\n"+
			"\t\tresv2...................0x%02X%02X%02X%02X%02X%02X\n",
			be64(b[0:8]), inetNtop6(b[8:24]), inetNtop6(b[24:40]), be16(b[40:42]), be16(b[42:44]),
			be32(b[44:48]), b[48], b[49], be16(b[50:52]), be16(b[52:54])>>4, be16(b[52:54])&0xf,
			b[54], b[55], b[56], b[57], b[58], b[59], b[60], b[61], b[62], b[63])
	case "ClassPortInfo":
		b = pad(72)
		fmt.Fprintf(w, "SA ClassPortInfo:\n"+
			"\t\tBase version.............%d\n"+
			"\t\tClass version............%d\n"+
			"\t\tCapability mask..........0x%04X\n"+
			"\t\tCapability mask 2........0x%08X\n"+
			"\t\tResponse time value......0x%02X\n"+
			"\t\tRedirect GID.............%s\n"+
			"\t\tRedirect TC/SL/FL........0x%08X\n"+
			"\t\tRedirect LID.............%d\n"+
			"\t\tRedirect PKey............0x%04X\n"+
			"\t\tRedirect QP..............0x%08X\n"+
			"\t\tRedirect QKey............0x%08X\n"+
			"\t\tTrap GID.................%s\n"+
			"\t\tTrap TC/SL/FL............0x%08X\n"+
			"\t\tTrap LID.................%d\n"+
			"\t\tTrap PKey................0x%04X\n"+
			"\t\tTrap HL/QP...............0x%08X\n"+
			"\t\tTrap QKey................0x%08X\n",
			b[0], b[1], be16(b[2:4]), be32(b[4:8])>>5, be32(b[4:8])&0x1f, inetNtop6(b[8:24]),
			be32(b[24:28]), be16(b[28:30]), be16(b[30:32]), be32(b[32:36]), be32(b[36:40]),
			inetNtop6(b[40:56]), be32(b[56:60]), be16(b[60:62]), be16(b[62:64]), be32(b[64:68]), be32(b[68:72]))
	case "IsSMPort":
		b = pad(68)
		pi := b[4:]
		fmt.Fprintf(w, "PortInfoRecord dump:\n"+
			"\t\tEndPortLid..............%d\n"+
			"\t\tPortNum.................%d\n"+
			"\t\tbase_lid................%d\n"+
			"\t\tmaster_sm_base_lid......%d\n"+
			"\t\tcapability_mask.........0x%X\n",
			be16(b[0:2]), b[2], be16(pi[16:18]), be16(pi[18:20]), be32(pi[20:24]))
	case "PortInfoRecord":
		b = pad(68)
		fmt.Fprintf(w, "PortInfoRecord dump:\n"+
			"\tRID\n"+
			"\t\tEndPortLid..............%d\n"+
			"\t\tPortNum.................%d\n"+
			"\t\tOptions.................0x%x\n"+
			"\tPortInfo dump:\n",
			be16(b[0:2]), b[2], b[3])
		// dump_portinfo(pi, 2): smpquery portinfo's fields, each after
		// two tabs (a value's own continuation lines get none), M_Key
		// not displayed.
		var fb strings.Builder
		dotLine(&fb, "Mkey", notDisplayed)
		w.WriteString("\t\t" + fb.String())
		for _, f := range portInfoFields {
			fb.Reset()
			dotLine(&fb, f.name, f.text(b[4:68]))
			w.WriteString("\t\t" + fb.String())
		}
	case "MCMemberRecord":
		b = pad(52)
		sfh := be32(b[44:48])
		fmt.Fprintf(w, "MCMember Record dump:\n"+
			"\t\tMGID....................%s\n"+
			"\t\tPortGid.................%s\n"+
			"\t\tqkey....................0x%x\n"+
			"\t\tmlid....................0x%x\n"+
			"\t\tmtu.....................0x%x\n"+
			"\t\tTClass..................0x%x\n"+
			"\t\tpkey....................0x%x\n"+
			"\t\trate....................0x%x\n"+
			"\t\tpkt_life................0x%x\n"+
			"\t\tSL......................0x%x\n"+
			"\t\tFlowLabel...............0x%x\n"+
			"\t\tHopLimit................0x%x\n"+
			"\t\tScope...................0x%x\n"+
			"\t\tJoinState...............0x%x\n"+
			"\t\tProxyJoin...............0x%x\n",
			inetNtop6(b[0:16]), inetNtop6(b[16:32]), be32(b[32:36]), be16(b[36:38]), b[38], b[39],
			be16(b[40:42]), b[42], b[43], sfh>>28&0xf, sfh>>8&0xfffff, sfh&0xff, b[48]>>4, b[48]&0xf, b[49]&1)
	case "MCGroup":
		b = pad(52)
		fmt.Fprintf(w, "MCMemberRecord group dump:\n"+
			"\t\tMGID....................%s\n"+
			"\t\tMlid....................0x%X\n"+
			"\t\tMtu.....................0x%X\n"+
			"\t\tpkey....................0x%X\n"+
			"\t\tRate....................0x%X\n"+
			"\t\tSL......................0x%X\n",
			inetNtop6(b[0:16]), be16(b[36:38]), b[38], be16(b[40:42]), b[42], be32(b[44:48])>>28&0xf)
	case "MCMember":
		b = pad(52)
		node := "<unknown>"
		for _, nr := range r.nodeRecs {
			if len(nr) >= 108 && be64(nr[4+20:4+28]) == be64(b[24:32]) {
				node = r.name(be64(nr[4+12:4+20]), nr[44:108])
				break
			}
		}
		if r.requested != "" {
			// strtol(name) == mlid: the whole value, not its low bits.
			if v, _ := parseCULong(r.requested); v == uint64(be16(b[36:38])) {
				fmt.Fprintf(w, "\t\tPortGid.................%s (%s)\n", inetNtop6(b[16:32]), node)
			}
			return
		}
		fmt.Fprintf(w, "MCMemberRecord member dump:\n"+
			"\t\tMGID....................%s\n"+
			"\t\tMlid....................0x%X\n"+
			"\t\tPortGid.................%s\n"+
			"\t\tScopeState..............0x%X\n"+
			"\t\tProxyJoin...............0x%X\n"+
			"\t\tNodeDescription.........%s\n",
			inetNtop6(b[0:16]), be16(b[36:38]), inetNtop6(b[16:32]), b[48], b[49]&1, node)
	case "ServiceRecord":
		b = pad(176)
		key := notDisplayed // saquery without -K; ibscript never shows a key
		fmt.Fprintf(w, "ServiceRecord dump:\n"+
			"\t\tServiceID...............0x%016x\n"+
			"\t\tServiceGID..............%s\n"+
			"\t\tServiceP_Key............0x%X\n"+
			"\t\tServiceLease............0x%X\n"+
			"\t\tServiceKey..............%s\n"+
			"\t\tServiceName.............%s\n",
			be64(b[0:8]), inetNtop6(b[8:24]), be16(b[24:26]), be32(b[28:32]), key, cString(b[48:112]))
		for i := range 16 {
			fmt.Fprintf(w, "\t\tServiceData8.%d%s0x%X\n", i+1, dots(24-len("ServiceData8.")-len(strconv.Itoa(i+1))), b[112+i])
		}
		for i := range 8 {
			fmt.Fprintf(w, "\t\tServiceData16.%d.........0x%X\n", i+1, be16(b[128+2*i:]))
		}
		for i := range 4 {
			fmt.Fprintf(w, "\t\tServiceData32.%d.........0x%X\n", i+1, be32(b[144+4*i:]))
		}
		for i := range 2 {
			fmt.Fprintf(w, "\t\tServiceData64.%d.........0x%016x\n", i+1, be64(b[160+8*i:]))
		}
	case "SMInfoRecord":
		b = pad(25)
		// saquery prints the SM_Key the SA returns (0 unless the request
		// carried the right one); ibscript never prints a key.
		smkey := fmt.Sprintf("0x%016x", be64(b[12:20]))
		if be64(b[12:20]) != 0 {
			smkey = notDisplayed
		}
		fmt.Fprintf(w, "SMInfoRecord dump:\n"+
			"\t\tRID\n"+
			"\t\tLID...................%d\n"+
			"\t\tSMInfo dump:\n"+
			"\t\tGUID..................0x%016x\n"+
			"\t\tSM_Key................%s\n"+
			"\t\tActCount..............%d\n"+
			"\t\tPriority..............%d\n"+
			"\t\tSMState...............%d\n",
			be16(b[0:2]), be64(b[4:12]), smkey, be32(b[20:24]), b[24]>>4, b[24]&0xf)
	case "SwitchInfoRecord":
		b = pad(24)
		fmt.Fprintf(w, "SwitchInfoRecord dump:\n"+
			"\t\tRID\n"+
			"\t\tLID.....................................%d\n"+
			"\t\tSwitchInfo dump:\n"+
			"\t\tLinearFDBCap............................0x%X\n"+
			"\t\tRandomFDBCap............................0x%X\n"+
			"\t\tMulticastFDBCap.........................0x%X\n"+
			"\t\tLinearFDBTop............................0x%X\n"+
			"\t\tDefaultPort.............................%d\n"+
			"\t\tDefaultMulticastPrimaryPort.............%d\n"+
			"\t\tDefaultMulticastNotPrimaryPort..........%d\n"+
			"\t\tLifeTimeValue/PortStateChange/OpSL2VL...0x%X\n"+
			"\t\tLIDsPerPort.............................0x%X\n"+
			"\t\tPartitionEnforcementCap.................0x%X\n"+
			"\t\tflags...................................0x%X\n",
			be16(b[0:2]), be16(b[4:6]), be16(b[6:8]), be16(b[8:10]), be16(b[10:12]), b[12], b[13], b[14], b[15],
			be16(b[16:18]), be16(b[18:20]), b[20])
		if r.capMask2&(1<<3) != 0 {
			fmt.Fprintf(w, "\t\tMulticastFDBTop.........................0x%X\n", be16(b[22:24]))
		}
	case "InformInfoRecord":
		b = pad(60)
		ii := b[24:60]
		qr := be32(ii[28:32])
		fmt.Fprintf(w, "InformInfoRecord dump:\n"+
			"\t\tRID\n"+
			"\t\tSubscriberGID...........%s\n"+
			"\t\tSubscriberEnum..........0x%X\n"+
			"\t\tInformInfo dump:\n"+
			"\t\tgid.....................%s\n"+
			"\t\tlid_range_begin.........%d\n"+
			"\t\tlid_range_end...........%d\n"+
			"\t\tis_generic..............0x%X\n"+
			"\t\tsubscribe...............0x%X\n"+
			"\t\ttrap_type...............0x%X\n",
			inetNtop6(b[0:16]), be16(b[16:18]), inetNtop6(ii[0:16]), be16(ii[16:18]), be16(ii[18:20]), ii[22], ii[23], be16(ii[24:26]))
		if ii[22] != 0 {
			fmt.Fprintf(w, "\t\ttrap_num................%d\n", be16(ii[26:28]))
		} else {
			fmt.Fprintf(w, "\t\tdev_id..................0x%X\n", be16(ii[26:28]))
		}
		// saquery shows the QPN only with -K.
		w.WriteString("\t\tqpn....................." + notDisplayed + "\n")
		prod := uint32(ii[33])<<16 | uint32(be16(ii[34:36]))
		if ii[22] != 0 {
			fmt.Fprintf(w, "\t\tresp_time_val...........0x%X\n\t\tnode_type...............0x%06X\n", qr&0x1f, prod)
		} else {
			fmt.Fprintf(w, "\t\tresp_time_val...........0x%X\n\t\tvendor_id...............0x%06X\n", qr&0x1f, prod)
		}
	case "LinkRecord":
		b = pad(6)
		fmt.Fprintf(w, "LinkRecord dump:\n"+
			"\t\tFromLID....................%d\n"+
			"\t\tFromPort...................%d\n"+
			"\t\tToPort.....................%d\n"+
			"\t\tToLID......................%d\n",
			be16(b[0:2]), b[2], b[3], be16(b[4:6]))
	case "SL2VLTableRecord":
		b = pad(16)
		fmt.Fprintf(w, "SL2VLTableRecord dump:\n"+
			"\t\tLID........................%d\n"+
			"\t\tInPort.....................%d\n"+
			"\t\tOutPort....................%d\n"+
			"\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n"+
			"\t\tVL:", be16(b[0:2]), b[2], b[3])
		for sl := range 16 {
			fmt.Fprintf(w, "%2d|", b[8+sl/2]>>(4*(1-sl%2))&0xf)
		}
		w.WriteString("\n")
	case "VLArbitrationTableRecord":
		b = pad(72)
		fmt.Fprintf(w, "VLArbTableRecord dump:\n"+
			"\t\tLID........................%d\n"+
			"\t\tPort.......................%d\n"+
			"\t\tBlock......................%d\n", be16(b[0:2]), b[2], b[3])
		for i := 0; i < 32; i += 16 {
			w.WriteString("\t\tVL    :")
			for k := range 16 {
				fmt.Fprintf(w, "%2d|", b[8+2*(i+k)]&0xf)
			}
			w.WriteString("\n\t\tWeight:")
			for k := range 16 {
				fmt.Fprintf(w, "%2d|", b[8+2*(i+k)+1])
			}
			w.WriteString("\n")
		}
	case "PKeyTableRecord":
		b = pad(72)
		// saquery prints the block number without converting it from
		// network order.
		fmt.Fprintf(w, "PKeyTableRecord dump:\n"+
			"\t\tLID........................%d\n"+
			"\t\tPort.......................%d\n"+
			"\t\tBlock......................%d\n"+
			"\t\tPKey Table:\n", be16(b[0:2]), b[4], binary.LittleEndian.Uint16(b[2:4]))
		for i := 0; i < 32; i += 8 {
			w.WriteString("\t\t")
			for k := range 8 {
				if k > 0 {
					w.WriteByte(' ')
				}
				fmt.Fprintf(w, "0x%04x", be16(b[8+2*(i+k):]))
			}
			w.WriteString("\n")
		}
		w.WriteString("\n")
	case "LFTRecord":
		b = pad(72)
		block := int(be16(b[2:4]))
		fmt.Fprintf(w, "LFT Record dump:\n"+
			"\t\tLID........................%d\n"+
			"\t\tBlock......................%d\n"+
			"\t\tLFT:\n\t\tLID\tPort Number\n", be16(b[0:2]), block)
		for i := range 64 {
			fmt.Fprintf(w, "\t\t%d\t%d\n", block*64+i, b[8+i])
		}
		w.WriteString("\n")
	case "GUIDInfoRecord":
		b = pad(72)
		fmt.Fprintf(w, "GUIDInfo Record dump:\n"+
			"\t\tLID........................%d\n"+
			"\t\tBlock......................%d\n", be16(b[0:2]), b[2])
		for i := range 8 {
			fmt.Fprintf(w, "\t\tGUID %d.....................0x%016x\n", i, be64(b[8+8*i:]))
		}
	case "MFTRecord":
		b = pad(72)
		pbn := be16(b[2:4])
		block := int(pbn & 0x01ff)
		fmt.Fprintf(w, "MFT Record dump:\n"+
			"\t\tLID........................%d\n"+
			"\t\tPosition...................%d\n"+
			"\t\tBlock......................%d\n"+
			"\t\tMFT:\n\t\tMLID\tPort Mask\n", be16(b[0:2]), pbn>>12, block)
		for i := range 32 {
			fmt.Fprintf(w, "\t\t0x%04x\t0x%04x\n", 0xc000+block*32+i, be16(b[8+2*i:]))
		}
		w.WriteString("\n")
	}
}

func dots(n int) string { return strings.Repeat(".", max(n, 0)) }
