package sim

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/model"
)

// How a generation's decode steps are summed. Decode at context L prices
// most ops (the projections, the MLP, the norms) the same at every L;
// only the attention over the KV cache grows with L, and its dimensions
// are affine in L. So the workload is decomposed at the first and the
// last context only; ops that are equal at both are priced once and
// multiplied by the steps; each op that differs is rebuilt at every
// context by interpolating its dimensions (exact for dimensions affine in
// L) and priced:
//   - exactly, step by step, when there are at most exactSteps steps;
//   - otherwise by a composite trapezoid over quadSegments segments of
//     the steps, which is exact while an op's time is affine in L between
//     nodes (a roofline max(compute, memory) has one kink; a tile-aware
//     GEMM model small steps). TestDecodeQuadrature checks it against the
//     exact sum to 0.1% over batches and contexts.
//
// When the two decompositions do not line up op by op, or an op's kernel
// is of a kind we cannot interpolate, every step is decomposed and priced
// (exact, slower).
const (
	exactSteps   = 64
	quadSegments = 16
)

// decode prices steps decode steps at contexts first, first+1, ..., with
// extra ops (pipeline transfers) appended to every step, on r.decoder()
// (the coster for decode: CUDA graphs or not). The report goes to rep
// when it is not nil.
func (r *runner) decode(ph Phase, first, steps int, extra []model.Op, rep *PhaseReport) (*PhaseReport, error) {
	c := r.decoder()
	if rep == nil {
		rep = &PhaseReport{}
	}
	ph.Kind, ph.Seq, ph.Context = Decode, 1, first
	ops0, err := r.ops(ph, extra)
	if err != nil {
		return nil, err
	}
	id0 := r.decomps.idOf(ops0)
	if steps == 1 {
		*rep = c.passOnce("decode", id0, ops0)
		return rep, nil
	}
	// Copy, unless the runner holds them where the next decomposition
	// does not go (opsCache.keeps): the workload may reuse its slice
	// between calls, and the pipeline's ops are appended in scratch.
	if !r.decomps.keeps(id0) {
		r.decodeBuf = append(r.decodeBuf[:0], ops0...)
		ops0 = r.decodeBuf
	}
	ph.Context = first + steps - 1
	ops1, err := r.ops(ph, extra)
	if err != nil {
		return nil, err
	}
	// The same generation priced before (only an alike one is kept).
	key, keep := c.passKeyOf("decode", id0, r.decomps.idOf(ops1), steps)
	if keep {
		if ph, hit := c.passHit(key); hit {
			*rep = ph
			return rep, nil
		}
		c.calls = 0
	}
	if !alike(ops0, ops1) {
		return r.decodeEachStep(ph, first, steps, extra)
	}
	c.decodeRows(rep, ops0, ops1, steps, r.stepOps)
	if keep {
		c.passStore(key, rep)
	}
	return rep, nil
}

// decodeRows prices a generation of steps decode steps whose first and
// last decompositions ops0 and ops1 are alike into rep (see the comment
// at the top of the file).
func (c *coster) decodeRows(rep *PhaseReport, ops0, ops1 []model.Op, steps int, memo *stepMemo) {
	*rep = PhaseReport{Name: "decode", Steps: steps}
	if !c.noRows {
		rep.Ops = c.opRows(len(ops0))
	}
	memo = memo.use(c)
	var a phaseAcc
	n := float64(steps)
	for i, o := range ops0 {
		if o.Count <= 0 || o.Kernel == nil {
			continue
		}
		k0, k1 := o.Kernel, ops1[i].Kernel
		name, stage := c.names.of(i, o.Name, o.Stage)
		row := OpRow{Name: name, Stage: stage, Class: o.Class, Kind: kindOf(k0), Count: o.Count}
		cnt := float64(o.Count)
		if k0 == k1 {
			co, rel := memo.cost(c, i, k0)
			t := cnt * n * float64(co.Time)
			row.FLOPs = model.FLOPs(cnt * n * float64(co.FLOPs))
			row.Bytes = model.Bytes(cnt * n * float64(co.Bytes))
			row.Time, row.Low, row.High = model.Seconds(t), model.Seconds(low(t, rel)), model.Seconds(high(t, rel))
			row.Bound, row.DType = co.Bound, co.DType
			row.Energy = model.Joules(cnt * n * float64(co.Energy()))
		} else {
			s := c.sumOver(k0, k1, steps)
			row.FLOPs = model.FLOPs(cnt * s.flops)
			row.Bytes = model.Bytes(cnt * s.bytes)
			row.Time, row.Low, row.High = model.Seconds(cnt*s.t), model.Seconds(cnt*s.lo), model.Seconds(cnt*s.hi)
			row.Bound, row.DType = s.bound(), s.dtype
			row.Energy = model.Joules(cnt * s.energy)
		}
		if c.noRows {
			a.addRow(&row)
			continue
		}
		rep.Ops = append(rep.Ops, row)
	}
	if c.noRows {
		a.into(rep)
		return
	}
	c.totalIn(rep)
}

