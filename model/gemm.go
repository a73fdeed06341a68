package model

import (
	"errors"
	"fmt"
	"math"
)

// The tile-aware GEMM roofline (DESIGN.md, "What a GEMM efficiency model
// needs"). A GEMM library splits C[M×N] into output tiles of Tm×Tn, each
// computed by one CTA (thread block) on one compute unit, optionally
// splitting K s ways and reducing the partial tiles afterwards. The model
// prices every candidate tile and split and keeps the fastest, a stand-in
// for the library's own heuristic:
//
//	N_t      = ⌈m/Tm⌉·⌈n/Tn⌉·batch                 tiles
//	CTAs     = N_t·s                                s ∈ gemmSplits; s > 1 only when
//	                                                CTAs ≤ 2·S and k/s ≥ 128
//	W        = ⌈CTAs/S⌉ (whole waves, A100-class) or max(1, CTAs/S) (fractional, Hopper)
//	T_cta    = a + ⌈k/s⌉·max(2·T'm·T'n / (P/S·η_c), (T'm+T'n)·c_e, τ)
//	                                                T'm = min(Tm, ⌈m/16⌉·16), likewise T'n
//	T_c      = W·T_cta
//	T_m      = (e_B·k·n + e_C·m·n)/(W_hbm·η_m)
//	         + e_A·m·k/(l2f·W_hbm·η_m) when the activation fits in L2 and l2f > 0,
//	           else e_A·m·k/(W_hbm·η_m)
//	         + q·m·k/(W_hbm·η_m) for an fp8 activation (its quantisation pass)
//	t(s)     = (T_c^p + T_m^p)^(1/p) + [s > 1]·(t_split + 2·4·s·m·n/(W_hbm·η_m)) + t0
//	t        = min over tiles and splits of t(s), times exp(residual(log m, log n, log k))
//
// and never less than the plain roofline F/P, B/W_hbm. A CPU
// (Processor.CPU) follows cpuCompute instead of the tile search. S is the number of
// compute units, P the matrix peak of the compute type, e_X the element
// sizes of A, B and C. c_e, the time to bring one operand element into a
// CTA (shared memory, from L2), makes a small tile slower per FLOP than a
// large one: a T×T tile loads 2T elements for 2T² FLOPs per K step.
//
// Defaults for parameters a hardware file does not set (uncalibrated
// catalog entries set only compute, memory and launch): a = 0, τ = 0, c_e = 0,
// t_split = 0, p = 0 (a plain max), l2f = 0 (activation from HBM), q = 0,
// whole waves, no residual. With those, a large GEMM costs about
// F/(P·η_c) + t0: wave quantisation of the smallest tile that fits is
// then the only loss, under 1% for a 4096³ GEMM on 108 SMs. A device
// without ComputeUnits gets no tile or wave quantisation at all.

// gemmTiles are the candidate output tiles (Tm, Tn): those of cuBLAS and
// CUTLASS on Ampere and Hopper (DESIGN.md).
var gemmTiles = [...][2]float64{{64, 64}, {64, 128}, {128, 64}, {128, 128}, {128, 256}, {256, 128}}

// The CPU rule, after gonum's Dgemm and Sgemm (gonum/blas/gonum/dgemm.go;
// OpenBLAS and MKL block C likewise, with other sizes). C is cut into
// blocks of CPUBlock×CPUBlock; idle cores take the next block, so that a
// block of r rows and c columns costs its own work, not a whole tile's:
//
//	T_block(r, c) = a + k·max(2·r·c/(P/S·η_c) + r·c_e, τ)
//	T_c          = Σ T_block / S, at least the longest block; the plain sum
//	               when there are fewer than CPUMinParallel blocks (gonum
//	               then runs serially)
//
// Each row of a block is one vector call per element of K (an axpy over
// its c columns), whence the per-row cost c_e (OperandLoad) on top of the
// arithmetic. K is never split and vector lanes run along rows, so there
// is no granule: a GEMV (m = 1) costs a 64th of a 64-row block.
const (
	CPUBlock       = 64 // gonum/blas/gonum/gonum.go blockSize
	CPUMinParallel = 4  // gonum/blas/gonum/gonum.go minParBlock
)

// A CPUBlockSet is Count blocks of Rows×Cols elements of C.
type CPUBlockSet struct{ Count, Rows, Cols float64 }

