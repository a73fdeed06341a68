package sim

import (
	"fmt"
	"math"
	mbits "math/bits"
	"reflect"
	"slices"
	"sync"

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
// so that no kernel is derived twice in a run, and collecting data-type
// fallbacks.
type coster struct {
	p      model.Processor
	sys    *hardware.System
	strict bool
	*diag              // shared by the costers of one run
	pc     *priceCache // prices kept between runs (pricecache.go); nil for none

	// What has been priced, by kind, so that a lookup compares plain
	// structs (no interface comparison, no map hashing). The slices start
	// in the arrays of store; a model with more distinct kernels (a CNN's
	// convolutions) grows them on the heap.
	gemm   []memo[model.GEMM]
	attn   []memo[model.Attention]
	ew     []memo[model.Elementwise]
	gather []memo[model.Gather]
	coll   []memo[model.Collective]
	// ar is the engine's own all-reduce kernel the intra-node link
	// carries (Scenario.AllReduce); zero for the device's.
	ar    model.AllReduceKernel
	group []memo[model.GroupedGEMM]
	scan  []memo[model.Scan]
	store costerStore
}

// costerStore is the initial room of a coster's memo: enough for the
// distinct kernels of a transformer's pass.
type costerStore struct {
	gemm   [16]memo[model.GEMM]
	attn   [2]memo[model.Attention]
	ew     [6]memo[model.Elementwise]
	gather [2]memo[model.Gather]
	coll   [3]memo[model.Collective]
	group  [4]memo[model.GroupedGEMM]
	scan   [1]memo[model.Scan]
}

// A memo is a priced kernel.
type memo[K comparable] struct {
	k   K
	c   model.Cost
	rel float64
}

// find returns the memo of k in s, or nil.
func find[K comparable](s []memo[K], k K) *memo[K] {
	for i := range s {
		if s[i].k == k {
			return &s[i]
		}
	}
	return nil
}

// diag collects a run's data-type checks, fallback warnings and error.
type diag struct {
	checked [32]bool // data types already checked for a peak
	// warnings are the fallbacks, in the order of their data types
	// (warned, the type of each), whichever op met a type first: a
	// pass replayed from a cache (checkAgain) warns in the same order.
	warnings []error
	warned   []model.DType
	err      error
	// freeRows and freeClasses are room for the run's report rows,
	// allocated with the report (see Run); empty, rows are allocated
	// one phase at a time.
	freeRows    []OpRow
	freeClasses []ClassRow
	// calls has bit d set when check(d) was called (since the caller
	// last cleared it): what a remembered pass replays.
	calls uint32
	// rowsWanted and classesWanted count the rows the run asked for:
	// the next run of the runner makes that much room (see Run).
	rowsWanted, classesWanted int
	// noRows: phases are priced into their totals alone, without op
	// and class rows (RunTotals).
	noRows bool
	// names are the labels of the rows' names and stages, remembered
	// from run to run by the runner (label.go); nil for none.
	names *labelMemo
}

// opRows returns an empty slice of capacity n for a phase's op rows.
func (d *diag) opRows(n int) []OpRow {
	d.rowsWanted += n
	if n <= len(d.freeRows) {
		s := d.freeRows[:0:n]
		d.freeRows = d.freeRows[n:]
		return s
	}
	return make([]OpRow, 0, n)
}

// classRows returns an empty slice of capacity n for a phase's class
// rows, from d's room when it has it.
func (d *diag) classRows(n int) []ClassRow {
	d.classesWanted += n
	if n <= len(d.freeClasses) {
		s := d.freeClasses[:0:n]
		d.freeClasses = d.freeClasses[n:]
		return s
	}
	return make([]ClassRow, 0, n)
}

// totalIn is ph.total with the class rows (at most one per op) taken
// from d's room.
func (d *diag) totalIn(ph *PhaseReport) {
	if n := min(len(ph.Ops), len(model.Classes())); cap(ph.Classes) < n {
		d.classesWanted += n
		if n <= len(d.freeClasses) {
			ph.Classes = d.freeClasses[:0:n]
			d.freeClasses = d.freeClasses[n:]
		}
	}
	ph.total()
}

func newCoster(sys *hardware.System, strict bool) *coster {
	c := &coster{}
	c.init(sys.Device.Processor(), sys, strict, &diag{})
	return c
}

// init readies c to price on p, its memo empty.
func (c *coster) init(p model.Processor, sys *hardware.System, strict bool, d *diag) {
	c.p, c.sys, c.strict, c.diag = p, sys, strict, d
	c.gemm, c.attn, c.ew = c.store.gemm[:0], c.store.attn[:0], c.store.ew[:0]
	c.gather, c.coll = c.store.gather[:0], c.store.coll[:0]
	c.group, c.scan = c.store.group[:0], c.store.scan[:0]
}

// GraphLaunch is the launch overhead each kernel of a decode step pays
// when the step is replayed as a CUDA graph, as serving engines (vLLM,
// TensorRT-LLM, SGLang) do: the CPU launch path is gone and kernels start
// back to back. NVIDIA's "Getting Started with CUDA Graphs" (A. Gray,
// 2019) measures about 3.4 µs per short kernel replayed from a graph
// against 3.8 µs launched to a stream, for kernels of about 2.9 µs: some
// 0.5 µs of overhead. Measured by perfsim's own suite (kernels/launch.cu,
// launch_graph: 1,000 empty kernels in one graph, 2026-11-26), a kernel
// replayed from a graph costs 0.78 µs on an H100 and 0.50 µs on an H200,
// and a residual add of 1 to 64 rows of 8192 bf16 1.0-1.6 µs and 0.95-1.5
// µs (kernels/torch/graph_ops.py; kernels/testdata). We charge 1 µs: over
// the empty kernel, under the smallest kernel with work.
const GraphLaunch model.Seconds = 1e-6

// graphs readies g as a coster sharing c's diagnostics whose launch
// overheads are capped at GraphLaunch.
func (c *coster) graphs(g *coster) {
	p := c.p
	capL := func(t model.Seconds) model.Seconds { return min(t, GraphLaunch) }
	p.Launch = capL(p.Launch)
	p.Eff.Memory.Launch = capL(p.Eff.Memory.Launch)
	p.Eff.Attention.Launch = capL(p.Eff.Attention.Launch)
	p.Eff.Attention.DecodeLaunch = capL(p.Eff.Attention.DecodeLaunch)
	p.Eff.GEMM = graphGEMMs(c.p.Eff.GEMM)
	if k := c.p.Kept; k != nil {
		// A what-if's calibrated efficiencies, capped alike.
		kp := *k
		kp.Launch = capL(kp.Launch)
		kp.Eff.Memory.Launch = capL(kp.Eff.Memory.Launch)
		kp.Eff.Attention.Launch = capL(kp.Eff.Attention.Launch)
		kp.Eff.Attention.DecodeLaunch = capL(kp.Eff.Attention.DecodeLaunch)
		kp.Eff.GEMM = graphGEMMs(k.Eff.GEMM)
		p.Kept = &kp
	}
	g.init(p, c.sys, c.strict, c.diag)
}

// graphGEMMs returns the GEMM parameters m with every launch capped at
// GraphLaunch: m itself when none exceeds it, else a copy. Copies are
// remembered (a few, for the devices in use) and reused while m holds
// what it held when copied, so that a sweep does not rebuild a map per
// point; callers must not modify the result.
func graphGEMMs(m map[model.DType]model.GEMMParams) map[model.DType]model.GEMMParams {
	capped := func(g model.GEMMParams) model.GEMMParams {
		g.Launch = min(g.Launch, GraphLaunch)
		return g
	}
	over := false
	for _, g := range m {
		if g.Launch > GraphLaunch {
			over = true
			break
		}
	}
	if !over {
		return m
	}
	id := reflect.ValueOf(m).Pointer()
	graphMaps.Lock()
	defer graphMaps.Unlock()
	for _, e := range graphMaps.entries {
		if e.src != id || len(e.capped) != len(m) {
			continue
		}
		same := true
		for d, g := range m {
			if h, ok := e.capped[d]; !ok || h != capped(g) {
				same = false
				break
			}
		}
		if same {
			return e.capped
		}
	}
	out := make(map[model.DType]model.GEMMParams, len(m))
	for d, g := range m {
		out[d] = capped(g)
	}
	graphMaps.entries[graphMaps.next] = graphMap{src: id, capped: out}
	graphMaps.next = (graphMaps.next + 1) % len(graphMaps.entries)
	return out
}

// graphMaps remembers the last few maps graphGEMMs built, by the address
// of the map they were built from. An entry is used only while its source
// still holds the same parameters, so a map changed in place (or freed
// and its address reused) is rebuilt, never served stale.
var graphMaps struct {
	sync.Mutex
	entries [8]graphMap
	next    int
}

type graphMap struct {
	src    uintptr
	capped map[model.DType]model.GEMMParams
}

// check records a fallback when the device has no peak for d.
func (c *coster) check(d model.DType) {
	if int(d) < 32 {
		c.calls |= 1 << d
	}
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
		i, _ := slices.BinarySearch(c.warned, d)
		c.warned = slices.Insert(c.warned, i, d)
		c.warnings = slices.Insert(c.warnings, i, error(fmt.Errorf("%s has no %s peak: %s is emulated, computed at the %s rate", c.p.Name, d, d, s)))
	}
}

