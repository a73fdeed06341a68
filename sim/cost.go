package sim

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// dequantOps is the vector arithmetic per weight element that dequantises
// a weight stored narrower than the compute type (int4 or int8
// weight-only): unpack (shift and mask), convert to the compute type, and
// one fused multiply-add with the group's scale and zero point. The count
// is our reading of the inner loop of the Marlin int4 kernel (Frantar et
// al., "MARLIN: Mixed-Precision Auto-Regressive Parallel Inference on
// Large Language Models", 2024, §3), which also shows this work hides
// under the weight traffic at small batch: so the op's time is the larger
// of the GEMM's and the dequantisation's, not their sum.
const dequantOps = 4

// A coster prices kernels on one system, remembering what it has priced
// so that no GEMM or attention kernel is derived twice in a run, and
// collecting data-type fallbacks.
type coster struct {
	p      model.Processor
	sys    *hardware.System
	strict bool
	*diag  // shared by the costers of one run

	cache []cached
}

// diag collects a run's data-type checks, fallback warnings and error.
type diag struct {
	checked  [32]bool // data types already checked for a peak
	warnings []error
	err      error
}

type cached struct {
	k   model.Kernel
	c   model.Cost
	rel float64
}

func newCoster(sys *hardware.System, strict bool) *coster {
	return &coster{p: sys.Device.Processor(), sys: sys, strict: strict, diag: &diag{}, cache: make([]cached, 0, 32)}
}

// GraphLaunch is the launch overhead each kernel of a decode step pays
// when the step is replayed as a CUDA graph, as serving engines (vLLM,
// TensorRT-LLM, SGLang) do: the CPU launch path is gone and kernels start
// back to back. NVIDIA's "Getting Started with CUDA Graphs" (A. Gray,
// 2019) measures about 3.4 µs per short kernel replayed from a graph
// against 3.8 µs launched to a stream, for kernels of about 2.9 µs: some
// 0.5 µs of overhead. We charge 1 µs (an assumption, on the safe side)
// until calibration measures it.
const GraphLaunch model.Seconds = 1e-6

// graphs returns a coster sharing c's diagnostics whose launch overheads
// are capped at GraphLaunch.
func (c *coster) graphs() *coster {
	p := c.p
	capL := func(t model.Seconds) model.Seconds { return min(t, GraphLaunch) }
	p.Launch = capL(p.Launch)
	p.Eff.Memory.Launch = capL(p.Eff.Memory.Launch)
	p.Eff.Attention.Launch = capL(p.Eff.Attention.Launch)
	p.Eff.Attention.DecodeLaunch = capL(p.Eff.Attention.DecodeLaunch)
	copied := false
	for d, g := range c.p.Eff.GEMM {
		if g.Launch > GraphLaunch {
			if !copied {
				p.Eff.GEMM = make(map[model.DType]model.GEMMParams, len(c.p.Eff.GEMM))
				for k, v := range c.p.Eff.GEMM {
					p.Eff.GEMM[k] = v
				}
				copied = true
			}
			g.Launch = GraphLaunch
			p.Eff.GEMM[d] = g
		}
	}
	return &coster{p: p, sys: c.sys, strict: c.strict, diag: c.diag, cache: make([]cached, 0, 32)}
}

// check records a fallback when the device has no peak for d.
func (c *coster) check(d model.DType) {
	if int(d) >= len(c.checked) || c.checked[d] {
		return
	}
	c.checked[d] = true
	s, ok := c.p.Supported(d)
	switch {
	case ok:
	case s == model.Invalid:
		if c.err == nil {
			c.err = fmt.Errorf("sim: %s has no peak for %s nor for any type it falls back to", c.p.Name, d)
		}
	case c.strict:
		if c.err == nil {
			c.err = fmt.Errorf("sim: %s has no %s peak (it would fall back to %s; --strict forbids it)", c.p.Name, d, s)
		}
	default:
		c.warnings = append(c.warnings, fmt.Errorf("%s has no %s peak: %s computes at %s", c.p.Name, d, d, s))
	}
}

// relErr returns the held-out p90 relative error of the model that priced
// a kernel, 0 when the hardware carries none.
func (c *coster) relErr(k model.Kernel, d model.DType) float64 {
	e := &c.p.Eff
	switch k.(type) {
	case model.GEMM:
		if g, ok := e.GEMM[d]; ok {
			return g.ErrP90
		}
		return 0
	case model.Attention:
		return e.Attention.ErrP90
	case model.Collective:
		return 0
	}
	return e.Memory.ErrP90
}

// cost prices one launch of k and returns its relative error.
func (c *coster) cost(k model.Kernel) (model.Cost, float64) {
	switch k.(type) {
	case model.GEMM, model.Attention:
		for i := range c.cache {
			if c.cache[i].k == k {
				return c.cache[i].c, c.cache[i].rel
			}
		}
	}
	co, rel := c.price(k)
	switch k.(type) {
	case model.GEMM, model.Attention:
		c.cache = append(c.cache, cached{k, co, rel})
	}
	return co, rel
}

