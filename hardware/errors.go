package hardware

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// ErrUnknownDevice is returned by Lookup for a name that is neither a
// catalog device nor one of its aliases.
var ErrUnknownDevice = errors.New("unknown device")

// A ParseError is one problem in a hardware file, positioned at the line
// of the key it concerns. Line is 0 when the problem has no line (a
// required key that is missing at the top level, a device built in Go).
type ParseError struct {
	File string // the file name as given to Load
	Line int    // 1-based line of the key, or 0
	Key  string // the dotted TOML key, e.g. "memory.bandwidth"; empty when Err names it
	Err  error
}

func (e *ParseError) Error() string {
	s := "hardware: "
	if e.File != "" {
		s += e.File
		if e.Line > 0 {
			s += ":" + strconv.Itoa(e.Line)
		}
		s += ": "
	}
	if e.Key != "" {
		s += e.Key + ": "
	}
	return s + e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }

// joinSorted joins errs in file order (line, then message) so that a
// file's problems read top to bottom and output is deterministic.
func joinSorted(errs []*ParseError) error {
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Error() < errs[j].Error()
	})
	out := make([]error, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}

// suggest returns the candidate closest to s by edit distance, if it is
// close enough to be a likely misspelling, else "".
func suggest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(s, c)
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	// Allow about one edit in three characters, and at least two.
	limit := max(2, len(s)/3)
	if bestD < 0 || bestD > limit || bestD >= len(s) {
		return ""
	}
	return best
}

// editDistance is the Damerau–Levenshtein (optimal string alignment)
// distance between a and b: insertions, deletions, substitutions and
// transpositions of adjacent characters each cost one.
func editDistance(a, b string) int {
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

// unknownKey is the error for a key the schema does not have.
func unknownKey(key, didYouMean string) error {
	if didYouMean != "" {
		return fmt.Errorf("unknown key %q (did you mean %q?)", key, didYouMean)
	}
	return fmt.Errorf("unknown key %q", key)
}