// checkAgain makes the checks of the data types set in bits (a price
// reused, checked when it was made).
func (c *coster) checkAgain(bits uint32) {
	for bits != 0 {
		d := mbits.TrailingZeros32(bits)
		bits &^= 1 << d
		c.check(model.DType(d))
	}
}

// relErr returns the held-out p90 relative error of the model that priced
// a kernel, 0 when the hardware carries none.
func (c *coster) relErr(k model.Kernel, d model.DType) float64 {
	e := &c.p.For(k).Eff
	switch k := k.(type) {
	case model.GroupedGEMM:
		if e.MoE.Source != "" {
			return e.MoE.ErrP90
		}
		if g, ok := e.GEMM[d]; ok {
			return g.ErrP90
		}
		return 0
	case model.GEMM:
		if g, ok := e.GEMM[d]; ok {
			return g.ErrP90
		}
		return 0
	case model.Attention:
		if model.IsMLA(k) && e.MLA.Source != "" {
			return e.MLA.ErrP90
		}
		return e.Attention.ErrP90
	case model.Collective:
		return 0
	}
	return e.Memory.ErrP90
}

// cost prices one launch of k and returns its relative error, each
// distinct kernel of the kinds of package model once: once per coster,
// or once while the runner's price cache is kept (pricecache.go).
func (c *coster) cost(k model.Kernel) (model.Cost, float64) {
	if c.pc != nil {
		return c.cached(k)
	}
	switch kk := k.(type) {
	case model.GEMM:
		return memoized(c, &c.gemm, kk, k)
	case model.Attention:
		return memoized(c, &c.attn, kk, k)
	case model.Elementwise:
		return memoized(c, &c.ew, kk, k)
	case model.Gather:
		return memoized(c, &c.gather, kk, k)
	case model.Collective:
		return memoized(c, &c.coll, kk, k)
	case model.GroupedGEMM:
		return memoized(c, &c.group, kk, k)
	case model.Scan:
		return memoized(c, &c.scan, kk, k)
	}
	return c.price(k)
}

