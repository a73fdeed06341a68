package sim_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// TestDecode_mixtralExperts: Mixtral 8x7B decoding on two A100s. At batch
// 4 a layer's 8 routed tokens touch 8·(1 − (3/4)⁴) ≈ 5.47 distinct experts
// on average under uniform routing, not all 8 (issue 13), so a step moves
// about 2.5× the bytes of batch 1 (2 experts), and the TPOT ratio from
// batch 1 to 4 follows the ratio of bytes moved within 10% on the
// catalog's datasheet A100 file. On the calibrated A100 entry the ratio
// is lower (2.12 against 2.54 at TP 2, 16% apart on 2026-11-26, logged):
// there 13% of a batch-1 step is fixed cost that does not grow with the
// batch (the all-reduces and the decode attentions), and the measured
// MoE kernels themselves grow less than the experts they read
// (calibrate's TestMoE_mixtralGrowth), as aiconfigurator's tables say.
func TestDecode_mixtralExperts(t *testing.T) {
	hand, err := hardware.LoadFile(filepath.Join("..", "hardware", "devices", "a100-sxm-80gb.toml"))
	if err != nil {
		t.Fatal(err)
	}
	sysHand, err := hardware.NewSystem(hand, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	cal, w := load(t, "a100", "mixtral-8x7b", 2)
	for _, sys := range []*hardware.System{sysHand, cal} {
		mixtral(t, sys, w, sys == sysHand)
	}
}

func mixtral(t *testing.T, sys *hardware.System, w sim.Workload, strict bool) {
	run := func(batch int) *sim.Report {
		sc := sim.Default()
		sc.TP, sc.Batch, sc.Input, sc.Output = 2, batch, 512, 2
		r, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one, four := run(1), run(4)
	expertBytes := func(r *sim.Report) (e, all float64) {
		for _, o := range r.Inference.Decode.Ops {
			all += float64(o.Bytes)
			if strings.HasPrefix(o.Name.String(), "expert.") && o.Class == model.ClassExperts {
				e += float64(o.Bytes)
			}
		}
		return e, all
	}
	e1, b1 := expertBytes(one)
	e4, b4 := expertBytes(four)
	want := model.ExpectedExperts(4, 2, 8) / 2 // 5.47 over 2 experts' weights
	if r := e4 / e1; math.Abs(r-want)/want > 0.01 {
		t.Errorf("expert bytes batch 4 / batch 1 = %.3f, want %.3f (5.47 experts over 2)", r, want)
	}
	rb := b4 / b1
	if rb < 2.3 || rb > 2.7 {
		t.Errorf("step bytes batch 4 / batch 1 = %.3f, want about 2.5", rb)
	}
	rt := float64(four.Inference.TPOT) / float64(one.Inference.TPOT)
	if strict && math.Abs(rt/rb-1) > 0.10 {
		t.Errorf("TPOT ratio %.3f vs bytes ratio %.3f: more than 10%% apart", rt, rb)
	}
	// The step split in two by the batch-1 step's ops: those bound by
	// memory, and the fixed costs (latency-bound kernels, collectives,
	// compute-bound ones), which do not grow with the bytes. The
	// memory-bound part's time must follow its own bytes within 10%.
	memBound := map[string]bool{}
	for _, o := range one.Inference.Decode.Ops {
		memBound[o.Name.String()] = o.Bound == model.MemoryBound
	}
	split := func(r *sim.Report) (tm, bm, fixed float64) {
		for _, o := range r.Inference.Decode.Ops {
			if memBound[o.Name.String()] {
				tm += float64(o.Time)
				bm += float64(o.Bytes)
			} else {
				fixed += float64(o.Time)
			}
		}
		return tm, bm, fixed
	}
	tm1, bm1, f1 := split(one)
	tm4, bm4, f4 := split(four)
	rtm, rbm := tm4/tm1, bm4/bm1
	if math.Abs(rtm/rbm-1) > 0.10 {
		t.Errorf("%s: the memory-bound part's time ratio %.3f vs its bytes ratio %.3f: more than 10%% apart", sys.Device.Name, rtm, rbm)
	}
	t.Logf("Mixtral 8x7B tp 2 %s: TPOT %v → %v (×%.3f), bytes ×%.3f (%.1f%% apart), experts ×%.3f; fixed costs %v → %v (%.0f%% of the batch-1 step); memory-bound part %v → %v (×%.3f), its bytes ×%.3f (%.1f%% apart)",
		sys.Device.Name, one.Inference.TPOT, four.Inference.TPOT, rt, rb, 100*(rt/rb-1), e4/e1, model.Seconds(f1), model.Seconds(f4), 100*f1/(f1+tm1),
		model.Seconds(tm1), model.Seconds(tm4), rtm, rbm, 100*(rtm/rbm-1))
}

// TestMemory_slidingWindow: Mistral 7B v0.1 (sliding_window 4096 in its
// config.json) at a 32k prompt holds 4,096 tokens of KV per sequence.
func TestMemory_slidingWindow(t *testing.T) {
	sys, w := load(t, "h100", "mistral-7b-v0.1", 1)
	sc := sim.Default()
	sc.Input, sc.Output = 32768-1, 1
	r, err := sim.Run(sys, w, sc)
	if err != nil {
		t.Fatal(err)
	}
	perTok := float64(w.KVBytesPerToken(model.BF16)) // 2·8·128·32 layers·2 bytes
	if got, want := float64(r.Memory.KVCache), 4096*perTok; got != want {
		t.Errorf("KV cache %v, want 4096 tokens × %v = %v", r.Memory.KVCache, model.Bytes(perTok), model.Bytes(want))
	}
}
