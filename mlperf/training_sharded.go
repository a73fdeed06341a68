package mlperf

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// DLRM training with its embedding tables sharded over the devices, as
// the reference (TorchRec's DistributedModelParallel) and the
// submissions (HugeCTR's model-parallel embeddings) run it:
//
//   - The dense part (bottom MLP, the cross layers, the over MLP) is data
//     parallel: each device runs its share of the global batch forward and
//     backward, and the dense gradients are all-reduced. Package sim
//     prices it on the model less its tables (dense).
//   - The tables are model parallel, split evenly over the devices (the
//     reference's planner balances them; perfsim takes an even share). A
//     step, per device: gather the multi-hot rows its tables hold for the
//     whole global batch and pool them; an all-to-all sends each
//     device's pooled vectors to the device whose samples they belong
//     to; backward, the pooled gradients travel back by a second
//     all-to-all; the sparse update writes only the rows looked up:
//     Adagrad reads each row's gradient, accumulator and weight and
//     writes the accumulator and the weight (fp32).
//
// The two run side by side, as HugeCTR runs them (its train.py sets
// train_intra_iteration_overlap and train_inter_iteration_overlap in
// the v4.0 submission, mlcommons/training_results_v4.0
// NVIDIA/benchmarks/dlrm_dcnv2/implementations/merlin_hugectr): kernels
// bound by different resources overlap, kernels bound by the same one
// share it. The dense pass's compute-bound kernels (its GEMMs) overlap
// the embedding's memory-bound gathers and updates; its memory-bound
// kernels (activations, the cross layers' products, norms) share the
// memory with them and add up; the all-to-alls run on NVLink beside
// both. A step is max(compute-bound dense, memory-bound dense +
// embedding, all-to-alls) plus the dense gradient all-reduce and
// optimizer, which follow the backward pass.

// tableBytes is the tables' storage type in training (fp32, as the
// reference's TorchRec tables and their Adagrad state are kept).
const tableBytes = 4

// dense is a DLRM less its embedding tables: its ops without the
// embedding-bag gathers and its parameters without the tables'.
type dense struct {
	sim.Workload
	tables float64 // table parameters
}

func isBag(op model.Op) bool {
	e, ok := op.Kernel.(model.Elementwise)
	return ok && e.Kind == "embedding_bag"
}

func (d dense) Ops(ph sim.Phase) ([]model.Op, error) {
	ops, err := d.Workload.Ops(ph)
	if err != nil {
		return nil, err
	}
	out := ops[:0:0]
	for _, op := range ops {
		if !isBag(op) {
			out = append(out, op)
		}
	}
	return out, nil
}

func (d dense) Params() float64       { return d.Workload.Params() - d.tables }
func (d dense) ActiveParams() float64 { return d.Params() }
func (d dense) WeightBytes(w model.DType) model.Bytes {
	return w.Bytes(d.Params())
}

// bagRows returns the rows one sample gathers over all tables, and the
// row width, from a workload's forward ops at batch 1.
func bagRows(w sim.Workload) (rows float64, width int, err error) {
	ops, err := w.Ops(sim.Phase{Kind: sim.TrainForward, Batch: 1, Seq: 1, Weights: model.FP32, Act: model.FP32, KV: model.FP32, TP: 1})
	if err != nil {
		return 0, 0, err
	}
	for _, op := range ops {
		if e, ok := op.Kernel.(model.Elementwise); ok && e.Kind == "embedding_bag" {
			// Written is the pooled row (width elements); Read the
			// rows gathered.
			width = int(math.Round(float64(e.Written) / 4))
			rows += float64(op.Count) * float64(e.Read) / float64(e.Written)
		}
	}
	if rows == 0 {
		return 0, 0, fmt.Errorf("%s has no embedding tables", w.Name())
	}
	return rows, width, nil
}

