package model

import "math"

// AttentionCost prices a fused or unfused attention kernel with the
// parameters of its phase (see AttentionParams). Unfused attention moves
// the scores through memory (Attention.Bytes counts them); its arithmetic
// is priced the same way.
//
// Prefill (FlashAttention-2/-3, TensorRT-LLM's context FMHA) runs CTAs of
// QueryTile queries of one head of one sequence, N = B·H·⌈Q/T⌉ of them,
// k = CTAsPerUnit of them resident on each of the S compute units at once,
// in W waves (W = ⌈N/(k·S)⌉ whole, or max(1, N/(k·S)) fractional). The
// tile and k are the kernel's: TensorRT-LLM's Ampere kernel takes 64
// queries a CTA and its 80 KiB of shared memory lets two CTAs share an
// A100 SM; its Hopper kernel is persistent, one CTA a unit, and takes
// 128 queries (two warpgroups of 64) a tile. The arithmetic of the pairs scored, P = B·H·pairs, is the
// two matrix products on the tensor cores and the softmax exponentials on
// the special-function units, which the tensor cores do not speed up (the
// reason an fp8 kernel is not twice as fast, and small head dims are slow):
//
//	t_c = W·wave_overhead + W·k·S/N · (4·D·P/(R_mm·η_c) + P/R_s)
//	t_m = bytes/(bandwidth·η_m)
//	t   = (t_c^p + t_m^p)^(1/p) + t0
//
// with η_c = compute_fp8 at an 8-bit peak. R_mm is the matrix peak, or
// less where the shared memory cannot feed the tensor cores at it
// (operandRate; OperandRows): R_mm = min(peak, B_smem·2·(D+D_v)/((D+D_v)·
// e·(1/R + 1/T))) for R rows to a shared-memory read of the key and value
// tile and T queries a CTA. Without a softmax rate the softmax counts 5
// FLOPs per score at R_mm.
//
// Decode (TensorRT-LLM's XQA and masked MHA, FlashDecoding) streams the KV
// cache. A grouped kernel gives one CTA to each sequence's KV head and
// its query group of g = H/H_kv heads (g ≤ decode_max_group); otherwise
// one CTA per sequence and query head. With few CTAs the KV length is
// split s ways so that the CTAs fill the compute units, s = min(⌈L/L_s⌉,
// max(1, ⌊S/U⌋)) for U base CTAs, and the partial results are reduced.
// One CTA streams at most β, so few CTAs cannot saturate memory. The
// first CTA's fixed cost a is exposed; after it a compute unit's CTAs
// overlap their fixed costs and streams with the memory traffic:
//
//	N     = U·s;  W = max(1, N/S)
//	a     = a_g + g·a_q + g·(D/128)·a_d   grouped;  a_h + (D/128)·a_d per head
//	t_cta = (W−1)·a + W·2·(L/s)·D·e_kv/β
//	t     = t0 + a + ((max(t_m, t_c))^p + t_cta^p)^(1/p) + [s > 1]·t_r
//
// The grouped and the per-head kernels are different kernels, and so are
// those of an 8-bit KV cache: each has its own β (decode_cta_bandwidth,
// decode_head_bandwidth and their _kv8 variants) and t0 (decode_launch,
// decode_head_launch, decode_launch_kv8); the grouped kernel at an 8-bit
// cache its own a_g and a_q. On H100 (aiconfigurator, TensorRT-LLM
// 1.3.0rc20, batch 2048, 32 query and 8 KV heads, KV length 2) the
// grouped kernel takes 595 µs with a bf16 cache and 183 µs with fp8, while
// the per-head kernel (32/32) takes the same time with either cache.
//
// Either phase's time is then multiplied by exp(residual) of its table and
// is never less than the plain roofline F/peak, bytes/bandwidth.
func (p *Processor) AttentionCost(a Attention) Cost {
	p = p.forType(a.DType, false)
	d, peak, _ := p.supportedPeak(a.DType)
	return p.attentionCost(a, d, peak, nil)
}

// CappedAttentionCost is CappedMatrix(AttentionCost(a)), the peak looked up
// once: the cost of an attention kernel priced anew (a decode step's, at
// every context) as a caller of both would have it.
func (p *Processor) CappedAttentionCost(a Attention) Cost {
	p = p.forType(a.DType, false)
	d, peak, ok := p.supportedPeak(a.DType)
	return p.capped(p.attentionCost(a, d, peak, nil), peak, ok, p.PowerModel.Held)
}

