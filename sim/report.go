package sim

import "github.com/perfsim/perfsim/model"

// A Report is what Run returns: the scenario's answer, phase by phase,
// with per-class and per-op rows, the memory per device, and warnings.
// It is a plain struct, in base units, meant to be read by programs
// (sweeps, plots) as well as printed.
type Report struct {
	Model    string
	Hardware string
	Arch     Arch
	Scenario Scenario // normalised: parallel degrees at least 1
	Devices  int      // devices the scenario runs on: TP·PP·DP
	// Unit names the samples of a model without decode, plural, for
	// "/s": "images" for an image input (a CNN or ViT over more than
	// one pixel), else "samples" (a BERT sequence, a DLRM user-item
	// pair, an R-GAT seed node: a 1×1 "image" is not one).
	Unit string

	// Params and ActiveParams are the workload's parameter counts.
	Params, ActiveParams float64

	Inference *InferenceResult // nil in training mode
	Training  *TrainingResult  // nil in inference mode

	Memory Memory

	// Energy is the run's energy and power (energy.go); nil when the
	// device has no power model.
	Energy *Energy

	// Interval names the error figure behind every Low and High: "p90"
	// when the hardware's efficiency parameters carry held-out p90 errors
	// from a calibration, "none" when they do not (Low = High = time). A
	// kernel of time t with p90 error e spans [t/(1+e), t·(1+e)].
	Interval string

	// Warnings are things the user should know that did not stop the
	// run: a data-type fallback, a context past the model's trained one.
	Warnings []error
}

// InferenceResult answers an inference scenario. For a CNN or a vision
// transformer, TTFT is the latency of one batch of images and there is
// no decode.
type InferenceResult struct {
	// TTFT is the time to the first token: the prefill of Batch prompts of
	// Input tokens (no queueing is modelled).
	TTFT, TTFTLow, TTFTHigh model.Seconds
	// TPOT is the mean time per output token after the first:
	// (E2E − TTFT)/(Output − 1), 0 when Output is 1.
	TPOT, TPOTLow, TPOTHigh model.Seconds
	// E2E is the latency of a request: TTFT plus every decode step.
	E2E, E2ELow, E2EHigh model.Seconds

	// OutputTokensPerSecond is DP·Batch·Output/E2E for the whole system
	// (each DP replica serves a batch); PerDevice divides by the devices.
	// Images and samples per second are DP·Batch/TTFT, the whole
	// system's, for models without decode.
	OutputTokensPerSecond          float64
	OutputTokensPerSecondPerDevice float64
	ImagesPerSecond                float64 // CNNs and vision transformers
	// SamplesPerSecond is DP·Batch/TTFT for every model without decode
	// (images, BERT sequences, DLRM user-item pairs, R-GAT seed nodes),
	// bounded by the input pipeline as ImagesPerSecond is; Report.Unit
	// names what one sample is.
	SamplesPerSecond float64
	// LoaderBound says the input pipeline (Scenario.LoaderRate), not the
	// device, bounds ImagesPerSecond.
	LoaderBound bool

	Prefill PhaseReport  // one prefill
	Decode  *PhaseReport // every decode step summed; nil without decode
}

// TrainingResult answers a training scenario.
type TrainingResult struct {
	// StepTime is one optimizer step: the micro-batches' forward,
	// backward and recomputation, the gradient synchronisation, and the
	// optimizer's pass over its state.
	StepTime, StepTimeLow, StepTimeHigh model.Seconds
	MicroBatches                        int     // gradient-accumulation steps per optimizer step
	TokensPerSecond                     float64 // whole system; images for CNNs
	SamplesPerSecond                    float64 // sequences or images per second
	// ModelFLOPs is the matrix arithmetic of forward and backward per
	// step over all devices (≈ 6·N·tokens plus attention); HardwareFLOPs
	// adds recomputation.
	ModelFLOPs, HardwareFLOPs model.FLOPs
	// MFU and HFU divide those by StepTime, the devices and the peak of
	// the activation type.
	MFU, HFU float64
	// LoaderBound says the input pipeline (Scenario.LoaderRate) sets the
	// step time.
	LoaderBound bool
	// TimeToTrain is the budget's whole steps (Tokens over the step's
	// tokens, rounded up) times StepTime, 0 without a budget.
	TimeToTrain model.Seconds

	Forward   PhaseReport  // one micro-batch
	Backward  PhaseReport  // one micro-batch
	Recompute *PhaseReport // one micro-batch; nil without recomputation
	Gradients *PhaseReport // data-parallel gradient synchronisation; nil when DP is 1 or for transformers (see Breakdown)
	Optimizer PhaseReport
	// Breakdown splits a transformer's step on its slowest pipeline stage
	// (compute, exposed communication per kind, bubble, overlap,
	// optimizer); nil for CNNs.
	Breakdown *Breakdown
}

