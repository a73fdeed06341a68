package mlperf

import (
	"testing"

	"github.com/perfsim/perfsim/internal/importcheck"
)

// TestImports keeps the dependency direction of DESIGN.md: mlperf prices through sim and serve, never workloads, calibrate or cmd.
func TestImports(t *testing.T) {
	importcheck.Banned(t, "/workloads", "/calibrate", "/cmd/")
}
