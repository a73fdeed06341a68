package sim

import (
	"strings"

	"github.com/perfsim/perfsim/model"
)

// A tpBlock is one tensor-parallel block of a layer, per micro-batch: the
// attention's or the MLP's column-parallel GEMM (QKV, FC1: its input is
// gathered over the TP group) and row-parallel GEMM (the output
// projection, FC2: its output is reduced), forward, and their data- and
// weight-gradient GEMMs backward (Shoeybi et al. 2019, §3; Korthikanti et
// al. 2022, §4.2.2).
type tpBlock struct {
	colF, rowF             model.Seconds
	colD, colW, rowD, rowW model.Seconds
}

// tpBlocks returns a layer's tensor-parallel blocks from the passes: the
// attention's (QKV and output-projection GEMMs) and the MLP's (dense or
// expert GEMMs; those named "down" are row-parallel). n is how many of
// the two have GEMMs.
func tpBlocks(fwd, bwd *PhaseReport, L int) (b [2]tpBlock, n int) {
	l := model.Seconds(L)
	var seen [2]bool
	add := func(rows []OpRow, backward bool) {
		for i := range rows {
			o := &rows[i]
			if (o.Kind != kindGEMM && o.Kind != kindGrouped) || o.Count < L {
				continue
			}
			var k int
			switch o.Class {
			case model.ClassQKV, model.ClassOutProj:
				k = 0
			case model.ClassFFN, model.ClassExperts:
				k = 1
			default:
				continue
			}
			seen[k] = true
			name := o.Name.String()
			grad := byte(0)
			if backward {
				switch {
				case strings.HasSuffix(name, ".dgrad"):
					grad, name = 'd', strings.TrimSuffix(name, ".dgrad")
				case strings.HasSuffix(name, ".wgrad"):
					grad, name = 'w', strings.TrimSuffix(name, ".wgrad")
				default:
					continue
				}
			}
			row := o.Class == model.ClassOutProj || strings.HasSuffix(name, ".down")
			t := o.Time / l
			blk := &b[k]
			switch {
			case grad == 0 && row:
				blk.rowF += t
			case grad == 0:
				blk.colF += t
			case grad == 'd' && row:
				blk.rowD += t
			case grad == 'd':
				blk.colD += t
			case row:
				blk.rowW += t
			default:
				blk.colW += t
			}
		}
	}
	add(fwd.Ops, false)
	add(bwd.Ops, true)
	for _, s := range seen {
		if s {
			n++
		}
	}
	if !seen[0] && seen[1] {
		b[0], b[1] = b[1], tpBlock{}
	}
	return b, n
}

// Transformer Engine's default userbuffers configuration for
// tensor-parallel communication overlap (--tp-comm-overlap without a
// --tp-comm-overlap-cfg), as of TE 1.x, which Megatron-Core r0.8 ran on
// (transformer_engine/pytorch/module/base.py, initialize_ub: methods and
// add_ub's defaults): "ring_exchange" for qkv_fprop, fc1_fprop,
// proj_dgrad and fc2_dgrad (point-to-point copies on the copy engines,
// use_ce, the GEMM split in tp chunks); "pipeline" for proj_fprop and
// fc2_fprop (num_splits 4: each chunk's reduce-scatter beside the next
// chunk's GEMM); "bulk" for qkv_dgrad, qkv_wgrad, fc1_dgrad and fc1_wgrad
// (the whole collective beside the whole GEMM). The reduce-scatter and
// bulk kernels take num_sm 16 SMs, set_sm_margin 0: the GEMM keeps every
// SM and shares 16 of them while the two overlap (TE 2 takes them from
// the GEMM instead).
const (
	ubPipelineSplits = 4
	ubCommSMs        = 16
)

