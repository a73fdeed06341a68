package model

import "math"

// The gated delta rule of a Gated DeltaNet layer (Yang, Kautz and
// Hatamizadeh, "Gated Delta Networks: Improving Mamba2 with Delta Rule",
// ICLR 2025, arXiv:2412.06464; Qwen3-Next's linear-attention layers). Per
// value head, with a state S of key width d_k × value width d_v, one
// token updates
//
//	S_t = α_t·S_{t−1}·(I − β_t·k_t·k_tᵀ) + β_t·v_t·k_tᵀ,  o_t = S_t·q_t,
//
// where α_t = exp(g_t) is the decay gate and β_t the write strength, both
// per head and token (transformers' Qwen3NextGatedDeltaNet computes g =
// −exp(A_log)·softplus(a + dt_bias) and β = sigmoid(b)). Queries and keys
// have their own, fewer heads (linear_num_key_heads), each shared by a
// group of value heads. A Scan with Delta set describes it: Heads and
// HeadDim are the value heads and d_v, State is d_k, Groups the key
// heads; Conv the short causal convolution over q, k and v; Chunk the
// chunk length of the chunked form (64 in flash-linear-attention's
// chunk_gated_delta_rule, which vLLM and SGLang run).

// Arithmetic per element of the small passes around the rule.
const (
	deltaGateFLOPs = 8 // g = −exp(A_log)·softplus(a + dt_bias) and β = sigmoid(b), per head and token
	deltaL2FLOPs   = 3 // the L2 norm of q and k: square-add, then scale
)

// Kernels a Gated DeltaNet mixer launches (besides its projections and
// gated norm). Prefill, as vLLM's Qwen3-Next runs it: causal_conv1d_fn,
// fused_gdn_gating, then flash-linear-attention's chunk_gated_delta_rule
// (the L2 norms of q and of k, chunk_local_cumsum,
// chunk_scaled_dot_kkt_fwd, solve_tril, recompute_w_u_fwd,
// chunk_gated_delta_rule_fwd_h, chunk_fwd_o). Decode:
// causal_conv1d_update, fused_gdn_gating and
// fused_recurrent_gated_delta_rule.
const (
	deltaPrefillKernels = 10
	deltaDecodeKernels  = 3
)

// deltaFLOPs counts the work of the rule (multiply-adds as 2).
//
// The convolution and the gates as for the SSD scan, and the L2 norm of
// q and k. The chunked form (Yang et al., "Parallelizing Linear
// Transformers with the Delta Rule over Sequence Length", NeurIPS 2024,
// §3, with the decay of the gated rule), per value head and chunk of C
// tokens: the key products K·Kᵀ (C²·d_k), the inverse of the unit lower
// triangular C × C matrix of the WY form (C³/3, as LAPACK's trtri
// counts), W = T·K and U = T·V (C²·d_k + C²·d_v), the new values U − W·S
// (C·d_k·d_v), the intra-chunk scores Q·Kᵀ (C²·d_k) applied to them
// (C²·d_v), the carried state read by the queries (C·d_k·d_v) and the
// state carried on (C·d_k·d_v). Per token: 6·C·d_k + 4·C·d_v + C²/3 +
// 6·d_k·d_v. The recurrent step of one token (decoding): the state
// decayed (d_k·d_v), read by the key (2·d_k·d_v), the rank-one update
// (2·d_k·d_v) and the output (2·d_k·d_v): 7·d_k·d_v.
func (s Scan) deltaFLOPs() FLOPs {
	b, t, hp, n, g, w, q := s.dims()
	h, p := float64(max(s.Heads, 0)), float64(max(s.HeadDim, 0))
	conv := 2 * b * t * (hp + 2*g*n) * w
	side := b * t * (h*deltaGateFLOPs + 2*g*n*deltaL2FLOPs)
	if s.Decode() {
		return FLOPs(conv + side + b*7*n*hp)
	}
	return FLOPs(conv + side + b*t*(h*(6*q*n+4*q*p+q*q/3)+6*n*hp))
}

// deltaBytes counts the traffic of the kernels deltaPrefillKernels and
// deltaDecodeKernels name, each reading its inputs and writing its
// outputs once (q and k at the key heads, the rest per value head; the
// gates in fp32, the WY matrix A in fp32 then in DType, the chunks'
// states in DType, as flash-linear-attention stores them), per token:
//
//	convolution      q, k, v read and written
//	gates            a and b read, g and β written (fp32)
//	L2 norms         q and k read and written
//	K·Kᵀ             k, g and β read, A written (fp32)
//	solve_tril       A read (fp32), A written
//	W, U             k, v, A, g and β read, W and U written
//	states           k, W, U and g read; each chunk's state and the new values written
//	output           q, k, g, the new values and the chunks' states read, o written
//
// and, once per sequence, the final state and the convolution's last
// inputs written (StateDType). A decode step reads and writes the state
// and the convolution's, reads q, k, v, a and b once and writes o.
func (s Scan) deltaBytes() Bytes {
	b, t, hp, n, g, w, q := s.dims()
	h, p := float64(max(s.Heads, 0)), float64(max(s.HeadDim, 0))
	e, st := s.DType.Size(), s.StateDType.Size()
	const f32 = 4
	state := b * (h*n*p + (hp+2*g*n)*max(w-1, 0)) * st
	if s.Decode() {
		act := b * (4*hp + 6*g*n + 2*h) * e
		gates := b * 4 * h * f32
		return Bytes(act + gates + 2*state)
	}
	var chunkStates float64
	if q > 0 {
		chunkStates = h * n * p / q
	}
	act := b * t * (8*hp + 13*g*n + 2*h + 2*h*q + 2*h*n + 2*chunkStates) * e
	fp := b * t * (2*h*q + 8*h) * f32
	return Bytes(act + fp + state)
}

