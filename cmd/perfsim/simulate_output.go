package main

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// The JSON of perfsim simulate, documented in docs/simulate.md. Keys are
// stable; values are in base units with the unit in the key.

type simJSON struct {
	Schema       string       `json:"schema"`
	Model        string       `json:"model"`
	Hardware     string       `json:"hardware"`
	Calibration  string       `json:"calibration"`
	Mode         string       `json:"mode"`
	Params       int64        `json:"params"`
	ActiveParams int64        `json:"active_params"`
	Devices      int          `json:"devices"`
	Scenario     scenarioJSON `json:"scenario"`
	Interval     string       `json:"interval"`

	// Fits comes before the times: a run that does not fit has none.
	Fits bool `json:"fits"`

	TTFT         *float64 `json:"ttft_s,omitempty"`
	TTFTLow      *float64 `json:"ttft_s_low,omitempty"`
	TTFTHigh     *float64 `json:"ttft_s_high,omitempty"`
	TPOT         *float64 `json:"tpot_s,omitempty"`
	TPOTLow      *float64 `json:"tpot_s_low,omitempty"`
	TPOTHigh     *float64 `json:"tpot_s_high,omitempty"`
	E2E          *float64 `json:"e2e_s,omitempty"`
	E2ELow       *float64 `json:"e2e_s_low,omitempty"`
	E2EHigh      *float64 `json:"e2e_s_high,omitempty"`
	OutTok       *float64 `json:"output_tokens_per_s,omitempty"`
	OutTokDevice *float64 `json:"output_tokens_per_s_per_device,omitempty"`
	Images       *float64 `json:"images_per_s,omitempty"`
	Samples      *float64 `json:"samples_per_s,omitempty"`
	PrefillBound string   `json:"prefill_bound,omitempty"`
	DecodeBound  string   `json:"decode_bound,omitempty"`

	Training *trainingJSON `json:"training,omitempty"`
	Energy   *energyJSON   `json:"energy,omitempty"` // energy.go
	Cost     *costJSON     `json:"cost,omitempty"`

	Memory   memoryJSON  `json:"memory"`
	Phases   []phaseJSON `json:"phases"`
	Warnings []string    `json:"warnings"`
}

// scenarioJSON is a scenario: the keys of its mode only (an inference
// scenario has no optimizer, a training one no output tokens).
type scenarioJSON struct {
	Batch int `json:"batch"`
	*InferenceScenario
	*TrainingScenario
	TP      int    `json:"tp"`
	PP      int    `json:"pp"`
	DP      int    `json:"dp"`
	Weights string `json:"weights"`
	Act     string `json:"act"`
	KV      string `json:"kv"`
	Comm    string `json:"comm"`
	*TrainingSettings
	Exec         string  `json:"exec"`
	HostOverhead float64 `json:"host_overhead_s,omitempty"`
	Autocast     bool    `json:"autocast,omitempty"`
	// GEMMAllReduce: the TP all-reduces fused with their row-parallel
	// GEMMs (--gemm-allreduce); absent when off.
	GEMMAllReduce bool `json:"gemm_allreduce,omitempty"`
	// Attention is the prefill attention kernel (--attention) when not
	// the engine's calibrated one.
	Attention  string  `json:"attention,omitempty"`
	LoaderRate float64 `json:"loader_samples_per_s,omitempty"`
	// Parallel is the training-at-scale layout beside TP, PP and DP;
	// absent in inference.
	Parallel *parallelJSON `json:"parallel,omitempty"`
}

// parallelJSON is a training scenario's layout settings beside the TP,
// PP and DP degrees.
type parallelJSON struct {
	SP            bool   `json:"sp"`
	CP            int    `json:"cp"`
	EP            int    `json:"ep"`
	Schedule      string `json:"schedule"`
	VirtualStages int    `json:"virtual_stages"`
	TPOverlap     bool   `json:"tp_overlap"`
	NoOverlap     bool   `json:"no_overlap"`
	// GradDType is the type gradients are accumulated and reduced in
	// (--grad-dtype), or "" for the weights'.
	GradDType string `json:"grad_dtype,omitempty"`
	// EmbeddingSlot and LossSlot: the embedding and the loss counted as
	// a layer's slot each in the pipeline split
	// (--account-for-embedding-in-pipeline-split and
	// --account-for-loss-in-pipeline-split); absent when off.
	EmbeddingSlot bool `json:"embedding_slot,omitempty"`
	LossSlot      bool `json:"loss_slot,omitempty"`
}

