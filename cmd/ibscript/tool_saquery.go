package main

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/ibscript/ibscript/diag"
)

// saquery: the SA's records (diag/saquery.go).
func init() {
	var usage strings.Builder
	usage.WriteString("[query-name] [<name> | <lid> | <guid>]\n\nSupported query names (and aliases):\n")
	for _, q := range diag.SAQueryNames() {
		fmt.Fprintf(&usage, "  %s (%s) %s\n", q.Name, q.Alias, q.Usage)
	}
	usage.WriteString("\n  Queries node records by default.")
	registerTool(&Tool{
		Name:    "saquery",
		Summary: "query the subnet administrator's records (NodeRecord, PathRecord, ...)",
		Args:    usage.String(),
		Options: []Option{
			{Short: 'p', Long: "p", Help: "get PathRecord info"},
			{Short: 'N', Long: "N", Help: "get NodeRecord info"},
			{Short: 'L', Long: "L", Help: "return the Lids of the name specified"},
			{Short: 'l', Long: "l", Help: "return the unique Lid of the name specified"},
			{Short: 'G', Long: "G", Help: "return the Guids of the name specified"},
			{Short: 'O', Long: "O", Help: "return name for the Lid specified"},
			{Short: 'U', Long: "U", Help: "return name for the Guid specified"},
			{Short: 's', Long: "s", Help: "return the PortInfoRecords with isSM or isSMdisabled capability mask bit on"},
			{Short: 'g', Long: "g", Help: "get multicast group info"},
			{Short: 'm', Long: "m", Help: "get multicast member info (if multicast group specified, list member GIDs only for group specified, for example 'saquery -m 0xC000')"},
			{Short: 'x', Long: "x", Help: "get LinkRecord info"},
			{Short: 'c', Long: "c", Help: "get the SA's class port info"},
			{Short: 'S', Long: "S", Help: "get ServiceRecord info"},
			{Short: 'I', Long: "I", Help: "get InformInfoRecord (subscription) info"},
			{Short: 'D', Long: "list", Help: "the node desc of the CA's"},
			{Long: "src-to-dst", Arg: "<src:dst>", Help: "get a PathRecord for <src:dst> where src and dst are either node names or LIDs"},
			{Long: "sgid-to-dgid", Arg: "<sgid-dgid>", Help: "get a PathRecord for <sgid-dgid> where sgid and dgid are addresses in IPv6 format"},
			{Long: "smkey", Arg: "<val>", Help: "SA SM_Key value for the query (better: $IBSCRIPT_SMKEY; never printed)"},
			{Long: "slid", Arg: "<lid>", Help: "Source LID (PathRecord)"},
			{Long: "dlid", Arg: "<lid>", Help: "Destination LID (PathRecord)"},
			{Long: "mlid", Arg: "<lid>", Help: "Multicast LID (MCMemberRecord)"},
			{Long: "sgid", Arg: "<gid>", Help: "Source GID (IPv6 format) (PathRecord)"},
			{Long: "dgid", Arg: "<gid>", Help: "Destination GID (IPv6 format) (PathRecord)"},
			{Long: "gid", Arg: "<gid>", Help: "Port GID (MCMemberRecord)"},
			{Long: "mgid", Arg: "<gid>", Help: "Multicast GID (MCMemberRecord)"},
			{Short: 'r', Long: "reversible", Arg: "<0|1>", Help: "Reversible path (PathRecord)"},
			{Short: 'n', Long: "numb_path", Arg: "<n>", Help: "Number of paths (PathRecord)"},
			{Long: "pkey", Arg: "<pkey>", Help: "P_Key (PathRecord, MCMemberRecord)"},
			{Short: 'Q', Long: "qos_class", Arg: "<class>", Help: "QoS Class (PathRecord)"},
			{Long: "sl", Arg: "<sl>", Help: "Service level (PathRecord, MCMemberRecord)"},
			{Short: 'M', Long: "mtu", Arg: "<mtu>", Help: "MTU and selector (PathRecord, MCMemberRecord)"},
			{Short: 'R', Long: "rate", Arg: "<rate>", Help: "Rate and selector (PathRecord, MCMemberRecord)"},
			{Long: "pkt_lifetime", Arg: "<life>", Help: "Packet lifetime and selector (PathRecord, MCMemberRecord)"},
			{Short: 'q', Long: "qkey", Arg: "<qkey>", Help: "Q_Key (MCMemberRecord)"},
			{Short: 'T', Long: "tclass", Arg: "<tclass>", Help: "Traffic Class (PathRecord, MCMemberRecord)"},
			{Short: 'F', Long: "flow_label", Arg: "<label>", Help: "Flow Label (PathRecord, MCMemberRecord)"},
			{Short: 'H', Long: "hop_limit", Arg: "<hops>", Help: "Hop limit (PathRecord, MCMemberRecord)"},
			{Long: "scope", Arg: "<scope>", Help: "Scope (MCMemberRecord)"},
			{Short: 'J', Long: "join_state", Arg: "<state>", Help: "Join state (MCMemberRecord)"},
			{Short: 'X', Long: "proxy_join", Arg: "<0|1>", Help: "Proxy join (MCMemberRecord)"},
			{Long: "service_id", Arg: "<id>", Help: "ServiceID (PathRecord)"},
			{Short: 'K', Long: "show_keys", Help: "display security keys in output"},
		},
		// saquery uses -D, -G, -L and -s for its own and takes no M_Key.
		Exclude: "D,G,L,s,y",
		Schema:  "saquery",
		Example: []string{},
		Run:     runSAQuery,
		// sa_get_handle finds no port: IBPANIC, nothing on stdout.
		OpenFail: func(inv *Invocation, _ portSel) int {
			fmt.Fprintln(inv.Stderr, "ibpanic: main: Failed to bind to the SA")
			return exitIBExit
		},
	})
}

