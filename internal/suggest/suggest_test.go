package suggest

import (
	"fmt"
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	names := []string{"llama3-8b", "llama3-70b", "llama2-7b", "gpt3-175b", "mixtral-8x7b"}
	for _, tc := range []struct{ in, want string }{
		{"llama3-8", "llama3-8b"}, {"lamma3-70b", "llama3-70b"}, {"gtp3-175b", "gpt3-175b"},
		{"mixtral", ""}, {"quantum-9000", ""}, {"", ""}, {"llama3-8b", "llama3-8b"},
	} {
		if got := Closest(tc.in, names); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"kitten", "sitting", 3}, {"ab", "ba", 1}, {"", "abc", 3}, {"µs", "us", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func ExampleClosest() {
	fmt.Println(Closest("lama3-70b", []string{"llama3-8b", "llama3-70b"}))
	// Output: llama3-70b
}

// TestClosest_longName: a name far longer than every candidate is
// answered without a distance table per candidate (a 120 KB --hw name
// took two seconds), and with no suggestion.
func TestClosest_longName(t *testing.T) {
	long := strings.Repeat("x", 200000)
	allocs := testing.AllocsPerRun(1, func() {
		if got := Closest(long, []string{"h100", "a100", "mi300x"}); got != "" {
			t.Errorf("Closest(200000 × x) = %q", got)
		}
	})
	if allocs > 10 {
		t.Errorf("Closest of a 200000-character name: %v allocations, want none per candidate", allocs)
	}
}
