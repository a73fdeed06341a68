package sim_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

func TestParseAttentionKernel(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want sim.AttentionKernel
		err  bool
	}{
		{"engine", sim.AttentionEngine, false},
		{" FA2 ", sim.AttentionFA2, false},
		{"flash_attention_2", sim.AttentionFA2, false},
		{"fa3", 0, true},
		{"", 0, true},
	} {
		got, err := sim.ParseAttentionKernel(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseAttentionKernel(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !strings.Contains(err.Error(), "want engine or fa2") {
			t.Errorf("ParseAttentionKernel(%q): %v does not say what is accepted", tt.in, err)
		}
	}
	if sim.AttentionFA2.String() != "fa2" || sim.AttentionEngine.String() != "engine" {
		t.Errorf("names %q, %q", sim.AttentionFA2, sim.AttentionEngine)
	}
}

// TestAttentionFA2: on a B200 a prefill's attention under AttentionFA2
// takes FlashAttention-2's measured rate at head dim 128 and 4,096 keys
// (tritonbench #171: 353.91 TFLOP/s) plus the launch, once a layer; the
// engine's calibrated kernel prices it otherwise, and a run after an FA2
// run on the same runner is priced as before it (the price cache keys on
// the kernel).
func TestAttentionFA2(t *testing.T) {
	sys, w := load(t, "b200", "llama3-8b", 1)
	sc := sim.Default()
	sc.Batch, sc.Input, sc.Output = 2, 4096, 1
	attn := func(sc sim.Scenario) (model.Seconds, int) {
		t.Helper()
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Inference.Prefill.Ops {
			if r.Kind.String() == "attention" {
				return r.Time, r.Count
			}
		}
		t.Fatal("no attention row")
		return 0, 0
	}
	engine, _ := attn(sc)
	sc.Attention = sim.AttentionFA2
	fa2, n := attn(sc)
	sc.Attention = sim.AttentionEngine
	if again, _ := attn(sc); again != engine {
		t.Errorf("the engine's attention after an FA2 run: %v, before it %v", again, engine)
	}
	a := model.Attention{Batch: 2, Heads: 32, KVHeads: 8, QLen: 4096, KVLen: 4096, HeadDim: 128, Causal: true, Fused: true, DType: model.BF16, KVDType: model.BF16}
	launch := float64(sys.Device.Eff.Attention.Launch)
	want := float64(n) * (2*(128+128)*a.Pairs()*2*32/353.91e12 + launch)
	if math.Abs(float64(fa2)/want-1) > 1e-6 {
		t.Errorf("FA2 attention %v over %d layers, want %v", fa2, n, want)
	}
	if !(fa2 > engine) {
		t.Errorf("FA2 %v not slower than the engine's kernel %v on a B200", fa2, engine)
	}
}

// TestAttentionFA2_unmeasured: a device without a FlashAttention-2
// measurement is refused, naming the field and the devices measured.
func TestAttentionFA2_unmeasured(t *testing.T) {
	sys, w := load(t, "a100", "llama3-8b", 1)
	sc := sim.Default()
	sc.Attention = sim.AttentionFA2
	_, err := sim.Run(sys, w, sc)
	var se *sim.ScenarioError
	if !errors.As(err, &se) || se.Field != "attention" || !strings.Contains(err.Error(), "no FlashAttention-2 measurement") || !strings.Contains(err.Error(), "B200, H100 SXM") {
		t.Errorf("error %v; want a ScenarioError on attention naming B200 and H100 SXM", err)
	}
	sc.Attention = 7
	if _, err := sim.Run(sys, w, sc); err == nil || !strings.Contains(err.Error(), "unknown attention kernel") {
		t.Errorf("an unknown kernel: %v", err)
	}
}

// TestAttentionFA2_MLA: FlashAttention-2 does not run DeepSeek-V3's
// multi-head latent attention; the B200 prices it with its calibrated MLA
// kernel, so asking for FA2 is refused, naming the flag, rather than
// printed as applied and silently ignored.
func TestAttentionFA2_MLA(t *testing.T) {
	sys, w := load(t, "b200", "deepseek-v3", 8)
	sc := sim.Default()
	sc.TP, sc.Weights = 8, model.FP8
	if _, err := sim.Run(sys, w, sc); err != nil {
		t.Fatalf("engine kernel: %v", err)
	}
	sc.Attention = sim.AttentionFA2
	_, err := sim.Run(sys, w, sc)
	var se *sim.ScenarioError
	if !errors.As(err, &se) || se.Field != "attention" || !strings.Contains(err.Error(), "multi-head latent attention") {
		t.Errorf("FA2 on deepseek-v3: %v, want a ScenarioError on attention about MLA", err)
	}
}