// saqueryOpts reads saquery's options as its process_opt does.
func saqueryOpts(inv *Invocation) (*diag.SAQueryOptions, error) {
	o := diag.NewSAQueryOptions()
	o.Args = inv.Args
	saqueryCommand(inv, o)
	o.SrcToDst, o.SGIDToDGID = inv.Value("src-to-dst"), inv.Value("sgid-to-dgid")
	o.ShowKeys = inv.Has("show_keys")
	if o.SrcToDst != "" && !strings.Contains(o.SrcToDst, ":") {
		return nil, fmt.Errorf("--src-to-dst %q: want <src:dst>", o.SrcToDst)
	}
	num := func(key string, bits int) (uint64, bool, error) {
		if !inv.Has(key) {
			return 0, false, nil
		}
		v, err := strconv.ParseUint(inv.Value(key), 0, bits)
		if err != nil {
			return 0, false, fmt.Errorf("--%s %q: want a number of %d bits", key, inv.Value(key), bits)
		}
		return v, true, nil
	}
	var err error
	set := func(key string, bits int, put func(uint64)) {
		if v, ok, e := num(key, bits); e != nil {
			err = e
		} else if ok {
			put(v)
		}
	}
	for _, f := range []struct {
		key string
		dst *uint16
	}{{"slid", &o.SLID}, {"dlid", &o.DLID}, {"mlid", &o.MLID}, {"pkey", &o.PKey}} {
		set(f.key, 16, func(v uint64) { *f.dst = uint16(v) })
	}
	for _, f := range []struct {
		key string
		dst *uint8
	}{{"mtu", &o.MTU}, {"rate", &o.Rate}, {"pkt_lifetime", &o.PktLife}, {"tclass", &o.TClass}, {"scope", &o.Scope}, {"join_state", &o.JoinState}} {
		set(f.key, 8, func(v uint64) { *f.dst = uint8(v) })
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"reversible", &o.Reversible}, {"numb_path", &o.NumbPath}, {"qos_class", &o.QoSClass}, {"sl", &o.SL}, {"hop_limit", &o.HopLimit}, {"proxy_join", &o.ProxyJoin}} {
		set(f.key, 32, func(v uint64) { *f.dst = int(v) })
	}
	set("qkey", 32, func(v uint64) { o.QKey = uint32(v) })
	set("flow_label", 32, func(v uint64) { o.FlowLabel = uint32(v) })
	set("service_id", 64, func(v uint64) { o.ServiceID = v })
	if gerr := saqueryGIDs(inv, o); gerr != nil {
		return nil, gerr
	}
	if inv.Has(optTimeout) {
		// configure refused a value the C tools refuse.
		ms, _ := cTimeout(inv.Value(optTimeout))
		o.Timeout = time.Duration(ms) * time.Millisecond
	}
	return o, err
}