// A PhaseReport is the cost of one phase: its totals, a row per op class
// and a row per op, all totals over Steps runs of the phase.
type PhaseReport struct {
	Name            string
	Steps           int // runs of the pass summed here (decode steps; 1 otherwise)
	Time, Low, High model.Seconds
	FLOPs           model.FLOPs
	Bytes           model.Bytes
	// Energy is what one device draws running the phase's kernels
	// (their power times their time; see model.Processor.Power).
	Energy model.Joules
	// Bound is the bound of the ops that take most of the time.
	Bound model.Bound
	// HostBound says the pass waits on the host issuing kernels (eager
	// execution; see Exec) more than on the device.
	HostBound bool
	// Wait is the part of Time the device spends idle within the pass
	// (waiting on the host under eager execution); its energy is idle
	// power's, not the kernels' (energy.go).
	Wait    model.Seconds
	Classes []ClassRow
	Ops     []OpRow
}

// Intensity returns the phase's arithmetic intensity.
func (p *PhaseReport) Intensity() model.Intensity { return model.IntensityOf(p.FLOPs, p.Bytes) }

// A ClassRow sums the ops of one class in a phase.
type ClassRow struct {
	Class model.Class
	Bound model.Bound
	Time  model.Seconds
	FLOPs model.FLOPs
	Bytes model.Bytes
	Share float64 // of the phase's time
}

// An OpRow is one op of a phase, totalled over its Count launches per
// pass and over the phase's Steps. Its strings are Labels (label.go), so
// that a row holds no pointer.
type OpRow struct {
	Name, Stage Label
	// Kind is the kernel's kind: gemm, grouped_gemm, attention,
	// elementwise, gather, collective, scan or other.
	Kind            Label
	Class           model.Class
	Bound           model.Bound
	DType           model.DType // the type it computed at
	Count           int         // launches per pass
	FLOPs           model.FLOPs
	Bytes           model.Bytes
	Time, Low, High model.Seconds
	Energy          model.Joules // one device's, over Count launches and Steps
}

// Intensity returns the op's arithmetic intensity.
func (r *OpRow) Intensity() model.Intensity { return model.IntensityOf(r.FLOPs, r.Bytes) }

// Memory is the footprint on the most loaded device.
type Memory struct {
	Weights    model.Bytes
	KVCache    model.Bytes // inference
	KVPerToken model.Bytes // one token of one sequence, this device's share
	// KVState is the part of one sequence's KV cache that does not grow
	// with its tokens (the state of state-space and DeltaNet layers),
	// this device's share; KVPerToken averages it in, as serving sizes it.
	KVState model.Bytes
	// KVGrowth is what each further token of one sequence adds to its KV
	// cache (the attention layers'), this device's share: KVPerToken
	// less the state's average, equal to it for a model with no state.
	KVGrowth model.Bytes
	// KVWindow is the sliding window of a model's windowed attention
	// layers in tokens (0: none), and KVWindowed what one token within
	// it adds to one sequence's KV cache in those layers, this device's
	// share. For such a model KVGrowth is the full-attention layers'
	// alone, so that a sequence of t tokens holds KVState + KVGrowth·t +
	// KVWindowed·min(t, KVWindow), where KVPerToken averages it over the
	// scenario's tokens.
	KVWindow   int
	KVWindowed model.Bytes
	// KVFullLayers and KVWindowLayers are the attention layers of each
	// kind on this device (a pipeline stage's share, rounded), set with
	// KVWindow: what an engine that groups layers by kind
	// (serve.WindowGroups) groups.
	KVFullLayers, KVWindowLayers int
	Activations                  model.Bytes // inference working set, or training activations
	Gradients                    model.Bytes
	Optimizer                    model.Bytes // master weights and moments
	Reserve                      model.Bytes // framework, CUDA context, workspace
	// Buffers is a serving engine's own runtime buffers, sized by its
	// build limits (package serve sets it where it models them; sim
	// leaves it 0 and Total does not count it).
	Buffers  model.Bytes
	Total    model.Bytes
	Capacity model.Bytes // physical memory
	// Usable is what programs can allocate (hardware.Memory.Limit): the
	// figure a fit is sized against.
	Usable model.Bytes
	Fits   bool
	// Headroom is Usable − Total: negative is the shortfall.
	Headroom model.Bytes
}
