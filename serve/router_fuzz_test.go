package serve

import (
	"strings"
	"testing"
)

// FuzzParseRouter checks the parser of serve's --router: it never
// panics, what it accepts has a name that parses back to it, and what it
// refuses is said with both routers it accepts.
//
//	go test -fuzz=FuzzParseRouter ./serve
func FuzzParseRouter(f *testing.F) {
	for _, s := range []string{"round-robin", "Least-Outstanding", " round-robin", "", "lor", "round-robin\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRouter(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want round-robin or least-outstanding") {
				t.Fatalf("ParseRouter(%q): %v, want a message saying what is accepted", s, err)
			}
			return
		}
		if back, err := ParseRouter(r.String()); err != nil || back != r {
			t.Fatalf("ParseRouter(%q) = %v, whose name parses to %v, %v", s, r, back, err)
		}
	})
}
