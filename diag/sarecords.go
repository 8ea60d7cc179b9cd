package diag

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
)

// saKind is one of saquery's queries: its name, alias and selector
// usage, its attribute, how its positional arguments select records, and
// how saquery prints them. Everything saquery does per record kind is its
// entry in saKinds: a new record is one entry and its print function,
// here.
type saKind struct {
	SAQueryName
	attr func() *sa.Attr
	sel  saSelForm
	// rows are the rows of the two numbers after the LID of a
	// "lid/a/b" selector (the LID is the record's first row), as
	// saquery's query handlers set them; "" for none.
	rows [2]string
	// size is saquery's C struct: a shorter record reads as zeros.
	size int
	// template builds the query's template; nil: selectorTemplate.
	template func(k *saKind, a *saArgs, p *saParams) *sa.Template
	print    saPrinter
	// forms are the other ways saquery prints the kind's records (-L,
	// -g, -s ...), by SASection.Type.
	forms map[string]saPrinter
}

// saPrinter prints one record (padded to its kind's size) as saquery.
type saPrinter func(res *SAResult, w *bufio.Writer, r saRec)

// saSelForm is how a query's positional arguments select records.
type saSelForm int

const (
	selLID  saSelForm = iota // [lid]/[a]/[b]
	selNone                  // no positional selector
	selLink                  // [from_lid]/[from_port] [to_lid]/[to_port]
	selGID                   // [subscriber_gid]
	selCPI                   // ClassPortInfo: a Get, no selector
)

// saKinds are saquery's queries, in its order.
var saKinds = []saKind{
	{SAQueryName{"ClassPortInfo", "CPI", ""}, sa.ClassPortInfo, selCPI, [2]string{}, 72, nil, saPrintClassPortInfo, nil},
	{SAQueryName{"NodeRecord", "NR", "[lid]"}, sa.NodeRecord, selLID, [2]string{}, 108, nil, saPrintNodeRecord,
		map[string]saPrinter{"NodeLID": saPrintNodeLID, "NodeGUID": saPrintNodeGUID, "NodeName": saPrintNodeName, "NodeDesc": saPrintNodeDesc}},
	{SAQueryName{"PortInfoRecord", "PIR", "[[lid]/[port]/[options]]"}, sa.PortInfoRecord, selLID, [2]string{"PortNum", "Options"}, 68, nil,
		saPrintPortInfoRecord, map[string]saPrinter{"IsSMPort": saPrintIsSMPort}},
	{SAQueryName{"SL2VLTableRecord", "SL2VL", "[[lid]/[in_port]/[out_port]]"}, sa.SLtoVLMappingTableRecord, selLID,
		[2]string{"InputPortNum", "OutputPortNum"}, 16, nil, saPrintSL2VLTableRecord, nil},
	{SAQueryName{"PKeyTableRecord", "PKTR", "[[lid]/[port]/[block]]"}, sa.PKeyTableRecord, selLID, [2]string{"PortNum", "BlockNum"}, 72, nil,
		saPrintPKeyTableRecord, nil},
	{SAQueryName{"VLArbitrationTableRecord", "VLAR", "[[lid]/[port]/[block]]"}, sa.VLArbitrationTableRecord, selLID,
		[2]string{"OutputPortNum", "BlockNum"}, 72, nil, saPrintVLArbitrationTableRecord, nil},
	{SAQueryName{"InformInfoRecord", "IIR", "[subscriber_gid]"}, sa.InformInfoRecord, selGID, [2]string{}, 60, nil, saPrintInformInfoRecord, nil},
	{SAQueryName{"LinkRecord", "LR", "[[from_lid]/[from_port]] [[to_lid]/[to_port]]"}, sa.LinkRecord, selLink, [2]string{"FromPort"}, 6, nil,
		saPrintLinkRecord, nil},
	{SAQueryName{"ServiceRecord", "SR", ""}, sa.ServiceRecord, selNone, [2]string{}, 176, nil, saPrintServiceRecord, nil},
	{SAQueryName{"PathRecord", "PR", ""}, sa.PathRecord, selNone, [2]string{}, 64, pathRecordTemplate, saPrintPathRecord, nil},
	{SAQueryName{"MCMemberRecord", "MCMR", ""}, sa.MCMemberRecord, selNone, [2]string{}, 52, mcMemberTemplate, saPrintMCMemberRecord,
		map[string]saPrinter{"MCGroup": saPrintMCGroup, "MCMember": saPrintMCMember}},
	{SAQueryName{"LFTRecord", "LFTR", "[[lid]/[block]]"}, sa.LinearForwardingTableRecord, selLID, [2]string{"BlockNum"}, 72, nil, saPrintLFTRecord, nil},
	{SAQueryName{"MFTRecord", "MFTR", "[[mlid]/[position]/[block]]"}, sa.MulticastForwardingTableRecord, selLID, [2]string{}, 72, mftTemplate, saPrintMFTRecord, nil},
	{SAQueryName{"GUIDInfoRecord", "GIR", "[[lid]/[block]]"}, sa.GUIDInfoRecord, selLID, [2]string{"BlockNum"}, 72, nil, saPrintGUIDInfoRecord, nil},
	{SAQueryName{"SwitchInfoRecord", "SWIR", "[lid]"}, sa.SwitchInfoRecord, selLID, [2]string{}, 24, nil, saPrintSwitchInfoRecord, nil},
	{SAQueryName{"SMInfoRecord", "SMIR", "[lid]"}, sa.SMInfoRecord, selLID, [2]string{}, 25, nil, saPrintSMInfoRecord, nil},
}

