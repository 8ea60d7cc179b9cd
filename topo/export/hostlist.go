package export

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Hostlist writes names as a Slurm hostlist expression: names that differ
// only in a trailing number are folded into ranges ("node[01-04,07]"),
// the others listed as they are, separated by commas. A range keeps the
// width of its first number, as Slurm's hostlist expands it (node[08-10]
// is node08 node09 node10, node[9-10] node9 node10), so a name joins a
// range only when that width writes it back unchanged; numbers of more
// than 9 digits (a GUID in a name) are left unfolded. A name given
// twice is written once. The names keep
// their order, a range taking the place of its first name.
func Hostlist(names []string) string {
	type item struct {
		prefix string
		nums   []string // digit strings; nil for a name without one
	}
	var items []*item
	byPrefix := map[string]*item{}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		d := len(n)
		for d > 0 && n[d-1] >= '0' && n[d-1] <= '9' {
			d--
		}
		if d == len(n) || len(n)-d > 9 {
			items = append(items, &item{prefix: n})
			continue
		}
		p := n[:d]
		if it := byPrefix[p]; it != nil {
			it.nums = append(it.nums, n[d:])
			continue
		}
		it := &item{prefix: p, nums: []string{n[d:]}}
		byPrefix[p] = it
		items = append(items, it)
	}
	var out []string
	for _, it := range items {
		if it.nums == nil {
			out = append(out, it.prefix)
			continue
		}
		if len(it.nums) == 1 {
			out = append(out, it.prefix+it.nums[0])
			continue
		}
		out = append(out, it.prefix+"["+ranges(it.nums)+"]")
	}
	return strings.Join(out, ",")
}

// ranges folds digit strings into "a-b,c" runs.
func ranges(nums []string) string {
	v := func(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }
	sorted := slices.Clone(nums)
	slices.SortStableFunc(sorted, func(a, b string) int {
		if c := compareUint(v(a), v(b)); c != 0 {
			return c
		}
		return len(a) - len(b)
	})
	sorted = slices.Compact(sorted)
	var parts []string
	for i := 0; i < len(sorted); {
		lo := sorted[i]
		w := len(lo)
		j := i + 1
		for j < len(sorted) && v(sorted[j]) == v(sorted[j-1])+1 && fmt.Sprintf("%0*d", w, v(sorted[j])) == sorted[j] {
			j++
		}
		if j-i == 1 {
			parts = append(parts, lo)
		} else {
			parts = append(parts, lo+"-"+sorted[j-1])
		}
		i = j
	}
	return strings.Join(parts, ",")
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