type trainingJSON struct {
	Breakdown    *breakdownJSON `json:"breakdown,omitempty"`
	StepTime     float64        `json:"step_time_s"`
	StepTimeLow  float64        `json:"step_time_s_low"`
	StepTimeHigh float64        `json:"step_time_s_high"`
	MicroBatches int            `json:"micro_batches"`
	// TokensPerSecond is nil for an image model (a CNN or a ViT), whose
	// unit of work is the image: SamplesPerSec is its images/s.
	TokensPerSecond *float64 `json:"tokens_per_s,omitempty"`
	SamplesPerSec   float64  `json:"samples_per_s"`
	ModelFLOPs      float64  `json:"model_flops"`
	HardwareFLOPs   float64  `json:"hardware_flops"`
	MFU             float64  `json:"mfu"`
	HFU             float64  `json:"hfu"`
	TimeToTrain     float64  `json:"time_to_train_s"`
}

// memoryJSON is a footprint in whole bytes; gradients and optimizer
// state only in training.
type memoryJSON struct {
	Weights     int64  `json:"weights_bytes"`
	KVCache     int64  `json:"kv_cache_bytes"`
	KVPerToken  int64  `json:"kv_cache_per_token_bytes"`
	KVState     *int64 `json:"kv_state_per_sequence_bytes,omitempty"`
	Activations int64  `json:"activations_bytes"`
	Gradients   *int64 `json:"gradients_bytes,omitempty"`
	Optimizer   *int64 `json:"optimizer_bytes,omitempty"`
	Reserve     int64  `json:"reserve_bytes"`
	Total       int64  `json:"total_bytes"`
	Capacity    int64  `json:"capacity_bytes"`
	Usable      int64  `json:"usable_bytes"`
	Headroom    int64  `json:"headroom_bytes"`
	Fits        bool   `json:"fits"`
	// The inverse queries, absent where they were not searched (sweep's
	// rows, maxmodel's footprint): 0 had read as "nothing fits".
	MaxBatch   *int `json:"max_batch,omitempty"`
	MaxContext *int `json:"max_context,omitempty"`
}

type phaseJSON struct {
	Name      string      `json:"name"`
	Steps     int         `json:"steps"`
	Time      float64     `json:"time_s"`
	TimeLow   float64     `json:"time_s_low"`
	TimeHigh  float64     `json:"time_s_high"`
	FLOPs     float64     `json:"flops"`
	Bytes     int64       `json:"bytes"`
	Intensity float64     `json:"intensity_flop_per_byte"`
	Bound     string      `json:"bound"`
	Classes   []classJSON `json:"classes"`
	Ops       []opJSON    `json:"ops,omitempty"`
}

type classJSON struct {
	Class     string  `json:"class"`
	Time      float64 `json:"time_s"`
	Share     float64 `json:"share"`
	Bound     string  `json:"bound"`
	FLOPs     float64 `json:"flops"`
	Bytes     int64   `json:"bytes"`
	Intensity float64 `json:"intensity_flop_per_byte"`
}

type opJSON struct {
	Name      string  `json:"name"`
	Class     string  `json:"class"`
	Kind      string  `json:"kind"`
	Count     int     `json:"count"`
	Time      float64 `json:"time_s"`
	TimeLow   float64 `json:"time_s_low"`
	TimeHigh  float64 `json:"time_s_high"`
	Share     float64 `json:"share"`
	Bound     string  `json:"bound"`
	DType     string  `json:"dtype"`
	FLOPs     float64 `json:"flops"`
	Bytes     int64   `json:"bytes"`
	Intensity float64 `json:"intensity_flop_per_byte"`
}

func fp(v float64) *float64 { return &v }

