package sim_test

// Invariant tests (the bookkeeping identities of one run, and runs of
// equal cost priced two ways); metamorphic_test.go holds the shared
// fixtures and the monotonicity tests.

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// whatIf returns dev without its residual tables (the GEMM's, the
// attention's, the MLA's and the MoE's): the analytical model with dev's
// fitted parameters, which the monotonicity tests hold to a tighter
// tolerance than the residual tables allow. (It had been
// hardware.DeriveCarried with nothing changed, which dropped them until a
// what-if's carried kernels kept their device's residual tables.)
func whatIf(t testing.TB, dev string, n int) *hardware.System {
	t.Helper()
	b, err := hardware.Resolve(dev)
	if err != nil {
		t.Fatal(err)
	}
	d := *b
	d.Name += " (no residual tables)"
	d.Eff.GEMM = maps.Clone(b.Eff.GEMM)
	for k, g := range d.Eff.GEMM {
		g.Residual = nil
		d.Eff.GEMM[k] = g
	}
	d.Eff.Attention.Residual, d.Eff.Attention.DecodeResidual = nil, nil
	d.Eff.MLA.Residual, d.Eff.MLA.DecodeResidual = nil, nil
	d.Eff.MoE.Residual = nil
	return systemOf(t, &d, n)
}

func mustSystem(t testing.TB, dev string, n int) *hardware.System {
	t.Helper()
	sys, _ := load(t, dev, "", n)
	return sys
}

// near reports whether a and b agree to a relative tolerance.
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))+1e-300
}

// finiteNonNeg reports whether every value is finite and not negative.
func finiteNonNeg(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return true
}

// checkPhase checks a phase's bookkeeping: its rows sum to its totals,
// every row is finite and not negative, Low ≤ Time ≤ High, and no op
// beats the device's datasheet bandwidth or its peak.
func checkPhase(t *testing.T, what string, ph *sim.PhaseReport, d *hardware.Device) {
	t.Helper()
	what += " " + ph.Name
	var tm, fl, by, en float64
	for _, o := range ph.Ops {
		tm += float64(o.Time)
		fl += float64(o.FLOPs)
		by += float64(o.Bytes)
		en += float64(o.Energy)
		if !finiteNonNeg(float64(o.Time), float64(o.Low), float64(o.High), float64(o.FLOPs), float64(o.Bytes), float64(o.Energy)) {
			t.Errorf("%s: op %s has a negative or non-finite figure: %+v", what, o.Name, o)
		}
		if o.Low > o.Time*(1+1e-12) || o.High < o.Time*(1-1e-12) {
			t.Errorf("%s: op %s: band [%v, %v] does not hold its time %v", what, o.Name, o.Low, o.High, o.Time)
		}
		if o.Kind.String() == "collective" || o.Count == 0 {
			continue
		}
		// No kernel moves its bytes faster than the datasheet bandwidth
		// or computes faster than the densest peak of its type (sparse
		// peaks included, the most generous).
		if bw := float64(d.Memory.Bandwidth); bw > 0 && float64(o.Time) < float64(o.Bytes)/bw*(1-1e-9) {
			t.Errorf("%s: op %s moves %v in %v: faster than %v", what, o.Name, o.Bytes, o.Time, d.Memory.Bandwidth)
		}
		pk := math.Max(float64(d.Matrix[o.DType.Peak()]), float64(d.Vector[o.DType.Peak()]))
		pk = math.Max(pk, float64(d.Sparse[o.DType.Peak()]))
		if pk > 0 && float64(o.Time) < float64(o.FLOPs)/pk*(1-1e-9) {
			t.Errorf("%s: op %s computes %v in %v: faster than %v", what, o.Name, o.FLOPs, o.Time, model.FLOPRate(pk))
		}
	}
	if len(ph.Ops) > 0 {
		if !near(tm, float64(ph.Time), 1e-9) {
			t.Errorf("%s: op times sum to %v, the phase is %v", what, model.Seconds(tm), ph.Time)
		}
		if !near(fl, float64(ph.FLOPs), 1e-9) || !near(by, float64(ph.Bytes), 1e-9) {
			t.Errorf("%s: op FLOPs and bytes sum to %v, %v; the phase has %v, %v", what, model.FLOPs(fl), model.Bytes(by), ph.FLOPs, ph.Bytes)
		}
		if !near(en, float64(ph.Energy), 1e-9) {
			t.Errorf("%s: op energies sum to %v J, the phase %v", what, en, ph.Energy)
		}
	}
	var ct float64
	for _, c := range ph.Classes {
		ct += float64(c.Time)
	}
	if len(ph.Classes) > 0 && !near(ct, float64(ph.Time), 1e-9) {
		t.Errorf("%s: class times sum to %v, the phase is %v", what, model.Seconds(ct), ph.Time)
	}
	if ph.Low > ph.Time*(1+1e-12) || ph.High < ph.Time*(1-1e-12) || !finiteNonNeg(float64(ph.Time), float64(ph.Low), float64(ph.High), float64(ph.Wait)) {
		t.Errorf("%s: time %v band [%v, %v] wait %v", what, ph.Time, ph.Low, ph.High, ph.Wait)
	}
}

