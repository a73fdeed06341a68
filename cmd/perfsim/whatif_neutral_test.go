package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWhatIf_kernelNeutralOneGPU: a what-if that changes only numbers no
// kernel's time depends on (the networks' bandwidths, the capacity) keeps
// the base device's calibration, residual tables, label and band: on one
// GPU its TTFT, TPOT, E2E and throughput lines are byte-identical to the
// base's, and a network change leaves every line after the device's
// two header lines as it was. It had carried the efficiencies as for a
// new chip: TTFT 46.65 ms and TPOT 6.312 ms with the transfer band,
// against the H100's own 46.3 ms and 6.255 ms.
func TestWhatIf_kernelNeutralOneGPU(t *testing.T) {
	run := func(sets ...string) []string {
		t.Helper()
		args := []string{"simulate", "--hw", "h100", "--model", "llama3-8b"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		out, stderr, code := perfsim(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", sets, code, stderr)
		}
		return strings.Split(out, "\n")
	}
	base := run()
	for _, tc := range []struct {
		set     string
		network bool
	}{
		{"interconnect.inter.bandwidth=100GB/s", true},
		{"interconnect.intra.bandwidth=100GB/s", true},
		{"memory.capacity=160GiB", false},
	} {
		got := run(tc.set)
		if len(got) < 3 || !strings.Contains(got[1], "what-if of H100 SXM: kernels as calibrated") || !strings.Contains(got[1], "changed: "+tc.set) ||
			strings.Contains(got[1], "transferred") {
			t.Errorf("--set %s: calibration line %q: want the base's calibration named, and the change", tc.set, got[1])
		}
		want := map[string]bool{"TTFT": true, "TPOT": true, "E2E": true, "output": true}
		seen := 0
		for i, l := range got {
			f := strings.Fields(l)
			if len(f) == 0 || !want[f[0]] {
				continue
			}
			seen++
			if i >= len(base) || base[i] != l {
				t.Errorf("--set %s: %q, want the base's %q", tc.set, l, base[min(i, len(base)-1)])
			}
		}
		if seen != len(want) {
			t.Errorf("--set %s: %d of the TTFT, TPOT, E2E and throughput lines found", tc.set, seen)
		}
		if tc.network && strings.Join(got[2:], "\n") != strings.Join(base[2:], "\n") {
			t.Errorf("--set %s on one GPU changed the output:\n%s\nwant:\n%s", tc.set, strings.Join(got, "\n"), strings.Join(base, "\n"))
		}
	}
	// A change that does reach kernels (the L2, read by the GEMM model)
	// still carries the calibration to them as for a new chip, and says so.
	got := run("memory.l2=100MiB")
	if !strings.Contains(got[1], "what-if of H100 SXM: GEMMs (L2) transferred") {
		t.Errorf("--set memory.l2: calibration line %q: want the transfer", got[1])
	}
}

// TestWhatIf_linkTP8: at TP 8, twice the NVLink bandwidth as a what-if
// changes the collectives and nothing else: every other op of both
// phases takes exactly the calibrated H100's time, with its interval,
// and every collective takes less (the prefill's all-reduces,
// bandwidth-bound at 2048 tokens, clearly less; the decode's small ones
// are mostly latency).
func TestWhatIf_linkTP8(t *testing.T) {
	run := func(sets ...string) simJSON {
		t.Helper()
		args := []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--tp", "8", "--breakdown", "--top", "1000", "--format", "json"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		out, stderr, code := perfsim(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", sets, code, stderr)
		}
		var j simJSON
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	base, fast := run(), run("interconnect.intra.bandwidth=900GB/s")
	if !strings.Contains(fast.Calibration, "what-if of H100 SXM: kernels as calibrated") {
		t.Errorf("calibration %q: want the base's", fast.Calibration)
	}
	if len(base.Phases) != 2 || len(fast.Phases) != len(base.Phases) {
		t.Fatalf("phases: %d and %d, want 2", len(base.Phases), len(fast.Phases))
	}
	for i, p := range base.Phases {
		ops := map[string]opJSON{}
		for _, o := range fast.Phases[i].Ops {
			ops[o.Name] = o
		}
		if len(ops) != len(p.Ops) {
			t.Fatalf("%s: %d ops, want %d", p.Name, len(ops), len(p.Ops))
		}
		collectives := 0
		for _, o := range p.Ops {
			w := ops[o.Name]
			if o.Kind == "collective" {
				collectives++
				if !(w.Time < o.Time) || (p.Name == "prefill" && o.Class == "communication" && !(w.Time < 0.75*o.Time)) {
					t.Errorf("%s: %s %.4g ms at twice the link bandwidth, %.4g ms at the H100's: want it faster", p.Name, o.Name, w.Time*1e3, o.Time*1e3)
				}
				continue
			}
			if w.Time != o.Time || w.TimeLow != o.TimeLow || w.TimeHigh != o.TimeHigh {
				t.Errorf("%s: %s %.6g s (%.6g – %.6g), want the calibrated H100's %.6g s (%.6g – %.6g)", p.Name, o.Name, w.Time, w.TimeLow, w.TimeHigh, o.Time, o.TimeLow, o.TimeHigh)
			}
		}
		if collectives == 0 {
			t.Errorf("%s: no collective at tp 8", p.Name)
		}
	}
}