// allPhases returns the report's phases in print order.
func allPhases(r *sim.Report) []*sim.PhaseReport {
	var ps []*sim.PhaseReport
	if in := r.Inference; in != nil {
		ps = append(ps, &in.Prefill)
		if in.Decode != nil {
			ps = append(ps, in.Decode)
		}
	}
	if tr := r.Training; tr != nil {
		ps = append(ps, &tr.Forward, &tr.Backward)
		if tr.Recompute != nil {
			ps = append(ps, tr.Recompute)
		}
		if tr.Gradients != nil {
			ps = append(ps, tr.Gradients)
		}
		ps = append(ps, &tr.Optimizer)
	}
	return ps
}

// simulateJSON is the JSON of r; cal is the device's calibration label
// (hardware.Device.CalibrationLabel).
func simulateJSON(r *sim.Report, cal string, lim limitsResult, ops bool) simJSON {
	sc := r.Scenario
	j := simJSON{
		Schema: "perfsim.simulate/v1", Model: r.Model, Hardware: r.Hardware, Calibration: cal, Mode: sc.Mode.String(),
		Params: whole(r.Params), ActiveParams: whole(r.ActiveParams), Devices: r.Devices, Interval: r.Interval,
		Scenario: scenarioOf(sc, r.Arch),
		Fits:     r.Memory.Fits,
		Warnings: []string{},
	}
	if in := r.Inference; in != nil {
		j.TTFT, j.TTFTLow, j.TTFTHigh = fp(float64(in.TTFT)), fp(float64(in.TTFTLow)), fp(float64(in.TTFTHigh))
		j.E2E, j.E2ELow, j.E2EHigh = fp(float64(in.E2E)), fp(float64(in.E2ELow)), fp(float64(in.E2EHigh))
		j.PrefillBound = phaseBound(&in.Prefill)
		if r.Arch == sim.Decoder {
			j.TPOT, j.TPOTLow, j.TPOTHigh = fp(float64(in.TPOT)), fp(float64(in.TPOTLow)), fp(float64(in.TPOTHigh))
			j.OutTok, j.OutTokDevice = fp(in.OutputTokensPerSecond), fp(in.OutputTokensPerSecondPerDevice)
			if in.Decode != nil {
				j.DecodeBound = in.Decode.Bound.String()
			}
		}
		if r.Unit == "images" {
			j.Images = fp(in.ImagesPerSecond)
		}
		if r.Arch != sim.Decoder {
			j.Samples = fp(in.SamplesPerSecond)
		}
	}
	if tr := r.Training; tr != nil {
		j.Training = &trainingJSON{
			StepTime: float64(tr.StepTime), StepTimeLow: float64(tr.StepTimeLow), StepTimeHigh: float64(tr.StepTimeHigh),
			MicroBatches: tr.MicroBatches, SamplesPerSec: tr.SamplesPerSecond,
			ModelFLOPs: float64(tr.ModelFLOPs), HardwareFLOPs: float64(tr.HardwareFLOPs), MFU: tr.MFU, HFU: tr.HFU,
			TimeToTrain: float64(tr.TimeToTrain), Breakdown: breakdownOf(tr.Breakdown),
		}
		if !imageArch(r.Arch) {
			j.Training.TokensPerSecond = fp(tr.TokensPerSecond)
		}
	}
	j.Memory = memoryOf(r.Memory, sc.Mode == sim.Training)
	if lim.Searched {
		mb, mc := lim.MaxBatch, lim.MaxContext
		j.Memory.MaxBatch = &mb
		if lim.HasContext {
			j.Memory.MaxContext = &mc
		}
	}
	for _, p := range allPhases(r) {
		pj := phaseJSON{Name: p.Name, Steps: p.Steps, Time: float64(p.Time), TimeLow: float64(p.Low), TimeHigh: float64(p.High),
			FLOPs: float64(p.FLOPs), Bytes: whole(float64(p.Bytes)), Intensity: intensity(p.FLOPs, p.Bytes), Bound: p.Bound.String(),
			Classes: []classJSON{}}
		for _, c := range p.Classes {
			pj.Classes = append(pj.Classes, classJSON{Class: c.Class.String(), Time: float64(c.Time), Share: c.Share,
				Bound: c.Bound.String(), FLOPs: float64(c.FLOPs), Bytes: whole(float64(c.Bytes)), Intensity: intensity(c.FLOPs, c.Bytes)})
		}
		if ops {
			pj.Ops = []opJSON{}
			for _, o := range p.Ops {
				pj.Ops = append(pj.Ops, opJSON{Name: o.Name.String(), Class: o.Class.String(), Kind: o.Kind.String(), Count: o.Count,
					Time: float64(o.Time), TimeLow: float64(o.Low), TimeHigh: float64(o.High), Share: shareOf(o.Time, p.Time),
					Bound: o.Bound.String(), DType: dtypeName(o.DType), FLOPs: float64(o.FLOPs), Bytes: whole(float64(o.Bytes)),
					Intensity: intensity(o.FLOPs, o.Bytes)})
			}
		}
		j.Phases = append(j.Phases, pj)
	}
	for _, w := range r.Warnings {
		j.Warnings = append(j.Warnings, w.Error())
	}
	return j
}

