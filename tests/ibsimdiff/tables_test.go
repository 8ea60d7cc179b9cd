package ibsimdiff

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

var (
	tableRow = regexp.MustCompile(`(?m)^\s*(\d+):((?:\s+0x[0-9a-f]+)+)\s*$`)
	tableCap = regexp.MustCompile(`(?m)^(\d+) (pkeys|guids) capacity for this port$`)
)

// smpqueryTable parses smpquery pkeys / GUIDInfo ("guids"): the entries it prints (the
// last block's rounded up to a row) and the capacity it reports.
func smpqueryTable(t *testing.T, out []byte) ([]uint64, int) {
	t.Helper()
	var vals []uint64
	for _, m := range tableRow.FindAllStringSubmatch(string(out), -1) {
		if i, _ := strconv.Atoi(m[1]); i != len(vals) {
			t.Fatalf("row %s after %d entries:\n%s", m[1], len(vals), out)
		}
		for _, f := range strings.Fields(m[2]) {
			v, err := strconv.ParseUint(f, 0, 64)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
	}
	c := tableCap.FindStringSubmatch(string(out))
	if c == nil {
		t.Fatalf("no capacity line:\n%s", out)
	}
	n, _ := strconv.Atoi(c[1])
	if len(vals) < n {
		t.Fatalf("%d entries for a capacity of %d:\n%s", len(vals), n, out)
	}
	return vals[:n], n
}

// portKey is a port by its node's GUID and its number.
type portKey struct {
	guid uint64
	num  int
}

// portLIDs are the LIDs of sess's fabric's ports (mixedPorts), by port;
// with switchPort0, a switch's ports under port 0 (their LID).
func portLIDs(t *testing.T, sess *engine.Session, switchPort0 bool) map[portKey]uint16 {
	t.Helper()
	lids := map[portKey]uint16{}
	for _, mp := range mixedPorts(t, sess) {
		if switchPort0 && mp.node.Type == topo.Switch {
			mp.num = 0
		}
		lids[portKey{mp.node.GUID, mp.num}] = mp.lid
	}
	return lids
}

// TestWholeTablesMatchSMPQuery: engine.PKeys and engine.GUIDs read the
// whole tables in one call as smpquery pkeys and GUIDInfo do (every switch
// port, port 0 included, with its PartitionEnforcementCap; each CA port
// with NodeInfo's PartitionCap; GUIDCap GUIDs), on both generated fabrics,
// and the embedded simulator gives the same tables.
func TestWholeTablesMatchSMPQuery(t *testing.T) {
	ibsimtest.Require(t)
	eachMixedTopology(t, func(t *testing.T, path, host string, s *ibsimtest.Sim) {
		isess, _ := session(t, s, host, nil, nil)
		esess := embeddedSession(t, path)
		ctx := t.Context()
		elid := portLIDs(t, esess, false)
		n := 0
		for _, mp := range mixedPorts(t, isess) {
			sw := mp.node.Type == topo.Switch
			ls := strconv.Itoa(int(mp.lid))
			port := uint8(0)
			if sw {
				port = uint8(mp.num)
			}
			what := fmt.Sprintf("%s port %d (lid %d)", mp.node.Desc, mp.num, mp.lid)
			el, ok := elid[portKey{mp.node.GUID, mp.num}]
			if !ok {
				t.Fatalf("%s: not in the embedded simulator", what)
			}
			keys, err := isess.PKeys(ctx, engine.LID(mp.lid), port)
			if err != nil {
				t.Fatalf("%s PKeys: %v", what, err)
			}
			tool, capacity := smpqueryTable(t, run(t, s, host, "smpquery", "pkeys", ls, strconv.Itoa(int(port))))
			got := make([]uint64, len(keys))
			for i, k := range keys {
				got[i] = uint64(k)
			}
			if len(keys) != capacity || !slices.Equal(got, tool) {
				t.Errorf("%s pkeys: engine %d %x, smpquery %d %x", what, len(keys), got, capacity, tool)
			}
			ekeys, err := esess.PKeys(ctx, engine.LID(el), port)
			if err != nil || !slices.Equal(ekeys, keys) {
				t.Errorf("%s pkeys: embedded %x (%v), ibsim %x", what, ekeys, err, keys)
			}
			n++
			if sw && mp.num != 0 {
				continue // one GUID table a node (PortInfo 0)
			}
			guids, err := isess.GUIDs(ctx, engine.LID(mp.lid))
			if err != nil {
				t.Fatalf("%s GUIDs: %v", what, err)
			}
			tool, capacity = smpqueryTable(t, run(t, s, host, "smpquery", "GUIDInfo", ls))
			if len(guids) != capacity || !slices.Equal(guids, tool) {
				t.Errorf("%s guids: engine %d %x, smpquery %d %x", what, len(guids), guids, capacity, tool)
			}
			eguids, err := esess.GUIDs(ctx, engine.LID(el))
			if err != nil || !slices.Equal(eguids, guids) {
				t.Errorf("%s guids: embedded %x (%v), ibsim %x", what, eguids, err, guids)
			}
			n++
		}
		// A port past the node's: smpquery refuses it, so does the engine.
		mp := mixedPorts(t, isess)[0]
		if _, err := isess.PKeys(ctx, engine.LID(mp.lid), uint8(mp.node.NumPorts+1)); err == nil || !strings.Contains(err.Error(), "past the node") {
			t.Errorf("%s port %d: %v, want an error", mp.node.Desc, mp.node.NumPorts+1, err)
		}
		t.Logf("%d tables compared with smpquery and the embedded simulator", n)
	})
}
