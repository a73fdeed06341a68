package sim

import (
	"testing"

	"github.com/perfsim/perfsim/internal/importcheck"
)

// TestImports keeps the dependency direction of DESIGN.md: sim imports neither workloads, calibrate nor cmd (tests may).
func TestImports(t *testing.T) {
	importcheck.Banned(t, "/workloads", "/calibrate", "/cmd/")
}
