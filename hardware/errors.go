package hardware

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	sg "github.com/perfsim/perfsim/internal/suggest"
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
// close enough to be a likely misspelling, else "" (suggest.Closest).
func suggest(s string, candidates []string) string { return sg.Closest(s, candidates) }

// editDistance is suggest.Distance.
func editDistance(a, b string) int { return sg.Distance(a, b) }

// unknownKey is the error for a key the schema does not have.
func unknownKey(key, didYouMean string) error {
	if didYouMean != "" {
		return fmt.Errorf("unknown key %q (did you mean %q?)", key, didYouMean)
	}
	return fmt.Errorf("unknown key %q", key)
}
