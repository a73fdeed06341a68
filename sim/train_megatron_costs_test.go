package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestLossTraffic: the cross entropy's traffic per logit is the sum of
// Megatron-LM r0.8's passes over the logits (cross_entropy.py), each
// listed here as the code runs it; the subtraction of the maximum and the
// exponentiation are two kernels (an in-place -= and torch.exp(out=)),
// which 44 bytes had counted as one.
func TestLossTraffic(t *testing.T) {
	passes := []struct {
		name        string
		read, wrote int
	}{
		{".float()", 2, 4}, {"torch.max", 4, 0}, {"-= logits_max", 4, 4}, {"torch.exp(out=)", 4, 4},
		{"sum", 4, 0}, {"div_", 4, 4}, {"backward mul_", 4, 4}, {"backward cast to bf16", 4, 2},
	}
	var read, wrote int
	for _, p := range passes {
		read, wrote = read+p.read, wrote+p.wrote
	}
	if read != lossRead || wrote != lossWritten || read+wrote != 52 {
		t.Errorf("loss traffic %d read, %d written per logit; the passes give %d and %d (52 in all)", lossRead, lossWritten, read, wrote)
	}
}

// TestEndBucket: the data-parallel bucket a step exposes holds the whole
// embedding table of the rank when that is larger than Megatron-LM's
// bucket size (which never splits a parameter), and the exposed
// reduce-scatter and all-gather are that bucket's share of the whole
// when the passes hide the rest.
func TestEndBucket(t *testing.T) {
	w := tinyLlama()
	w.vocab = 131072 // 268 M embedding parameters at d 2,048
	for _, tc := range []struct {
		name    string
		tp, dp  int
		want    float64 // parameters
		noVocab bool
	}{
		{"embedding over the bucket", 1, 64, 131072 * 2048, false},
		{"embedding split by TP 4, still over", 4, 16, 131072 * 2048 / 4, false},
		{"split by TP 8, under the 40 M bucket", 8, 16, 40e6, false},
		{"a small table keeps the bucket", 1, 64, 64e6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ww := *w
			if tc.noVocab {
				ww.vocab = 16384 // 33.5 M parameters: under max(40 M, 64 M)
			}
			sc := layoutScenario(func(s *Scenario) { s.TP, s.DP, s.SP, s.ZeRO = tc.tp, tc.dp, tc.tp > 1, 1 })
			sys := testSystem(tc.tp * tc.dp)
			r := &runner{sys: sys, sc: sc.normalized(), w: &ww, shape: ww.Shape()}
			if got := r.endBucket(tc.dp); math.Abs(got-tc.want) > 1e-9*tc.want {
				t.Errorf("endBucket = %.4g, want %.4g", got, tc.want)
			}
			dense, experts := r.rankParams()
			// Passes long enough to hide all but the end bucket.
			exp, _ := r.dpComm(dense, experts, 4, 1e3, 1e3)
			g := r.group(tc.dp, tc.tp)
			rs := r.comm(model.ReduceScatter, r.gradType().Bytes(dense), g)
			ag := r.comm(model.AllGather, sc.Weights.Bytes(dense), g)
			want := model.Seconds(tc.want/dense) * (rs + ag)
			if math.Abs(float64(exp-want)) > 1e-9*float64(want) {
				t.Errorf("exposed %v, want the end bucket's share %v", exp, want)
			}
		})
	}
}

// TestWgradAccumulates: every weight-gradient GEMM of a training step
// writes the gradients' type and reads it too (it accumulates into the
// main gradient: beta 1), so its C moves twice; the forward's and the
// data gradients' GEMMs are untouched.
func TestWgradAccumulates(t *testing.T) {
	w := tinyLlama()
	for _, g := range []model.DType{model.Invalid, model.FP32} {
		sc := layoutScenario(func(s *Scenario) { s.GradType = g })
		r := newRunner(testSystem(1), w, sc.normalized(), w.Shape())
		ph := r.phase(TrainBackward)
		raw, err := r.ops(ph, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, _, _ := r.layoutOps(raw, sc.Batch*sc.Seq)
		n := 0
		for i, o := range out {
			k, ok := o.Kernel.(model.GEMM)
			if !ok {
				continue
			}
			before := raw[i].Kernel.(model.GEMM)
			if strings.HasSuffix(o.Name, ".wgrad") {
				n++
				if k.C != r.gradType() || k.CElements() != 2*float64(k.M)*float64(k.N) {
					t.Errorf("grad %v: %s C %v, %v elements, want %v and 2·M·N = %v", g, o.Name, k.C, k.CElements(), r.gradType(), 2*float64(k.M)*float64(k.N))
				}
			} else if k != before {
				t.Errorf("grad %v: %s changed: %+v, was %+v", g, o.Name, k, before)
			}
		}
		if n == 0 {
			t.Errorf("grad %v: no weight-gradient GEMM", g)
		}
	}
}

// TestLossSync: a decoder's last stage waits, per micro-batch, for the
// loss's all-reduce over the data-parallel group (and the context-
// parallel one first); without data or context parallelism there is
// none.
func TestLossSync(t *testing.T) {
	w := tinyLlama()
	for _, tc := range []struct {
		dp, cp int
		none   bool
	}{{1, 1, true}, {8, 1, false}, {4, 2, false}} {
		sc := layoutScenario(func(s *Scenario) { s.DP, s.CP = tc.dp, tc.cp })
		r := newRunner(testSystem(tc.dp*tc.cp), w, sc.normalized(), w.Shape())
		got := r.lossSync()
		var want model.Seconds
		if tc.cp > 1 {
			want += r.comm(model.AllReduce, 8, r.group(tc.cp, 1))
		}
		if tc.dp > 1 {
			want += r.comm(model.AllReduce, 8, r.group(tc.dp, tc.cp))
		}
		if got != want || (got == 0) != tc.none {
			t.Errorf("dp %d cp %d: loss sync %v, want %v", tc.dp, tc.cp, got, want)
		}
	}
}