// checkReport checks a report's identities.
func checkReport(t *testing.T, what string, r *sim.Report, d *hardware.Device) {
	t.Helper()
	m := r.Memory
	if sum := m.Weights + m.KVCache + m.Activations + m.Gradients + m.Optimizer + m.Reserve; !near(float64(sum), float64(m.Total), 1e-12) {
		t.Errorf("%s: memory parts sum to %v, the total is %v", what, sum, m.Total)
	}
	if !near(float64(m.Usable-m.Total), float64(m.Headroom), 1e-12) || m.Fits != (m.Total <= m.Usable) || m.Usable > m.Capacity {
		t.Errorf("%s: memory %+v", what, m)
	}
	if !finiteNonNeg(float64(m.Weights), float64(m.KVCache), float64(m.Activations), float64(m.Gradients), float64(m.Optimizer), float64(m.Reserve)) {
		t.Errorf("%s: a negative memory part: %+v", what, m)
	}
	sc := r.Scenario
	if r.Devices != sc.TP*sc.PP*sc.DP*max(sc.CP, 1) && r.Devices != sc.TP*sc.PP*sc.DP {
		t.Errorf("%s: %d devices for TP %d PP %d DP %d", what, r.Devices, sc.TP, sc.PP, sc.DP)
	}
	var wall float64
	if in := r.Inference; in != nil {
		checkPhase(t, what, &in.Prefill, d)
		e2e := in.TTFT
		if in.Decode != nil {
			checkPhase(t, what, in.Decode, d)
			e2e += in.Decode.Time
			if !near(float64(in.TPOT)*float64(sc.Output-1), float64(in.Decode.Time), 1e-12) {
				t.Errorf("%s: TPOT %v × %d steps is not the decode's %v", what, in.TPOT, sc.Output-1, in.Decode.Time)
			}
		}
		if in.TTFT != in.Prefill.Time || !near(float64(e2e), float64(in.E2E), 1e-12) {
			t.Errorf("%s: TTFT %v E2E %v; prefill %v, TTFT + decode %v", what, in.TTFT, in.E2E, in.Prefill.Time, e2e)
		}
		if in.Decode == nil && in.TTFT > 0 && !near(in.SamplesPerSecond*float64(in.TTFT), float64(sc.DP*sc.Batch), 1e-9) && !in.LoaderBound {
			t.Errorf("%s: %.6g samples/s × TTFT %v is not the %d samples", what, in.SamplesPerSecond, in.TTFT, sc.DP*sc.Batch)
		}
		if in.Decode != nil {
			tokens := float64(sc.DP * sc.Batch * sc.Output)
			if !near(in.OutputTokensPerSecond*float64(in.E2E), tokens, 1e-12) {
				t.Errorf("%s: %.6g tokens/s × E2E %v = %.6g, want the %g tokens", what, in.OutputTokensPerSecond, in.E2E, in.OutputTokensPerSecond*float64(in.E2E), tokens)
			}
			if !near(in.OutputTokensPerSecondPerDevice*float64(r.Devices), in.OutputTokensPerSecond, 1e-12) {
				t.Errorf("%s: %.6g tokens/s per device × %d devices is not the system's %.6g", what, in.OutputTokensPerSecondPerDevice, r.Devices, in.OutputTokensPerSecond)
			}
		}
		if !(in.TTFTLow <= in.TTFT && in.TTFT <= in.TTFTHigh && in.E2ELow <= in.E2E && in.E2E <= in.E2EHigh && in.TPOTLow <= in.TPOT && in.TPOT <= in.TPOTHigh) {
			t.Errorf("%s: a band does not hold its figure: %+v", what, in)
		}
		wall = float64(in.E2E)
	}
	if tr := r.Training; tr != nil {
		checkPhase(t, what, &tr.Forward, d)
		checkPhase(t, what, &tr.Backward, d)
		if !(tr.MFU > 0 && tr.MFU <= tr.HFU && tr.HFU <= 1) {
			t.Errorf("%s: MFU %.4g HFU %.4g", what, tr.MFU, tr.HFU)
		}
		gb := sc.GlobalBatch
		if !near(tr.SamplesPerSecond*float64(tr.StepTime), float64(gb), 1e-9) {
			t.Errorf("%s: %.6g samples/s × step %v is not the global batch %d", what, tr.SamplesPerSecond, tr.StepTime, gb)
		}
		perSample := float64(sc.Seq)
		if r.Arch == sim.CNN || r.Arch == sim.Vision {
			perSample = 1 // images, as TokensPerSecond counts them
		}
		if !near(tr.TokensPerSecond, tr.SamplesPerSecond*perSample, 1e-9) {
			t.Errorf("%s: %.6g tokens/s, %.6g samples/s of %g tokens", what, tr.TokensPerSecond, tr.SamplesPerSecond, perSample)
		}
		if b := tr.Breakdown; b != nil && !near(float64(b.Total()), float64(tr.StepTime), 1e-9) {
			t.Errorf("%s: the breakdown sums to %v, the step is %v: %+v", what, b.Total(), tr.StepTime, *b)
		}
		wall = float64(tr.StepTime)
	}
	if e := r.Energy; e != nil {
		n := float64(e.Devices)
		if e.Devices != r.Devices || !near(float64(e.Wall), wall, 1e-12) {
			t.Errorf("%s: energy over %d devices and %v, the run %d and %v", what, e.Devices, e.Wall, r.Devices, model.Seconds(wall))
		}
		if !near(float64(e.Kernels+e.Gaps), float64(e.GPU), 1e-12) {
			t.Errorf("%s: kernels %v J + gaps %v J is not the GPU's %v J", what, e.Kernels, e.Gaps, e.GPU)
		}
		lo, hi := float64(e.Idle)*n*wall, float64(e.Limit)*n*wall
		if float64(e.GPU) < lo*(1-1e-9) || float64(e.GPU) > hi*(1+1e-9) {
			t.Errorf("%s: GPU energy %v J outside idle × time %.6g J and the limit × time %.6g J", what, e.GPU, lo, hi)
		}
		if !near(float64(e.AveragePower)*n*wall, float64(e.GPU), 1e-9) {
			t.Errorf("%s: average power %v × %g devices × %v is not %v J", what, e.AveragePower, n, model.Seconds(wall), e.GPU)
		}
		if e.Node < e.GPU {
			t.Errorf("%s: node energy %v J below the GPUs' %v J", what, e.Node, e.GPU)
		}
		if in := r.Inference; in != nil && in.Decode != nil && e.Gaps == 0 {
			// Per-token figures times their tokens make the whole.
			seqs := float64(sc.DP * sc.Batch)
			pre, dec := float64(e.PrefillPerToken)*seqs*float64(sc.Input), float64(e.DecodePerToken)*seqs*float64(sc.Output-1)
			if !near(pre+dec, float64(e.GPU), 1e-9) || !near(float64(e.PerOutputToken)*seqs*float64(sc.Output), float64(e.GPU), 1e-9) {
				t.Errorf("%s: %v J per input token and %v J per output token after the first make %.6g J, %v J per output token %.6g J; the GPUs drew %v J",
					what, e.PrefillPerToken, e.DecodePerToken, pre+dec, e.PerOutputToken, float64(e.PerOutputToken)*seqs*float64(sc.Output), e.GPU)
			}
		}
	}
}

