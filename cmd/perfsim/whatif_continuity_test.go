package main

import (
	"testing"
)

// TestWhatIf_continuous: a what-if of a calibrated device is continuous
// and monotone about it. A datasheet number lowered by 1% or 0.1% makes
// no kernel faster and none slower than by the number's ratio (a time
// reads a peak or the bandwidth at most inversely), and TTFT and TPOT
// move by at most that ratio. A carried kernel keeps the calibrated
// device's residual table (hardware.transferSameChip); it had lost it, so
// the fp8 peak at 0.99× gave TTFT 32.79 ms against the H100's 33.28 ms,
// faster at a lower peak, and TPOT 3.696 ms against 3.678 ms where the
// fp8 peak does not bound the decode.
func TestWhatIf_continuous(t *testing.T) {
	run := func(args []string, sets ...string) simJSON {
		t.Helper()
		return whatIfJSON(t, append([]string{"--breakdown", "--top", "1000"}, args...), sets...)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		set   string
		ratio float64 // the set value over the H100's
	}{
		{"fp8 peak 0.99×", []string{"--dtype", "fp8"}, "peak.matrix.fp8=1959.21TFLOP/s", 0.99},
		{"fp8 peak 0.999×", []string{"--dtype", "fp8"}, "peak.matrix.fp8=1977.021TFLOP/s", 0.999},
		{"bf16 peak 0.99×", nil, "peak.matrix.bf16=979.605TFLOP/s", 0.99},
		{"bandwidth 0.99× decode", []string{"--batch", "16", "--input", "4096"}, "memory.bandwidth=3.3165TB/s", 0.99},
		{"bandwidth 0.999× fp8", []string{"--dtype", "fp8"}, "memory.bandwidth=3.34665TB/s", 0.999},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, got := run(tc.args), run(tc.args, tc.set)
			most := 1 / tc.ratio * (1 + 1e-9)
			within := func(what string, g, b float64) {
				if !(g >= b && g <= b*most) {
					t.Errorf("%s: %s %.6g s, want from the H100's %.6g s to %.6g s (×%.4g)", tc.set, what, g, b, b*most, most)
				}
			}
			within("TTFT", *got.TTFT, *base.TTFT)
			within("TPOT", *got.TPOT, *base.TPOT)
			if len(got.Phases) != len(base.Phases) {
				t.Fatalf("%d phases, base %d", len(got.Phases), len(base.Phases))
			}
			n := 0
			for p := range got.Phases {
				if len(got.Phases[p].Ops) != len(base.Phases[p].Ops) {
					t.Fatalf("%s: %d ops, base %d", got.Phases[p].Name, len(got.Phases[p].Ops), len(base.Phases[p].Ops))
				}
				for k, o := range got.Phases[p].Ops {
					b := base.Phases[p].Ops[k]
					if o.Name != b.Name {
						t.Fatalf("op %d: %s, base %s", k, o.Name, b.Name)
					}
					within(got.Phases[p].Name+" "+o.Name, o.Time, b.Time)
					n++
				}
			}
			if n == 0 {
				t.Fatal("no ops in the breakdown")
			}
		})
	}
}