// saKindOf is the kind of a query name or of a section type (a record
// type or one of its print forms) and the printer of that type.
func saKindOf(typ string) (*saKind, saPrinter) {
	for i := range saKinds {
		k := &saKinds[i]
		if k.Name == typ {
			return k, k.print
		}
		if p, ok := k.forms[typ]; ok {
			return k, p
		}
	}
	return nil, nil
}

// writeRecord prints one record of a section of type typ as saquery.
func (r *SAResult) writeRecord(w *bufio.Writer, typ string, b []byte) {
	k, p := saKindOf(typ)
	if p == nil {
		return
	}
	// Records shorter than their C struct (or layout) read as zeros.
	if n := max(k.size, k.attr().Layout.Size); len(b) < n {
		b = append(append([]byte(nil), b...), make([]byte, n-len(b))...)
	}
	p(r, w, saRec{k.attr(), b})
}

// saRec is one record read through its attribute's layout: rows by their
// IBA names (a table's entries as the name and index, "Port3"), and the
// C struct members saquery prints whole by the row they start on (cWord).
// A name the layout lacks reads as zero (TestSAPrintsGolden holds what
// each printer prints).
type saRec struct {
	a *sa.Attr
	b []byte
}

// u is the numeric row name.
func (r saRec) u(name string) uint64 {
	f, _, _ := r.a.Field(name)
	return f.Get(r.b)
}

// at is entry i of the table row name.
func (r saRec) at(name string, i int) uint64 { return r.u(name + strconv.Itoa(i)) }

// word is the width-bit member of saquery's C struct that starts at row.
func (r saRec) word(row string, width int) uint64 { return cWord(r.a, row, width).Get(r.b) }

// bytes is the byte row name.
func (r saRec) bytes(name string) []byte {
	f, _, ok := r.a.Field(name)
	if !ok {
		return nil
	}
	return f.Slice(r.b)
}

// gid is the GID row name as inet_ntop writes it.
func (r saRec) gid(name string) string {
	var g mad.GID
	copy(g[:], r.bytes(name))
	return GIDString(g.Prefix(), g.GUID())
}

// name is a NodeRecord's description, or its name in the node name map.
func (r saRec) name(res *SAResult) string {
	return res.name(r.u("NodeGUID"), r.bytes("NodeDescription"))
}

func saPrintNodeLID(_ *SAResult, w *bufio.Writer, r saRec) { fmt.Fprintf(w, "%d\n", r.u("LID")) }

func saPrintNodeGUID(_ *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "0x%016x\n", r.u("PortGUID"))
}

func saPrintNodeName(res *SAResult, w *bufio.Writer, r saRec) { fmt.Fprintf(w, "%s\n", r.name(res)) }

func saPrintNodeDesc(res *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "%6d  \"%s\"\n", r.u("LID"), r.name(res))
}

