package model

import "math"

// A GroupedGEMM is the routed experts of one mixture-of-experts layer run
// as one grouped GEMM, as serving engines run them (vLLM's fused_moe,
// TensorRT-LLM's CUTLASS MoE, DeepGEMM's grouped layouts): Rows
// token–expert assignments, spread over Experts distinct experts, each
// expert multiplying its rows by its own K×N weight in one launch. Experts
// is an expectation and may be fractional (see ExpectedExperts): the
// weights of the experts no token chose are not read.
type GroupedGEMM struct {
	Rows    int     // routed token–expert assignments on this device (tokens·top_k, or the busiest EP rank's share)
	Experts float64 // distinct experts those rows touch, at most Rows
	K, N    int
	A, B, C DType // activations, expert weights, output
}

// FLOPs returns 2·Rows·K·N.
func (g GroupedGEMM) FLOPs() FLOPs {
	return FLOPs(2 * float64(g.Rows) * float64(g.K) * float64(g.N))
}

// Bytes returns the minimum traffic: the routed activations read once,
// the weights of the Experts experts in use read once (with the block
// scales of 4-bit formats), the output written once.
func (g GroupedGEMM) Bytes() Bytes {
	r, k, n := float64(g.Rows), float64(g.K), float64(g.N)
	return Bytes(r*k*g.A.Size() + g.experts()*k*n*g.B.Size()*(1+g.B.ScaleOverhead()) + r*n*g.C.Size())
}

// experts returns Experts clamped to [min(1, Rows), Rows].
func (g GroupedGEMM) experts() float64 {
	e, r := g.Experts, float64(max(g.Rows, 0))
	if !(e <= r) {
		e = r
	}
	if !(e >= 1) {
		e = math.Min(1, r)
	}
	return e
}

// Compute returns the type the multiply runs in (see GEMM.Compute).
func (g GroupedGEMM) Compute() DType { return g.GEMM().Compute() }

// GEMM returns one expert's GEMM at the mean rows per expert (rounded
// up): the shape a batched-GEMM view of the layer would launch Experts
// times.
func (g GroupedGEMM) GEMM() GEMM {
	e := g.experts()
	m := 0
	if e > 0 {
		m = int(math.Ceil(float64(g.Rows) / e))
	}
	return GEMM{M: m, K: g.K, N: g.N, A: g.A, B: g.B, C: g.C}
}

// GroupedGEMMCost prices a grouped GEMM: with the device's fitted MoE
// table (Eff.MoE, see MoEParams) where it has one, else with the
// tile-aware GEMM model of its compute type: the experts' output tiles,
// ⌈m/Tm⌉·⌈N/Tn⌉ for the mean m = Rows/Experts rows each, share one
// launch and its waves; the memory time is the layer's exact traffic
// (Bytes, with a fractional expert count). A grouped kernel pays one
// launch, not one per expert.
func (p *Processor) GroupedGEMMCost(g GroupedGEMM) Cost {
	p = p.forType(g.Compute(), p.Eff.MoE.Source == "")
	if p.Eff.MoE.Source != "" {
		return p.moeCost(g)
	}
	one := g.GEMM()
	s, d := p.gemmSetupFor(one)
	e := g.experts()
	if !(e > 0) || one.M <= 0 {
		return Cost{DType: d, Time: Seconds(s.t0), Bound: LatencyBound}
	}
	c, _ := s.costRows(one, d, float64(g.Rows)/e, e, g.FLOPs(), g.Bytes())
	return c
}