// CPUBlocks returns the blocks the CPU rule cuts an m×n output into: the
// full CPUBlock×CPUBlock ones, the partial ones along the right and the
// bottom edge, and the corner; a set that does not occur has Count 0.
func CPUBlocks(m, n float64) [4]CPUBlockSet {
	fm, rm := math.Floor(m/CPUBlock), math.Mod(m, CPUBlock)
	fn, rn := math.Floor(n/CPUBlock), math.Mod(n, CPUBlock)
	bs := [4]CPUBlockSet{{fm * fn, CPUBlock, CPUBlock}, {fm, CPUBlock, rn}, {fn, rm, CPUBlock}, {1, rm, rn}}
	for i := range bs {
		if bs[i].Rows == 0 || bs[i].Cols == 0 {
			bs[i].Count = 0
		}
	}
	return bs
}

// cpuCompute returns the CPU rule's compute time of a batch of b GEMMs
// m×n×k and the number of blocks per core.
func (s *gemmSetup) cpuCompute(m, n, k, b float64) (tc, waves float64) {
	perCU := s.peak * s.etaC / s.cus
	var total, longest, blocks float64
	for _, blk := range CPUBlocks(m, n) {
		count, r, c := blk.Count*b, blk.Rows, blk.Cols
		if count == 0 {
			continue
		}
		t := s.a + k*math.Max(2*r*c/perCU+r*s.edge, s.tau)
		total += count * t
		longest = math.Max(longest, t)
		blocks += count
	}
	if blocks < CPUMinParallel {
		return total, blocks / s.cus
	}
	return math.Max(total/s.cus, longest), blocks / s.cus
}

// gemmSplits are the candidate split-K factors, in increasing order.
var gemmSplits = [...]int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}

// minSplitK is the least K a split-K slice keeps (DESIGN.md).
const minSplitK = 128

// partialBytes is the size of one partial-sum element of a split-K GEMM:
// partials accumulate in fp32.
const partialBytes = 4

// The wave models a GEMMParams.Waves names.
const (
	WavesWhole      = "whole"      // ⌈CTAs/S⌉: the last partial wave costs a whole wave (A100)
	WavesFractional = "fractional" // max(1, CTAs/S): persistent, stream-K-like scheduling (H100)
)

// A Residual is a fitted correction over GEMM shape space: the natural log
// of measured/modelled time at the nodes of a grid in log2 m, log2 n and
// log2 k, interpolated trilinearly and held constant beyond the grid's
// edges. It follows what the analytical model cannot: the library's kernel
// choice, which jumps between neighbouring shapes. Values is indexed
// [(i·len(Log2N)+j)·len(Log2K)+l] for node (Log2M[i], Log2N[j], Log2K[l]).
type Residual struct {
	Log2M  []float64 `toml:"log2_m"`
	Log2N  []float64 `toml:"log2_n"`
	Log2K  []float64 `toml:"log2_k"`
	Values []float64 `toml:"values"`
}

// Valid reports whether r has at least one node on each axis, strictly
// increasing finite axes and one finite value per node. It reads the whole
// table: loaders check a table once with it (or Check); the cost functions
// use the constant-time usable and guard what At returns.
func (r *Residual) Valid() bool { return r.Check() == nil }

// Check returns what is wrong with r, or nil.
func (r *Residual) Check() error {
	if r == nil || len(r.Log2M) == 0 || len(r.Log2N) == 0 || len(r.Log2K) == 0 {
		key := "log2_m"
		if r != nil && len(r.Log2M) > 0 {
			key = "log2_n"
			if len(r.Log2N) > 0 {
				key = "log2_k"
			}
		}
		return &KeyError{key, errors.New("residual: each of log2_m, log2_n and log2_k needs at least one node")}
	}
	if want := len(r.Log2M) * len(r.Log2N) * len(r.Log2K); len(r.Values) != want {
		return &KeyError{"values", fmt.Errorf("residual: %d values for %d×%d×%d nodes, want %d", len(r.Values), len(r.Log2M), len(r.Log2N), len(r.Log2K), want)}
	}
	for a, ax := range [...][]float64{r.Log2M, r.Log2N, r.Log2K} {
		for i := range ax {
			if math.IsNaN(ax[i]) || math.IsInf(ax[i], 0) || (i > 0 && !(ax[i] > ax[i-1])) {
				key := [...]string{"log2_m", "log2_n", "log2_k"}[a]
				return &KeyError{key, fmt.Errorf("residual: %s must be finite and strictly increasing (node %d is %v)", key, i, ax[i])}
			}
		}
	}
	for i, v := range r.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &KeyError{"values", fmt.Errorf("residual: value %d is %v, want a finite number", i, v)}
		}
	}
	return nil
}

