package serve

import "testing"

// FuzzParseArrival checks the parser of --arrival: it never panics, and
// what it accepts has a name that parses back to it.
//
//	go test -fuzz=FuzzParseArrival ./serve
func FuzzParseArrival(f *testing.F) {
	for _, s := range []string{"poisson", "gamma", "constant", "all", "offline", "Poisson", " all", "", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArrival(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseArrival(%q): an empty error", s)
			}
			return
		}
		if back, err := ParseArrival(a.String()); err != nil || back != a {
			t.Fatalf("ParseArrival(%q) = %v, whose name parses to %v, %v", s, a, back, err)
		}
	})
}
