package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// whatIfRun runs simulate on the H100 with llama3-8b and the extra
// arguments, and returns its output.
func whatIfRun(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := perfsim(t, append([]string{"simulate", "--hw", "h100", "--model", "llama3-8b"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return out
}

// whatIfJSON is whatIfRun with --format json and each of sets as a --set,
// decoded.
func whatIfJSON(t *testing.T, args []string, sets ...string) simJSON {
	t.Helper()
	args = append(append([]string{}, args...), "--format", "json")
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	var j simJSON
	if err := json.Unmarshal([]byte(whatIfRun(t, args...)), &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestWhatIf_sameValueNoOp: a --set equal to the base's own value is no
// what-if at all: the output is the base's byte for byte, its calibration
// label included. The H100's own fp8 peak (1979 TFLOP/s, its datasheet's
// figure) had printed "transferred from H100 SXM", TTFT 32.6 ms against
// 33.28 ms and TPOT 3.703 ms against 3.678 ms, in a wider band.
func TestWhatIf_sameValueNoOp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		set  string
	}{
		{[]string{"--dtype", "fp8"}, "peak.matrix.fp8=1979TFLOP/s"},
		{nil, "peak.matrix.bf16=989.5TFLOP/s"},
		{nil, "memory.bandwidth=3.35TB/s"},
		{[]string{"--format", "json"}, "clock=1.98GHz"},
	} {
		base := whatIfRun(t, tc.args...)
		got := whatIfRun(t, append(tc.args, "--set", tc.set)...)
		if got != base {
			t.Errorf("%v --set %s: the output changed:\n%s\nwant the base's:\n%s", tc.args, tc.set, got, base)
		}
	}
}

// TestWhatIf_fp8LeavesBF16: a change of the fp8 peak reaches no kernel
// of a bf16 run: every line but the device's name and its label is the
// calibrated H100's, byte for byte, and the label says the fp8 kernels
// are the ones carried. It had carried every kernel's calibration and
// dropped their residual tables: TTFT 46.65 ms against 46.3 ms.
func TestWhatIf_fp8LeavesBF16(t *testing.T) {
	for _, args := range [][]string{nil, {"--breakdown", "--top", "1000"}} {
		base := strings.Split(whatIfRun(t, args...), "\n")
		got := strings.Split(whatIfRun(t, append(args, "--set", "peak.matrix.fp8=4PFLOP/s")...), "\n")
		if len(got) < 3 || !strings.Contains(got[1], "what-if of H100 SXM: fp8 kernels transferred") || !strings.Contains(got[1], "the others as calibrated") {
			t.Fatalf("%v: label line %q: want the fp8 kernels named as transferred", args, got[1])
		}
		if strings.Join(got[2:], "\n") != strings.Join(base[2:], "\n") {
			t.Errorf("%v: a bf16 run changed with the fp8 peak:\n%s\nwant:\n%s", args, strings.Join(got, "\n"), strings.Join(base, "\n"))
		}
	}
}

// TestWhatIf_fp8Prefill: the fp8 peak moves an fp8 run's compute-bound
// prefill the way it should: a higher peak makes it faster, a lower one
// slower, monotonically, the fp8 GEMMs and attention by at most the
// peak's ratio, while the run's bf16 kernel (the LM head) and its
// memory-bound passes take the calibrated time exactly. A changed kernel
// keeps its residual table (TestWhatIf_continuous holds the step from the
// calibrated device to the peak's ratio; 0.99× had given 32.79 ms against
// 33.28 ms when it lost it).
func TestWhatIf_fp8Prefill(t *testing.T) {
	run := func(sets ...string) simJSON {
		t.Helper()
		return whatIfJSON(t, []string{"--dtype", "fp8", "--breakdown", "--top", "1000"}, sets...)
	}
	base := run()
	if base.PrefillBound != "compute" {
		t.Fatalf("prefill %s-bound: want a compute-bound prefill", base.PrefillBound)
	}
	prev := 0.0
	for i, f := range []string{"1583.2TFLOP/s", "1959.21TFLOP/s", "1998.79TFLOP/s", "2374.8TFLOP/s"} { // 0.8, 0.99, 1.01, 1.2×
		j := run("peak.matrix.fp8=" + f)
		ttft := *j.TTFT
		switch {
		case i == 0 && !(ttft > *base.TTFT):
			t.Errorf("fp8 peak %s: TTFT %g s, want slower than the H100's %g s", f, ttft, *base.TTFT)
		case i == 3 && !(ttft < *base.TTFT):
			t.Errorf("fp8 peak %s: TTFT %g s, want faster than the H100's %g s", f, ttft, *base.TTFT)
		case i > 0 && !(ttft < prev):
			t.Errorf("fp8 peak %s: TTFT %g s, want faster than at the lower peak, %g s", f, ttft, prev)
		}
		prev = ttft
		for p := range j.Phases {
			for k, o := range j.Phases[p].Ops {
				b := base.Phases[p].Ops[k]
				if o.Name != b.Name {
					t.Fatalf("op %d: %s, base %s", k, o.Name, b.Name)
				}
				reads := o.DType == "fp8" && (o.Kind == "gemm" || o.Kind == "attention")
				if !reads && (o.Time != b.Time || o.TimeLow != b.TimeLow || o.TimeHigh != b.TimeHigh) {
					t.Errorf("fp8 peak %s: %s %s (%s) %g s [%g, %g], want its calibrated %g s [%g, %g]", f, j.Phases[p].Name, o.Name, o.DType, o.Time, o.TimeLow, o.TimeHigh, b.Time, b.TimeLow, b.TimeHigh)
				}
			}
		}
	}
}

// TestWhatIf_bandwidthCarriesAll: a bandwidth change, which every
// kernel's time reads, still carries the calibration to every kernel, the
// memory-bound decode's among them: the label is the transfer's, and the
// decode step follows the bandwidth.
func TestWhatIf_bandwidthCarriesAll(t *testing.T) {
	run := func(sets ...string) simJSON {
		t.Helper()
		return whatIfJSON(t, nil, sets...)
	}
	base := run()
	j := run("memory.bandwidth=6.7TB/s")
	if !strings.HasPrefix(j.Calibration, "transferred from H100 SXM") {
		t.Errorf("calibration %q: want every kernel carried", j.Calibration)
	}
	if j.DecodeBound != "memory" || !(*j.TPOT < 0.75**base.TPOT) {
		t.Errorf("twice the bandwidth: TPOT %g s (%s-bound), want well under the H100's %g s", *j.TPOT, j.DecodeBound, *base.TPOT)
	}
}
