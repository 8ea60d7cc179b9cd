package ibsimdiff

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/topo"
)

var (
	saRow     = regexp.MustCompile(`(?m)^\s*(VL|Weight)\s*:\s*(.*?)\|?\s*$`)
	saDumpHdr = regexp.MustCompile(`(?m)^\w+ dump:`)
)

// saRecord is one record asked for on both fabrics: the template, its
// component mask and saquery's arguments for the same query.
type saRecord struct {
	what string
	attr *sa.Attr
	mask uint64
	set  map[string]uint64
	args []string
}

// saTableRows gives the table rows saquery prints for a record: SLtoVL's
// VL of each SL, VL arbitration's VL and Weight of each entry.
func saTableRows(attr *sa.Attr, r []byte) map[string][]uint64 {
	rows := map[string][]uint64{}
	t := r[8:]
	if attr == sa.SLtoVLMappingTableRecord() {
		for sl := range 16 {
			rows["VL"] = append(rows["VL"], uint64(t[sl/2]>>(4*(1-sl%2))&0xf))
		}
		return rows
	}
	for e := range 32 {
		rows["VL"] = append(rows["VL"], uint64(t[2*e]&0xf))
		rows["Weight"] = append(rows["Weight"], uint64(t[2*e+1]))
	}
	return rows
}

// TestSATableRecordsMatchSAQuery: the SLtoVL and VL arbitration records
// OpenSM serves through ibsim, for a switch's port pairs and blocks and for
// CA ports (which OpenSM answers from the CA's own port whatever the query
// names), are decoded as saquery SL2VL and VLAR print them, and the
// embedded simulator's SA gives the same records on the same file (LIDs
// aside: its SM numbers a router's ports). OpenSM lists no MFT record (it
// programs no multicast route on ibsim) and no subscription; neither does
// the simulator.
func TestSATableRecordsMatchSAQuery(t *testing.T) {
	ibsimtest.Require(t)
	for _, mt := range mixedTopologies {
		t.Run(filepath.Base(mt.path), func(t *testing.T) {
			s, isess, esess := saFabrics(t, mt.path, mt.host)
			ctx := t.Context()
			elid := portLIDs(t, esess, true)

			var queries []saRecord
			for _, mp := range mixedPorts(t, isess) {
				sw := mp.node.Type == topo.Switch
				if sw && mp.num > 2 {
					continue // ports 0, 1 and 2 of each switch
				}
				l := uint64(mp.lid)
				in, out := uint64(1), uint64(mp.num)
				if !sw {
					in, out = 1, 2 // OpenSM ignores them on a CA
				}
				queries = append(queries, saRecord{fmt.Sprintf("%s SL2VL %d/%d/%d", mp.node.Desc, l, in, out), sa.SLtoVLMappingTableRecord(), 7,
					map[string]uint64{"LID": l, "InputPortNum": in, "OutputPortNum": out}, []string{"SL2VL", fmt.Sprintf("%d/%d/%d", l, in, out)}})
				port := uint64(mp.num)
				if !sw {
					port = 9 // OpenSM answers the CA's port
				}
				for b := uint64(1); b <= 4; b++ {
					queries = append(queries, saRecord{fmt.Sprintf("%s VLAR %d/%d/%d", mp.node.Desc, l, port, b), sa.VLArbitrationTableRecord(), 7,
						map[string]uint64{"LID": l, "OutputPortNum": port, "BlockNum": b}, []string{"VLAR", fmt.Sprintf("%d/%d/%d", l, port, b)}})
				}
			}
			isw := map[uint64]uint64{} // LID on ibsim -> node GUID, CA port
			for _, mp := range mixedPorts(t, isess) {
				if mp.node.Type == topo.Switch {
					mp.num = 0
				}
				isw[uint64(mp.lid)] = mp.node.GUID<<8 | uint64(mp.num)
			}
			n := 0
			for _, q := range queries {
				tmpl := make([]byte, q.attr.Layout.Size)
				for k, v := range q.set {
					fl, _, _ := q.attr.Field(k)
					fl.Put(tmpl, v)
				}
				irec, err := isess.SAGet(ctx, q.attr, q.mask, tmpl)
				if err != nil {
					t.Fatalf("%s on ibsim: %v", q.what, err)
				}
				vals := layoutValues(q.attr.Layout, irec)
				want := map[string]uint64{"LID": vals["LID"]}
				if q.attr == sa.SLtoVLMappingTableRecord() {
					want["InPort"], want["OutPort"] = vals["InputPortNum"], vals["OutputPortNum"]
				} else {
					want["Port"], want["Block"] = vals["OutputPortNum"], vals["BlockNum"]
				}
				out := saqueryRun(t, s, mt.host, q.args)
				if c := len(saDumpHdr.FindAllString(string(out), -1)); c != 1 {
					t.Fatalf("saquery %v: %d records:\n%s", q.args, c, out)
				}
				compare(t, "saquery "+strings.Join(q.args, " "), saqueryFields(out), want)
				rows := map[string][]uint64{}
				for _, m := range saRow.FindAllStringSubmatch(string(out), -1) {
					rows[m[1]] = append(rows[m[1]], cells(t, m[2])...)
				}
				if got := saTableRows(q.attr, irec); fmt.Sprint(got) != fmt.Sprint(rows) {
					t.Errorf("saquery %v: table %v, engine %v", q.args, rows, got)
				}

				// The embedded simulator: the same record, its own LIDs.
				id := isw[vals["LID"]]
				el, ok := elid[portKey{id >> 8, int(id & 0xff)}]
				if !ok {
					t.Fatalf("%s: LID %d not in the embedded simulator", q.what, vals["LID"])
				}
				fl, _, _ := q.attr.Field("LID")
				fl.Put(tmpl, uint64(el))
				erec, err := esess.SAGet(ctx, q.attr, q.mask, tmpl)
				if err != nil {
					t.Fatalf("%s on the embedded simulator: %v", q.what, err)
				}
				fl.Put(erec, vals["LID"])
				if string(erec) != string(irec) {
					t.Errorf("%s: embedded %x, OpenSM %x", q.what, erec, irec)
				}
				n++
			}
			for _, q := range []struct {
				attr *sa.Attr
				arg  string
			}{{sa.MulticastForwardingTableRecord(), "MFTR"}, {sa.InformInfoRecord(), "IIR"}} {
				irecs, ierr := isess.SAGetTable(ctx, q.attr, 0, nil)
				erecs, eerr := esess.SAGetTable(ctx, q.attr, 0, nil)
				out := saqueryRun(t, s, mt.host, []string{q.arg})
				if len(irecs) != 0 || ierr != nil || len(erecs) != 0 || eerr != nil || len(saDumpHdr.FindAllString(string(out), -1)) != 0 {
					t.Errorf("%s: ibsim %d records (%v), embedded %d (%v), saquery:\n%s", q.arg, len(irecs), ierr, len(erecs), eerr, out)
				}
			}
			t.Logf("%d records compared with saquery and the embedded simulator", n)
		})
	}
}

