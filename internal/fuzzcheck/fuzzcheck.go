// Package fuzzcheck holds the fuzz check shared by the parsers of a
// flag's named values (--router, --objective, --scenario): it is for
// tests only.
package fuzzcheck

import (
	"strings"
	"testing"
)

// Names fuzzes parse, the parser of a set of named values, from seeds:
// it never panics, a value it accepts has a name (String) that parses
// back to it, and what it refuses is an error containing refusal (the
// words that say what is accepted: "want gpus or cost").
func Names[T interface {
	comparable
	String() string
}](f *testing.F, seeds []string, parse func(string) (T, error), refusal string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), refusal) {
				t.Fatalf("parse(%q): %v, want a message saying %q", s, err, refusal)
			}
			return
		}
		if back, err := parse(v.String()); err != nil || back != v {
			t.Fatalf("parse(%q) = %v, whose name parses to %v, %v", s, v, back, err)
		}
	})
}
