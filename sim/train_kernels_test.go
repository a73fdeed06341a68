package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestFlashBackwardRatio: at the FlashAttention-3 paper's measured points
// the ratio is cuDNN's backward over forward TFLOP/s exactly; between
// them it interpolates in log₂, and outside them it holds the nearest.
func TestFlashBackwardRatio(t *testing.T) {
	tests := []struct {
		name         string
		seq, headDim int
		want         float64
	}{
		{"hd128 at 4k, measured", 4096, 128, 499. / 609},
		{"hd128 at 512, measured", 512, 128, 305. / 497},
		{"hd64 at 2k, measured", 2048, 64, 395. / 395},
		{"hd64 at 16k, measured", 16384, 64, 433. / 413},
		{"hd128 halfway 2k-4k in log2", 2896, 128, (465./617 + 499./609) / 2},
		{"below 512 holds 512", 128, 128, 305. / 497},
		{"above 16k holds 16k", 131072, 128, 516. / 595},
		{"head dim 256 holds 128", 4096, 256, 499. / 609},
		{"head dim 32 holds 64", 4096, 32, 417. / 408},
		{"head dim 96 halfway in log2 is not 80", 4096, 96, 417./408 + math.Log2(1.5)*(499./609-417./408)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FlashBackwardRatio(tc.seq, tc.headDim)
			tol := 1e-12
			if tc.seq == 2896 {
				tol = 2e-4 // 2896 is 2^11.5 to four digits
			}
			if math.Abs(got-tc.want) > tol {
				t.Errorf("FlashBackwardRatio(%d, %d) = %.6f, want %.6f", tc.seq, tc.headDim, got, tc.want)
			}
		})
	}
}

// TestTraining_backwardCosts: a fused-attention decoder's training step
// carries the gradient-buffer passes in its optimizer phase (zero and
// NaN check always, the 1/DP scaling only with data parallelism), each
// moving the rank's gradient buffer at the gradients' type.
func TestTraining_backwardCosts(t *testing.T) {
	for _, dp := range []int{1, 8} {
		sc := layoutScenario(func(s *Scenario) { s.DP = dp })
		sc.GradType = model.FP32
		w := tinyLlama()
		rep := mustRun(t, testSystem(dp), w, sc)
		r := &runner{sys: testSystem(dp), sc: sc, w: w, shape: w.Shape()}
		dense, experts := r.rankParams()
		want := map[string]model.Bytes{"grad.zero": model.Bytes(4 * (dense + experts)), "grad.nan_check": model.Bytes(4 * (dense + experts))}
		if dp > 1 {
			want["grad.scale"] = model.Bytes(8 * (dense + experts))
		}
		got := map[string]model.Bytes{}
		for _, o := range rep.Training.Optimizer.Ops {
			if name := o.Name.String(); strings.HasPrefix(name, "grad.") {
				got[name] = o.Bytes
			}
		}
		if len(got) != len(want) {
			t.Errorf("dp %d: gradient-buffer passes %v, want %v", dp, got, want)
		}
		for k, w := range want {
			if math.Abs(float64(got[k]-w)) > 1e-6*float64(w) {
				t.Errorf("dp %d: %s moves %v, want %v", dp, k, got[k], w)
			}
		}
	}
}

// TestTraining_sustainedShare: a device that keeps a share s < 1 of its
// compute rate over a long run takes longer for a training step, but
// never more than 1/s longer (only its matrix kernels stretch); no share
// (0) and a share of 1 price the same step.
func TestTraining_sustainedShare(t *testing.T) {
	w := tinyLlama()
	for _, tt := range layouts {
		t.Run(tt.name, func(t *testing.T) {
			sc := layoutScenario(tt.mod)
			step := func(s float64) model.Seconds {
				sys := testSystem(64)
				sys.Device.Power.Sustained = s
				return mustRun(t, sys, w, sc).Training.StepTime
			}
			none, one, slow := step(0), step(1), step(0.9)
			if none != one {
				t.Errorf("no share %v, share 1 %v: want the same", none, one)
			}
			if !(slow > one) || float64(slow) > float64(one)/0.9*(1+1e-12) {
				t.Errorf("share 0.9: %v, want above %v and at most %v", slow, one, one/0.9)
			}
		})
	}
}