// TestMeta_conservation: over a grid of models, devices and scenarios
// (inference and training, TP, PP and DP), every report's parts sum to its
// totals, no figure is negative or non-finite, no op beats the
// datasheet, and MFU ≤ HFU ≤ 1.
func TestMeta_conservation(t *testing.T) {
	devs := []struct {
		name string
		sets []string
	}{{"a100", nil}, {"h100", nil}, {"h200", nil}, {"b200", nil}, {"l40s", nil}, {"mi300x", nil}, {"tpu-v5p", nil}, {"h100", []string{"memory.bandwidth=8TB/s"}}}
	checked, refused := 0, 0
	for _, dv := range devs {
		for _, m := range metaModels {
			w := metaModel(t, m.name)
			for _, sc := range []sim.Scenario{
				func() sim.Scenario { s := sim.Default(); s.TP = m.tp; return s }(),
				func() sim.Scenario {
					s := sim.Default()
					s.TP, s.Batch, s.Input, s.Output = m.tp, 16, 9000, 300
					return s
				}(),
				func() sim.Scenario { s := sim.Default(); s.TP, s.PP, s.DP, s.Batch = m.tp, 2, 2, 4; return s }(),
				func() sim.Scenario {
					s := sim.Default()
					s.TP, s.Batch, s.Output, s.Exec = m.tp, 2, 17, sim.ExecEager
					return s
				}(),
				func() sim.Scenario {
					s := sim.Default()
					s.Mode, s.TP, s.DP, s.Batch, s.Seq, s.GlobalBatch, s.Recompute = sim.Training, m.tp, 2, 1, 2048, 8, sim.RecomputeSelective
					return s
				}(),
				func() sim.Scenario {
					s := sim.Default()
					s.Mode, s.TP, s.PP, s.Batch, s.Seq, s.GlobalBatch, s.Recompute = sim.Training, m.tp, 2, 1, 4096, 8, sim.RecomputeFull
					return s
				}(),
			} {
				n := sc.TP * max(sc.PP, 1) * max(sc.DP, 1)
				var sys *hardware.System
				if dv.sets != nil {
					sys = derived(t, dv.name, n, dv.sets...)
				} else {
					sys = mustSystem(t, dv.name, n)
				}
				what := fmt.Sprintf("%s %s %s %s pp %d dp %d", sys.Device.Name, m.name, sc.Mode, scName(sc), sc.PP, sc.DP)
				r, err := sim.Run(sys, w, sc)
				if err != nil {
					refused++
					t.Logf("%s: %v", what, err)
					continue
				}
				checked++
				checkReport(t, what, r, sys.Device)
			}
		}
	}
	t.Logf("%d reports checked, %d scenarios refused", checked, refused)
	if refused > checked/4 {
		t.Errorf("%d of %d scenarios refused: the grid tests too little", refused, checked+refused)
	}
}

