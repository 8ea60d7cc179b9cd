package ibsimdiff

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
)

// TestEmbeddedSimAgreesWithIbsim runs the same queries on the embedded
// simulator and on ibsim (with OpenSM) loaded from the same topology file:
// the discovered fabric (nodes, GUIDs, links, LIDs, widths and speeds, as
// ibnetdiscover text), every switch's whole LFT (the embedded SM's min-hop
// routing breaks equal-hop ties as OpenSM's minhop does), the HOQLife and
// VLStallCount OpenSM sets on every port, and SMInfo.ActCount moving.
func TestEmbeddedSimAgreesWithIbsim(t *testing.T) {
	for _, tp := range []string{topo2sw, topo2sw2p, topoFat500} {
		t.Run(tp[strings.LastIndex(tp, "/")+1:], func(t *testing.T) {
			compareWithIbsim(t, shared.Get(t, tp, nil), tp)
		})
	}
}

// compareWithIbsim compares ibsim s (with OpenSM) with the embedded
// simulator loaded from the same topology file tp, both discovered from
// the file's first node.
func compareWithIbsim(t *testing.T, s *ibsimtest.Sim, tp string) {
	t.Helper()
	isess, _ := session(t, s, "", nil, nil)
	esess := embeddedSession(t, tp)

	var texts [2]string
	var lfts [2]map[uint64]map[uint16]uint8
	var ports [2]map[string]string // "GUID/port" -> HOQLife and VLStallCount
	var paths [2]map[string]string // "PathRecord SLID->DLID" -> the record
	var records [2]int             // PathRecords answered
	for i, sess := range []*engine.Session{isess, esess} {
		d, err := sess.Discover(t.Context(), nil)
		if err != nil || len(d.Errors) > 0 {
			t.Fatalf("discover: %v %v", err, d.Errors)
		}
		var b bytes.Buffer
		topo.WriteIBNetDiscover(&b, d.Fabric, &topo.WriteOptions{Time: time.Unix(0, 0)})
		texts[i] = b.String()
		lfts[i] = map[uint64]map[uint16]uint8{}
		ports[i] = map[string]string{}
		for _, node := range d.Fabric.Nodes {
			tg, _ := d.Target(node.GUID)
			for _, p := range node.Ports {
				if p == nil || p.Num == 0 {
					continue
				}
				pi, err := sess.PortInfo(t.Context(), tg, uint8(p.Num))
				if err != nil {
					t.Fatal(err)
				}
				ports[i][fmt.Sprintf("%s %s port %d", node.Type, node.ID, p.Num)] = fmt.Sprintf("HOQLife %d VLStallCount %d", pi.HOQLife, pi.VLStallCount)
			}
			if node.Type != topo.Switch {
				continue
			}
			lid := nodeLID(node)
			si, err := sess.SwitchInfo(t.Context(), engine.LID(lid))
			if err != nil {
				t.Fatal(err)
			}
			m := map[uint16]uint8{}
			for blk := uint32(0); blk <= uint32(si.LinearFDBTop)/64; blk++ {
				l, err := sess.LFTBlock(t.Context(), engine.LID(lid), blk)
				if err != nil {
					t.Fatal(err)
				}
				for j, p := range l.Ports {
					if x := uint16(blk*64) + uint16(j); p != 0xff && x >= 1 && x <= si.LinearFDBTop {
						m[x] = p
					}
				}
			}
			lfts[i][node.GUID] = m
		}
		// PathRecords from three endports to every endport: rates and
		// MTUs follow the links the LFTs route through.
		var lids []uint16
		for _, n := range d.Fabric.Nodes {
			for _, p := range n.Ports {
				if p != nil && p.LID != 0 && (n.Type != topo.Switch || p.Num == 0) {
					lids = append(lids, p.LID)
				}
			}
		}
		paths[i] = map[string]string{}
		for _, src := range lids[:min(3, len(lids))] {
			for _, dst := range lids {
				pr, err := sess.PathRecord(t.Context(), src, dst)
				var v string
				if err != nil {
					v = err.Error()
				} else {
					v = fmt.Sprintf("%+v", *pr)
					records[i]++
				}
				paths[i][fmt.Sprintf("PathRecord %d->%d", src, dst)] = v
			}
		}
		// OpenSM's ActCount counts the SMPs it sent, its SMInfo answers
		// among them: two reads see it move.
		sm := engine.LID(nodeLID(d.Fabric.Origin.Node))
		if d.Fabric.Origin.LID != 0 {
			sm = engine.LID(d.Fabric.Origin.LID)
		}
		a, err1 := sess.SMInfo(t.Context(), sm)
		b2, err2 := sess.SMInfo(t.Context(), sm)
		if err1 != nil || err2 != nil {
			t.Fatalf("SMInfo: %v %v", err1, err2)
		}
		if b2.ActCount <= a.ActCount {
			t.Errorf("%s: SMInfo.ActCount %d then %d: it does not move", []string{"ibsim", "embedded"}[i], a.ActCount, b2.ActCount)
		}
	}
	if texts[0] != texts[1] {
		t.Errorf("discovered fabric: ibsim vs embedded sim:\n%s", strings.ReplaceAll(lineDiff(texts[0], texts[1]), "ibnetdiscover:", "ibsim:        "))
	}
	diff := 0
	for k, v := range ports[0] {
		if ports[1][k] != v {
			if diff++; diff <= 10 {
				t.Errorf("%s: OpenSM set %s, the embedded SM %s", k, v, ports[1][k])
			}
		}
	}
	if records[0] == 0 || records[1] == 0 {
		t.Errorf("PathRecords answered: %d by OpenSM, %d by the embedded SA of %d asked", records[0], records[1], len(paths[0]))
	}
	diff = 0
	for k, v := range paths[0] {
		if paths[1][k] != v {
			if diff++; diff <= 10 {
				t.Errorf("%s:\n  OpenSM:   %s\n  embedded: %s", k, v, paths[1][k])
			}
		}
	}
	diff = 0
	for g, im := range lfts[0] {
		em := lfts[1][g]
		if len(im) != len(em) {
			t.Errorf("switch %#x: ibsim (OpenSM) LFT has %d LIDs, embedded %d", g, len(im), len(em))
		}
		for l, p := range im {
			if em[l] != p {
				if diff++; diff <= 10 {
					t.Errorf("switch %#x LID %d: OpenSM routes out of port %d, the embedded SM out of port %d", g, l, p, em[l])
				}
			}
		}
	}
	t.Logf("%d LFT entries of %d switches, %d ports' HOQLife and %d PathRecords checked; %d LFT entries differ between OpenSM and the embedded SM", countEntries(lfts[0]), len(lfts[0]), len(ports[0]), len(paths[0]), diff)
}

func countEntries(m map[uint64]map[uint16]uint8) int {
	n := 0
	for _, x := range m {
		n += len(x)
	}
	return n
}

// embeddedSession opens an engine session on the embedded simulator
// loaded from path (on its SM's port) in its ibsim-strict mode (it
// answers only what ibsim answers), closed when the test ends.
func embeddedSession(t *testing.T, path string) *engine.Session {
	t.Helper()
	f := simtest.Load(t, path, &sim.Options{IbsimStrict: true})
	return simtest.Session(t, f, nil)
}