// A stepMemo keeps the prices of the ops of the last decode step a runner
// priced that do not change over the steps, by their place in the
// decomposition: the next generation at the same batch (a sweep's next
// prompt length) has the same kernels there, and a comparison finds them
// sooner than the price cache. Its prices are one processor's (the price
// cache's generation) over one system's links.
type stepMemo struct {
	pc  *priceCache // the prices' cache (eager or CUDA-graph) and its generation
	gen uint64
	net netKey
	k   [stepMemoOps]model.Kernel
	co  [stepMemoOps]model.Cost
	rel [stepMemoOps]float64
	// checks are the data types cost checked pricing each (by bit),
	// checked again when the price is reused.
	checks [stepMemoOps]uint32
}

// stepMemoOps is how many ops of a decode step a stepMemo keeps.
const stepMemoOps = 48

// use returns m readied for c's prices (emptied when they are another
// processor's or system's), or nil when m is nil or c keeps no prices.
func (m *stepMemo) use(c *coster) *stepMemo {
	if m == nil || c.pc == nil {
		return nil
	}
	if net := c.netKey(); m.pc != c.pc || m.gen != c.pc.gen || m.net != net {
		*m = stepMemo{pc: c.pc, gen: c.pc.gen, net: net}
	}
	return m
}

// cost is c.cost(k) for the op at place i of a decode step, from m when
// it holds k there (m may be nil).
func (m *stepMemo) cost(c *coster, i int, k model.Kernel) (model.Cost, float64) {
	if m == nil || i >= stepMemoOps {
		return c.cost(k)
	}
	if m.k[i] != nil && m.k[i] == k {
		c.checkAgain(m.checks[i])
		return m.co[i], m.rel[i]
	}
	before := c.calls
	c.calls = 0
	co, rel := c.cost(k)
	m.k[i], m.co[i], m.rel[i], m.checks[i] = k, co, rel, c.calls
	c.calls |= before
	return co, rel
}

// alike reports whether two decompositions line up op by op, with only
// kernels of kinds we can interpolate differing.
func alike(a, b []model.Op) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Count != b[i].Count || a[i].Class != b[i].Class {
			return false
		}
		if kindOf(a[i].Kernel) != kindOf(b[i].Kernel) || kindOf(a[i].Kernel) == kindOther {
			return false
		}
	}
	return true
}

// sum accumulates an op's cost over contexts.
type sum struct {
	t, lo, hi, flops, bytes float64
	energy                  float64
	byBound                 [4]float64
	dtype                   model.DType
}

func (s *sum) add(w float64, co model.Cost, rel float64) {
	t := w * float64(co.Time)
	s.t += t
	s.lo += low(t, rel)
	s.hi += high(t, rel)
	s.flops += w * float64(co.FLOPs)
	s.bytes += w * float64(co.Bytes)
	s.energy += w * float64(co.Energy())
	if int(co.Bound) < len(s.byBound) {
		s.byBound[co.Bound] += t
	}
	s.dtype = co.DType
}

func (s *sum) bound() model.Bound {
	var b [4]model.Seconds
	for i, v := range s.byBound {
		b[i] = model.Seconds(v)
	}
	return argmaxBound(b)
}

// sumOver sums one launch of the kernel over steps contexts, from k0 at
// the first to k1 at the last (see the comment at the top of the file).
func (c *coster) sumOver(k0, k1 model.Kernel, steps int) sum {
	if a0, ok := k0.(model.Attention); ok && c.pc != nil {
		// A generation's attention summed before (a serving loop, a
		// repeated scenario) is taken whole from the price cache.
		a1 := k1.(model.Attention)
		e, hit := c.pc.sumSlot(a0, a1, steps)
		if hit {
			c.check(a0.DType)
			return e.s
		}
		*e = sumEntry{gen: c.pc.gen, a0: a0, a1: a1, steps: steps, s: c.sumSteps(k0, k1, steps)}
		return e.s
	}
	return c.sumSteps(k0, k1, steps)
}