// MoEParams model the routed experts of a mixture-of-experts layer as one
// grouped GEMM (TensorRT-LLM's CUTLASS MoE, vLLM's fused_moe, DeepGEMM's
// grouped layouts) launched for the gate-and-up and again for the down
// projection. The TOML keys are those of an [efficiency.moe] table.
//
// Each of the E distinct experts in use multiplies its m = Rows/E rows,
// padded to whole tiles of T = min(T_m, 16·⌈m/16⌉) rows (the MMA granule
// of 16 rows, and no larger tile than the rows need), by its K×N weight:
// N_t = E·⌈m/T⌉·⌈N/128⌉ output tiles, each 2·T·128·K FLOPs, run in
// max(1, N_t/S) waves over the S compute units at η_c of a unit's share
// of the peak (η_c8 at an 8-bit peak, η_c4 at a 4-bit one); the traffic is the routed rows,
// the used experts' weights and the output (GroupedGEMM.Bytes) at η_m of
// the bandwidth; a launch and a fixed cost per expert (its problem
// descriptor and first tile's prologue), each with its own value for a
// 4-bit block-scaled kernel (NVFP4: its activations and weights carry an
// fp8 scale per 16 elements, which the kernel loads and applies beside
// each operand tile, and for which the grouped kernel keeps per-expert
// scale-factor layouts; aiconfigurator's B200 table times such a module
// at 1 token 4 µs slower than the fp8 one, and a further 0.7–1 µs for each
// expert, though it reads half the weight bytes):
//
//	t_c = max(1, N_t/S) · 2·T·128·K / (η_c·peak/S)
//	t_m = bytes / (η_m·bandwidth)
//	t   = (t0 + E·a_e + (t_c^p + t_m^p)^(1/p)) · exp(residual(m, E, K·N))
//
// never below the plain roofline. The finalisation (MoEFinalize) that
// sums each token's k routed rows back into token order is priced by the
// same table: the engines fuse it into the down GEMM's epilogue, which
// scatters each of the Rows·N output elements to its token's row and adds
// it there (TensorRT-LLM's TMA warp-specialized grouped GEMM, its
// FusedFinalizeEpilogue with use_reduction; vLLM and the A100's path run
// a separate finalize kernel over the same elements), a global reduction
// whose throughput, not the bandwidth, bounds it: c_r a routed element
// (ReduceElement), t = launch + max(c_r·Rows·N, the pass's traffic at
// the bandwidth).
//
// The fit (calibrate) takes the whole MoE module as measured: the top-k,
// the permutation, the two grouped GEMMs, the activation and the
// finalisation, as workloads builds the layer, so what else the module
// does lands in t0 and a_e.
type MoEParams struct {
	Compute         float64   `toml:"compute"`                       // η_c at a 16-bit (or wider) peak
	Compute8        float64   `toml:"compute_fp8,omitempty"`         // η_c at an 8-bit peak; 0 means compute
	Compute4        float64   `toml:"compute_fp4,omitempty"`         // η_c at a 4-bit peak; 0 means compute_fp8
	Memory          float64   `toml:"memory"`                        // η_m
	Launch          Seconds   `toml:"launch"`                        // t0 per grouped GEMM
	ExpertOverhead  Seconds   `toml:"expert_overhead"`               // a_e per distinct expert per grouped GEMM
	Overlap         float64   `toml:"overlap_exponent,omitempty"`    // soft-maximum exponent p; 0 means max
	RowTile         int       `toml:"row_tile,omitempty"`            // T_m; 0 means 128
	Launch4         Seconds   `toml:"launch_fp4,omitempty"`          // t0 of a 4-bit block-scaled grouped GEMM; 0 means launch
	ExpertOverhead4 Seconds   `toml:"expert_overhead_fp4,omitempty"` // a_e of a 4-bit block-scaled grouped GEMM; 0 means expert_overhead
	ReduceElement   Seconds   `toml:"reduce_element,omitempty"`      // c_r: the finalisation's time per routed output element; 0 means the bandwidth alone
	Residual        *Residual `toml:"residual,omitempty"`            // over (rows per expert, experts, K·N); nil for none
	Source          string    `toml:"source"`
	Points          int       `toml:"points,omitempty"`
	ErrMedian       float64   `toml:"err_median,omitempty"`
	ErrP90          float64   `toml:"err_p90,omitempty"`
}

// MoEAxes returns the coordinates of g in the MoE residual table: the
// mean rows per expert, the experts in use and the K·N elements of one
// expert's weight, each at least 1.
func MoEAxes(g GroupedGEMM) (x, y, z float64) {
	e := math.Max(g.experts(), 1)
	return math.Max(float64(g.Rows)/e, 1), e, math.Max(float64(g.K)*float64(g.N), 1)
}

