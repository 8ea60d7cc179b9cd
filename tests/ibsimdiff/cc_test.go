package ibsimdiff

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/topo"
)

// ibccquery's operations and the attribute each reads.
var ccOps = []struct {
	op   string
	attr uint16
}{
	{"ClassPortInfo", cc.AttrClassPortInfo}, {"CongestionInfo", cc.AttrCongestionInfo},
	{"CongestionKeyInfo", cc.AttrCongestionKeyInfo}, {"CongestionLog", cc.AttrCongestionLog},
	{"SwitchCongestionSetting", cc.AttrSwitchCongestionSetting}, {"SwitchPortCongestionSetting", cc.AttrSwitchPortCongestionSetting},
	{"CACongestionSetting", cc.AttrCACongestionSetting}, {"CongestionControlTable", cc.AttrCongestionControlTable},
	{"Timestamp", cc.AttrTimestamp},
}

// ccLine is one "Name:.....value" line ibccquery prints.
type ccLine struct{ name, value string }

// ccLines parses ibccquery's output in order, without its comment lines
// and the index lines it adds itself (Port:, SL:, Entry:).
func ccLines(out []byte) []ccLine {
	var ls []ccLine
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, "#") || k == "Port" || k == "SL" || k == "Entry" {
			continue
		}
		ls = append(ls, ccLine{k, strings.TrimSpace(strings.TrimLeft(v, "."))})
	}
	return ls
}

// ccRow is a decoded row: its ibccquery name (a table row's without its
// entry number), numeric value or raw bytes.
type ccRow struct {
	name string
	v    uint64
	raw  []byte
	num  bool
}

func ccRows(l *mad.Layout, d []byte) []ccRow {
	var rows []ccRow
	_ = l.Each(d, func(f mad.Field, v uint64, raw []byte) {
		name := f.Name
		if base := strings.TrimRight(name, "0123456789"); base != name {
			if _, ok := l.Field(base + "0"); ok {
				name = base
			}
		}
		rows = append(rows, ccRow{name, v, raw, f.Numeric()})
	})
	return rows
}

// compareCC walks ibccquery's lines in order and matches each with the
// next decoded row of the same name (ibccquery leaves out empty log
// entries and the CongestionControlTable entries past CCTI_Limit), values
// compared as numbers (0x hex or decimal) or, for arrays, as hex bytes.
func compareCC(t *testing.T, what string, tool []ccLine, rows []ccRow) int {
	t.Helper()
	i, n := 0, 0
	for _, tl := range tool {
		for i < len(rows) && rows[i].name != tl.name {
			i++
		}
		if i == len(rows) {
			t.Errorf("%s: ibccquery printed %s = %s, which ibscript's decoding has not (there)", what, tl.name, tl.value)
			return n
		}
		r := rows[i]
		i++
		if !r.num {
			if got := hex.EncodeToString(r.raw); got != strings.ToLower(tl.value) {
				t.Errorf("%s: %s: ibccquery %s, ibscript %s", what, tl.name, tl.value, got)
			}
			n++
			continue
		}
		v, err := strconv.ParseUint(tl.value, 0, 64)
		if err != nil {
			t.Errorf("%s: %s = %q: not a number", what, tl.name, tl.value)
			continue
		}
		if v != r.v {
			t.Errorf("%s: %s: ibccquery %#x, ibscript %#x", what, tl.name, v, r.v)
		}
		n++
	}
	return n
}

// ccTarget is a node ibccquery and the engine ask: by a LID of it.
type ccTarget struct {
	node *topo.Node
	lid  uint16
}

func ccTargets(t *testing.T, sess *engine.Session) []ccTarget {
	var out []ccTarget
	for _, n := range fabricNodes(t, sess) {
		for i, p := range n.Ports {
			if p != nil && p.LID != 0 && (n.Type != topo.Switch || i == 0) {
				out = append(out, ccTarget{n, p.LID})
			}
		}
	}
	return out
}

// TestCCMatchesIBCCQuery runs every ibccquery operation against every LID
// of the generated fabrics on live ibsim + OpenSM, and the same query
// through the engine: where ibccquery fails, the engine must fail too;
// where it prints, ibscript's decoding must give the same values, field
// for field, in ibccquery's order. ibsim has no CC agent (sim's package
// doc says what it does with class 0x21: the SMA handler of the same
// attribute ID answers with the request's zero data, or the MAD is
// dropped), so the values are zeros; testdata/libibmad.golden in mad/cc
// checks every field's offset against libibmad with non-zero bytes. No CC
// Set is sent to ibsim: it would reach an SMA Set handler.
func TestCCMatchesIBCCQuery(t *testing.T) {
	ibsimtest.Require(t)
	for _, mt := range mixedTopologies {
		t.Run(filepath.Base(mt.path), func(t *testing.T) {
			s := shared.Get(t, mt.path, &ibsimtest.Options{InitPorts: initPorts(mt.path)})
			sess, _ := session(t, s, mt.host, nil, nil)
			ctx := t.Context()
			answered, refused, fields := 0, 0, 0
			for _, tg := range ccTargets(t, sess) {
				for _, o := range ccOps {
					what := fmt.Sprintf("%s (lid %d) %s", tg.node.Desc, tg.lid, o.op)
					out, terr := s.Run(ctx, mt.host, "ibccquery", "-t", "200", o.op, strconv.Itoa(int(tg.lid)))
					d, eerr := sess.CC(ctx, engine.LID(tg.lid), mad.MethodGet, o.attr, 0, nil)
					if o.attr == cc.AttrSwitchPortCongestionSetting && tg.node.Type != topo.Switch {
						// ibccquery refuses a CA before asking ("destination not a switch").
						if terr == nil {
							t.Errorf("%s: ibccquery answered for a CA", what)
						}
						continue
					}
					if (terr == nil) != (eerr == nil) {
						t.Errorf("%s: ibccquery %v, engine %v", what, terr, eerr)
						continue
					}
					if terr != nil {
						var se *engine.StatusError
						var te *engine.TimeoutError
						if !errors.As(eerr, &se) && !errors.As(eerr, &te) {
							t.Errorf("%s: engine error %v, want a status or a timeout", what, eerr)
						}
						refused++
						continue
					}
					answered++
					l := cc.LayoutByID(o.attr)
					if o.attr == cc.AttrCongestionLog {
						if l, eerr = cc.LogLayout(d); eerr != nil {
							t.Errorf("%s: %v", what, eerr)
							continue
						}
					}
					tool := ccLines(out)
					if o.attr == cc.AttrSwitchPortCongestionSetting && len(tool) > 32*5 {
						tool = tool[:32*5] // ibccquery reads 48 ports a block, IBA's blocks hold 32
					}
					if len(tool) == 0 {
						t.Errorf("%s: ibccquery printed no field: %q", what, out)
					}
					fields += compareCC(t, what, tool, ccRows(l, d))
				}
			}
			if answered == 0 || refused == 0 {
				t.Errorf("%d queries answered, %d refused: ibsim's behaviour changed, see sim's doc", answered, refused)
			}
			t.Logf("%d ibccquery answers (%d fields) decoded alike, %d refused by both", answered, fields, refused)
		})
	}
}
