package racedetect

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestEnabled checks the constant against the build info of the test
// binary, where "go version -m" reports -race=true for a -race build.
func TestEnabled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	out, err := exec.Command("go", "version", "-m", exe).Output()
	if err != nil {
		t.Skipf("go version -m: %v", err)
	}
	built := strings.Contains(string(out), "-race=true")
	if built != Enabled {
		t.Errorf("Enabled = %v, but the build info says -race=%v", Enabled, built)
	}
}
