package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// opRow returns the row of the op named name in a phase's report.
func opRow(t *testing.T, p *sim.PhaseReport, name string) sim.OpRow {
	t.Helper()
	for _, o := range p.Ops {
		if o.Name.String() == name {
			return o
		}
	}
	t.Fatalf("%s: no op %s", p.Name, name)
	return sim.OpRow{}
}

// TestGEMMAllReduce: TensorRT-LLM's fused GEMM and all-reduce
// (Scenario.GEMMAllReduce) on Llama 3.1 405B at TP 8 on eight H200s,
// fp8. A 2,560-token prefill's row-parallel GEMMs run in some ten waves
// of output tiles, so each all-reduce hides behind its GEMM but for a
// wave: it is charged max(g, c) + min(g, c)/W − g, W the waves, where it
// had cost c, and the GEMMs themselves do not change. A decode step of
// one token is one wave: nothing overlaps, and nothing changes.
func TestGEMMAllReduce(t *testing.T) {
	sys, w := load(t, "h200", "llama3.1-405b", 8)
	sc := sim.Default()
	sc.TP = 8
	sc.Weights, sc.Act, sc.KV = model.FP8, model.FP8, model.FP8
	sc.Batch, sc.Input, sc.Output = 1, 2560, 2
	plain, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	sc.GEMMAllReduce = true
	fused, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	pp, fp := &plain.Inference.Prefill, &fused.Inference.Prefill
	for _, pair := range [][2]string{{"attn.out", "attn.allreduce"}, {"ffn.down", "ffn.allreduce"}} {
		gr, cr, er := opRow(t, pp, pair[0]), opRow(t, pp, pair[1]), opRow(t, fp, pair[1])
		if fg := opRow(t, fp, pair[0]); fg.Time != gr.Time {
			t.Errorf("%s: %v fused, %v alone: the GEMM should not change", pair[0], fg.Time, gr.Time)
		}
		g, c, e := float64(gr.Time)/float64(gr.Count), float64(cr.Time)/float64(cr.Count), float64(er.Time)/float64(er.Count)
		// e = max(g, c) + min(g, c)/W − g: the waves W it implies.
		waves := math.Min(g, c) / (e + g - math.Max(g, c))
		t.Logf("%s: GEMM %.1f µs, all-reduce %.1f µs alone, %.1f µs beyond the GEMM fused (%.2f waves)", pair[0], 1e6*g, 1e6*c, 1e6*e, waves)
		if !(e >= math.Max(0, c-g)) || !(waves >= 5 && waves <= 20) {
			t.Errorf("%s: the all-reduce costs %.1f µs beyond a %.1f µs GEMM where it cost %.1f µs alone: %.2f waves, want 5 to 20 (2560 rows × 16384 columns in 128×256 tiles over 132 SMs: 9.7)", pair[1], 1e6*e, 1e6*g, 1e6*c, waves)
		}
	}
	// A serving engine's iteration of the same prefill costs the same.
	p, err := sim.NewPricer(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	it := sim.Iteration{Prefill: []sim.Chunk{{Tokens: 2560}}, Sampled: 1}
	if got, want := p.Price(&it).Time, fused.Inference.TTFT; math.Abs(float64(got/want)-1) > 1e-9 {
		t.Errorf("a 2560-token prefill iteration fused costs %v; Run's prefill %v", got, want)
	}
	if fused.Inference.TTFT >= plain.Inference.TTFT {
		t.Errorf("prefill %v fused, %v not", fused.Inference.TTFT, plain.Inference.TTFT)
	}
	pd, fd := plain.Inference.Decode.Time, fused.Inference.Decode.Time
	if math.Abs(float64(fd/pd)-1) > 1e-12 {
		t.Errorf("a one-token decode step is one wave: %v fused, %v not; want the same", fd, pd)
	}
}

// TestGEMMAllReduce_invalid: the fused kernel is an inference engine's,
// and reduces in its own kernel, not beside another engine's all-reduce.
func TestGEMMAllReduce_invalid(t *testing.T) {
	sys, w := load(t, "h200", "llama3-70b", 8)
	for _, tt := range []struct {
		name string
		edit func(*sim.Scenario)
		want string
	}{
		{"training", func(sc *sim.Scenario) { sc.Mode = sim.Training }, "training prices its overlap with --tp-overlap"},
		{"vllm all-reduce", func(sc *sim.Scenario) { sc.AllReduce = "vllm" }, "not vllm's all-reduce"},
	} {
		sc := sim.Default()
		sc.TP, sc.GEMMAllReduce = 8, true
		tt.edit(&sc)
		_, err := sim.Run(sys, w, sc)
		if err == nil || !strings.Contains(err.Error(), "gemm-allreduce") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want a gemm-allreduce error saying %q", tt.name, err, tt.want)
		}
	}
}
