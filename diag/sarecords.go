package diag

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

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
type saPrinter func(r *SAResult, w *bufio.Writer, b []byte)

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
	if len(b) < k.size { // records shorter than their C struct read as zeros
		b = append(append([]byte(nil), b...), make([]byte, k.size-len(b))...)
	}
	p(r, w, b)
}

func saPrintNodeLID(_ *SAResult, w *bufio.Writer, b []byte) { fmt.Fprintf(w, "%d\n", be16(b[0:2])) }

func saPrintNodeGUID(_ *SAResult, w *bufio.Writer, b []byte) {
	fmt.Fprintf(w, "0x%016x\n", be64(b[4+20:4+28]))
}

func saPrintNodeName(r *SAResult, w *bufio.Writer, b []byte) {
	fmt.Fprintf(w, "%s\n", r.name(be64(b[4+12:4+20]), b[44:108]))
}

func saPrintNodeDesc(r *SAResult, w *bufio.Writer, b []byte) {
	fmt.Fprintf(w, "%6d  \"%s\"\n", be16(b[0:2]), r.name(be64(b[4+12:4+20]), b[44:108]))
}

func saPrintNodeRecord(r *SAResult, w *bufio.Writer, b []byte) {
	ni := b[4:44]
	name := r.name(be64(ni[12:20]), b[44:108])
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
}

func saPrintPathRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintClassPortInfo(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintIsSMPort(r *SAResult, w *bufio.Writer, b []byte) {
	pi := b[4:]
	fmt.Fprintf(w, "PortInfoRecord dump:\n"+
		"\t\tEndPortLid..............%d\n"+
		"\t\tPortNum.................%d\n"+
		"\t\tbase_lid................%d\n"+
		"\t\tmaster_sm_base_lid......%d\n"+
		"\t\tcapability_mask.........0x%X\n",
		be16(b[0:2]), b[2], be16(pi[16:18]), be16(pi[18:20]), be32(pi[20:24]))
}

func saPrintPortInfoRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintMCMemberRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintMCGroup(r *SAResult, w *bufio.Writer, b []byte) {
	fmt.Fprintf(w, "MCMemberRecord group dump:\n"+
		"\t\tMGID....................%s\n"+
		"\t\tMlid....................0x%X\n"+
		"\t\tMtu.....................0x%X\n"+
		"\t\tpkey....................0x%X\n"+
		"\t\tRate....................0x%X\n"+
		"\t\tSL......................0x%X\n",
		inetNtop6(b[0:16]), be16(b[36:38]), b[38], be16(b[40:42]), b[42], be32(b[44:48])>>28&0xf)
}

func saPrintMCMember(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintServiceRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintSMInfoRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintSwitchInfoRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintInformInfoRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintLinkRecord(r *SAResult, w *bufio.Writer, b []byte) {
	fmt.Fprintf(w, "LinkRecord dump:\n"+
		"\t\tFromLID....................%d\n"+
		"\t\tFromPort...................%d\n"+
		"\t\tToPort.....................%d\n"+
		"\t\tToLID......................%d\n",
		be16(b[0:2]), b[2], b[3], be16(b[4:6]))
}

func saPrintSL2VLTableRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintVLArbitrationTableRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintPKeyTableRecord(r *SAResult, w *bufio.Writer, b []byte) {
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
}

func saPrintLFTRecord(r *SAResult, w *bufio.Writer, b []byte) {
	block := int(be16(b[2:4]))
	fmt.Fprintf(w, "LFT Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tLFT:\n\t\tLID\tPort Number\n", be16(b[0:2]), block)
	for i := range 64 {
		fmt.Fprintf(w, "\t\t%d\t%d\n", block*64+i, b[8+i])
	}
	w.WriteString("\n")
}

func saPrintGUIDInfoRecord(r *SAResult, w *bufio.Writer, b []byte) {
	fmt.Fprintf(w, "GUIDInfo Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tBlock......................%d\n", be16(b[0:2]), b[2])
	for i := range 8 {
		fmt.Fprintf(w, "\t\tGUID %d.....................0x%016x\n", i, be64(b[8+8*i:]))
	}
}

func saPrintMFTRecord(r *SAResult, w *bufio.Writer, b []byte) {
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

func dots(n int) string { return strings.Repeat(".", max(n, 0)) }