// ceShare is the share of a GPU's scale-up bandwidth its copy engines move
// in each direction while it sends to one peer and receives from another,
// as every rank of a ring exchange does: 749 of 900 GB/s both ways between
// H100 SXM GPUs on NVSwitch (NVIDIA/nccl issue #1264,
// p2pBandwidthLatencyTest's bidirectional P2P matrix; that test copies
// with the copy engines, NCCL's maintainer in NVIDIA/nccl-tests issue
// #149). Measured on NVLink 4, assumed for the other scale-up links. The
// NCCL all-gather's fitted rate does not apply to a ring exchange: NCCL
// moves data with SMs, through its own ring of n−1 pipelined steps.
const ceShare = 749.0 / 900

// tpComm prices one layer's tensor-parallel communication per
// micro-batch: what it exposes in the forward and in the backward pass
// and what it costs the compute it overlaps (over). ag, rs and ar are one
// all-gather, reduce-scatter and all-reduce of the layer's activation on
// the TP group; count is the blocks the layer has (its TP all-reduces).
//
// Without sequence parallelism each block all-reduces its output forward
// (exposed) and its input gradient backward, beside the weight-gradient
// GEMM (Megatron-LM's async_grad_allreduce). With it (Korthikanti et
// al. 2022, §4.2.2) each block gathers its input and reduce-scatters its
// output forward; backward it gathers the output gradient before the
// row-parallel data gradient, gathers the input again for the
// column-parallel weight gradient and reduce-scatters the input
// gradient: six collectives where the forward has four. Megatron-LM runs
// the last two beside the column-parallel data- and weight-gradient GEMMs
// (megatron/core/tensor_parallel/layers.py,
// LinearWithGradAccumulationAndAsyncCommunication: an asynchronous
// all-gather, then the data gradient; an asynchronous reduce-scatter,
// then the weight gradient); the rest is exposed. TPOverlap (which
// needs SP) is Transformer Engine's userbuffers overlap with its default
// methods (ubPipelineSplits and the rest).
func (r *runner) tpComm(blocks [2]tpBlock, nb int, count float64, ag, rs, ar, step model.Seconds) (c tpCost) {
	sc := r.sc
	if count == 0 || sc.TP <= 1 {
		return c
	}
	n := model.Seconds(count)
	if sc.NoOverlap {
		if !sc.SP {
			c.fwd, c.bwd = n*ar, n*ar
		} else {
			c.fwd, c.bwd = n*(ag+rs), n*(2*ag+rs)
		}
		return c
	}
	nccl := model.Seconds(r.overlapSlowdown())
	ub := nccl
	if cu := r.sys.Device.ComputeUnits; cu > ubCommSMs {
		ub = model.Seconds(float64(ubCommSMs) / float64(cu))
	}
	// beside prices a collective c launched beside a GEMM g on NCCL's
	// channels: what exceeds the GEMM, and the GEMM's slowdown.
	beside := func(c, g model.Seconds) (model.Seconds, model.Seconds) {
		return max(0, c-g), nccl * min(c, g)
	}
	t := model.Seconds(sc.TP)
	// ring prices a ring-exchange all-gather beside a GEMM split in tp
	// chunks: tp−1 transfers of a step each beside one chunk's GEMM, on
	// the copy engines (no SMs taken).
	ring := func(g model.Seconds) (model.Seconds, model.Seconds) {
		return (t - 1) * max(0, step-g/t), 0
	}
	// pipe prices a pipelined reduce-scatter: the GEMM in
	// ubPipelineSplits chunks, each chunk's reduce-scatter beside the
	// next chunk, the last one exposed.
	pipe := func(c, g model.Seconds) (model.Seconds, model.Seconds) {
		k := model.Seconds(ubPipelineSplits)
		return (k-1)*max(0, c/k-g/k) + c/k, ub * (k - 1) * min(c/k, g/k)
	}
	// bulk prices a collective beside a whole GEMM.
	bulk := func(c, g model.Seconds) (model.Seconds, model.Seconds) {
		return max(0, c-g), ub * min(c, g)
	}
	for i := 0; i < int(count); i++ {
		if i >= nb {
			// A block without GEMMs to pair with: exposed.
			if !sc.SP {
				c.fwd, c.bwd = c.fwd+ar, c.bwd+ar
			} else {
				c.fwd, c.bwd = c.fwd+ag+rs, c.bwd+2*ag+rs
			}
			continue
		}
		b := blocks[i]
		var e [3]model.Seconds
		var o [3]model.Seconds
		switch {
		case !sc.SP:
			c.fwd += ar
			e[0], o[0] = beside(ar, b.colW)
			c.bwd += e[0]
			c.overB += o[0]
		case !sc.TPOverlap:
			c.fwd += ag + rs
			e[0], o[0] = beside(ag, b.colD)
			e[1], o[1] = beside(rs, b.colW)
			c.bwd += ag + e[0] + e[1]
			c.overB += o[0] + o[1]
		default:
			e[0], o[0] = ring(b.colF)
			e[1], o[1] = pipe(rs, b.rowF)
			c.fwd += e[0] + e[1]
			c.overF += o[0] + o[1]
			e[0], o[0] = ring(b.rowD)
			e[1], o[1] = bulk(ag, b.colD)
			e[2], o[2] = bulk(rs, b.colW)
			c.bwd += e[0] + e[1] + e[2]
			c.overB += o[0] + o[1] + o[2]
		}
	}
	return c
}

