package plan

import (
	"testing"

	"github.com/perfsim/perfsim/internal/importcheck"
)

// TestImports keeps the dependency direction of DESIGN.md: plan imports neither workloads, calibrate nor cmd.
func TestImports(t *testing.T) {
	importcheck.Banned(t, "/workloads", "/calibrate", "/cmd/")
}
