package mlperf

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// Adapter state per parameter under mixed-precision Adam: the bf16
// weight (2 bytes), its gradient kept in fp32 as Megatron-Core keeps
// bf16 models' gradients (4), and the fp32 master weight and two
// moments (12) (Rajbhandari et al. 2020, "ZeRO", §3.1: 16 bytes a
// parameter with 16-bit gradients; +2 for fp32 gradients).
const adapterStateBytes = 18

// timeToTrainLayout prices a benchmark that runs with tensor parallelism
// (TP ranks a replica, sequence parallelism and TP communication overlap
// on, as NVIDIA's NeMo submissions run them) and, for a LoRA benchmark,
// frozen base weights: the step from package sim on the adapted
// workload, its data-parallel gradient reduction and optimizer replaced
// by the adapters' (exposed: a few MB), and the memory recounted
// without the base's gradients and optimizer state. Evaluations are
// forward passes of the eval set over the replicas, each a prefill of
// Seq tokens on TP devices.
func timeToTrainLayout(sys *hardware.System, b TrainingBenchmark, gbs int, resolve Resolver, res *TrainingResult) {
	devs, tp, pp, cp, mb := sys.Devices(), max(b.TP, 1), max(b.PP, 1), max(b.CP, 1), max(b.MicroBatch, 1)
	if cp > 1 && pp > 1 && devs%(tp*pp*cp) != 0 {
		res.Note = fmt.Sprintf("tp %d × pp %d × cp %d needs a multiple of %d devices, not %d", tp, pp, cp, tp*pp*cp, devs)
		if b.SubmissionGPUs > 0 {
			res.Note += fmt.Sprintf(" (the layout's submission ran %d: --gpus %d)", b.SubmissionGPUs, b.SubmissionGPUs)
		}
		return
	}
	if pp > 1 && devs%(tp*pp) != 0 {
		res.Note = fmt.Sprintf("tp %d × pp %d needs a multiple of %d devices, not %d", tp, pp, tp*pp, devs)
		if b.SubmissionGPUs > 0 {
			res.Note += fmt.Sprintf(" (the layout's submission ran %d: --gpus %d)", b.SubmissionGPUs, b.SubmissionGPUs)
		}
		return
	}
	if devs%tp != 0 {
		res.Note = fmt.Sprintf("tensor parallelism %d does not divide the %d devices", tp, devs)
		return
	}
	dp := devs / (tp * pp * cp)
	if gbs <= 0 || gbs%(dp*mb) != 0 {
		res.Note = fmt.Sprintf("the global batch %d does not split over %d data-parallel replicas of micro-batch %d", gbs, dp, mb)
		return
	}
	base, err := resolve(b.Model)
	if err != nil {
		res.Note = err.Error()
		return
	}
	w := base
	var lw lora
	if b.LoRA != nil {
		lw = lora{base, *b.LoRA}
		w = lw
	}
	prec, fallback := trainingType(sys, b.Precision)
	sc := sim.Default()
	sc.Mode, sc.Batch, sc.Seq, sc.TP, sc.DP, sc.GlobalBatch = sim.Training, mb, b.Seq, tp, dp, gbs
	sc.SP, sc.TPOverlap = tp > 1, tp > 1
	sc.PP, sc.VirtualStages, sc.ZeRO, sc.CP = pp, max(b.VirtualStages, 1), b.ZeRO, cp
	sc.EmbeddingSlot, sc.LossSlot = b.LayerSlots, b.LayerSlots
	if sc.VirtualStages > 1 {
		sc.Schedule = sim.Interleaved
	}
	sc.Weights, sc.Act, sc.KV = prec, prec, prec
	rep, err := sim.Run(sys, w, sc)
	if err != nil {
		res.Note = err.Error()
		return
	}
	tr := rep.Training
	step, mem := tr.StepTime, rep.Memory
	fits := mem.Fits
	if b.LoRA != nil {
		ph := sim.Phase{Kind: sim.TrainForward, Batch: mb, Seq: b.Seq, Weights: prec, Act: prec, KV: prec, TP: tp}
		fwd, err := lw.Ops(ph)
		if err != nil {
			res.Note = err.Error()
			return
		}
		ap := lw.adapterParams(fwd)
		grads := model.Bytes(4 * ap)
		g := model.Group{Ranks: dp, PerNode: sys.GroupPerNode(dp, tp)}
		reduce, _ := model.TieredTime(model.AllReduce, grads, g, sys.Intra.Link(), sys.Inter.Link(), model.Auto)
		// Adam over the adapters: read the fp32 gradient, master weight
		// and moments, write the master, the moments and the bf16 weight.
		adam, err := sim.Kernel(sys.Device, model.Elementwise{Kind: "adam", Elements: ap, Work: model.FLOPs(10 * ap),
			Read: model.Bytes(16 * ap), Written: model.Bytes(14 * ap)}, false)
		if err != nil {
			res.Note = err.Error()
			return
		}
		if bd := tr.Breakdown; bd != nil {
			step += reduce + adam.Time - bd.DPComm - bd.Optimizer
		}
		total := mem.Weights + mem.Activations + mem.Reserve + model.Bytes(adapterStateBytes*ap)
		fits = total <= mem.Usable
		res.Memory = total
	} else {
		res.Memory = mem.Total
	}
	res.Usable = mem.Usable
	if !fits {
		res.Note = fmt.Sprintf("a micro-batch of %d at tensor parallelism %d does not fit in one device's memory (%.1f GiB of %.1f GiB)",
			mb, tp, float64(res.Memory)/(1<<30), float64(mem.Usable)/(1<<30))
		if pp > 1 {
			res.Note = fmt.Sprintf("a micro-batch of %d at tp %d × pp %d over %d devices does not fit in one device's memory (%.1f GiB of %.1f GiB)",
				mb, tp, pp, devs, float64(res.Memory)/(1<<30), float64(mem.Usable)/(1<<30))
		}
		return
	}
	res.StepTime = step
	res.Throughput = float64(gbs) / float64(step)
	res.converge(&b, gbs)
	if pp > 1 {
		// One evaluation on the training layout: each replica runs its
		// share of the eval set forward in micro-batches through its
		// pipeline. The slowest stage's forward of a micro-batch is its
		// layers' share of the model's (package sim's Forward is one TP
		// rank's share of every layer): 1/pp for an even split, 16/126
		// for Llama 3.1 405B's layer slots; the pipeline fills in
		// (pp-1)/vp of them.
		micro := math.Ceil(float64(b.EvalSamples) / float64(dp*mb))
		fill := float64(pp-1) / float64(max(b.VirtualStages, 1))
		share := 1 / float64(pp)
		if L := w.Shape().Layers; L > 0 {
			if chunks, err := sim.ChunkLayers(L, pp, max(b.VirtualStages, 1), b.LayerSlots, b.LayerSlots); err == nil {
				most := 0
				for _, st := range chunks {
					n := 0
					for _, k := range st {
						n += k
					}
					most = max(most, n)
				}
				share = float64(most) / float64(L)
			}
		}
		stage := tr.Forward.Time * model.Seconds(share)
		res.EvalTime = stage * model.Seconds((micro+fill)*float64(res.Evals))
		res.Total = res.StepTime*model.Seconds(res.Steps) + res.EvalTime
		res.Note = b.Note + fallback
		return
	}
	// One evaluation: each replica runs its share of the eval set, one
	// sequence at a time, as a prefill on its TP devices.
	one, err := hardware.NewSystem(sys.Device, tp, 1)
	if err != nil {
		res.Note = err.Error()
		return
	}
	isc := sim.Default()
	isc.Batch, isc.Input, isc.Output, isc.TP = 1, b.Seq, 1, tp
	isc.MaxNumTokens = b.Seq
	isc.Weights, isc.Act, isc.KV = prec, prec, prec
	irep, err := sim.Run(one, base, isc)
	if err != nil {
		res.Note = err.Error()
		return
	}
	perEval := model.Seconds(float64(irep.Inference.TTFT) * math.Ceil(float64(b.EvalSamples)/float64(dp)))
	res.EvalTime = perEval * model.Seconds(res.Evals)
	res.Total = res.StepTime*model.Seconds(res.Steps) + res.EvalTime
	res.Note = b.Note + fallback
}

// trainingType returns the type a benchmark trains in on sys: its
// precision where the device has a peak for it, else bf16 (fp16 on a
// device without bf16), with a note saying so.
func trainingType(sys *hardware.System, want model.DType) (model.DType, string) {
	p := sys.Device.Processor()
	if want.Valid() && hasPeak(&p, want) {
		return want, ""
	}
	got := model.BF16
	if !hasPeak(&p, got) {
		got = model.FP16
	}
	if !want.Valid() {
		return got, ""
	}
	return got, fmt.Sprintf("; %s has no %s: %s", sys.Device.Name, want, got)
}