func saPrintNodeRecord(res *SAResult, w *bufio.Writer, r saRec) {
	nt := r.u("NodeType")
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
		r.u("LID"), r.word("LID", 32)&0xffff, r.u("BaseVersion"), r.u("ClassVersion"), saNodeTypes[nt], r.u("NumPorts"),
		r.u("SystemImageGUID"), r.u("NodeGUID"), r.u("PortGUID"), r.u("PartitionCap"), r.u("DeviceID"), r.u("Revision"),
		r.u("LocalPortNum"), r.u("VendorID"), r.name(res))
}

func saPrintPathRecord(_ *SAResult, w *bufio.Writer, r saRec) {
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
		"\t\tresv2...................0x%012X\n",
		r.u("ServiceID"), r.gid("DGID"), r.gid("SGID"), r.u("DLID"), r.u("SLID"),
		r.word("RawTraffic", 32), r.u("TClass"), r.word("Reversible", 8), r.u("P_Key"), r.u("QOSClass"), r.u("SL"),
		r.word("MTUSelector", 8), r.word("RateSelector", 8), r.word("PacketLifeTimeSelector", 8), r.u("Preference"),
		cWord(r.a, "Preference", 56).Get(r.b)&(1<<48-1))
}

func saPrintClassPortInfo(_ *SAResult, w *bufio.Writer, r saRec) {
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
		r.u("BaseVersion"), r.u("ClassVersion"), r.u("CapabilityMask"), r.u("CapabilityMask2"), r.u("RespTimeValue"),
		r.gid("RedirectGID"), r.word("RedirectTC", 32), r.u("RedirectLID"), r.u("RedirectP_Key"),
		r.word("RedirectP_Key", 48)&(1<<32-1), r.u("RedirectQ_Key"), r.gid("TrapGID"), r.word("TrapTC", 32),
		r.u("TrapLID"), r.u("TrapP_Key"), r.word("TrapHL", 32), r.u("TrapQ_Key"))
}

func saPrintIsSMPort(_ *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "PortInfoRecord dump:\n"+
		"\t\tEndPortLid..............%d\n"+
		"\t\tPortNum.................%d\n"+
		"\t\tbase_lid................%d\n"+
		"\t\tmaster_sm_base_lid......%d\n"+
		"\t\tcapability_mask.........0x%X\n",
		r.u("EndportLID"), r.u("PortNum"), r.u("LID"), r.u("MasterSMLID"), r.u("CapabilityMask"))
}

func saPrintPortInfoRecord(res *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "PortInfoRecord dump:\n"+
		"\tRID\n"+
		"\t\tEndPortLid..............%d\n"+
		"\t\tPortNum.................%d\n"+
		"\t\tOptions.................0x%x\n"+
		"\tPortInfo dump:\n",
		r.u("EndportLID"), r.u("PortNum"), r.u("Options"))
	// dump_portinfo(pi, 2): smpquery portinfo's fields, each after
	// two tabs (a value's own continuation lines get none), M_Key
	// not displayed.
	var fb strings.Builder
	pi := r.b[cWord(r.a, "M_Key", 8).Bit/8:]
	dotLine(&fb, "Mkey", mkeyText(pi, res.showKeys))
	w.WriteString("\t\t" + fb.String())
	for _, f := range portInfoFields {
		fb.Reset()
		dotLine(&fb, f.name, f.text(pi[:64]))
		w.WriteString("\t\t" + fb.String())
	}
}

func saPrintMCMemberRecord(_ *SAResult, w *bufio.Writer, r saRec) {
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
		r.gid("MGID"), r.gid("PortGID"), r.u("Q_Key"), r.u("MLID"), r.word("MTUSelector", 8), r.u("TClass"),
		r.u("P_Key"), r.word("RateSelector", 8), r.word("PacketLifeTimeSelector", 8), r.u("SL"), r.u("FlowLabel"),
		r.u("HopLimit"), r.u("Scope"), r.u("JoinState"), r.word("ProxyJoin", 8)&1)
}