// InferenceScenario holds an inference's lengths, where they apply: no
// input tokens for an image model, no output for an encoder (a resnet50
// had carried the defaults 2048 and 128).
type InferenceScenario struct {
	InputTokens  *int `json:"input_tokens,omitempty"`
	OutputTokens *int `json:"output_tokens,omitempty"`
}

type TrainingScenario struct {
	Seq         int `json:"seq"`
	GlobalBatch int `json:"global_batch"`
}

type TrainingSettings struct {
	Recompute string `json:"recompute"`
	Optimizer string `json:"optimizer"`
	ZeRO      int    `json:"zero"`
	// The budget for the time to train: Tokens a language model's, Images
	// an image model's (its --tokens counts images); one or the other.
	Tokens *int64 `json:"tokens,omitempty"`
	Images *int64 `json:"images,omitempty"`
	// Dropout and UnfusedAttention, when set (--dropout,
	// --unfused-attention).
	Dropout          float64 `json:"dropout,omitempty"`
	UnfusedAttention bool    `json:"unfused_attention,omitempty"`
}

// scenarioOf is the JSON of a scenario, with the parallel degrees and
// the global batch defaulted as sim.Run normalises them.
func scenarioOf(sc sim.Scenario, arch sim.Arch) scenarioJSON {
	tp, pp, dp := max(sc.TP, 1), max(sc.PP, 1), max(sc.DP, 1)
	gb := sc.GlobalBatch
	if gb == 0 {
		gb = sc.Batch * dp
	}
	var par *parallelJSON
	if sc.Mode == sim.Training {
		par = &parallelJSON{SP: sc.SP, CP: max(sc.CP, 1), EP: max(sc.EP, 1), Schedule: sc.Schedule.String(),
			VirtualStages: max(sc.VirtualStages, 1), TPOverlap: sc.TPOverlap, NoOverlap: sc.NoOverlap,
			EmbeddingSlot: sc.EmbeddingSlot, LossSlot: sc.LossSlot}
		if sc.GradType != model.Invalid {
			par.GradDType = sc.GradType.String()
		}
	}
	j := scenarioJSON{
		Batch: sc.Batch,
		TP:    tp, PP: pp, DP: dp, Weights: sc.Weights.String(), Act: sc.Act.String(), KV: sc.KV.String(),
		Comm: sc.CommType().String(),
		Exec: sc.Exec.String(), HostOverhead: float64(hostOverhead(sc)), Autocast: sc.Autocast, GEMMAllReduce: sc.GEMMAllReduce, LoaderRate: sc.LoaderRate,
		Parallel: par,
	}
	if sc.Attention != sim.AttentionEngine {
		j.Attention = sc.Attention.String()
	}
	if sc.Mode == sim.Training {
		j.TrainingScenario = &TrainingScenario{Seq: sc.Seq, GlobalBatch: gb}
		budget := whole(sc.Tokens)
		j.TrainingSettings = &TrainingSettings{Recompute: sc.Recompute.String(), Optimizer: sc.Optimizer.String(),
			ZeRO: sc.ZeRO, Tokens: &budget, Dropout: sc.Dropout, UnfusedAttention: sc.UnfusedAttention}
		if imageArch(arch) {
			j.TrainingSettings.Tokens, j.TrainingSettings.Images = nil, &budget
		}
	} else {
		in, out := sc.Input, sc.Output
		j.InferenceScenario = &InferenceScenario{}
		if arch != sim.CNN && arch != sim.Vision {
			j.InferenceScenario.InputTokens = &in
		}
		if arch == sim.Decoder {
			j.InferenceScenario.OutputTokens = &out
		}
	}
	return j
}