// CappedAttentionCosts sets costs[i] to CappedAttentionCost(a) with a's
// KV length kv[i] (costs is as long as kv): a decode step's attention at
// the contexts of a generation, the peak looked up once.
func (p *Processor) CappedAttentionCosts(a Attention, kv []int, costs []Cost) {
	p = p.forType(a.DType, false)
	d, peak, ok := p.supportedPeak(a.DType)
	var memo residualMemo
	for i, l := range kv {
		a.KVLen = l
		costs[i] = p.capped(p.attentionCost(a, d, peak, &memo), peak, ok, p.PowerModel.Held)
	}
}

// supportedPeak returns Supported(d) and Peak of it, looking the peak up
// once when d has its own.
func (p *Processor) supportedPeak(d DType) (DType, FLOPRate, bool) {
	if r, ok := p.Peak(d); ok {
		return d.Peak(), r, true
	}
	s, _ := p.Supported(d)
	r, ok := p.Peak(s)
	return s, r, ok
}

// attentionCost is AttentionCost on d, the supported type of a.DType,
// whose peak is peak; its residual table looked up through memo (nil
// for none).
func (p *Processor) attentionCost(a Attention, d DType, peak FLOPRate, memo *residualMemo) Cost {
	e := &p.Eff.Attention
	mla := IsMLA(a) && p.Eff.MLA.Source != ""
	if mla {
		e = &p.Eff.MLA
	}
	c := Cost{FLOPs: a.FLOPs(), Bytes: a.Bytes(), DType: d}
	pk, bw := nonNeg(float64(peak)), nonNeg(float64(p.Bandwidth))
	decode := IsDecode(a)
	var tc, tm, t, t0 float64
	switch {
	case decode && a.Latent && mla:
		tc, tm, t, t0 = p.mlaDecode(a, e, pk, bw)
	case decode && a.Latent:
		tc, tm, t, t0 = p.latentDecode(a, e, pk, bw)
	case decode:
		tc, tm, t, t0 = p.decodeAttention(a, c.FLOPs, c.Bytes, e, pk, bw)
	case e.Rates != nil && !mla:
		// A kernel priced from its measured throughput (FlashRates): no
		// residual table, which belongs to the calibrated kernel.
		tc, tm, t, t0, c.FLOPs = p.flashPrefill(a, e.Rates, e, bw)
		c.settle(t, t0, tc, tm, pk, bw)
		return c
	default:
		// The MLA context kernel with an 8-bit cache quantises what it
		// writes: its own fraction (compute_fp8), as an 8-bit peak has.
		eight := d.Size() < 2 || (mla && a.KVDType.Size() > 0 && a.KVDType.Size() < 2)
		tc, tm, t, t0 = p.prefillAttention(a, e, eight, pk, bw)
	}
	// At is 0 (a factor of 1) without a table; the loader has checked
	// the tables once (Residual.Check), so none is scanned here.
	x, y, z := AttentionAxes(a)
	if mla {
		x, y, z = MLAAxes(a)
	}
	if decode {
		t *= math.Exp(e.DecodeResidual.at(x, y, z, memo))
	} else {
		t *= math.Exp(e.Residual.at(x, y, z, memo))
	}
	c.settle(t, t0, tc, tm, pk, bw)
	return c
}

// waves returns the waves n CTAs take on the device: whole or fractional
// (mode), and 0 when the device has no compute-unit count.
func (p *Processor) waves(n float64, mode string) float64 {
	cus := float64(p.ComputeUnits)
	if !(cus > 0) || !(n > 0) || math.IsInf(n, 0) {
		return 0
	}
	if mode == WavesFractional {
		return math.Max(1, n/cus)
	}
	return math.Ceil(n / cus)
}