// memoized returns the memo of key in *s, pricing k (key as a
// model.Kernel, passed along so as not to box it again) and adding it
// first when it is new.
func memoized[K comparable](c *coster, s *[]memo[K], key K, k model.Kernel) (model.Cost, float64) {
	if m := find(*s, key); m != nil {
		return m.c, m.rel
	}
	var co model.Cost
	var rel float64
	switch kk := any(key).(type) { // through the runner's prices (pricecache.go)
	case model.GEMM:
		co, rel = c.priceGEMM(kk)
	case model.Attention:
		co, rel = c.priceAttention(kk)
	default:
		co, rel = c.price(k)
	}
	*s = append(*s, memo[K]{key, co, rel})
	return co, rel
}

// price prices one launch of k without the cache.
func (c *coster) price(k model.Kernel) (model.Cost, float64) {
	var co model.Cost
	switch k := k.(type) {
	case model.GEMM:
		return c.gemmCost(k)
	case model.Attention:
		return c.attentionCost(k)
	case model.GroupedGEMM:
		c.check(k.Compute())
		co = c.p.CappedMatrix(c.p.GroupedGEMMCost(k))
		return co, c.relErr(k, co.DType)
	case model.Scan:
		c.check(k.DType)
		co = c.p.ScanCost(k)
	case model.Collective:
		t := model.CollectiveTime(k, c.link(k))
		if k.Beside.M > 0 {
			t = c.besideGEMM(k.Beside, t)
		}
		co = model.Cost{Bytes: k.Traffic(), Memory: t, Time: t, Bound: model.NetworkBound}
	default:
		co = c.p.Cost(k)
	}
	co = c.p.Capped(co)
	return co, c.relErr(k, co.DType)
}

