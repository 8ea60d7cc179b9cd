package analyze

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// SwitchShape is one switch's place in the tree.
type SwitchShape struct {
	Switch NodeRef `json:"switch"`
	// Level counts switches from the CAs: 1 for a switch with a CA (a
	// leaf), 2 above it, ...; 0 when no CA is below it.
	Level int `json:"level"`
	// Up and Down count the links to a switch a level higher and to one a
	// level lower or a CA; Lateral the links to a switch of its own level
	// (none in a fat tree).
	Up      int `json:"up"`
	Down    int `json:"down"`
	Lateral int `json:"lateral"`
	CAs     int `json:"cas"`
}

// LevelShape sums one level.
type LevelShape struct {
	Level    int `json:"level"`
	Switches int `json:"switches"`
	// Up and Down are the most common up and down link counts of the
	// level's switches; NonUniform lists the switches that differ.
	Up         int       `json:"up"`
	Down       int       `json:"down"`
	NonUniform []NodeRef `json:"non_uniform"`
	// UpGbps and DownGbps sum the signalling rates (lanes times lane
	// rate) of the level's up and down links; Oversubscription is
	// DownGbps / UpGbps (0 at the top level).
	UpGbps           float64 `json:"up_gbps"`
	DownGbps         float64 `json:"down_gbps"`
	Oversubscription float64 `json:"oversubscription"`
}

// FatTreeReport is what CheckFatTree found.
type FatTreeReport struct {
	Levels   []LevelShape  `json:"levels"`
	Switches []SwitchShape `json:"switches"`
	// Problems name what is not a fat tree: lateral links, switches no CA
	// is below, non-uniform switches.
	Problems []string `json:"problems"`
	// BisectionGbps is half the least up rate of a level below the top: a
	// cut through the switches above that level splitting its switches in
	// two halves passes at most that much.
	BisectionGbps float64 `json:"bisection_gbps"`
	// UnknownRates counts the cabled switch ports whose active width or
	// speed is unknown (a topology file without them): their rate counts
	// 0.
	UnknownRates int `json:"unknown_rates"`
}

// CheckFatTree ranks the switches by their distance from the CAs and
// checks the shape a fat tree has: every link goes one level up or down,
// the switches of a level have the same up and down counts, and the
// oversubscription of each level (down over up rate).
func CheckFatTree(f *topo.Fabric) *FatTreeReport {
	x := newIndex(f, nil)
	level := levels(x)
	r := &FatTreeReport{Levels: []LevelShape{}, Switches: []SwitchShape{}, Problems: []string{}}
	byLevel := map[int]*LevelShape{}
	for s, n := range x.sw {
		sh := SwitchShape{Switch: ref(n), Level: level[s], CAs: caCount(n)}
		ls := byLevel[level[s]]
		if ls == nil {
			ls = &LevelShape{Level: level[s], NonUniform: []NodeRef{}}
			byLevel[level[s]] = ls
		}
		ls.Switches++
		for pn, h := range x.next[s] {
			if pn == 0 || h.port == nil {
				continue
			}
			rate, known := linkGbps(n.Ports[pn])
			if !known {
				r.UnknownRates++
			}
			switch {
			case h.sw < 0 || level[h.sw] < level[s]:
				sh.Down++
				ls.DownGbps += rate
			case level[h.sw] > level[s]:
				sh.Up++
				ls.UpGbps += rate
			default:
				sh.Lateral++
			}
		}
		if sh.Lateral > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%q (%s): %s within level %d", n.Desc, sh.Switch.GUID, Count(sh.Lateral, "link", "links"), sh.Level))
		}
		if sh.Level == 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%q (%s): no CA below it", n.Desc, sh.Switch.GUID))
		}
		r.Switches = append(r.Switches, sh)
	}
	r.levelShapes(byLevel)
	return r
}