// prefillAttention returns the compute, memory and total time of a
// prefill attention (see AttentionCost) and its launch cost.
func (p *Processor) prefillAttention(a Attention, e *AttentionParams, eight bool, pk, bw float64) (tc, tm, t, t0 float64) {
	ec := e.Compute
	if eight && e.Compute8 > 0 {
		ec = e.Compute8
	}
	t0 = nonNeg(float64(e.Launch))
	if !(e.Launch > 0) {
		t0 = nonNeg(float64(p.Launch))
	}
	scores := a.Pairs() * float64(max(a.Batch, 0)) * float64(max(a.Heads, 0))
	if pk > 0 {
		tile := e.QueryTile
		if tile <= 0 {
			tile = 128
		}
		mk := p.operandRate(a, e, tile, pk)
		if rs := nonNeg(float64(e.SoftmaxRate)); rs > 0 {
			tc = 2*float64(a.HeadDim+a.ValueDim())*scores/(mk*clampEff(ec)) + scores/rs
		} else {
			tc = float64(a.FLOPs()) / (mk * clampEff(ec))
		}
		q := float64(a.QLen) / float64(tile)
		ctas := float64(a.Batch) * float64(a.Heads) * math.Ceil(q)
		// A CTA's time is a full tile's share of the work (the whole
		// prompt's under one tile), not the mean CTA's: a last tile of a
		// few queries does not shorten the tiles beside it. full counts
		// the work in full tiles; it is ctas when the query length is a
		// multiple of the tile or within one (every measured shape).
		full := float64(a.Batch) * float64(a.Heads) * math.Max(1, q)
		k := float64(max(e.CTAsPerUnit, 1))
		if w := p.waves(ctas/k, e.Waves); w > 0 {
			// Whole waves each last their longest CTA; a persistent
			// kernel packs the short tiles, and runs at least one full
			// tile's time.
			if e.Waves == WavesFractional {
				tc = w*nonNeg(float64(e.WaveOverhead)) + math.Max(1, full/(k*float64(p.ComputeUnits)))*k*float64(p.ComputeUnits)/full*tc
			} else {
				tc = w*nonNeg(float64(e.WaveOverhead)) + w*k*float64(p.ComputeUnits)/full*tc
			}
		}
	}
	if bw > 0 {
		tm = float64(a.Bytes()) / (bw * clampEff(e.Memory))
	}
	return tc, tm, SoftMax(tc, tm, nonNeg(e.Overlap)) + t0, t0
}

// operandRate returns the rate at which a prefill CTA's matrix products
// can run, in FLOP/s: the matrix peak pk, or less where the shared memory
// cannot feed the tensor cores at it. Each key and value element a CTA
// stages is written to shared memory once for its tile of T queries and
// read once for every R = OperandRows rows that share a read: a warp's 16
// in TensorRT-LLM's Ampere and Ada kernels (mma.sync takes both operands
// from registers, and each of the four warps of a 64-query CTA loads the
// whole key and value tile with ldmatrix), a warpgroup's 64 in its Hopper
// kernels (wgmma reads the key and value tile from shared memory once for
// a warpgroup's 64 rows). A score then moves (D + D_v)·e·(1/R + 1/T)
// bytes of shared memory for its 2·(D + D_v) FLOPs. The queries' own
// reads are not counted: the Ampere kernel keeps them in registers; on
// Hopper they add D·e per query per key tile, a sixth of the rest at head
// size 128, where the shared memory is far from the bound.
func (p *Processor) operandRate(a Attention, e *AttentionParams, tile int, pk float64) float64 {
	sb := nonNeg(float64(p.SharedBandwidth))
	if e.OperandRows <= 0 || !(sb > 0) {
		return pk
	}
	el := a.KVDType.Size()
	if !(el > 0) {
		el = a.DType.Size()
	}
	d := float64(a.HeadDim + a.ValueDim())
	bytes := d * el * (1/float64(e.OperandRows) + 1/float64(tile))
	if !(bytes > 0) {
		return pk
	}
	return math.Min(pk, sb*2*d/bytes)
}