// saFabrics starts an ibsim and OpenSM of the test's own on the topology
// path and returns them with a session on host there and one on the
// embedded simulator of the same file. Of its own: in a full run, an
// earlier test leaves the shared net.mixed-router's OpenSM answering no SA
// query (as the CC tests did, b25fdee; this one's cause is not found
// yet), which failed TestSATableRecordsMatchSAQuery alone there.
func saFabrics(t *testing.T, path, host string) (*ibsimtest.Sim, *engine.Session, *engine.Session) {
	t.Helper()
	s := privateInit(t, path)
	isess, _ := session(t, s, host, nil, &engine.Options{Timeout: time.Second, Retries: 3})
	return s, isess, embeddedSession(t, path)
}

func saqueryRun(t *testing.T, s *ibsimtest.Sim, host string, args []string) []byte {
	t.Helper()
	return run(t, s, host, "saquery", args...)
}

// TestSAMCMemberRecordsMatchOpenSM: the embedded simulator's SA lists the
// multicast group OpenSM creates (the default partition's IPoIB
// broadcast group, no member), the same bytes as OpenSM through ibsim,
// and ibscript's saquery on the simulator prints what C saquery prints
// against OpenSM for the group options (-g, -m, -m MLID), the record
// query and its selectors (a matching MLID, scope; an SL no group has).
func TestSAMCMemberRecordsMatchOpenSM(t *testing.T) {
	ibsimtest.Require(t)
	for _, mt := range mixedTopologies {
		t.Run(filepath.Base(mt.path), func(t *testing.T) {
			s, isess, esess := saFabrics(t, mt.path, mt.host)
			ctx := t.Context()
			irecs, ierr := isess.SAGetTable(ctx, sa.MCMemberRecord(), 0, nil)
			erecs, eerr := esess.SAGetTable(ctx, sa.MCMemberRecord(), 0, nil)
			if ierr != nil || eerr != nil || len(irecs) != 1 || fmt.Sprintf("%x", erecs) != fmt.Sprintf("%x", irecs) {
				t.Fatalf("MCMemberRecords: OpenSM %x (%v), embedded %x (%v)", irecs, ierr, erecs, eerr)
			}
			for _, c := range []struct {
				args []string
				set  func(*diag.SAQueryOptions)
			}{
				{[]string{"-g"}, nil}, {[]string{"-m"}, nil}, {[]string{"-m", "0xc000"}, nil}, {[]string{"-m", "0xc001"}, nil},
				{[]string{"MCMR"}, nil}, {[]string{"MCMemberRecord"}, nil},
				{[]string{"MCMR", "--mlid", "0xc000"}, func(o *diag.SAQueryOptions) { o.MLID = 0xc000 }},
				{[]string{"MCMR", "--scope", "2"}, func(o *diag.SAQueryOptions) { o.Scope = 2 }},
				{[]string{"MCMR", "--sl", "1"}, func(o *diag.SAQueryOptions) { o.SL = 1 }},
				{[]string{"MCMR", "--pkey", "0x7fff"}, func(o *diag.SAQueryOptions) { o.PKey = 0x7fff }},
				{[]string{"MCMR", "--pkey", "0xffff"}, func(o *diag.SAQueryOptions) { o.PKey = 0xffff }},
				{[]string{"MCMR", "--pkey", "0x7ffe"}, func(o *diag.SAQueryOptions) { o.PKey = 0x7ffe }},
				{[]string{"MCMR", "--pkey", "0x8001"}, func(o *diag.SAQueryOptions) { o.PKey = 0x8001 }},
			} {
				want, stderr, code := runExit(t, s, mt.host, "saquery", c.args...)
				pos := c.args
				if c.set != nil {
					pos = c.args[:1]
				}
				o, err := saqueryOptions(pos)
				if err != nil {
					t.Fatal(err)
				}
				if c.set != nil {
					c.set(o)
				}
				res, err := diag.SAQuery(ctx, &diag.Env{Session: esess}, o)
				var got bytes.Buffer
				if werr := diag.WriteSAQuery(&got, res); werr != nil {
					t.Fatal(werr)
				}
				if code != res.Exit || got.String() != string(want) {
					t.Errorf("saquery %q: exit %d (stderr %q), ibscript on the simulator %d (%v):\n%s", c.args, code, stderr, res.Exit, err, lineDiff(string(want), got.String()))
				}
				t.Logf("saquery %q: exit %d, %d bytes", c.args, code, len(want))
			}
		})
	}
}
