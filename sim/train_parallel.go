package sim

import (
	"math"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// A Breakdown splits a training step's time on its slowest pipeline stage
// into what it waits on. The parts sum to the step time.
type Breakdown struct {
	// Compute is the micro-batches' forward, backward and recomputation
	// kernels (embedding and head included on their stages).
	Compute model.Seconds
	// TPComm, CPComm, EPComm and PPComm are the tensor-, context-,
	// expert- and pipeline-parallel communication left exposed.
	TPComm, CPComm, EPComm, PPComm model.Seconds
	// Bubble is the pipeline's fill and drain (PipelineTime).
	Bubble model.Seconds
	// DPComm is the data-parallel gradient reduction and parameter
	// gathering left exposed after overlap.
	DPComm model.Seconds
	// Overlap is what compute loses to communication running beside it
	// on the same device (overlapSlowdown).
	Overlap   model.Seconds
	Optimizer model.Seconds
	// Input is the wait on the input pipeline when Scenario.LoaderRate
	// bounds the step.
	Input model.Seconds
}

// Total returns the sum of the parts.
func (b Breakdown) Total() model.Seconds {
	return b.Compute + b.TPComm + b.CPComm + b.EPComm + b.PPComm + b.Bubble + b.DPComm + b.Overlap + b.Optimizer + b.Input
}

// ddpBucket is the parameters in one data-parallel gradient bucket:
// Megatron-LM's default, max(40M, 1M·dp) (megatron/training/training.py,
// DistributedDataParallelConfig.bucket_size); the last bucket of the
// backward pass cannot overlap anything.
func ddpBucket(dp int) float64 { return math.Max(40e6, 1e6*float64(dp)) }

// ncclChannels is the thread blocks a NCCL collective occupies while it
// runs beside compute: assumed 16 (NCCL's default channel count for an
// 8-GPU NVSwitch node with 8 NICs is 16 to 32; NCCL_MIN_NCHANNELS,
// NCCL_MAX_NCHANNELS). Overlapped compute slows by their share of the
// compute units (overlapSlowdown).
const ncclChannels = 16

// overlapSlowdown returns the fraction of the device's compute units a
// collective takes from the kernels it overlaps.
func (r *runner) overlapSlowdown() float64 {
	cu := r.sys.Device.ComputeUnits
	if cu <= ncclChannels {
		return 0.5
	}
	return float64(ncclChannels) / float64(cu)
}

// layerCost is one micro-batch's cost per transformer layer, and the
// layer-independent parts on the first and last pipeline stages.
type layerCost struct {
	fwd, bwd, rc   model.Seconds // compute per layer (no communication)
	attnF, attnB   model.Seconds // the attention core per layer
	first, last    model.Seconds // embedding (first stage); final norm, head and loss (last), forward and backward
	tpF, tpB, tpRc model.Seconds // tensor-parallel collectives per layer
	fused          bool          // attention keeps no score matrix
}

// group returns where a parallel group of ranks devices sits, consecutive
// members stride devices apart in Megatron-LM's rank order (TP, CP, DP,
// PP from the innermost).
func (r *runner) group(ranks, stride int) model.Group {
	return model.Group{Ranks: ranks, PerNode: r.sys.GroupPerNode(ranks, stride)}
}

// comm prices a collective over a group on the system's two tiers.
func (r *runner) comm(k model.CollectiveKind, size model.Bytes, g model.Group) model.Seconds {
	t, _ := model.TieredTime(k, size, g, r.sys.Intra.Link(), r.sys.Inter.Link(), model.Auto)
	return t
}

// p2p prices a send of size bytes between neighbours of a group whose
// members are stride devices apart.
func (r *runner) p2p(size model.Bytes, ranks, stride int) model.Seconds {
	per := 2
	if r.sys.GroupPerNode(ranks, stride) < ranks {
		per = 1 // the ring crosses nodes: its slowest hop is on the fabric
	}
	return r.comm(model.SendRecv, size, model.Group{Ranks: 2, PerNode: per})
}

// layoutOps rewrites a pass's ops for the layout: drops the
// tensor-parallel collectives (priced per tier by the caller), runs the
// full-width elementwise passes (the norms and residual adds, whose
// tensors are tokens × d_model) on 1/TP of the tokens under sequence
// parallelism, repeats the attention over the CP sequence shards (ring
// attention: CP blocks of (s/CP)² pairs, causal, s²/(2·CP) pairs per
// rank), and gives each expert-parallel rank Experts/EP experts with EP
// times the tokens each, times the load imbalance. It also returns the
// tensor-parallel collectives of one layer: their count and size.
func (r *runner) layoutOps(ops []model.Op, tokens int) (out []model.Op, tpCount float64, tpSize model.Bytes) {
	sc, L := r.sc, max(r.shape.Layers, 1)
	full := float64(tokens) * float64(r.shape.DModel)
	out = make([]model.Op, 0, len(ops))
	for _, o := range ops {
		switch k := o.Kernel.(type) {
		case model.Collective:
			if k.Kind == model.AllReduce && k.Ranks == sc.TP {
				tpCount += float64(o.Count) / float64(L)
				tpSize = k.Size
			}
			continue
		case model.Elementwise:
			if sc.SP && sc.TP > 1 && o.Count >= L && k.Elements == full && !mlpActivation(o.Name) {
				t := float64(sc.TP)
				k.Elements /= t
				k.Work = model.FLOPs(float64(k.Work) / t)
				k.Read = model.Bytes(float64(k.Read) / t)
				k.Written = model.Bytes(float64(k.Written) / t)
				o.Kernel = k
			}
		case model.Attention:
			if sc.CP > 1 {
				o.Count *= sc.CP
			}
		case model.GEMM:
			if strings.HasSuffix(o.Name, ".wgrad") {
				// The weight gradient accumulates into the main
				// gradient in its own type (Megatron-LM's
				// gradient_accumulation_fusion, on by default,
				// Transformer Engine's fuse_wgrad_accumulation: the
				// GEMM's output is the main_grad, fp32 for bf16
				// models), reading it as well as writing it: TE calls
				// the GEMM with accumulate=True (beta 1, C loaded by
				// the epilogue) into weight.main_grad
				// (transformer_engine/pytorch/module/linear.py, 1.x;
				// Megatron-LM's own layers, wgrad_gemm_accum_fp32),
				// every micro-batch, the buffer zeroed at the step's
				// start. C's elements in memory count twice.
				k.C = r.gradType()
				k.CElems = 2 * k.CElements()
				o.Kernel = k
			}
			if sc.EP > 1 && o.Class == model.ClassExperts && k.Batch > 1 {
				b := (k.Batch + sc.EP - 1) / sc.EP
				k.M = int(math.Ceil(float64(k.M) * float64(k.Batch) / float64(b) * sc.ExpertImbalance))
				k.Batch = b
				o.Kernel = k
			}
		case model.GroupedGEMM:
			if sc.EP > 1 {
				k.Experts /= float64(sc.EP)
				k.Rows = int(math.Ceil(float64(k.Rows) * sc.ExpertImbalance))
				o.Kernel = k
			}
		}
		out = append(out, o)
	}
	return out, tpCount, tpSize
}

// mlpActivation reports whether an op is an MLP's activation (ffn.act,
// expert.act, shared.act, forward or backward). It runs on the
// column-parallel GEMM's output, already split over the TP ranks, so
// sequence parallelism does not divide it again, even where that output
// has d_model columns (FFN/TP = d_model: a 4h MLP at TP 4).
func mlpActivation(name string) bool {
	return strings.HasSuffix(strings.TrimSuffix(name, ".bwd"), ".act")
}

// perLayer sums a pass's rows into per-layer and per-stage costs: rows
// repeated once per layer or more (Count ≥ layers) are the layers'; an
// embedding row is the first stage's, any other the last stage's.
func perLayer(p *PhaseReport, L int) (layer, attn, first, last model.Seconds) {
	for i := range p.Ops {
		o := &p.Ops[i]
		switch {
		case o.Class == model.ClassEmbedding:
			first += o.Time
		case o.Count < L:
			last += o.Time
		default:
			layer += o.Time
			if o.Kind == kindAttention {
				attn += o.Time
			}
		}
	}
	l := model.Seconds(L)
	return layer / l, attn / l, first, last
}

// tpTime prices one layer's tensor-parallel collectives (tpComm): count
// all-reduces of size bytes, or with sequence parallelism a
// reduce-scatter and an all-gather each (Korthikanti et al. 2022,
// §4.2.2), on the TP group's tier.
func (r *runner) tpTime(blocks [2]tpBlock, nb int, count float64, size model.Bytes) tpCost {
	if count == 0 || r.sc.TP <= 1 {
		return tpCost{}
	}
	g := r.group(r.sc.TP, 1)
	var ag, rs, ar model.Seconds
	if r.sc.SP {
		ag, rs = r.comm(model.AllGather, size, g), r.comm(model.ReduceScatter, size, g)
	} else {
		ar = r.comm(model.AllReduce, size, g)
	}
	return r.tpComm(blocks, nb, count, ag, rs, ar, r.ringStep(size, ag))
}

// ringStep prices one step of Transformer Engine's ring-exchange
// all-gather of size bytes over the TP group: a tp-th of it copied to the
// next rank on the copy engines, at ceShare of the scale-up link
// (train_tp.go). Through a switch a copy to one peer can use all of a
// device's links; in a fully connected mesh (Topology "mesh": xGMI, an
// NVLink bridge) only the one link to that peer, Bandwidth over the
// node's other devices (MI300X: 7 links of 64 GB/s, one a peer). A TP
// group that leaves the node (userbuffers runs inside one) takes a step
// of the all-gather ag instead.
func (r *runner) ringStep(size model.Bytes, ag model.Seconds) model.Seconds {
	t := r.sc.TP
	in := r.sys.Intra
	if t <= 1 {
		return 0
	}
	if r.sys.GroupPerNode(t, 1) < t || in.Bandwidth <= 0 {
		return ag / model.Seconds(t-1)
	}
	bw := float64(in.Bandwidth)
	if in.Topology == "mesh" && in.DevicesPerNode > 1 {
		bw /= float64(in.DevicesPerNode - 1)
	}
	return in.Latency + model.Seconds(float64(size)/float64(t)/(bw*ceShare))
}

// matrixWork sums the FLOPs of the matrix rows (GEMMs, grouped GEMMs and
// attention).
func matrixWork(rows []OpRow) model.FLOPs {
	var f model.FLOPs
	for i := range rows {
		switch rows[i].Kind {
		case kindGEMM, kindGrouped, kindAttention:
			f += rows[i].FLOPs
		}
	}
	return f
}