// commNote names the type of the residual stream's collectives when
// there are any (TP, PP or EP above 1) and it is not the compute type.
func commNote(sc sim.Scenario) string {
	if max(sc.TP, sc.PP, sc.EP) <= 1 || sc.CommType() == sc.Act {
		return ""
	}
	s := ", collectives " + sc.CommType().String()
	if sc.GEMMAllReduce && sc.TP > 1 {
		s += " (TP all-reduces fused with their GEMMs)"
	}
	return s
}

// hostOverhead is the host time per kernel an eager scenario uses, 0
// otherwise.
func hostOverhead(sc sim.Scenario) model.Seconds {
	if sc.Exec != sim.ExecEager {
		return 0
	}
	if sc.HostOverhead > 0 {
		return sc.HostOverhead
	}
	return sim.DefaultHostOverhead
}

// attentionNote names the prefill attention kernel for a scenario line
// when it is not the engine's calibrated one.
func attentionNote(sc sim.Scenario) string {
	if sc.Attention == sim.AttentionFA2 {
		return "; FlashAttention-2"
	}
	return ""
}

// execNote describes a scenario's execution mode for the table's
// scenario line: nothing for the default (graph).
func execNote(sc sim.Scenario) string {
	var s string
	switch sc.Exec {
	case sim.ExecEager:
		s = fmt.Sprintf("; eager, %v per kernel on the host", hostOverhead(sc))
	case sim.ExecFused:
		s = "; fused (TensorRT-style)"
	}
	if sc.Autocast {
		s += "; autocast"
	}
	s += attentionNote(sc)
	if sc.LoaderRate > 0 {
		s += fmt.Sprintf("; input pipeline %s samples/s", fnum(sc.LoaderRate))
	}
	return s
}

// memoryOf is the JSON of a footprint (the inverse-query limits left 0),
// with the gradients and optimizer state when training.
func memoryOf(m sim.Memory, training bool) memoryJSON {
	b := func(x model.Bytes) int64 { return whole(float64(x)) }
	j := memoryJSON{
		Weights: b(m.Weights), KVCache: b(m.KVCache), KVPerToken: b(m.KVPerToken), Activations: b(m.Activations),
		Reserve: b(m.Reserve), Total: b(m.Total), Capacity: b(m.Capacity), Usable: b(m.Usable), Headroom: b(m.Headroom),
		Fits: m.Fits,
	}
	if m.KVState > 0 {
		s := b(m.KVState)
		j.KVState = &s
	}
	if training {
		g, o := b(m.Gradients), b(m.Optimizer)
		j.Gradients, j.Optimizer = &g, &o
	}
	return j
}

// whole rounds a count (parameters, bytes, tokens) to an integer for
// JSON and CSV, saturating beyond the int64 range.
func whole(x float64) int64 {
	switch {
	case !(x > math.MinInt64): // and NaN
		if x != x {
			return 0
		}
		return math.MinInt64
	case x >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Round(x))
}

func shareOf(part, whole model.Seconds) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

func dtypeName(d model.DType) string {
	if !d.Valid() {
		return ""
	}
	return d.String()
}

// imageArch reports whether a model of arch works on images (a CNN or a
// ViT): its training counts images, and no key named tokens holds them.
func imageArch(arch sim.Arch) bool { return arch == sim.CNN || arch == sim.Vision }