// sumSteps is sumOver without the cache.
func (c *coster) sumSteps(k0, k1 model.Kernel, steps int) sum {
	var s sum
	last := steps - 1
	var nbuf [exactSteps]int
	var wbuf [exactSteps]float64
	nodes, weights := nbuf[:0], wbuf[:0]
	if steps <= exactSteps {
		for i := 0; i < steps; i++ {
			nodes, weights = append(nodes, i), append(weights, 1)
		}
	} else {
		// Composite trapezoid over integer points: a segment [a, b]
		// holds b−a+1 steps, weighted (b−a+1)/2 at each end; shared
		// interior nodes are counted once by subtracting 1 from their
		// weight.
		nodes = append(nodes, 0)
		for j := 1; j <= quadSegments; j++ {
			next := int(math.Round(float64(j) * float64(last) / quadSegments))
			if next > nodes[len(nodes)-1] {
				nodes = append(nodes, next)
			}
		}
		for j, x := range nodes {
			var w float64
			if j > 0 {
				w += float64(x-nodes[j-1]+1) / 2
			}
			if j < len(nodes)-1 {
				w += float64(nodes[j+1]-x+1) / 2
			}
			if j > 0 && j < len(nodes)-1 {
				w-- // the node ends one segment and starts the next
			}
			weights = append(weights, w)
		}
	}
	if a0, ok := k0.(model.Attention); ok {
		if a1 := k1.(model.Attention); onlyKVLen(a0, a1) {
			c.sumAttention(&s, a0, a1, nodes, weights, last)
			return s
		}
	}
	for j, x := range nodes {
		co, rel := c.priceBetween(k0, k1, x, last)
		s.add(weights[j], co, rel)
	}
	return s
}

// onlyKVLen reports whether two attention kernels differ in their KV
// length alone (a decode step's at two contexts).
func onlyKVLen(a0, a1 model.Attention) bool {
	a1.KVLen = a0.KVLen
	return a0 == a1
}

// sumAttention adds to s the attention kernel a0 at the KV lengths of
// the steps nodes (interpolated to a1's at step last), weighted weights:
// what pricing each through priceBetween adds, priced in one call
// (model.Processor.CappedAttentionCosts) and checked once.
func (c *coster) sumAttention(s *sum, a0, a1 model.Attention, nodes []int, weights []float64, last int) {
	var kv [exactSteps]int
	var cost [exactSteps]model.Cost
	for j, x := range nodes {
		kv[j] = lerp(a0.KVLen, a1.KVLen, x, last)
	}
	c.check(a0.DType)
	costs := cost[:len(nodes)]
	c.p.CappedAttentionCosts(a0, kv[:len(nodes)], costs)
	for j := range costs {
		s.add(weights[j], costs[j], c.relErr(a0, costs[j].DType))
	}
}

// lerp returns a + (b−a)·i/n rounded to the nearest integer.
func lerp(a, b, i, n int) int {
	if a == b || n == 0 {
		return a
	}
	return a + int(math.Round(float64(b-a)*float64(i)/float64(n)))
}

func lerpf(a, b float64, i, n int) float64 {
	if a == b || n == 0 {
		return a
	}
	return a + (b-a)*float64(i)/float64(n)
}

// priceBetween prices lerpKernel(k0, k1, i, n) without boxing the common
// kernels in an interface (this is the simulator's innermost loop).
func (c *coster) priceBetween(k0, k1 model.Kernel, i, n int) (model.Cost, float64) {
	switch a := k0.(type) {
	case model.Attention:
		b := k1.(model.Attention)
		a.Batch, a.Heads, a.KVHeads = lerp(a.Batch, b.Batch, i, n), lerp(a.Heads, b.Heads, i, n), lerp(a.KVHeads, b.KVHeads, i, n)
		a.QLen, a.KVLen, a.HeadDim = lerp(a.QLen, b.QLen, i, n), lerp(a.KVLen, b.KVLen, i, n), lerp(a.HeadDim, b.HeadDim, i, n)
		// Priced without the price cache: a step's attention at its own
		// context seldom recurs outside its generation, whose sum the
		// cache keeps (sumOver), and would only evict kernels that do.
		return c.attentionCost(a)
	case model.GEMM:
		b := k1.(model.GEMM)
		a.M, a.K, a.N, a.Batch = lerp(a.M, b.M, i, n), lerp(a.K, b.K, i, n), lerp(a.N, b.N, i, n), lerp(a.Batch, b.Batch, i, n)
		return c.priceGEMM(a)
	}
	return c.price(lerpKernel(k0, k1, i, n))
}