// timeToTrainSharded prices a recommender with sharded tables: the
// dense step from package sim (data parallel over every device at
// gbs/devices), plus per step on each device its share of the gathers,
// the two all-to-alls of the pooled vectors and the sparse update;
// evaluations run the forward part over the eval set.
func timeToTrainSharded(sys *hardware.System, b TrainingBenchmark, gbs int, resolve Resolver, res *TrainingResult) {
	devs := sys.Devices()
	if gbs <= 0 || gbs%devs != 0 {
		res.Note = fmt.Sprintf("the global batch %d does not split over %d devices", gbs, devs)
		return
	}
	base, err := resolve(b.Model)
	if err != nil {
		res.Note = err.Error()
		return
	}
	rows, width, err := bagRows(base)
	if err != nil {
		res.Note = err.Error()
		return
	}
	d := dense{base, b.TableParams}
	prec, fallback := trainingType(sys, b.Precision)
	local := gbs / devs
	sc := sim.Default()
	sc.Mode, sc.Batch, sc.DP, sc.GlobalBatch = sim.Training, local, devs, gbs
	sc.Weights, sc.Act, sc.KV = prec, prec, prec
	rep, err := sim.Run(sys, d, sc)
	if err != nil {
		res.Note = err.Error()
		return
	}
	// Each device's share of the global batch's lookups.
	look := float64(gbs) * rows / float64(devs)
	elems := look * float64(width)
	gather, err := sim.Kernel(sys.Device, model.Gather{Rows: int(math.Ceil(look)), Width: width, DType: model.FP32}, false)
	if err != nil {
		res.Note = err.Error()
		return
	}
	// Adagrad on the rows looked up: read the row's gradient (fp32),
	// accumulator and weight, write the accumulator and the weight.
	update, err := sim.Kernel(sys.Device, model.Elementwise{Kind: "adagrad_sparse", Elements: elems, Work: model.FLOPs(5 * elems),
		Read: model.Bytes(3 * tableBytes * elems), Written: model.Bytes(2 * tableBytes * elems)}, false)
	if err != nil {
		res.Note = err.Error()
		return
	}
	// The pooled vectors of a device's local samples, one per table, in
	// the activation type.
	tables := bagTables(base)
	size := prec.Bytes(float64(local) * tables * float64(width))
	g := model.Group{Ranks: devs, PerNode: sys.GroupPerNode(devs, 1)}
	a2a, _ := model.TieredTime(model.AllToAll, size, g, sys.Intra.Link(), sys.Inter.Link(), model.Auto)
	tr := rep.Training
	var compute, memory model.Seconds
	for _, p := range []*sim.PhaseReport{&tr.Forward, &tr.Backward} {
		for i := range p.Ops {
			if o := &p.Ops[i]; o.Bound == model.ComputeBound {
				compute += o.Time
			} else {
				memory += o.Time
			}
		}
	}
	micro := model.Seconds(max(tr.MicroBatches, 1))
	rest := tr.StepTime - micro*(tr.Forward.Time+tr.Backward.Time)
	step := max(micro*compute, micro*memory+gather.Time+update.Time, 2*a2a) + rest

	// Memory: the dense part as sim counts it, plus each device's share
	// of the tables and their Adagrad accumulators (fp32).
	mem := rep.Memory
	res.Memory = mem.Total + model.Bytes(2*tableBytes*b.TableParams/float64(devs))
	res.Usable = mem.Usable
	if res.Memory > mem.Usable {
		res.Note = fmt.Sprintf("the tables' share (%.1f GiB a device with their Adagrad state) and the dense part do not fit: %.1f GiB of %.1f GiB",
			2*tableBytes*b.TableParams/float64(devs)/(1<<30), float64(res.Memory)/(1<<30), float64(mem.Usable)/(1<<30))
		return
	}
	res.StepTime = step
	res.Throughput = float64(gbs) / float64(step)
	res.converge(&b, gbs)
	// An evaluation: the eval set forward at the training batch, its
	// gathers and one all-to-all a batch.
	batches := math.Ceil(float64(b.EvalSamples) / float64(gbs))
	perEval := model.Seconds(batches) * (rep.Training.Forward.Time + gather.Time + a2a)
	res.EvalTime = perEval * model.Seconds(res.Evals)
	res.Total = res.StepTime*model.Seconds(res.Steps) + res.EvalTime
	res.Note = b.Note + fallback
}

// bagTables returns how many embedding tables a workload has.
func bagTables(w sim.Workload) float64 {
	ops, err := w.Ops(sim.Phase{Kind: sim.TrainForward, Batch: 1, Seq: 1, Weights: model.FP32, Act: model.FP32, KV: model.FP32, TP: 1})
	if err != nil {
		return 0
	}
	var n float64
	for _, op := range ops {
		if isBag(op) {
			n += float64(op.Count)
		}
	}
	return n
}
