package sim

import (
	"errors"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// tpRunner is a runner with only what tpComm reads: the scenario and a
// device of 132 compute units (as the H100's), so that NCCL's and the
// userbuffers kernels' share of the SMs is 16/132.
func tpRunner(tp int, sp, overlap, noOverlap bool) *runner {
	sys := testSystem(8)
	sys.Device.ComputeUnits = 132
	sc := Default()
	sc.TP, sc.SP, sc.TPOverlap, sc.NoOverlap = tp, sp, overlap, noOverlap
	return &runner{sys: sys, sc: sc}
}

// TestTPComm_closedForms checks tpComm's exposed communication against
// its closed forms, per layer of two blocks (attention and MLP), for each
// way Megatron-LM runs the tensor-parallel collectives.
func TestTPComm_closedForms(t *testing.T) {
	const ms = model.Seconds(1e-3)
	ag, rs, ar := 2*ms, 3*ms, 5*ms
	long := tpBlock{colF: 100 * ms, rowF: 100 * ms, colD: 100 * ms, colW: 100 * ms, rowD: 100 * ms, rowW: 100 * ms}
	none := tpBlock{}
	k := model.Seconds(16.0 / 132)
	tests := []struct {
		name                   string
		sp, overlap, noOverlap bool
		blk                    tpBlock
		fwd, bwd, overF, overB model.Seconds
	}{
		// Without SP: an all-reduce forward (exposed) and one backward
		// beside the column-parallel weight gradient.
		{"all-reduce, hidden backward", false, false, false, long, 2 * ar, 0, 0, 2 * k * ar},
		{"all-reduce, no GEMM to hide behind", false, false, false, none, 2 * ar, 2 * ar, 0, 0},
		// SP, Megatron-LM's own overlap: forward all-gather and
		// reduce-scatter exposed; backward the output gradient's
		// all-gather exposed, the input's all-gather and the input
		// gradient's reduce-scatter beside the column-parallel GEMMs.
		{"sp, hidden backward", true, false, false, long, 2 * (ag + rs), 2 * ag, 0, 2 * k * (ag + rs)},
		// With nothing to hide behind the backward has six collectives
		// per layer where the forward has four.
		{"sp, six collectives backward", true, false, false, none, 2 * (ag + rs), 2 * (2*ag + rs), 0, 0},
		{"sp, no overlap", true, false, true, long, 2 * (ag + rs), 2 * (2*ag + rs), 0, 0},
		// Userbuffers with long GEMMs: only the last of the 4 pipelined
		// reduce-scatter chunks stays exposed, forward; the backward
		// hides all. The reduce-scatter kernels slow the GEMM chunks
		// they overlap (3 of 4 forward), the bulk ones theirs.
		{"userbuffers, long GEMMs", true, true, false, long, 2 * rs / 4, 0, 2 * k * 3 * rs / 4, 2 * k * (ag + rs)},
		// With nothing to hide behind, userbuffers expose what
		// Megatron-LM's own path does without overlap.
		{"userbuffers, no GEMMs", true, true, false, none, 2 * (ag + rs), 2 * (2*ag + rs), 0, 0},
	}
	near := func(a, b model.Seconds) bool { d := a - b; return d < 1e-15 && d > -1e-15 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tpRunner(8, tt.sp, tt.overlap, tt.noOverlap)
			c := r.tpComm([2]tpBlock{tt.blk, tt.blk}, 2, 2, ag, rs, ar, ag/7)
			if !near(c.fwd, tt.fwd) || !near(c.bwd, tt.bwd) || !near(c.overF, tt.overF) || !near(c.overB, tt.overB) {
				t.Errorf("got fwd %v bwd %v over %v/%v, want %v %v %v/%v", c.fwd, c.bwd, c.overF, c.overB, tt.fwd, tt.bwd, tt.overF, tt.overB)
			}
		})
	}
}

// TestTPComm_ringExchange: the ring-exchange all-gather beside a GEMM in
// tp chunks exposes (tp−1)·max(0, step − g/tp): nothing while a chunk's
// transfer is shorter than a chunk's GEMM.
func TestTPComm_ringExchange(t *testing.T) {
	const ms = model.Seconds(1e-3)
	for _, tt := range []struct {
		colF, want model.Seconds
	}{
		{8 * ms, 0},             // 1 ms transfer per 1 ms GEMM chunk
		{16 * ms, 0},            // GEMM chunks longer than transfers
		{4 * ms, 7 * ms / 2},    // 7 × (1 − 0.5) ms
		{0, 7 * ms},             // nothing to hide behind
		{7.5 * ms, 7 * ms / 16}, // 7 × (1 − 0.9375) ms
	} {
		r := tpRunner(8, true, true, false)
		// One block; a row GEMM long enough to hide its reduce-scatter
		// but for its last chunk.
		b := tpBlock{colF: tt.colF, rowF: 100 * ms, colD: 100 * ms, colW: 100 * ms, rowD: 100 * ms}
		c := r.tpComm([2]tpBlock{b}, 1, 1, 7*ms, 0, 0, ms)
		if d := c.fwd - tt.want; d > 1e-15 || d < -1e-15 {
			t.Errorf("colF %v: exposed %v, want %v", tt.colF, c.fwd, tt.want)
		}
	}
}