// decodeAttention returns the compute, memory and total time of a decode
// attention (see AttentionCost) and its launch cost; flops and bytes are
// a's (a.FLOPs(), a.Bytes()), computed once by the caller.
func (p *Processor) decodeAttention(a Attention, flops FLOPs, bytes Bytes, e *AttentionParams, pk, bw float64) (tc, tm, t, t0 float64) {
	pick := func(dec, pre float64) float64 {
		if dec > 0 {
			return dec
		}
		return pre
	}
	ec, em := pick(e.DecodeCompute, e.Compute), pick(e.DecodeMemory, e.Memory)
	ov := nonNeg(pick(e.DecodeOverlap, e.Overlap))
	t0 = pick(float64(e.DecodeLaunch), float64(e.Launch))
	if !(t0 > 0) {
		t0 = float64(p.Launch)
	}
	t0 = nonNeg(t0)
	if pk > 0 {
		tc = float64(flops) / (pk * clampEff(ec))
	}
	if bw > 0 {
		tm = float64(bytes) / (bw * clampEff(em))
	}
	b, h, hkv := float64(max(a.Batch, 0)), float64(max(a.Heads, 0)), float64(max(a.KVHeads, 1))
	cus := float64(p.ComputeUnits)
	beta := nonNeg(float64(e.DecodeCTABandwidth))
	if beta == 0 {
		// The coarse model: one CTA per sequence and query head, a
		// fixed cost per wave, compute spread over the waves.
		if w := p.waves(b*h, e.Waves); w > 0 && tc > 0 {
			tc = w*nonNeg(float64(e.DecodeWaveOverhead)) + w*cus/(b*h)*tc
		}
		return tc, tm, SoftMax(tc, tm, ov) + t0, t0
	}
	g := math.Ceil(h / hkv)
	grouped := g > 1 && (e.DecodeMaxGroup <= 0 || g <= float64(e.DecodeMaxGroup))
	sz := a.KVDType.Size()
	kv8 := sz > 0 && sz < 2
	// or8 picks the 8-bit-cache value when the cache is 8-bit and it is set.
	or8 := func(v8, v float64) float64 {
		if kv8 && v8 > 0 {
			return v8
		}
		return v
	}
	units, fixed := b*h, nonNeg(float64(e.DecodeHeadOverhead))
	beta = or8(nonNeg(float64(e.DecodeHeadBandwidth8)), pick(nonNeg(float64(e.DecodeHeadBandwidth)), beta))
	heads := 1.0 // query heads per CTA
	if grouped {
		units, heads = b*hkv, g
		fixed = or8(nonNeg(float64(e.DecodeCTAOverhead8)), nonNeg(float64(e.DecodeCTAOverhead))) + g*or8(nonNeg(float64(e.DecodeGroupOverhead8)), nonNeg(float64(e.DecodeGroupOverhead)))
		beta = or8(nonNeg(float64(e.DecodeCTABandwidth8)), nonNeg(float64(e.DecodeCTABandwidth)))
	} else if fixed == 0 {
		fixed = nonNeg(float64(e.DecodeCTAOverhead)) + nonNeg(float64(e.DecodeGroupOverhead))
	}
	fixed += heads * float64(max(a.HeadDim, 0)) / 128 * nonNeg(float64(e.DecodeDimOverhead))
	if !(units > 0) {
		return tc, tm, math.Max(tc, tm) + t0, t0
	}
	kv := float64(max(a.KeysRead(), 0))
	split := 1.0
	if e.DecodeSplitTokens > 0 && cus > 0 {
		split = math.Max(1, math.Min(math.Ceil(kv/float64(e.DecodeSplitTokens)), math.Floor(cus/units)))
	}
	ctas := units * split
	w := 1.0
	if cus > 0 {
		w = math.Max(1, ctas/cus)
	}
	if grouped && kv8 && e.DecodeLaunch8 > 0 {
		t0 = float64(e.DecodeLaunch8)
	} else if !grouped && e.DecodeHeadLaunch > 0 {
		t0 = float64(e.DecodeHeadLaunch)
	}
	// The first CTA's fixed cost is exposed; after it, a compute unit's
	// CTAs overlap their fixed costs and streams with the memory traffic.
	tcta := (w-1)*fixed + w*kv/split*float64(a.KVWidth())*a.KVDType.Size()/beta
	t = t0 + fixed + SoftMax(math.Max(tm, tc), tcta, ov)
	if split > 1 {
		t += nonNeg(float64(e.DecodeSplitCost))
	}
	return tc, tm, t, t0
}

// AttentionAxes returns the coordinates of a in its phase's residual
// table: (batch, query length, query heads) in prefill, (batch, KV
// length, KV heads) in decode, each at least 1.
func AttentionAxes(a Attention) (x, y, z float64) {
	x = float64(max(a.Batch, 1))
	if IsDecode(a) {
		return x, float64(max(a.KeysRead(), 1)), float64(max(a.KVHeads, 1))
	}
	return x, float64(max(a.QLen, 1)), float64(max(a.Heads, 1))
}
