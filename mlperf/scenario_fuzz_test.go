package mlperf

import (
	"testing"

	"github.com/perfsim/perfsim/internal/fuzzcheck"
)

// FuzzParseScenario checks the parser of --scenario: it never panics, and
// what it accepts has a name that parses back to it.
//
//	go test -fuzz=FuzzParseScenario ./mlperf
func FuzzParseScenario(f *testing.F) {
	fuzzcheck.Names(f, []string{"offline", "Server", " SERVER ", "", "singlestream", "offline\x00"}, ParseScenario, "want offline or server")
}