// A tpCost is one layer's tensor-parallel communication per micro-batch:
// exposed in the forward and backward passes, and what the compute it
// overlaps loses in each.
type tpCost struct{ fwd, bwd, overF, overB model.Seconds }

// ubChunks returns what splitting a layer's GEMMs for Transformer
// Engine's userbuffers overlap adds to them, per micro-batch, by block and
// GEMM (the tpBlock fields it lengthens): a ring-exchange GEMM runs as tp
// GEMMs of a tp-th of the tokens each (the column-parallel forward,
// qkv_fprop and fc1_fprop, and the row-parallel data gradient,
// proj_dgrad and fc2_dgrad), a pipelined one as ubPipelineSplits GEMMs of
// a quarter of them (the row-parallel forward, proj_fprop and fc2_fprop);
// bulk overlaps keep their GEMM whole (initialize_ub's defaults, above).
// Each chunk is priced by the same GEMM model as the whole: the smaller
// GEMM fills fewer waves and pays its launch again. Zero unless
// TPOverlap runs.
func (r *runner) ubChunks(fwd, bwd []model.Op) (add [2]tpBlock) {
	sc := r.sc
	if !sc.TPOverlap || !sc.SP || sc.NoOverlap || sc.TP <= 1 {
		return add
	}
	L := max(r.shape.Layers, 1)
	extra := func(o *model.Op, k int) model.Seconds {
		g, ok := o.Kernel.(model.GEMM)
		if !ok || o.Count < L || g.M < k {
			return 0
		}
		whole, _ := r.c.cost(g)
		c := g
		c.M = (g.M + k - 1) / k
		c.AElems *= float64(c.M) / float64(g.M)
		c.CElems *= float64(c.M) / float64(g.M)
		part, _ := r.c.cost(c)
		d := model.Seconds(k)*part.Time - whole.Time
		return max(0, d) * model.Seconds(float64(o.Count)/float64(L))
	}
	block := func(o *model.Op) (int, bool, bool) {
		switch o.Class {
		case model.ClassQKV:
			return 0, false, true
		case model.ClassOutProj:
			return 0, true, true
		case model.ClassFFN:
			return 1, strings.HasSuffix(strings.TrimSuffix(o.Name, ".dgrad"), ".down"), true
		}
		return 0, false, false
	}
	for i := range fwd {
		o := &fwd[i]
		if k, row, ok := block(o); ok {
			if row {
				add[k].rowF += extra(o, ubPipelineSplits)
			} else {
				add[k].colF += extra(o, sc.TP)
			}
		}
	}
	for i := range bwd {
		o := &bwd[i]
		if !strings.HasSuffix(o.Name, ".dgrad") {
			continue
		}
		if k, row, ok := block(o); ok && row {
			add[k].rowD += extra(o, sc.TP)
		}
	}
	return add
}