// deltaCost prices the rule: the chunked form's products on the matrix
// units at the attention kernels' compute efficiency and its passes at
// the streaming bandwidth, as a roofline, with a launch for each of its
// kernels; the state recurrence (deltaChain) no faster than its chain of
// chunk steps; a decode step is a streaming pass over the state.
func (p *Processor) deltaCost(s Scan) Cost {
	launch := p.Eff.Memory.Launch
	if !(launch > 0) {
		launch = p.Launch
	}
	f, by := s.FLOPs(), s.Bytes()
	bw := ByteRate(float64(p.Bandwidth) * p.memEff(by))
	if s.Decode() {
		return roofline(f, by, p.streamRate(FP32), bw, launch*deltaDecodeKernels, FP32)
	}
	d, _ := p.Supported(s.DType)
	peak, _ := p.Peak(d)
	rate := FLOPRate(float64(peak) * clampEff(p.Eff.Attention.Compute))
	c := roofline(f, by, rate, bw, launch*deltaPrefillKernels, d)
	// The state recurrence apart: its roofline or its chain, whichever
	// is longer, after the other kernels' roofline.
	fh, bh := s.deltaStateFLOPs(), s.deltaStateBytes()
	chain := p.deltaChain(s)
	rest := roofline(f-fh, by-bh, rate, bw, 0, d)
	own := roofline(fh, bh, rate, bw, 0, d)
	if chain > own.Time {
		c.Time = rest.Time + chain + launch*deltaPrefillKernels
		if chain > rest.Time {
			c.Bound = LatencyBound
		}
	}
	return c
}

// deltaStateFLOPs and deltaStateBytes are the share of the prefill's
// work and traffic that the state recurrence
// (chunk_gated_delta_rule_fwd_h) does: per token and value head the new
// values U − W·S and the state carried on, K·V_newᵀ (4·d_k·d_v); k, W, U
// and g read, each chunk's state and the new values written.
func (s Scan) deltaStateFLOPs() FLOPs {
	b, t, hp, n, _, _, _ := s.dims()
	return FLOPs(b * t * 4 * n * hp)
}

func (s Scan) deltaStateBytes() Bytes {
	b, t, hp, n, g, _, q := s.dims()
	h, p := float64(max(s.Heads, 0)), float64(max(s.HeadDim, 0))
	var chunkStates float64
	if q > 0 {
		chunkStates = h * n * p / q
	}
	return Bytes(b*t*(g*n+h*n+hp+chunkStates+hp)*s.DType.Size() + b*t*h*4)
}

// deltaValueBlock is the value columns one CTA of the state recurrence
// carries: 64 (vLLM PR #25393: the kernel's grid is 32 for Qwen3-Next's
// 16 value heads of 128 on a rank of TP 2, two blocks a head).
const deltaValueBlock = 64

// deltaChain returns the least time of the state recurrence: each CTA
// carries one value head's d_k × 64 block of the state of one sequence
// through the chunks in order, so that with fewer CTAs than compute units
// its time is the chain of chunk steps, not the bandwidth. A chunk step
// is two dependent tiles, W·S (C × d_k · d_k × 64) then Kᵀ·V_new (d_k × C
// · C × 64), each priced as one CTA of the device's GEMM model: its
// per-CTA overhead (the tile's loads and stores) and a K step at the
// compute unit's share of the peak, no faster than the step floor. Waves
// of CTAs beyond the compute units run one after another.
func (p *Processor) deltaChain(s Scan) Seconds {
	if s.Decode() {
		return 0
	}
	st, _ := p.gemmSetupFor(GEMM{M: 64, K: 128, N: deltaValueBlock, A: s.DType, B: s.DType, C: s.DType})
	if st.cpu || !(st.cus > 0) || !(st.peak > 0) {
		return 0
	}
	perCU := st.peak * st.etaC / st.cus
	tile := func(tm, tn, k float64) float64 {
		step := math.Max(math.Max(2*tm*tn/perCU, (tm+tn)*st.edge), st.tau)
		return st.a + k*step
	}
	b, t, _, n, _, _, q := s.dims()
	if !(q > 0) || !(t > 0) {
		return 0
	}
	bv := math.Min(deltaValueBlock, float64(max(s.HeadDim, 1)))
	ctas := b * float64(max(s.Heads, 0)) * math.Ceil(float64(max(s.HeadDim, 0))/deltaValueBlock)
	waves := math.Ceil(ctas / st.cus)
	steps := math.Ceil(t / q)
	return Seconds(waves * steps * (tile(q, bv, n) + tile(n, bv, q)))
}