// TestMeta_pricerEqualsRun: serving's pricer and Run price the same
// kernels, for every kind of model: a static batch's prefill iteration
// costs Run's TTFT, and its decode iterations Run's decode. Before the
// pricer kept every sequence mixer, it priced one attention op of the
// decode step for all (gemma2-9b's sliding-window and global layers,
// half of them dropped: TPOT 5% low), ran a prefill's Mamba and Gated
// DeltaNet scans as a decode step's state update per token (nemotron-h-8b
// TTFT +127%, qwen3-next-80b-a3b +49%), MLA's prefill in its absorbed
// decode form (deepseek-v3 +2.4%).
func TestMeta_pricerEqualsRun(t *testing.T) {
	for _, m := range metaModels {
		for _, dev := range []string{"h100", "l40s"} {
			w := metaModel(t, m.name)
			sys := mustSystem(t, dev, m.tp)
			sc := sim.Default()
			sc.Batch, sc.Input, sc.Output, sc.TP = 4, 700, 40, m.tp
			rep, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			p, err := sim.NewPricer(sys, w, sc)
			if m.name == "mamba2-2.7b" {
				// Serving a pure state-space model is refused: its
				// state is not a KV cache of tokens.
				if err == nil || !strings.Contains(err.Error(), "no attention layer") {
					t.Errorf("%s %s: %v, want a refusal", dev, m.name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", dev, m.name, err)
				continue
			}
			it := sim.Iteration{Sampled: sc.Batch}
			for range sc.Batch {
				it.Prefill = append(it.Prefill, sim.Chunk{Tokens: sc.Input})
			}
			if got, want := p.Price(&it).Time, rep.Inference.TTFT; !near(float64(got), float64(want), 1e-9) {
				t.Errorf("%s %s: prefill iteration %v, Run's TTFT %v (%+.3g%%)", dev, m.name, got, want, 100*(float64(got)/float64(want)-1))
			}
			var dec model.Seconds
			it = sim.Iteration{Decode: make([]int, sc.Batch), Sampled: sc.Batch}
			for i := range sc.Output - 1 {
				for j := range it.Decode {
					it.Decode[j] = sc.Input + i
				}
				dec += p.Price(&it).Time
			}
			if want := rep.Inference.Decode.Time; !near(float64(dec), float64(want), 1e-9) {
				t.Errorf("%s %s: decode iterations %v, Run's decode %v (%+.3g%%)", dev, m.name, dec, want, 100*(float64(dec)/float64(want)-1))
			}
			// Prompts longer than the token budget: chunks at growing
			// contexts, only the last sampling a token.
			sc.Input, sc.MaxNumTokens = 3000, 1024
			rep, err = sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			tot, err := sim.RunTotals(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			var pre model.Seconds
			for _, ch := range sim.PrefillChunks(sc.Batch, sc.Input, sc.MaxNumTokens) {
				it := sim.Iteration{}
				for range ch.Batch {
					it.Prefill = append(it.Prefill, sim.Chunk{Tokens: ch.Tokens, Context: ch.Context})
				}
				if !ch.Partial {
					it.Sampled = ch.Batch
				}
				pre += model.Seconds(ch.Repeat) * p.Price(&it).Time
			}
			if want := rep.Inference.TTFT; !near(float64(pre), float64(want), 1e-9) || !near(float64(tot.Inference.TTFT), float64(want), 1e-12) {
				t.Errorf("%s %s: a chunked prefill's iterations %v, Run's TTFT %v (%+.3g%%), RunTotals' %v", dev, m.name, pre, want, 100*(float64(pre)/float64(want)-1), tot.Inference.TTFT)
			}
		}
	}
}

// TestMeta_trainingNeverSlower: a training step under TP, PP, DP (over
// one node and two) is never slower on a device with more memory
// bandwidth, more bf16 FLOP/s, or faster links within or between nodes.
func TestMeta_trainingNeverSlower(t *testing.T) {
	type layout struct{ tp, pp, dp, ep int }
	devs := []string{"a100", "h100", "b200", "mi300x"}
	if testing.Short() {
		devs = []string{"h100", "mi300x"} // a calibrated device and a datasheet one
	}
	for _, dev := range devs {
		base, err := hardware.Resolve(dev)
		if err != nil {
			t.Fatal(err)
		}
		knobs := [][2]string{
			{fmt.Sprintf("memory.bandwidth=%gB/s", float64(base.Memory.Bandwidth)), fmt.Sprintf("memory.bandwidth=%gB/s", 1.3*float64(base.Memory.Bandwidth))},
			{fmt.Sprintf("peak.matrix.bf16=%gFLOP/s", float64(base.Matrix[model.BF16])), fmt.Sprintf("peak.matrix.bf16=%gFLOP/s", 1.3*float64(base.Matrix[model.BF16]))},
			{fmt.Sprintf("interconnect.intra.bandwidth=%gB/s", float64(base.Intra.Bandwidth)), fmt.Sprintf("interconnect.intra.bandwidth=%gB/s", 2*float64(base.Intra.Bandwidth))},
		}
		if base.Inter.Bandwidth > 0 {
			knobs = append(knobs, [2]string{fmt.Sprintf("interconnect.inter.bandwidth=%gB/s", float64(base.Inter.Bandwidth)), fmt.Sprintf("interconnect.inter.bandwidth=%gB/s", 2*float64(base.Inter.Bandwidth))})
		}
		for _, m := range []string{"llama3-8b", "qwen3-30b-a3b", "gemma2-9b", "nemotron-h-8b"} {
			w := metaModel(t, m)
			for _, l := range []layout{{2, 1, 2, 1}, {2, 2, 2, 1}, {4, 2, 2, 1}, {1, 1, 16, 1}, {2, 1, 8, 4}} {
				if l.ep > 1 && m != "qwen3-30b-a3b" {
					continue
				}
				sc := sim.Default()
				sc.Mode, sc.Seq, sc.Batch, sc.Recompute = sim.Training, 2048, 1, sim.RecomputeSelective
				sc.TP, sc.PP, sc.DP, sc.EP = l.tp, l.pp, l.dp, l.ep
				sc.GlobalBatch = 8 * l.dp
				n := l.tp * l.pp * l.dp
				for _, k := range knobs {
					lo, hi := pricedPair(t, dev, n, k[1])
					what := fmt.Sprintf("%s %s -> %s %s tp %d pp %d dp %d ep %d", dev, k[0], k[1], m, l.tp, l.pp, l.dp, l.ep)
					runFaster(t, what, lo, hi, w, sc, true)
				}
			}
		}
	}
}

// TestMeta_conservationOneShot: checkReport's identities for models
// without decode (CNN, ViT, encoders, diffusion UNet, DLRM), inference
// and training, data-parallel.
func TestMeta_conservationOneShot(t *testing.T) {
	for _, m := range []string{"resnet50", "vit-b16", "bert-large", "sdxl-unet", "dlrm-dcnv2", "t5-v1.1-xxl-encoder"} {
		for _, dev := range []string{"h100", "a100", "mi300x"} {
			for _, mode := range []sim.Mode{sim.Inference, sim.Training} {
				sys := mustSystem(t, dev, 2)
				sc := sim.Default()
				sc.Mode, sc.Batch, sc.DP, sc.Input, sc.Output, sc.GlobalBatch, sc.Seq = mode, 8, 2, 384, 1, 32, 384
				what := fmt.Sprintf("%s %s %s", sys.Device.Name, m, mode)
				r, err := sim.Run(sys, metaModel(t, m), sc)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				checkReport(t, what, r, sys.Device)
			}
		}
	}
}

// TestMeta_conservationLayouts: the bookkeeping of checkReport holds
// under expert parallelism (inside the TP group and across data-parallel
// attention replicas), 8- and 4-bit types, context and sequence
// parallelism, interleaved pipelines and overlapped TP collectives.
func TestMeta_conservationLayouts(t *testing.T) {
	type c struct {
		model, hw string
		sc        func(*sim.Scenario)
	}
	inf := func(tp, dp, ep int, w, a, kv model.DType) func(*sim.Scenario) {
		return func(s *sim.Scenario) {
			s.TP, s.DP, s.EP, s.Batch, s.Input, s.Output = tp, dp, ep, 8, 1500, 60
			s.Weights, s.Act, s.KV = w, a, kv
		}
	}
	train := func(tp, pp, dp, cp, ep, vs int, sp, ov bool, sched sim.Schedule) func(*sim.Scenario) {
		return func(s *sim.Scenario) {
			s.Mode, s.Seq, s.Batch = sim.Training, 4096, 1
			s.TP, s.PP, s.DP, s.CP, s.EP, s.VirtualStages, s.SP, s.TPOverlap, s.Schedule = tp, pp, dp, cp, ep, vs, sp, ov, sched
			s.GlobalBatch = 16 * dp
			s.Recompute = sim.RecomputeSelective
		}
	}
	bf, f8, i4 := model.BF16, model.FP8, model.INT4
	for _, tt := range []c{
		{"qwen3-30b-a3b", "h100", inf(2, 1, 2, bf, bf, bf)},
		{"qwen3-30b-a3b", "h100", inf(1, 4, 4, bf, bf, bf)},
		{"mixtral-8x7b", "a100", inf(2, 2, 4, bf, bf, bf)},
		{"deepseek-v3", "h200", inf(8, 1, 8, f8, f8, f8)},
		{"llama3-8b", "h100", inf(1, 1, 1, f8, f8, f8)},
		{"llama3-8b", "a100", inf(1, 1, 1, i4, bf, bf)},
		{"gemma2-9b", "b200", inf(2, 1, 1, model.FP4, model.FP8, f8)},
		{"nemotron-h-8b", "h100", inf(2, 1, 1, f8, f8, f8)},
		{"llama3-8b", "h100", train(2, 2, 2, 2, 1, 2, true, true, sim.Interleaved)},
		{"qwen3-30b-a3b", "h100", train(2, 1, 4, 1, 4, 1, true, false, sim.OneFOneB)},
		{"gemma2-9b", "b200", train(4, 2, 2, 1, 1, 1, true, false, sim.GPipe)},
		{"nemotron-h-8b", "mi300x", train(2, 2, 2, 1, 1, 1, false, false, sim.OneFOneB)},
	} {
		sc := sim.Default()
		tt.sc(&sc)
		n := max(sc.TP, 1) * max(sc.PP, 1) * max(sc.DP, 1) * max(sc.CP, 1)
		sys := mustSystem(t, tt.hw, n)
		what := fmt.Sprintf("%s %s %s tp %d pp %d dp %d cp %d ep %d %s/%s/%s", sys.Device.Name, tt.model, sc.Mode, sc.TP, sc.PP, sc.DP, sc.CP, sc.EP, sc.Weights, sc.Act, sc.KV)
		r, err := sim.Run(sys, metaModel(t, tt.model), sc)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		checkReport(t, what, r, sys.Device)
	}
}
