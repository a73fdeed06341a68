package plan

import (
	"strings"
	"testing"
)

// FuzzParseObjective checks the parser of plan serve's --objective: it
// never panics, what it accepts has a name that parses back to it, and
// what it refuses is said with both objectives it accepts.
//
//	go test -fuzz=FuzzParseObjective ./plan
func FuzzParseObjective(f *testing.F) {
	for _, s := range []string{"gpus", "COST", " cost ", "", "price", "gpus\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseObjective(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want gpus or cost") {
				t.Fatalf("ParseObjective(%q): %v, want a message saying what is accepted", s, err)
			}
			return
		}
		if back, err := ParseObjective(o.String()); err != nil || back != o {
			t.Fatalf("ParseObjective(%q) = %v, whose name parses to %v, %v", s, o, back, err)
		}
	})
}
