package bindings

import (
	"slices"
	"strings"
)

// Suggestions for "did you mean": plan.define's unknown --arg, and in
// cmd/ibscript unknown flags, commands and functions.

// Suggest returns the candidates nearest word, for "did you mean": those
// at the smallest edit distance (a transposition counts as one edit)
// when it is small for the word's length, or those word is a prefix of.
func Suggest(word string, cands []string) []string {
	if word == "" {
		return nil
	}
	limit := 1
	if n := len(strings.TrimLeft(word, "-")); n >= 5 {
		limit = 2
	}
	best, out := limit+1, []string(nil)
	for _, c := range cands {
		d := EditDistance(word, c)
		switch {
		case d < best:
			best, out = d, []string{c}
		case d == best:
			out = append(out, c)
		}
	}
	if out == nil && len(strings.TrimLeft(word, "-")) >= 3 {
		for _, c := range cands {
			if strings.HasPrefix(c, word) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	if len(out) > 4 {
		out = out[:4]
	}
	return out
}

// EditDistance is the optimal-string-alignment distance of a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// bytes each count one.
func EditDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