// gemmCost is price for a GEMM, without boxing it.
func (c *coster) gemmCost(g model.GEMM) (model.Cost, float64) {
	c.check(g.Compute())
	co := c.p.CappedMatrix(c.dequant(g, c.p.GEMMCost(g)))
	return co, c.relErr(g, co.DType)
}

// attentionCost is price for an attention kernel, without boxing it.
func (c *coster) attentionCost(a model.Attention) (model.Cost, float64) {
	c.check(a.DType)
	co := c.p.CappedAttentionCost(a)
	return co, c.relErr(a, co.DType)
}

// link returns the network a collective crosses: its own tier, or the
// inter-node network when its ranks outnumber a node's devices.
func (c *coster) link(k model.Collective) model.Link {
	if k.Tier == model.IntraNode && k.Ranks > c.sys.DevicesPerNode && c.sys.DevicesPerNode > 0 {
		return c.sys.Link(model.InterNode)
	}
	if k.Tier == model.IntraNode {
		return c.intra()
	}
	return c.sys.Link(k.Tier)
}

// intra returns the intra-node link, carrying the engine's all-reduce
// kernel when the run names one.
func (c *coster) intra() model.Link {
	l := c.sys.Link(model.IntraNode)
	l.Engine = c.ar
	return l
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
func kindOf(k model.Kernel) Label {
	switch k.(type) {
	case model.GEMM:
		return kindGEMM
	case model.Attention:
		return kindAttention
	case model.Elementwise:
		return kindElementwise
	case model.Gather:
		return kindGather
	case model.Collective:
		return kindCollective
	case model.GroupedGEMM:
		return kindGrouped
	case model.Scan:
		return kindScan
	}
	return kindOther
}

// pass builds the report of one pass over ops, each op's launch priced
// once and multiplied by its Count.
func (c *coster) pass(name string, ops []model.Op) PhaseReport {
	if c.noRows {
		var a phaseAcc
		c.accumulate(&a, ops, 1)
		ph := PhaseReport{Name: name, Steps: 1}
		a.into(&ph)
		return ph
	}
	ph := PhaseReport{Name: name, Steps: 1, Ops: c.opRows(len(ops))}
	for i, o := range ops {
		if o.Count <= 0 || o.Kernel == nil {
			continue
		}
		co, rel := c.cost(o.Kernel)
		n := float64(o.Count)
		t := model.Seconds(n * float64(co.Time))
		name, stage := c.names.of(i, o.Name, o.Stage)
		ph.Ops = append(ph.Ops, OpRow{
			Name: name, Stage: stage, Class: o.Class, Kind: kindOf(o.Kernel), Count: o.Count,
			FLOPs: model.FLOPs(n * float64(co.FLOPs)), Bytes: model.Bytes(n * float64(co.Bytes)),
			Time: t, Low: model.Seconds(low(float64(t), rel)), High: model.Seconds(high(float64(t), rel)),
			Bound: co.Bound, DType: co.DType, Energy: model.Joules(n * float64(co.Energy())),
		})
	}
	c.totalIn(&ph)
	return ph
}

// total sums the rows into the phase's totals and class rows.
func (ph *PhaseReport) total() {
	const nc = 32
	var cls [nc]ClassRow
	var used [nc]bool
	var clsBound [nc][4]model.Seconds
	var byBound [4]model.Seconds
	ph.Time, ph.Low, ph.High, ph.FLOPs, ph.Bytes, ph.Energy = 0, 0, 0, 0, 0, 0
	for i := range ph.Ops {
		r := &ph.Ops[i]
		ph.Time += r.Time
		ph.Low += r.Low
		ph.High += r.High
		ph.FLOPs += r.FLOPs
		ph.Bytes += r.Bytes
		ph.Energy += r.Energy
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
	if cap(ph.Classes) >= n { // room given by diag.totalIn, or this phase's own
		ph.Classes = ph.Classes[:0]
	} else {
		ph.Classes = make([]ClassRow, 0, n)
	}
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

// low and high bound a predicted time t whose model has the relative
// error rel (a held-out p90 |predicted/measured − 1|). The band is
// multiplicative, [t/(1+rel), t·(1+rel)], as the fits' residuals are (they
// minimise the error of log(predicted/measured)): it never reaches zero,
// whatever rel, and for small rel it is t·(1 ± rel).
func low(t, rel float64) float64  { return t / (1 + rel) }
func high(t, rel float64) float64 { return t * (1 + rel) }
