package mlperf

import (
	"strings"
	"testing"
)

// FuzzParseScenario checks the parser of --scenario: it never panics, and
// what it accepts has a name that parses back to it.
//
//	go test -fuzz=FuzzParseScenario ./mlperf
func FuzzParseScenario(f *testing.F) {
	for _, s := range []string{"offline", "Server", " SERVER ", "", "singlestream", "offline\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseScenario(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want offline or server") {
				t.Fatalf("ParseScenario(%q): %v, want a message saying what is accepted", s, err)
			}
			return
		}
		if back, err := ParseScenario(sc.String()); err != nil || back != sc {
			t.Fatalf("ParseScenario(%q) = %v, whose name parses to %v, %v", s, sc, back, err)
		}
	})
}