// TestRingStep: a ring-exchange step copies a tp-th of the activation to
// the next rank at ceShare of the scale-up link (not at NCCL's all-gather
// rate); a TP group wider than a node takes a step of the all-gather.
func TestRingStep(t *testing.T) {
	const size = model.Bytes(64 << 20)
	ag := model.Seconds(1e-3)
	r := tpRunner(8, true, true, false)
	in := r.sys.Intra
	want := in.Latency + model.Seconds(float64(size)/8/(float64(in.Bandwidth)*ceShare))
	if got := r.ringStep(size, ag); got != want {
		t.Errorf("tp 8 in a node of 8: step %v, want %v", got, want)
	}
	r = tpRunner(16, true, true, false)
	if got := r.ringStep(size, ag); got != ag/15 {
		t.Errorf("tp 16 over two nodes of 8: step %v, want a 15th of the all-gather's %v", got, ag)
	}
	// A fully connected mesh of 8: one link of 7 reaches the next rank.
	r = tpRunner(8, true, true, false)
	r.sys.Intra.Topology, r.sys.Intra.DevicesPerNode = "mesh", 8
	want = in.Latency + model.Seconds(float64(size)/8/(float64(in.Bandwidth)/7*ceShare))
	if got := r.ringStep(size, ag); got != want {
		t.Errorf("tp 8 on a mesh of 8: step %v, want %v", got, want)
	}
}

// TestTPOverlap_needsSP: Megatron-LM refuses TP-communication overlap
// without sequence parallelism, and so does perfsim, naming the flag.
func TestTPOverlap_needsSP(t *testing.T) {
	sc := layoutScenario(func(s *Scenario) { s.TP, s.DP, s.TPOverlap = 8, 8, true })
	_, err := Run(testSystem(64), tinyLlama(), sc)
	var se *ScenarioError
	if !errors.As(err, &se) || se.Field != "tp-overlap" {
		t.Fatalf("got %v, want an error on tp-overlap", err)
	}
}

// TestGradType: fp32 gradients (Megatron-LM's for bf16 models) take twice
// bf16's memory and never make a step faster; a non-float or 8-bit type
// is refused.
func TestGradType(t *testing.T) {
	w := tinyLlama()
	sc := layoutScenario(func(s *Scenario) { s.TP, s.SP, s.DP, s.ZeRO = 2, true, 32, 1 })
	a := mustRun(t, testSystem(64), w, sc)
	sc.GradType = model.FP32
	b := mustRun(t, testSystem(64), w, sc)
	if b.Memory.Gradients != 2*a.Memory.Gradients {
		t.Errorf("fp32 gradients %v, want twice bf16's %v", b.Memory.Gradients, a.Memory.Gradients)
	}
	if b.Training.StepTime < a.Training.StepTime {
		t.Errorf("fp32 gradients step %v faster than bf16's %v", b.Training.StepTime, a.Training.StepTime)
	}
	for _, d := range []model.DType{model.INT8, model.FP8} {
		sc.GradType = d
		_, err := Run(testSystem(64), w, sc)
		var se *ScenarioError
		if !errors.As(err, &se) || se.Field != "grad-dtype" {
			t.Errorf("%s: got %v, want an error on grad-dtype", d, err)
		}
	}
}

// TestLayoutOps_sequenceParallel: sequence parallelism divides the
// full-width passes (a norm, the residual add) by TP, and leaves an MLP's
// activation as the column-parallel GEMM left it, split once by TP, even
// where its width equals d_model (a 4h MLP at TP 4: 4h/4 = h).
func TestLayoutOps_sequenceParallel(t *testing.T) {
	const L, tokens, d, tp = 2, 1024, 64, 4
	sc := Default()
	sc.Mode, sc.TP, sc.SP = Training, tp, true
	r := &runner{sys: testSystem(8), sc: sc, shape: Shape{Arch: Decoder, Layers: L, DModel: d, FFN: 4 * d}}
	full := float64(tokens * d)
	ew := func(name string, n float64, count int) model.Op {
		return model.Op{Name: name, Count: count, Kernel: model.Elementwise{Kind: "x", Elements: n, Read: model.Bytes(2 * n), Written: model.Bytes(2 * n)}}
	}
	ops := []model.Op{
		ew("attn.norm", full, L), ew("residual", full, 2*L),
		ew("ffn.act", tokens*4*d/tp, L), ew("ffn.act.bwd", tokens*4*d/tp, 2*L), ew("expert.act", full, L),
		ew("final.norm", full, 1),
	}
	out, _, _ := r.layoutOps(ops, tokens)
	want := map[string]float64{"attn.norm": full / tp, "residual": full / tp,
		"ffn.act": full, "ffn.act.bwd": full, "expert.act": full, "final.norm": full}
	for _, o := range out {
		if got := o.Kernel.(model.Elementwise).Elements; got != want[o.Name] {
			t.Errorf("%s: %g elements, want %g", o.Name, got, want[o.Name])
		}
	}
}