// price prices one launch of k without the cache.
func (c *coster) price(k model.Kernel) (model.Cost, float64) {
	var co model.Cost
	switch k := k.(type) {
	case model.GEMM:
		c.check(k.Compute())
		co = c.p.GEMMCost(k)
		co = c.dequant(k, co)
	case model.Attention:
		c.check(k.DType)
		co = c.p.AttentionCost(k)
	case model.Collective:
		t := model.CollectiveTime(k, c.link(k))
		co = model.Cost{Bytes: k.Traffic(), Memory: t, Time: t, Bound: model.NetworkBound}
	default:
		co = c.p.Cost(k)
	}
	return co, c.relErr(k, co.DType)
}

// link returns the network a collective crosses: its own tier, or the
// inter-node network when its ranks outnumber a node's devices.
func (c *coster) link(k model.Collective) model.Link {
	if k.Tier == model.IntraNode && k.Ranks > c.sys.DevicesPerNode && c.sys.DevicesPerNode > 0 {
		return c.sys.Link(model.InterNode)
	}
	return c.sys.Link(k.Tier)
}

// dequant adds the dequantisation of a weight stored narrower than the
// compute type (see dequantOps). The GEMM's cost already counts the
// narrow weight's traffic.
func (c *coster) dequant(g model.GEMM, co model.Cost) model.Cost {
	d := g.Compute()
	if g.B.Size() >= d.Size() || g.B.Size() == 0 {
		return co
	}
	rate := c.vectorPeak(co.DType)
	if rate <= 0 {
		return co
	}
	batch := g.Batch
	if batch <= 0 {
		batch = 1
	}
	f := model.FLOPs(dequantOps * float64(g.K) * float64(g.N) * float64(batch))
	t := f.At(rate) + c.p.Launch
	if t > co.Time {
		co.Time = t
		co.Bound = model.ComputeBound
	}
	return co
}

// vectorPeak returns the achievable vector rate for d: the vector peak
// for d, else for fp32, at the vector efficiency.
func (c *coster) vectorPeak(d model.DType) model.FLOPRate {
	r, ok := c.p.Vector[d]
	if !ok || r <= 0 {
		r = c.p.Vector[model.FP32]
	}
	if r <= 0 {
		r = c.p.Matrix[model.FP32]
	}
	e := c.p.Eff.Vector
	if e <= 0 || e > 1 {
		e = 1
	}
	return model.FLOPRate(float64(r) * e)
}

// kindOf names a kernel's kind for reports.
func kindOf(k model.Kernel) string {
	switch k.(type) {
	case model.GEMM:
		return "gemm"
	case model.Attention:
		return "attention"
	case model.Elementwise:
		return "elementwise"
	case model.Gather:
		return "gather"
	case model.Collective:
		return "collective"
	}
	return "other"
}

// pass builds the report of one pass over ops, each op's launch priced
// once and multiplied by its Count.
func (c *coster) pass(name string, ops []model.Op) PhaseReport {
	ph := PhaseReport{Name: name, Steps: 1, Ops: make([]OpRow, 0, len(ops))}
	for _, o := range ops {
		if o.Count <= 0 || o.Kernel == nil {
			continue
		}
		co, rel := c.cost(o.Kernel)
		n := float64(o.Count)
		t := model.Seconds(n * float64(co.Time))
		ph.Ops = append(ph.Ops, OpRow{
			Name: o.Name, Stage: o.Stage, Class: o.Class, Kind: kindOf(o.Kernel), Count: o.Count,
			FLOPs: model.FLOPs(n * float64(co.FLOPs)), Bytes: model.Bytes(n * float64(co.Bytes)),
			Time: t, Low: model.Seconds(float64(t) * (1 - rel)), High: model.Seconds(float64(t) * (1 + rel)),
			Bound: co.Bound, DType: co.DType,
		})
	}
	ph.total()
	return ph
}

// total sums the rows into the phase's totals and class rows.
func (ph *PhaseReport) total() {
	const nc = 32
	var cls [nc]ClassRow
	var used [nc]bool
	var clsBound [nc][4]model.Seconds
	var byBound [4]model.Seconds
	ph.Time, ph.Low, ph.High, ph.FLOPs, ph.Bytes = 0, 0, 0, 0, 0
	for i := range ph.Ops {
		r := &ph.Ops[i]
		ph.Time += r.Time
		ph.Low += r.Low
		ph.High += r.High
		ph.FLOPs += r.FLOPs
		ph.Bytes += r.Bytes
		ci := int(r.Class) % nc
		if int(r.Bound) < len(byBound) {
			byBound[r.Bound] += r.Time
			clsBound[ci][r.Bound] += r.Time
		}
		used[ci] = true
		cr := &cls[ci]
		cr.Class = r.Class
		cr.Time += r.Time
		cr.FLOPs += r.FLOPs
		cr.Bytes += r.Bytes
	}
	ph.Bound = argmaxBound(byBound)
	n := 0
	for i := range used {
		if used[i] {
			n++
		}
	}
	ph.Classes = make([]ClassRow, 0, n)
	for _, cl := range model.Classes() {
		ci := int(cl) % nc
		if !used[ci] {
			continue
		}
		cr := cls[ci]
		cr.Share = share(cr.Time, ph.Time)
		cr.Bound = argmaxBound(clsBound[ci])
		ph.Classes = append(ph.Classes, cr)
	}
}

func argmaxBound(b [4]model.Seconds) model.Bound {
	best := model.ComputeBound
	for i := range b {
		if b[i] > b[best] {
			best = model.Bound(i)
		}
	}
	return best
}

// share returns part/whole, 0 when whole is 0.
func share(part, whole model.Seconds) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