// levelShapes fills Levels, the non-uniform switches and the bisection,
// level by level from the lowest, so the problems come in one order.
func (r *FatTreeReport) levelShapes(byLevel map[int]*LevelShape) {
	for _, l := range slices.Sorted(maps.Keys(byLevel)) {
		ls := byLevel[l]
		type ud struct{ up, down int }
		count := map[ud]int{}
		for _, sh := range r.Switches {
			if sh.Level == ls.Level {
				count[ud{sh.Up, sh.Down}]++
			}
		}
		best, bestN := ud{}, -1
		for k, n := range count {
			if n > bestN || (n == bestN && (k.up > best.up || (k.up == best.up && k.down > best.down))) {
				best, bestN = k, n
			}
		}
		ls.Up, ls.Down = best.up, best.down
		for _, sh := range r.Switches {
			if sh.Level == ls.Level && (sh.Up != best.up || sh.Down != best.down) {
				ls.NonUniform = append(ls.NonUniform, sh.Switch)
				r.Problems = append(r.Problems, fmt.Sprintf("%q (%s): %d up %d down, level %d's switches %d up %d down", sh.Switch.Desc, sh.Switch.GUID, sh.Up, sh.Down, ls.Level, best.up, best.down))
			}
		}
		if ls.UpGbps > 0 {
			ls.Oversubscription = ls.DownGbps / ls.UpGbps
		}
		r.Levels = append(r.Levels, *ls)
	}
	for _, ls := range r.Levels {
		if ls.Level > 0 && ls.UpGbps > 0 && (r.BisectionGbps == 0 || ls.UpGbps/2 < r.BisectionGbps) {
			r.BisectionGbps = ls.UpGbps / 2
		}
	}
}

// caCount counts the CA and router ports cabled to switch n (with a LID
// or not: a topology file has none).
func caCount(n *topo.Node) int {
	c := 0
	for pn, p := range n.Ports {
		if pn > 0 && p != nil && p.Remote != nil && p.Remote.Node.Type != topo.Switch {
			c++
		}
	}
	return c
}

// levels ranks the switches breadth first from those with a CA (1).
func levels(x *index) []int {
	level := make([]int, len(x.sw))
	var queue []int
	for s, n := range x.sw {
		if caCount(n) > 0 {
			level[s] = 1
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, h := range x.next[s] {
			if h.sw >= 0 && level[h.sw] == 0 {
				level[h.sw] = level[s] + 1
				queue = append(queue, int(h.sw))
			}
		}
	}
	return level
}

// laneGbps are the lane rates of the active speeds, fastest first: the
// PortInfo field's mask bit and the rate in Gb/s.
var laneGbps = []struct {
	speed func(*topo.Port) uint8
	bit   uint8
	gbps  float64
}{
	{extSpeed, 8, 106.25}, {extSpeed, 4, 53.125}, {extSpeed, 2, 25.78125}, {extSpeed, 1, 14.0625},
	{fdr10Speed, smp.MlnxSpeedFDR10, 10.3125},
	{speed, 4, 10}, {speed, 2, 5}, {speed, 1, 2.5},
}

func extSpeed(p *topo.Port) uint8   { return p.SpeedExtActive }
func fdr10Speed(p *topo.Port) uint8 { return p.MlnxSpeedActive }
func speed(p *topo.Port) uint8      { return p.SpeedActive }

// linkGbps is a port's active signalling rate: lanes times the lane rate
// (SDR 2.5, DDR 5, QDR 10, FDR10 10.3125, FDR 14.0625, EDR 25.78125, HDR
// 53.125, NDR 106.25 Gb/s); known false when the width or speed is.
func linkGbps(p *topo.Port) (float64, bool) {
	lanes := map[uint8]float64{1: 1, 2: 4, 4: 8, 8: 12, 16: 2}[p.WidthActive]
	for _, l := range laneGbps {
		if l.speed(p)&l.bit != 0 {
			return lanes * l.gbps, lanes > 0
		}
	}
	return 0, false
}

// Count is n followed by one when n is 1, else by many: "1 level",
// "2 levels", "0 switches".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