// A KeyError is a problem with one key of a table (as a file names it,
// e.g. "values" of a residual table), so that a loader can point at the
// key's line rather than the table's.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// usable is the constant-time part of Valid: the table has nodes and a
// value for each. The cost functions call it on every kernel, so it reads
// no values; a table that is usable but not Valid cannot reach them from a
// hardware file (the loader calls Check), and At turns anything
// non-finite into 0.
func (r *Residual) usable() bool {
	return r != nil && len(r.Log2M) > 0 && len(r.Log2N) > 0 && len(r.Log2K) > 0 &&
		len(r.Values) == len(r.Log2M)*len(r.Log2N)*len(r.Log2K)
}

// Locate returns the cell index i and weight w of x on the increasing
// axis ax, as Residual.Weights interpolates: x interpolates as
// (1−w)·ax[i] + w·ax[i+1], and beyond the edges w is 0 or 1.
func Locate(ax []float64, x float64) (int, float64) { return locate(ax, x) }

// locate returns the cell index i and weight w of x on axis ax, so that x
// interpolates as (1−w)·ax[i] + w·ax[i+1]; beyond the edges w is 0 or 1.
func locate(ax []float64, x float64) (int, float64) {
	n := len(ax)
	if n == 1 || x <= ax[0] {
		return 0, 0
	}
	if x >= ax[n-1] {
		return n - 2, 1
	}
	i := 0
	for i < n-2 && x >= ax[i+1] {
		i++
	}
	return i, (x - ax[i]) / (ax[i+1] - ax[i])
}

// Weights returns the 8 grid nodes (as indexes into Values) and their
// trilinear weights at (m, n, k). Nodes repeat where an axis has one
// point. r must be Valid.
func (r *Residual) Weights(m, n, k float64) (idx [8]int, w [8]float64) {
	i, wi := locate(r.Log2M, math.Log2(m))
	j, wj := locate(r.Log2N, math.Log2(n))
	l, wl := locate(r.Log2K, math.Log2(k))
	return r.cellWeights(i, wi, j, wj, l, wl)
}

// cellWeights is Weights from the cells and weights of the three axes.
func (r *Residual) cellWeights(i int, wi float64, j int, wj float64, l int, wl float64) (idx [8]int, w [8]float64) {
	nn, nk := len(r.Log2N), len(r.Log2K)
	for c := 0; c < 8; c++ {
		ii, jj, ll := i, j, l
		f := 1.0
		if c&4 != 0 {
			ii, f = min(i+1, len(r.Log2M)-1), f*wi
		} else {
			f *= 1 - wi
		}
		if c&2 != 0 {
			jj, f = min(j+1, nn-1), f*wj
		} else {
			f *= 1 - wj
		}
		if c&1 != 0 {
			ll, f = min(l+1, nk-1), f*wl
		} else {
			f *= 1 - wl
		}
		idx[c], w[c] = (ii*nn+jj)*nk+ll, f
	}
	return idx, w
}

// At returns the interpolated log correction at (m, n, k); 0 for a table
// without nodes or values, and 0 where a table that is not Valid would
// give a non-finite correction.
func (r *Residual) At(m, n, k float64) float64 { return r.at(m, n, k, nil) }

// A residualMemo remembers where a table's first and third axes put m
// and k: a series of lookups that vary only n (a decode attention at
// several KV lengths) locates them once.
type residualMemo struct {
	r      *Residual
	m, k   float64
	i, l   int
	wi, wl float64
}

