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

// GroupedGEMMCost prices a grouped GEMM with the tile-aware GEMM model of
// its compute type: the experts' output tiles, ⌈m/Tm⌉·⌈N/Tn⌉ for the mean
// m = Rows/Experts rows each, share one launch and its waves; the memory
// time is the layer's exact traffic (Bytes, with a fractional expert
// count). A grouped kernel pays one launch, not one per expert.
func (p *Processor) GroupedGEMMCost(g GroupedGEMM) Cost {
	one := g.GEMM()
	s, d := p.gemmSetupFor(one)
	e := g.experts()
	if !(e > 0) || one.M <= 0 {
		return Cost{DType: d, Time: Seconds(s.t0), Bound: LatencyBound}
	}
	c, _ := s.costRows(one, d, float64(g.Rows)/e, e, g.FLOPs(), g.Bytes())
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
