package serve

import (
	"testing"

	"github.com/perfsim/perfsim/internal/fuzzcheck"
)

// FuzzParseRouter checks the parser of serve's --router: it never
// panics, what it accepts has a name that parses back to it, and what it
// refuses is said with both routers it accepts.
//
//	go test -fuzz=FuzzParseRouter ./serve
func FuzzParseRouter(f *testing.F) {
	fuzzcheck.Names(f, []string{"round-robin", "Least-Outstanding", " round-robin", "", "lor", "round-robin\x00"},
		ParseRouter, "want round-robin or least-outstanding")
}