func saPrintMCGroup(_ *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "MCMemberRecord group dump:\n"+
		"\t\tMGID....................%s\n"+
		"\t\tMlid....................0x%X\n"+
		"\t\tMtu.....................0x%X\n"+
		"\t\tpkey....................0x%X\n"+
		"\t\tRate....................0x%X\n"+
		"\t\tSL......................0x%X\n",
		r.gid("MGID"), r.u("MLID"), r.word("MTUSelector", 8), r.u("P_Key"), r.word("RateSelector", 8), r.u("SL"))
}

func saPrintMCMember(res *SAResult, w *bufio.Writer, r saRec) {
	node := "<unknown>"
	for _, b := range res.nodeRecs {
		nr := saRec{sa.NodeRecord(), b}
		if len(b) >= nr.a.Layout.Size && nr.u("PortGUID") == mad.GID(r.bytes("PortGID")).GUID() {
			node = nr.name(res)
			break
		}
	}
	if res.requested != "" {
		// strtol(name) == mlid: the whole value, not its low bits.
		if v, _ := parseCULong(res.requested); v == r.u("MLID") {
			fmt.Fprintf(w, "\t\tPortGid.................%s (%s)\n", r.gid("PortGID"), node)
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
		r.gid("MGID"), r.u("MLID"), r.gid("PortGID"), r.word("Scope", 8), r.word("ProxyJoin", 8)&1, node)
}

func saPrintServiceRecord(res *SAResult, w *bufio.Writer, r saRec) {
	key := res.key(fmt.Sprintf("0x%x", r.bytes("ServiceKey"))) // "<not displayed>" without -K
	fmt.Fprintf(w, "ServiceRecord dump:\n"+
		"\t\tServiceID...............0x%016x\n"+
		"\t\tServiceGID..............%s\n"+
		"\t\tServiceP_Key............0x%X\n"+
		"\t\tServiceLease............0x%X\n"+
		"\t\tServiceKey..............%s\n"+
		"\t\tServiceName.............%s\n",
		r.u("ServiceID"), r.gid("ServiceGID"), r.u("ServiceP_Key"), r.u("ServiceLease"), key, cString(r.bytes("ServiceName")))
	for _, d := range []struct {
		row    string
		n      int
		format string
	}{{"ServiceData8_", 16, "0x%X"}, {"ServiceData16_", 8, "0x%X"}, {"ServiceData32_", 4, "0x%X"}, {"ServiceData64_", 2, "0x%016x"}} {
		name := "ServiceData" + strings.TrimPrefix(strings.TrimSuffix(d.row, "_"), "ServiceData") + "."
		for i := range d.n {
			fmt.Fprintf(w, "\t\t%s%d%s"+d.format+"\n", name, i+1, dots(24-len(name)-len(strconv.Itoa(i+1))), r.at(d.row, i))
		}
	}
}

func saPrintSMInfoRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	// saquery prints the SM_Key the SA returns (0 unless the request
	// carried the right one); ibscript prints only a zero one, -K or not.
	smkey := fmt.Sprintf("0x%016x", r.u("SM_Key"))
	if r.u("SM_Key") != 0 {
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
		r.u("LID"), r.u("GUID"), smkey, r.u("ActCount"), r.u("Priority"), r.u("SMState"))
}

func saPrintSwitchInfoRecord(res *SAResult, w *bufio.Writer, r saRec) {
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
		r.u("LID"), r.u("LinearFDBCap"), r.u("RandomFDBCap"), r.u("MulticastFDBCap"), r.u("LinearFDBTop"),
		r.u("DefaultPort"), r.u("DefaultMulticastPrimaryPort"), r.u("DefaultMulticastNotPrimaryPort"),
		r.word("LifeTimeValue", 8), r.u("LIDsPerPort"), r.u("PartitionEnforcementCap"), r.word("InboundEnforcementCap", 8))
	if res.capMask2&(1<<3) != 0 {
		fmt.Fprintf(w, "\t\tMulticastFDBTop.........................0x%X\n", r.u("MulticastFDBTop"))
	}
}

