package serve

import (
	"testing"

	"github.com/perfsim/perfsim/internal/importcheck"
)

// TestImports keeps the dependency direction of DESIGN.md: serve imports neither workloads, calibrate, plan nor cmd.
func TestImports(t *testing.T) {
	importcheck.Banned(t, "/workloads", "/calibrate", "/plan", "/cmd/")
}