// at is At, m and k located through memo (nil for none).
func (r *Residual) at(m, n, k float64, memo *residualMemo) float64 {
	if !r.usable() {
		return 0
	}
	var i, l int
	var wi, wl float64
	if memo != nil && memo.r == r && memo.m == m && memo.k == k {
		i, wi, l, wl = memo.i, memo.wi, memo.l, memo.wl
	} else {
		i, wi = locate(r.Log2M, math.Log2(m))
		l, wl = locate(r.Log2K, math.Log2(k))
		if memo != nil {
			*memo = residualMemo{r: r, m: m, k: k, i: i, l: l, wi: wi, wl: wl}
		}
	}
	j, wj := locate(r.Log2N, math.Log2(n))
	idx, w := r.cellWeights(i, wi, j, wj, l, wl)
	v := 0.0
	for c := range idx {
		v += w[c] * r.Values[idx[c]]
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// A GEMMChoice is what the model picked for a GEMM: the output tile, the
// split-K factor and the waves of CTAs it ran in.
type GEMMChoice struct {
	TileM, TileN int
	Split        int
	Waves        float64
	Residual     float64 // log correction applied from the residual table
}

// gemmSetup holds a GEMM's parameters with the defaults filled in.
type gemmSetup struct {
	etaC, etaM         float64
	t0, a, tau, tsplit float64
	edge               float64
	p, l2f, q          float64
	fractional         bool
	cpu                bool
	res                *Residual
	peak, bw, l2, cus  float64
}

func clampEff(e float64) float64 {
	if !(e > 0) || math.IsInf(e, 0) {
		return 1
	}
	return math.Min(e, 1)
}

func nonNeg(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// GEMMDetail prices g like GEMMCost and also says which tile and split the
// model chose.
func (p *Processor) GEMMDetail(g GEMM) (Cost, GEMMChoice) {
	s, d := p.gemmSetupFor(g)
	return s.cost(g, d)
}

// gemmSetupFor returns the GEMM model's setup for g's compute type on p,
// and the type it computes in.
func (p *Processor) gemmSetupFor(g GEMM) (gemmSetup, DType) {
	p = p.forType(g.Compute(), true)
	d, _ := p.Supported(g.Compute())
	peak, _ := p.Peak(d)
	e := p.gemmParams(d)
	s := gemmSetup{
		etaC: clampEff(e.Compute), etaM: clampEff(e.Memory),
		t0: nonNeg(float64(e.Launch)), a: nonNeg(float64(e.CTAOverhead)), tau: nonNeg(float64(e.StepFloor)),
		tsplit: nonNeg(float64(e.SplitK)), p: nonNeg(e.Overlap), l2f: nonNeg(e.L2Factor), q: nonNeg(e.QuantBytes),
		edge:       nonNeg(float64(e.OperandLoad)),
		fractional: e.Waves == WavesFractional,
		peak:       nonNeg(float64(peak)), bw: nonNeg(float64(p.Bandwidth)), l2: nonNeg(float64(p.L2)),
		cus: float64(max(p.ComputeUnits, 0)),
		cpu: p.CPU,
	}
	if e.Launch == 0 {
		s.t0 = nonNeg(float64(p.Launch))
	}
	if e.Residual.usable() {
		s.res = e.Residual
	}
	return s, d
}

// GEMMCost prices a GEMM with the tile-aware roofline described above.
func (p *Processor) GEMMCost(g GEMM) Cost {
	c, _ := p.GEMMDetail(g)
	return c
}

func (s *gemmSetup) cost(g GEMM, d DType) (Cost, GEMMChoice) {
	return s.costRows(g, d, float64(g.M), g.batch(), g.FLOPs(), g.Bytes())
}

// costRows prices b GEMMs of g's types and K×N with m rows each, where m
// and b may be fractional (a grouped GEMM's mean rows per expert and its
// expected distinct experts), f and by being their FLOPs and bytes.
func (s *gemmSetup) costRows(g GEMM, d DType, m, b float64, f FLOPs, by Bytes) (Cost, GEMMChoice) {
	c := Cost{FLOPs: f, Bytes: by, DType: d}
	var ch GEMMChoice
	n, k := float64(g.N), float64(g.K)
	if !(m > 0 && n > 0 && k > 0) || math.IsInf(float64(c.FLOPs), 0) || math.IsInf(float64(c.Bytes), 0) {
		c.Time, c.Bound = Seconds(s.t0), LatencyBound
		return c, ch
	}
	bw := s.bw * s.etaM
	// A's and C's elements in memory: m·k and m·n, or what the GEMM
	// states (an implicit-GEMM convolution's input tensor, not the
	// unfolded matrix; see GEMM).
	aEl, cEl := m*k, m*n
	if g.AElems > 0 {
		aEl = g.AElems
	}
	if g.CElems > 0 {
		cEl = g.CElems
	}
	// Memory: weights and output from HBM, the activation from HBM or L2,
	// and an fp8 activation's quantisation pass.
	var tm float64
	if bw > 0 {
		act := b * aEl * g.A.Size()
		tm = b * (k*n*g.B.Size()*(1+g.B.ScaleOverhead()) + cEl*g.C.Size()) / bw
		if s.l2f > 0 && act <= s.l2 {
			tm += act / (bw * s.l2f)
		} else {
			tm += act / bw
		}
		if s.q > 0 && g.A.Peak() == FP8 {
			tm += s.q * b * aEl / bw
		}
	}
	// Compute: the best tile for each split factor.
	var best [len(gemmSplits)]float64
	var bestTile [len(gemmSplits)]int
	var bestWaves [len(gemmSplits)]float64
	var bestFloored [len(gemmSplits)]bool
	for i := range best {
		best[i] = math.Inf(1)
	}
	floored := false
	if s.cpu && s.peak > 0 && s.cus > 0 {
		best[0], bestWaves[0] = s.cpuCompute(m, n, k, b)
		bestTile[0] = -1
	} else if s.peak > 0 && s.cus > 0 {
		perCU := s.peak * s.etaC / s.cus
		for ti, t := range gemmTiles {
			tmc := math.Min(t[0], math.Ceil(m/16)*16)
			tnc := math.Min(t[1], math.Ceil(n/16)*16)
			nt := math.Ceil(m/t[0]) * math.Ceil(n/t[1]) * b
			step := math.Max(2*tmc*tnc/perCU, (tmc+tnc)*s.edge)
			fl := s.tau > step
			if fl {
				step = s.tau
			}
			for si, sp := range gemmSplits {
				fs := float64(sp)
				if sp > 1 && (nt*fs > 2*s.cus || k/fs < minSplitK) {
					break
				}
				ctas := nt * fs
				w := ctas / s.cus
				if s.fractional {
					w = math.Max(1, w)
				} else {
					w = math.Ceil(w)
				}
				tc := w * (s.a + math.Ceil(k/fs)*step)
				if tc < best[si] {
					best[si], bestTile[si], bestWaves[si], bestFloored[si] = tc, ti, w, fl
				}
			}
		}
	} else if s.peak > 0 {
		best[0] = float64(c.FLOPs) / (s.peak * s.etaC)
		bestWaves[0] = 1
	}
	total := math.Inf(1)
	for si, tc := range best {
		if math.IsInf(tc, 1) {
			continue
		}
		t := s.t0
		if sp := float64(gemmSplits[si]); sp > 1 {
			t += s.tsplit
			if bw > 0 {
				t += 2 * partialBytes * sp * b * cEl / bw
			}
		}
		// The soft maximum is at least the max: skip the power
		// functions when that already loses.
		if t+math.Max(tc, tm) >= total {
			continue
		}
		t += s.soft(tc, tm)
		if t < total {
			total = t
			c.Compute, c.Memory = Seconds(tc), Seconds(tm)
			floored = bestFloored[si]
			ch = GEMMChoice{Split: gemmSplits[si], Waves: bestWaves[si]}
			if ti := bestTile[si]; ti >= 0 {
				ch.TileM, ch.TileN = int(gemmTiles[ti][0]), int(gemmTiles[ti][1])
			} else {
				ch.TileM, ch.TileN = CPUBlock, CPUBlock
			}
		}
	}
	if math.IsInf(total, 1) { // no peak: memory and launch only
		total = tm + s.t0
		c.Memory = Seconds(tm)
	}
	if s.res != nil {
		ch.Residual = s.res.At(m, n, k)
		total *= math.Exp(ch.Residual)
	}
	// Never faster than the plain roofline.
	floor := 0.0
	if s.peak > 0 {
		floor = float64(c.FLOPs) / s.peak
	}
	if s.bw > 0 {
		floor = math.Max(floor, float64(c.Bytes)/s.bw)
	}
	if !(total >= floor) {
		total = floor
	}
	c.Time = Seconds(total)
	switch {
	case s.t0 >= float64(c.Compute) && s.t0 >= float64(c.Memory), floored && c.Compute >= c.Memory:
		c.Bound = LatencyBound
	case c.Compute >= c.Memory:
		c.Bound = ComputeBound
	default:
		c.Bound = MemoryBound
	}
	return c, ch
}

// soft is the soft maximum (x^p + y^p)^(1/p); a plain max when p is 0.
func (s *gemmSetup) soft(x, y float64) float64 {
	return SoftMax(x, y, s.p)
}

// SoftMax returns (x^p + y^p)^(1/p) for non-negative x and y, the way
// compute and memory time combine when they overlap only in part: p = 1
// is no overlap (a sum), p → ∞ perfect overlap (a max). p ≤ 0 means max.
func SoftMax(x, y, p float64) float64 {
	hi, lo := math.Max(x, y), math.Min(x, y)
	if !(p > 0) || hi == 0 || math.IsInf(p, 1) {
		return hi
	}
	if lo == 0 {
		return hi
	}
	// hi·(1 + (lo/hi)^p)^(1/p) through exp and log; below 1e-17 the
	// correction is lost in rounding anyway.
	lp := p * math.Log(lo/hi)
	if lp < -40 {
		return hi
	}
	return hi * math.Exp(math.Log1p(math.Exp(lp))/p)
}
