package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulate_setWithSystem: --set changes the device of a --system as
// it changes an --hw device, and as serve --system already applied it
// (simulate had refused the pair): the system keeps its nodes and
// scale-up domain, and the changed numbers move the step. A bad --set is
// reported with the other problems at once.
func TestSimulate_setWithSystem(t *testing.T) {
	base := []string{"simulate", "--system", "dgx-h100", "--model", "gpt3-2.7b", "--mode", "training", "--tp", "8", "--sp", "--global-batch", "8", "--format", "json"}
	step := func(extra ...string) (float64, string) {
		t.Helper()
		out, errOut, code := perfsim(t, append(append([]string{}, base...), extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		var v struct {
			Hardware string `json:"hardware"`
			Training struct {
				Step      float64 `json:"step_time_s"`
				Breakdown struct {
					TPComm float64 `json:"tp_comm_s"`
				} `json:"breakdown"`
			} `json:"training"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %v\n%s", extra, err, out)
		}
		return v.Training.Breakdown.TPComm, v.Hardware
	}
	tp0, hw0 := step()
	tp1, hw1 := step("--set", "interconnect.intra.bandwidth=900GB/s")
	if !strings.Contains(hw1, "what-if (interconnect.intra.bandwidth=900GB/s)") || strings.Contains(hw0, "what-if") {
		t.Errorf("hardware %q / %q: want the what-if named on the changed run alone", hw0, hw1)
	}
	// Twice the NVLink bandwidth (450 -> 900 GB/s a direction): the
	// exposed TP communication, bandwidth-bound at these sizes, nearly
	// halves.
	if !(tp1 < 0.6*tp0) {
		t.Errorf("TP comm %g s -> %g s with twice the NVLink bandwidth; want it nearly halved", tp0, tp1)
	}
	// A system file of one DGX node given to --hw: the same change, the
	// same step (it had been refused: "--set changes a device").
	file := filepath.Join(t.TempDir(), "node.toml")
	if err := os.WriteFile(file, []byte("device = \"h100\"\nsource = \"test\"\ndevices_per_node = 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var fromFile []string
	for i, a := range base {
		if a == "--system" {
			fromFile = append(append(append(fromFile, base[:i]...), "--hw", file), base[i+2:]...)
		}
	}
	for _, set := range [][]string{nil, {"--set", "interconnect.intra.bandwidth=900GB/s"}} {
		a, _, _ := perfsim(t, append(append([]string{}, base...), set...)...)
		b, errOut, code := perfsim(t, append(append([]string{}, fromFile...), set...)...)
		if code != 0 || stepOf(t, a) != stepOf(t, b) {
			t.Errorf("--set %v: --system step %g s, system file %g s (exit %d, %s); want the same", set, stepOf(t, a), stepOf(t, b), code, errOut)
		}
	}
	// serve --system applies it the same way.
	out, errOut, code := perfsim(t, "serve", "--system", "dgx-h100", "--model", "llama3-8b", "--rate", "2", "--requests", "20", "--set", "memory.bandwidth=6.7TB/s")
	if code != 0 || !strings.Contains(out, "H100 SXM what-if (memory.bandwidth=6.7TB/s)") {
		t.Errorf("serve --system --set: exit %d, stderr %q, stdout %q; want the what-if device", code, errOut, out)
	}
	_, errOut, code = perfsim(t, append(append([]string{}, base...), "--set", "memory.bandwidth=8", "--batch", "0")...)
	if code != 2 || !strings.Contains(errOut, "memory.bandwidth") || !strings.Contains(errOut, "--batch") {
		t.Errorf("bad --set with --system: exit %d, stderr %q; want both problems", code, errOut)
	}
}

// stepOf is the step time of a simulate --format json run.
func stepOf(t *testing.T, out string) float64 {
	t.Helper()
	var v struct {
		Training struct {
			Step float64 `json:"step_time_s"`
		} `json:"training"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Training.Step <= 0 {
		t.Fatalf("no step in %q: %v", out, err)
	}
	return v.Training.Step
}
