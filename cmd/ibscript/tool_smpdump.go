package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
)

func init() {
	registerTool(&Tool{
		Name:    "smpdump",
		Summary: "one SMP Get, its 64 bytes of data in hex (or -s as a string)",
		Args:    "<dlid|dr_path> <attr> [mod]",
		Options: []Option{
			{Short: 's', Long: "string", Help: "print the data as a string"},
		},
		Exclude: "G",
		Example: []string{"1", "0x11"},
		Run:     runSMPDump,
		OpenFail: func(inv *Invocation, s portSel) int {
			fmt.Fprintf(inv.Stderr, "ibpanic: main: can't open UMAD port (%s:%d)\n", s.caName(), s.port)
			return exitIBExit
		},
	})
}

func runSMPDump(ctx context.Context, inv *Invocation) int {
	if len(inv.Args) < 2 {
		return usageError(inv, "want <dlid|dr_path> and <attr>")
	}
	var t engine.Target
	if inv.destKind() == diag.AddrDR {
		var err error
		if t, err = inv.Target("destination", inv.Args[0]); err != nil {
			return usageError(inv, "%v", err)
		}
	} else {
		// smpdump reads a LID with strtoul and sends to it whatever it
		// is (0, a multicast LID, the permissive LID): no SA, no
		// check; an int cut to the 16 bits of the DLID.
		v, _ := cStrtoul(inv.Args[0])
		t = engine.Target{Kind: engine.ByLID, LID: uint16(v)}
		if c := strconv.Itoa(int(t.LID)); c != strings.TrimSpace(inv.Args[0]) {
			if strict, err := strconv.ParseUint(strings.TrimSpace(inv.Args[0]), 0, 16); err != nil || strict != uint64(t.LID) {
				inv.Errorf("warning: destination %q read as lid %s, as smpdump reads it", inv.Args[0], c)
			}
		}
	}
	o := diag.SMPDumpOptions{Target: t, Attr: uint16(diag.ParseMask(inv.Args[1])), String: inv.Has("string")}
	if len(inv.Args) > 2 {
		o.Mod = uint32(diag.ParseMask(inv.Args[2]))
	}
	return runQuery(ctx, inv, o, diag.SMPDumpRun, diag.WriteSMPDump)
}