// lerpKernel interpolates every dimension of two kernels of one kind.
func lerpKernel(k0, k1 model.Kernel, i, n int) model.Kernel {
	switch a := k0.(type) {
	case model.GEMM:
		b := k1.(model.GEMM)
		a.M, a.K, a.N, a.Batch = lerp(a.M, b.M, i, n), lerp(a.K, b.K, i, n), lerp(a.N, b.N, i, n), lerp(a.Batch, b.Batch, i, n)
		return a
	case model.Attention:
		b := k1.(model.Attention)
		a.Batch, a.Heads, a.KVHeads = lerp(a.Batch, b.Batch, i, n), lerp(a.Heads, b.Heads, i, n), lerp(a.KVHeads, b.KVHeads, i, n)
		a.QLen, a.KVLen, a.HeadDim = lerp(a.QLen, b.QLen, i, n), lerp(a.KVLen, b.KVLen, i, n), lerp(a.HeadDim, b.HeadDim, i, n)
		return a
	case model.Elementwise:
		b := k1.(model.Elementwise)
		a.Elements = lerpf(a.Elements, b.Elements, i, n)
		a.Work = model.FLOPs(lerpf(float64(a.Work), float64(b.Work), i, n))
		a.Read = model.Bytes(lerpf(float64(a.Read), float64(b.Read), i, n))
		a.Written = model.Bytes(lerpf(float64(a.Written), float64(b.Written), i, n))
		return a
	case model.Gather:
		b := k1.(model.Gather)
		a.Rows, a.Width = lerp(a.Rows, b.Rows, i, n), lerp(a.Width, b.Width, i, n)
		return a
	case model.Collective:
		b := k1.(model.Collective)
		a.Size = model.Bytes(lerpf(float64(a.Size), float64(b.Size), i, n))
		if a.Beside.M > 0 {
			a.Beside = lerpKernel(a.Beside, b.Beside, i, n).(model.GEMM)
		}
		return a
	case model.GroupedGEMM:
		b := k1.(model.GroupedGEMM)
		a.Rows, a.K, a.N = lerp(a.Rows, b.Rows, i, n), lerp(a.K, b.K, i, n), lerp(a.N, b.N, i, n)
		a.Experts = lerpf(a.Experts, b.Experts, i, n)
		return a
	case model.Scan:
		b := k1.(model.Scan)
		a.Batch, a.Tokens = lerp(a.Batch, b.Batch, i, n), lerp(a.Tokens, b.Tokens, i, n)
		return a
	}
	panic(fmt.Sprintf("sim: cannot interpolate a %T", k0)) // alike rules this out
}

// decodeEachStep decomposes and prices every decode step.
func (r *runner) decodeEachStep(ph Phase, first, steps int, extra []model.Op) (*PhaseReport, error) {
	// The steps are summed row by row: priced with their rows, whatever
	// the run asked for.
	defer func(noRows bool) { r.diag.noRows = noRows }(r.diag.noRows)
	r.diag.noRows = false
	var rep *PhaseReport
	for i := 0; i < steps; i++ {
		ph.Context = first + i
		ops, err := r.ops(ph, extra)
		if err != nil {
			return nil, err
		}
		p := r.decoder().pass("decode", ops)
		if rep == nil {
			rep = &p
			rep.Steps = steps
			continue
		}
		if len(p.Ops) != len(rep.Ops) {
			return nil, fmt.Errorf("sim: %s: decode at context %d has %d ops, at %d %d", r.w.Name(), ph.Context, len(p.Ops), first, len(rep.Ops))
		}
		for j := range rep.Ops {
			a, b := &rep.Ops[j], &p.Ops[j]
			a.Time += b.Time
			a.Low += b.Low
			a.High += b.High
			a.FLOPs += b.FLOPs
			a.Bytes += b.Bytes
			a.Energy += b.Energy
		}
	}
	rep.total()
	return rep, nil
}
