// Package suggest finds the likely intended spelling of a mistyped name
// ("did you mean ...?") among the names a flag or key accepts.
package suggest

import "unicode/utf8"

// Closest returns the candidate closest to s by edit distance, if it is
// close enough to be a likely misspelling, else "": about one edit in
// three characters, and at least two. Ties go to the candidate that sorts
// first.
func Closest(s string, candidates []string) string {
	best, bestD := "", -1
	limit := max(2, len(s)/3)
	n := utf8.RuneCountInString(s)
	for _, c := range candidates {
		if m := utf8.RuneCountInString(c); n-m > limit || m-n > limit {
			// The distance is at least the length difference: too far
			// to be suggested. A 120 KB --hw name had cost two seconds
			// of full distance tables.
			continue
		}
		d := Distance(s, c)
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > limit || bestD >= len(s) {
		return ""
	}
	return best
}

// Distance is the Damerau–Levenshtein (optimal string alignment)
// distance between a and b: insertions, deletions, substitutions and
// transpositions of adjacent characters each cost one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n, m := len(ra), len(rb)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := 0; j <= m; j++ {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[n][m]
}