// moeCost prices g with the MoE table (see MoEParams).
func (p *Processor) moeCost(g GroupedGEMM) Cost {
	e := &p.Eff.MoE
	d, _ := p.Supported(g.Compute())
	peak, _ := p.Peak(d)
	c := Cost{FLOPs: g.FLOPs(), Bytes: g.Bytes(), DType: d}
	pk, bw, cus := nonNeg(float64(peak)), nonNeg(float64(p.Bandwidth)), float64(p.ComputeUnits)
	t0, ae := nonNeg(float64(e.Launch)), nonNeg(float64(e.ExpertOverhead))
	if d.Size() < 1 { // a block-scaled 4-bit kernel: its own fixed costs
		if e.Launch4 > 0 {
			t0 = float64(e.Launch4)
		}
		if e.ExpertOverhead4 > 0 {
			ae = float64(e.ExpertOverhead4)
		}
	}
	ex := g.experts()
	if !(ex > 0) || g.Rows <= 0 || g.K <= 0 || g.N <= 0 {
		c.Time, c.Bound = Seconds(t0), LatencyBound
		return c
	}
	ec := e.Compute
	if d.Size() < 2 && e.Compute8 > 0 {
		ec = e.Compute8
	}
	if d.Size() < 1 && e.Compute4 > 0 {
		ec = e.Compute4
	}
	tm := float64(e.RowTile)
	if !(tm > 0) {
		tm = 128
	}
	const tn = 128
	var tc, tb float64
	if pk > 0 && cus > 0 {
		// An expert's rows are padded to the MMA granule of 16, and a
		// tile takes no more rows than that (the libraries pick smaller
		// tiles for few rows): T = min(T_m, 16·⌈m/16⌉).
		m := float64(g.Rows) / ex
		t := math.Min(tm, 16*math.Ceil(m/16))
		tiles := ex * math.Ceil(m/t) * math.Ceil(float64(g.N)/tn)
		tc = math.Max(1, tiles/cus) * 2 * t * tn * float64(g.K) / (clampEff(ec) * pk / cus)
	}
	if bw > 0 {
		tb = float64(c.Bytes) / (clampEff(e.Memory) * bw)
	}
	t := t0 + ex*ae + SoftMax(tc, tb, nonNeg(e.Overlap))
	t *= math.Exp(e.Residual.At(MoEAxes(g)))
	c.settle(t, t0, tc, tb, pk, bw)
	return c
}

// ExpectedExperts returns the expected number of distinct experts that
// t tokens each routed to k of e experts touch when routing is uniform
// and a token's k experts are distinct: e·(1 − (1 − k/e)^t). Mixtral
// 8x7B (e = 8, k = 2) at 4 tokens touches 8·(1 − 0.75⁴) ≈ 5.47 experts;
// at 1 token exactly 2.
func ExpectedExperts(t, k, e int) float64 {
	if t <= 0 || k <= 0 || e <= 0 {
		return 0
	}
	if k >= e {
		return float64(e)
	}
	return float64(e) * -math.Expm1(float64(t)*math.Log1p(-float64(k)/float64(e)))
}

// MoEPermute is the pass that gathers the tokens' hidden rows into
// expert order before the grouped GEMMs (TensorRT-LLM's
// expandInputRowsKernel, vLLM's moe_align and scatter): it reads the
// tokens' t rows of width h in act and writes the rows routed to this
// rank, quantised to the experts' input type in.
func MoEPermute(t, rows, h int, act, in DType) Elementwise {
	n := float64(rows) * float64(h)
	return Elementwise{Kind: "moe-permute", Elements: n, Read: act.Bytes(float64(t) * float64(h)), Written: in.Bytes(n)}
}

// MoEFinalize is the pass that sums each token's routed rows, weighted by
// the router, back into token order after the down GEMM (TensorRT-LLM's
// finalizeMoeRoutingKernel): it reads the rank's rows and writes the t
// tokens' outputs, in act.
//
// A device with a fitted MoE table prices it with its per-element
// reduction time (MoEParams.ReduceElement, see FinalizeCost).
func MoEFinalize(t, rows, h int, act DType) Elementwise {
	n := float64(rows) * float64(h)
	return Elementwise{Kind: KindMoEFinalize, Elements: n, Work: FLOPs(2 * n), Read: act.Bytes(n), Written: act.Bytes(float64(t) * float64(h))}
}

// KindMoEFinalize is the Elementwise kind of MoEFinalize.
const KindMoEFinalize = "moe-finalize"

// FinalizeCost prices an MoE finalisation pass (MoEFinalize): the
// streaming pass, or, where the device's MoE table has a reduction time
// c_r, launch + c_r·Elements when that is slower (see MoEParams).
func (p *Processor) FinalizeCost(k Elementwise) Cost {
	p = p.For(k)
	c := p.StreamCost(k.FLOPs(), k.Bytes(), FP32)
	cr := nonNeg(float64(p.Eff.MoE.ReduceElement))
	if p.Eff.MoE.Source == "" || !(cr > 0) || !(k.Elements > 0) {
		return c
	}
	launch := c.Time - Seconds(math.Max(float64(c.Compute), float64(c.Memory)))
	if t := launch + Seconds(cr*k.Elements); t > c.Time {
		c.Time, c.Bound = t, ComputeBound
	}
	return c
}
