package sim

import (
	"testing"

	"github.com/perfsim/perfsim/workloads"
)

// FuzzParseMode checks the parsers of the mode words (ParseMode,
// ParseRecompute, ParseOptimizer, ParseSchedule, ParseExec,
// ParseAttentionKernel and workloads.ParsePhaseKind): none
// panics, and what one accepts has a name that parses back to it.
//
//	go test -fuzz=FuzzParseMode ./sim
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"inference", "TRAIN", "selective", "Full", "adamw", "sgd", "prefill", " bwd ", "train-forward", "", "none\x00", "1F1B", "interleaved", "gpipe ", " TRT", "cuda-graphs", "eager", "FA2", " flash_attention_2 ", "calibrated"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := ParseMode(s); err == nil {
			if back, err := ParseMode(m.String()); err != nil || back != m {
				t.Fatalf("ParseMode(%q) = %v, whose name parses to %v, %v", s, m, back, err)
			}
		} else if err.Error() == "" {
			t.Fatalf("ParseMode(%q): an empty error", s)
		}
		if r, err := ParseRecompute(s); err == nil {
			if back, err := ParseRecompute(r.String()); err != nil || back != r {
				t.Fatalf("ParseRecompute(%q) = %v, whose name parses to %v, %v", s, r, back, err)
			}
		}
		if o, err := ParseOptimizer(s); err == nil {
			if back, err := ParseOptimizer(o.String()); err != nil || back != o {
				t.Fatalf("ParseOptimizer(%q) = %v, whose name parses to %v, %v", s, o, back, err)
			}
		}
		if sc, err := ParseSchedule(s); err == nil {
			if back, err := ParseSchedule(sc.String()); err != nil || back != sc {
				t.Fatalf("ParseSchedule(%q) = %v, whose name parses to %v, %v", s, sc, back, err)
			}
		} else if err.Error() == "" {
			t.Fatalf("ParseSchedule(%q): an empty error", s)
		}
		if e, err := ParseExec(s); err == nil {
			if back, err := ParseExec(e.String()); err != nil || back != e {
				t.Fatalf("ParseExec(%q) = %v, whose name parses to %v, %v", s, e, back, err)
			}
		} else if err.Error() == "" {
			t.Fatalf("ParseExec(%q): an empty error", s)
		}
		if a, err := ParseAttentionKernel(s); err == nil {
			if back, err := ParseAttentionKernel(a.String()); err != nil || back != a {
				t.Fatalf("ParseAttentionKernel(%q) = %v, whose name parses to %v, %v", s, a, back, err)
			}
		} else if err.Error() == "" {
			t.Fatalf("ParseAttentionKernel(%q): an empty error", s)
		}
		if k, err := workloads.ParsePhaseKind(s); err == nil {
			if back, err := workloads.ParsePhaseKind(k.String()); err != nil || back != k {
				t.Fatalf("ParsePhaseKind(%q) = %v, whose name parses to %v, %v", s, k, back, err)
			}
		}
	})
}
