package plan

import (
	"testing"

	"github.com/perfsim/perfsim/internal/fuzzcheck"
)

// FuzzParseObjective checks the parser of plan serve's --objective: it
// never panics, what it accepts has a name that parses back to it, and
// what it refuses is said with both objectives it accepts.
//
//	go test -fuzz=FuzzParseObjective ./plan
func FuzzParseObjective(f *testing.F) {
	fuzzcheck.Names(f, []string{"gpus", "COST", " cost ", "", "price", "gpus\x00"}, ParseObjective, "want gpus or cost")
}