// saqueryGIDs reads the GID options (--sgid, --dgid, --gid, --mgid).
func saqueryGIDs(inv *Invocation, o *diag.SAQueryOptions) error {
	for _, g := range []struct {
		key string
		dst *[16]byte
	}{{"sgid", &o.SGID}, {"dgid", &o.DGID}, {"gid", &o.GID}, {"mgid", &o.MGID}} {
		if !inv.Has(g.key) {
			continue
		}
		a, perr := netip.ParseAddr(inv.Value(g.key))
		if perr != nil || !a.Is6() {
			return fmt.Errorf("--%s %q: want a GID in IPv6 format", g.key, inv.Value(g.key))
		}
		*g.dst = a.As16()
	}
	return nil
}

// saqueryCommand sets the command, node print form and query type the
// flags pick. Each of these flags picks a command or query; saquery
// keeps the last one given of each kind, in command-line order, which
// the parsed options no longer carry: they are applied in its table's
// order, which differs only when two of them are combined.
func saqueryCommand(inv *Invocation, o *diag.SAQueryOptions) {
	for _, f := range []struct {
		key  string
		cmd  diag.SACommand
		prt  diag.SANodePrint
		qt   string
		node bool
	}{
		{"p", 0, 0, "PathRecord", false}, {"D", 0, 0, "", false},
		{"c", diag.SAClassPortInfo, 0, "", false}, {"S", 0, 0, "ServiceRecord", false}, {"I", 0, 0, "InformInfoRecord", false},
		{"N", diag.SANodeRecords, diag.SANodeAll, "", false}, {"L", diag.SANodeRecords, diag.SANodeLIDOnly, "", true},
		{"l", diag.SANodeRecords, diag.SANodeUniqueLID, "", true}, {"G", diag.SANodeRecords, diag.SANodeGUIDOnly, "", true},
		{"O", diag.SANodeRecords, diag.SANodeNameOfLID, "", true}, {"U", diag.SANodeRecords, diag.SANodeNameOfGUID, "", true},
		{"list", diag.SANodeRecords, diag.SANodeAllDesc, "", true},
		{"s", diag.SAIsSM, 0, "", false}, {"g", diag.SAMCGroups, 0, "", false}, {"m", diag.SAMCMembers, 0, "", false},
		{"x", 0, 0, "LinkRecord", false},
	} {
		if !inv.Has(f.key) {
			continue
		}
		if f.qt != "" {
			o.QueryType = f.qt
		}
		if f.cmd != 0 {
			o.Command = f.cmd
		}
		if f.node {
			o.NodePrint = f.prt
		}
	}
}

func runSAQuery(ctx context.Context, inv *Invocation) int {
	o, err := saqueryOpts(inv)
	if err != nil {
		return inv.Fail(err)
	}
	if inv.Has("smkey") {
		// The session's SM_Key (as --smkey or $IBSCRIPT_SMKEY for every
		// command): saquery's prompt for a non-numeric value is not
		// offered.
		inv.c.smkey = inv.Value("smkey")
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	res, qerr := diag.SAQuery(ctx, env, o)
	if res == nil {
		return inv.Fail(qerr)
	}
	for _, w := range res.Warnings {
		inv.Errorf("warning: %s", w)
	}
	if inv.JSON {
		err = diag.WriteJSON(inv.Stdout, res)
	} else {
		err = diag.WriteSAQuery(inv.Stdout, res)
	}
	if err != nil {
		return inv.Fail(err)
	}
	if qerr != nil {
		fmt.Fprintln(inv.Stderr, qerr.Error())
		if res.Exit == 0 {
			return exitError
		}
		return res.Exit
	}
	return exitOK
}