func saPrintInformInfoRecord(res *SAResult, w *bufio.Writer, r saRec) {
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
		r.gid("SubscriberGID"), r.u("Enum"), r.gid("GID"), r.u("LIDRangeBegin"), r.u("LIDRangeEnd"),
		r.u("IsGeneric"), r.u("Subscribe"), r.u("Type"))
	generic := r.u("IsGeneric") != 0
	if generic {
		fmt.Fprintf(w, "\t\ttrap_num................%d\n", r.u("TrapNumber"))
	} else {
		fmt.Fprintf(w, "\t\tdev_id..................0x%X\n", r.u("TrapNumber"))
	}
	// saquery shows the QPN only with -K.
	w.WriteString("\t\tqpn....................." + res.key(fmt.Sprintf("0x%06X", r.u("QPN"))) + "\n")
	if generic {
		fmt.Fprintf(w, "\t\tresp_time_val...........0x%X\n\t\tnode_type...............0x%06X\n", r.u("RespTimeValue"), r.u("ProducerType"))
	} else {
		fmt.Fprintf(w, "\t\tresp_time_val...........0x%X\n\t\tvendor_id...............0x%06X\n", r.u("RespTimeValue"), r.u("ProducerType"))
	}
}

func saPrintLinkRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "LinkRecord dump:\n"+
		"\t\tFromLID....................%d\n"+
		"\t\tFromPort...................%d\n"+
		"\t\tToPort.....................%d\n"+
		"\t\tToLID......................%d\n",
		r.u("FromLID"), r.u("FromPort"), r.u("ToPort"), r.u("ToLID"))
}

func saPrintSL2VLTableRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "SL2VLTableRecord dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tInPort.....................%d\n"+
		"\t\tOutPort....................%d\n"+
		"\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n"+
		"\t\tVL:", r.u("LID"), r.u("InputPortNum"), r.u("OutputPortNum"))
	for sl := range 16 {
		fmt.Fprintf(w, "%2d|", r.at("SLtoVL", sl))
	}
	w.WriteString("\n")
}

func saPrintVLArbitrationTableRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "VLArbTableRecord dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tPort.......................%d\n"+
		"\t\tBlock......................%d\n", r.u("LID"), r.u("OutputPortNum"), r.u("BlockNum"))
	for i := 0; i < 32; i += 16 {
		for _, row := range []string{"VL", "Weight"} {
			w.WriteString("\t\t" + (row + "      ")[:6] + ":")
			for k := range 16 {
				fmt.Fprintf(w, "%2d|", r.at(row, i+k))
			}
			w.WriteString("\n")
		}
	}
}

func saPrintPKeyTableRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	// saquery prints the block number without converting it from
	// network order.
	blk := r.u("BlockNum")
	fmt.Fprintf(w, "PKeyTableRecord dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tPort.......................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tPKey Table:\n", r.u("LID"), r.u("PortNum"), blk>>8|blk&0xff<<8)
	for i := 0; i < 32; i += 8 {
		w.WriteString("\t\t")
		for k := range 8 {
			if k > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "0x%04x", r.at("P_Key", i+k))
		}
		w.WriteString("\n")
	}
	w.WriteString("\n")
}

func saPrintLFTRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	block := int(r.u("BlockNum"))
	fmt.Fprintf(w, "LFT Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tLFT:\n\t\tLID\tPort Number\n", r.u("LID"), block)
	for i := range 64 {
		fmt.Fprintf(w, "\t\t%d\t%d\n", block*64+i, r.at("Port", i))
	}
	w.WriteString("\n")
}

func saPrintGUIDInfoRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	fmt.Fprintf(w, "GUIDInfo Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tBlock......................%d\n", r.u("LID"), r.u("BlockNum"))
	for i := range 8 {
		fmt.Fprintf(w, "\t\tGUID %d.....................0x%016x\n", i, r.at("GUID", i))
	}
}

func saPrintMFTRecord(_ *SAResult, w *bufio.Writer, r saRec) {
	// saquery prints the block of the position/block word, and its top
	// 4 bits as the position.
	block := int(r.u("BlockNum"))
	fmt.Fprintf(w, "MFT Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tPosition...................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tMFT:\n\t\tMLID\tPort Mask\n", r.u("LID"), r.u("Position"), block)
	for i := range 32 {
		fmt.Fprintf(w, "\t\t0x%04x\t0x%04x\n", 0xc000+block*32+i, r.at("PortMask", i))
	}
	w.WriteString("\n")
}

func dots(n int) string { return strings.Repeat(".", max(n, 0)) }
