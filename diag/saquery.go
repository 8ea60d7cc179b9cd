package diag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
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
func SAQueryNames() []SAQueryName {
	out := make([]SAQueryName, len(saKinds))
	for i, k := range saKinds {
		out[i] = k.SAQueryName
	}
	return out
}

// findSAQuery is saquery's find_query: a name or alias, any case.
func findSAQuery(name string) (string, bool) {
	for _, q := range saKinds {
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
	showKeys  bool   // -K
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
	q := &saQuerier{s: e.Session, o: o, res: &SAResult{names: e.NodeNames, showKeys: o.ShowKeys}}
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
	qt, args, p, err := q.parse()
	if err != nil {
		return err
	}
	sel, err := q.requested(args)
	if err != nil {
		return err
	}
	// saquery's sa_get_handle: a port that knows no SM (MasterSMLID 0:
	// no SM reached it) is a panic before any query, status 255.
	if pa := q.s.Port(); pa.SMLID == 0 {
		return &SAError{Exit: 255, Msg: fmt.Sprintf("No SM/SA found on port %d (its MasterSMLID is 0): Failed to bind to the SA", pa.PortNum)}
	}
	if p.srcName != "" {
		if p.slid, err = q.getLID(ctx, p.srcName); err != nil {
			return err
		}
	}
	if p.dstName != "" {
		if p.dlid, err = q.getLID(ctx, p.dstName); err != nil {
			return err
		}
	}
	var cpi []byte
	if o.Command == SAClassPortInfo || qt == "ClassPortInfo" || qt == "SwitchInfoRecord" {
		if cpi, err = q.classPortInfo(ctx); err != nil {
			return err
		}
	}
	if o.Command == SAQueryRecords {
		return q.query(ctx, qt, args, p, cpi)
	}
	return q.command(ctx, sel, cpi)
}

// parse reads the query type, its arguments and the PathRecord
// parameters from the options, as saquery's main does.
func (q *saQuerier) parse() (string, []string, *saParams, error) {
	o := q.o
	args := o.Args
	qt := o.QueryType
	p := &saParams{o: o, slid: o.SLID, dlid: o.DLID, numbPath: o.NumbPath, sgid: o.SGID, dgid: o.DGID}
	if o.SrcToDst != "" {
		var ok bool
		p.srcName, p.dstName, ok = strings.Cut(o.SrcToDst, ":")
		if !ok {
			return "", nil, nil, &SAError{Exit: 2, Msg: fmt.Sprintf("--src-to-dst %q: want src:dst", o.SrcToDst)}
		}
		p.numbPath, qt = 0x7f, "PathRecord"
	}
	if o.SGIDToDGID != "" {
		a, b, ok := strings.Cut(o.SGIDToDGID, "-")
		ga, ea := parseGID(a)
		gb, eb := parseGID(b)
		if !ok || ea != nil || eb != nil {
			return "", nil, nil, &SAError{Exit: 2, Msg: fmt.Sprintf("--sgid-to-dgid %q: want sgid-dgid, two IPv6-format GIDs", o.SGIDToDGID)}
		}
		p.sgid, p.dgid, p.numbPath, qt = ga, gb, 0x7f, "PathRecord"
	}
	if qt != "" {
		name, ok := findSAQuery(qt)
		if !ok {
			return "", nil, nil, &SAError{Exit: errnoEINVAL, Msg: fmt.Sprintf("Unknown query type %s", qt)}
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
	return qt, args, p, nil
}

// saNodeSel is the node saquery's -L, -l, -G, -O, -U ask about.
type saNodeSel struct {
	name string
	lid  uint16
	guid uint64
}

// requested reads the node the node options ask about from the first
// argument, with saquery's errors when it is missing.
func (q *saQuerier) requested(args []string) (saNodeSel, error) {
	o := q.o
	var sel saNodeSel
	haveLID, haveGUID := false, false
	if len(args) > 0 {
		switch o.NodePrint {
		case SANodeNameOfLID:
			v, _ := parseCULong(args[0])
			sel.lid, haveLID = uint16(v), true
		case SANodeNameOfGUID:
			sel.guid, _ = parseCULong(args[0])
			haveGUID = true
		default:
			sel.name = args[0]
		}
	}
	q.res.requested = sel.name
	switch {
	case (o.NodePrint == SANodeLIDOnly || o.NodePrint == SANodeUniqueLID || o.NodePrint == SANodeGUIDOnly) && sel.name == "":
		return sel, &SAError{Exit: 2, Msg: "ERROR: name not specified"}
	case o.NodePrint == SANodeNameOfLID && !haveLID:
		return sel, &SAError{Exit: 2, Msg: "ERROR: lid not specified"}
	case o.NodePrint == SANodeNameOfGUID && !haveGUID:
		return sel, &SAError{Exit: 2, Msg: "ERROR: guid not specified"}
	case o.NodePrint == SANodeNameOfLID && sel.lid == 0:
		return sel, &SAError{Exit: 2, Msg: "ERROR: lid invalid"}
	}
	return sel, nil
}

// classPortInfo is the SA's ClassPortInfo (a Get); its CapabilityMask2
// decides what SwitchInfoRecords print.
func (q *saQuerier) classPortInfo(ctx context.Context) ([]byte, error) {
	r, err := q.s.SAQuery(ctx, mad.MethodGet, sa.ClassPortInfo(), 0, nil, q.co...)
	if err != nil {
		f := saFailure(err).(*SAError)
		f.Msg += "\nFailed to query SA:ClassPortInfo"
		return nil, f
	}
	// A Get's answer is the attribute itself, whatever its
	// AttributeOffset says.
	cpi := r.Message[sa.HeaderSize:]
	q.res.capMask2 = uint32(saRec{sa.ClassPortInfo(), cpi}.u("CapabilityMask2"))
	return cpi, nil
}

// command runs saquery's commands other than a record query: -N and
// its node print forms, -c, -s, -g, -m.
func (q *saQuerier) command(ctx context.Context, sel saNodeSel, cpi []byte) error {
	switch q.o.Command {
	case SANodeRecords:
		return q.nodeRecords(ctx, sel.name, sel.lid, sel.guid)
	case SAClassPortInfo:
		q.section("", "ClassPortInfo", [][]byte{cpi})
		return nil
	case SAIsSM:
		for _, c := range []struct {
			title string
			cap   uint32
		}{{"IsSM ports", 0x2}, {"\nIsSMdisabled ports", 0x400}} {
			mask, tmpl := isSMTemplate(c.cap)
			recs, err := q.getTable(ctx, sa.PortInfoRecord(), mask, tmpl, 1<<31)
			if err != nil {
				return err
			}
			q.section(c.title, "IsSMPort", recs)
		}
		return nil
	}
	// -g, -m: the multicast groups (-m: and their members' nodes).
	recs, err := q.getTable(ctx, sa.MCMemberRecord(), 0, nil, 0)
	if err != nil {
		return err
	}
	if q.o.Command == SAMCGroups {
		q.section("", "MCGroup", recs)
		return nil
	}
	nrs, err := q.getTable(ctx, sa.NodeRecord(), 0, nil, 0)
	if err != nil {
		return err
	}
	q.res.nodeRecs = nrs
	q.section("", "MCMember", recs)
	return nil
}

// isSMTemplate is saquery -s's PortInfoRecord: the ports whose
// CapabilityMask has the bits of cap (with attribute modifier 1<<31,
// OpenSM's enhanced component mask).
func isSMTemplate(cap uint32) (uint64, []byte) {
	t := sa.NewPortInfoRecordTemplate()
	_ = t.Set("CapabilityMask", uint64(cap))
	return t.ComponentMask(), t.Bytes()
}

// saParams are a query's options with what --src-to-dst and
// --sgid-to-dgid give the PathRecord.
type saParams struct {
	o                *SAQueryOptions
	slid, dlid       uint16
	numbPath         int
	sgid, dgid       [16]byte
	srcName, dstName string // --src-to-dst's names, resolved into slid, dlid
}

func (q *saQuerier) section(title, typ string, recs [][]byte) {
	sec := SASection{Title: title, Type: typ, Records: []SARecord{}}
	var attr *sa.Attr
	if k, _ := saKindOf(typ); k != nil {
		attr = k.attr()
	}
	for _, r := range recs {
		sec.Records = append(sec.Records, SARecord{Fields: saFields(attr, r), raw: r})
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
			if nr := (saRec{sa.NodeRecord(), r}); len(r) >= nr.a.Layout.Size && strncmp64(name, nr.bytes("NodeDescription")) {
				return uint16(nr.u("LID")), nil
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

// lidAndPorts is parse_lid_and_ports: "lid/port1/port2", the ports
// optional (-1 when absent or not a number); an empty LID is invalid.
func (q *saQuerier) lidAndPorts(ctx context.Context, s string) (lid uint16, p1, p2 int, err error) {
	p1, p2 = -1, -1
	parts := strings.SplitN(s, "/", 3)
	if parts[0] == "" {
		// get_lid's name is "", not NULL ("/1", an empty argument):
		// strtol reads 0, an invalid LID.
		return 0, p1, p2, &SAError{Exit: errnoEINVAL, Msg: `Invalid lid specified: ""`}
	}
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
		nr := saRec{sa.NodeRecord(), r}
		if len(r) < nr.a.Layout.Size {
			continue
		}
		switch o.NodePrint {
		case SANodeAllDesc:
			if nr.u("NodeType") == 1 { // CAs only
				out = append(out, r)
			}
		case SANodeNameOfLID:
			if nr.u("LID") == uint64(lid) {
				out = append(out, r)
			}
		case SANodeNameOfGUID:
			if nr.u("PortGUID") == guid {
				out = append(out, r)
			}
		default:
			// remap_node_name cleans the record's own description in
			// place (clean_nodedesc: every byte isprint refuses a
			// space) when the map does not name the node, before
			// saquery compares the name with it: a description with a
			// tab, a control byte or UTF-8 is found by its cleaned text
			// alone (NR NAME's get_lid_from_name compares the raw one).
			desc := nr.bytes("NodeDescription")
			if _, named := q.res.names[nr.u("NodeGUID")]; !named {
				desc = []byte(cleanDesc(desc))
			}
			mapped := nr.name(q.res)
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
	k, _ := saKindOf(qt)
	if k.sel == selCPI {
		q.section("", qt, [][]byte{cpi})
		return nil
	}
	a := saArgs{p1: -1, p2: -1, toPort: -1}
	switch {
	case k.sel == selGID && len(args) > 0:
		g, err := parseGID(args[0])
		if err != nil {
			return &SAError{Exit: errnoEINVAL, Msg: fmt.Sprintf("Invalid SubscriberGID specified: \"%s\"", args[0])}
		}
		a.gid, a.hasGID = g, true
	case k.sel == selLID || k.sel == selLink:
		if len(args) > 0 {
			var err error
			if a.lid, a.p1, a.p2, err = q.lidAndPorts(ctx, args[0]); err != nil {
				return err
			}
		}
		if k.sel == selLink && len(args) > 1 {
			tl, tp, _, err := q.lidAndPorts(ctx, args[1])
			if err != nil {
				return err
			}
			a.toLID, a.toPort, a.to = tl, tp, true
		}
	}
	t := k.templateOf(&a, p)
	recs, err := q.getTable(ctx, t.Attr(), t.ComponentMask(), t.Bytes(), 0)
	if err != nil {
		return err
	}
	q.section("", qt, recs)
	return nil
}

// saTemplate is the template and component mask of query qt, as
// saquery's query_* handlers build them.
func saTemplate(qt string, a *saArgs, p *saParams) (uint64, []byte) {
	k, _ := saKindOf(qt)
	t := k.templateOf(a, p)
	return t.ComponentMask(), t.Bytes()
}

// templateOf is the kind's template for the selectors a and options p.
func (k *saKind) templateOf(a *saArgs, p *saParams) *sa.Template {
	if k.template != nil {
		return k.template(k, a, p)
	}
	return selectorTemplate(k, a, p)
}

// selectorTemplate is the template of a query with positional selectors:
// "lid/a/b" (every such record starts with its LID), LinkRecord's
// "to_lid/to_port", InformInfoRecord's GID.
func selectorTemplate(k *saKind, a *saArgs, _ *saParams) *sa.Template {
	t := sa.NewTemplate(k.attr())
	switch k.sel {
	case selNone, selCPI:
		return t
	case selGID:
		if a.hasGID {
			_ = t.SetBytes(t.Attr().Layout.Fields[0].Name, a.gid[:])
		}
		return t
	}
	if a.lid != 0 {
		_ = t.Set(t.Attr().Layout.Fields[0].Name, uint64(a.lid))
	}
	// The two numbers after the LID ("lid/port/block"), where the
	// query's record has them: unset (-1 at the field's width, as
	// saquery's CHECK_AND_SET_VAL compares) leaves them out.
	for i, row := range k.rows {
		v := [2]int{a.p1, a.p2}[i]
		if f, _, ok := t.Attr().Field(row); ok && given(v, f.Width) {
			_ = t.Set(row, uint64(v))
		}
	}
	if k.sel == selLink && a.to {
		if a.toLID != 0 {
			_ = t.Set("ToLID", uint64(a.toLID))
		}
		if int8(a.toPort) != -1 {
			_ = t.Set("ToPort", uint64(uint8(a.toPort)))
		}
	}
	return t
}

// mftTemplate is query_mft_records': the LID, then the position and
// block, which saquery packs in one 16-bit word, the block cut to its 9
// bits.
func mftTemplate(k *saKind, a *saArgs, p *saParams) *sa.Template {
	t := selectorTemplate(k, a, p)
	if int16(a.p2) != -1 {
		_ = t.Set("BlockNum", uint64(uint16(a.p2)&0x01ff))
	}
	if int8(a.p1) != -1 {
		_ = t.Set("Position", uint64(uint8(a.p1)))
	}
	return t
}

// cWord is a member of saquery's C struct of a record that starts at the
// row named: saquery writes some whole (a PathRecord's hop_flow_raw,
// num_path_revers, an MCMemberRecord's scope_state), so a value wider
// than its row spills into the next rows as it does, and selects their
// components apart.
func cWord(attr *sa.Attr, row string, width int) mad.Field {
	f, _ := attr.Span(row, width)
	return f
}

// pathRecordTemplate is query_path_records' template: the PathRecord
// selectors, as saquery's CHECK_AND_SET macros set them: a value given
// (non-zero) with its component bits (MTU, rate and packet lifetime
// carry their selector bit too).
func pathRecordTemplate(_ *saKind, _ *saArgs, p *saParams) *sa.Template {
	o := p.o
	t := sa.NewPathRecordTemplate()
	attr := t.Attr()
	if o.ServiceID != 0 {
		t.SetServiceID(o.ServiceID)
		t.SelectComponent(1) // ServiceID's second half
	}
	setGiven(&t.Template, []saGiven{{"SGID", 0, p.sgid}, {"DGID", 0, p.dgid}, {"SLID", uint64(p.slid), zeroGID},
		{"DLID", uint64(p.dlid), zeroGID}, {"TClass", uint64(o.TClass), zeroGID}, {"P_Key", uint64(o.PKey), zeroGID}})
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
	if given(o.SL, 16) {
		t.SetSL(uint8(o.SL))
	}
	if o.QoSClass != -1 {
		t.SetQoSClass(uint16(o.QoSClass))
	}
	selectorBytes(&t.Template, o)
	return &t.Template
}

// saGiven is a row saquery sets when its value is given (non-zero): a
// number, or a GID.
type saGiven struct {
	row string
	v   uint64
	gid [16]byte
}

var zeroGID [16]byte

// setGiven sets the rows given, as saquery's CHECK_AND_SET.
func setGiven(t *sa.Template, rows []saGiven) {
	for _, r := range rows {
		if r.gid != zeroGID {
			_ = t.SetBytes(r.row, r.gid[:])
		} else if r.v != 0 {
			_ = t.Set(r.row, r.v)
		}
	}
}

// selectorBytes sets the MTU, rate and packet lifetime of a PathRecord or
// MCMemberRecord as saquery does: a byte each, given when non-zero, the
// selector its top two bits; both rows' components selected.
func selectorBytes(t *sa.Template, o *SAQueryOptions) {
	for _, b := range []struct {
		row string
		v   uint8
	}{{"MTU", o.MTU}, {"Rate", o.Rate}, {"PacketLifeTime", o.PktLife}} {
		if b.v != 0 {
			_ = t.Set(b.row+"Selector", uint64(b.v>>6))
			_ = t.Set(b.row, uint64(b.v))
		}
	}
}

// mcMemberTemplate is query_mcmember_records' template, as saquery's
// CHECK_AND_SET macros set it.
func mcMemberTemplate(_ *saKind, _ *saArgs, p *saParams) *sa.Template {
	o := p.o
	t := sa.NewMCMemberRecordTemplate()
	setGiven(&t.Template, []saGiven{{"MGID", 0, o.MGID}, {"PortGID", 0, o.GID}, {"MLID", uint64(o.MLID), zeroGID},
		{"Q_Key", uint64(o.QKey), zeroGID}, {"TClass", uint64(o.TClass), zeroGID}, {"P_Key", uint64(o.PKey), zeroGID}})
	selectorBytes(&t.Template, o)
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
	return &t.Template
}

// inetNtop6 is glibc's inet_ntop(AF_INET6) of a 16-byte GID (GIDString).

const notDisplayed = "<not displayed>"

// key is a key's text as saquery prints it: shown with -K, else
// "<not displayed>".
func (r *SAResult) key(shown string) string {
	if r.showKeys {
		return shown
	}
	return notDisplayed
}

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

var saNodeTypes = [...]string{"UNKNOWN", "Channel Adapter", "Switch", "Router"}

func (r *SAResult) name(guid uint64, desc []byte) string {
	return remapName(r.names, guid, cString(desc))
}
