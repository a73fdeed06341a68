package model

import "math"

// IsMLA reports whether a is a multi-head latent attention kernel: the
// absorbed decode over the cached latent (Latent), or a prefill whose
// value heads are narrower than its query and key heads (DeepSeek-V2/V3
// attend at width 192 = 128 + 64 rope and produce values of width 128),
// which TensorRT-LLM and FlashAttention run as kernels of their own.
func IsMLA(a Attention) bool {
	return a.Latent || (a.VDim > 0 && a.VDim != a.HeadDim)
}

// MLAAxes returns the coordinates of an MLA kernel in its phase's
// residual table: (batch, query length, query heads) in prefill, (batch,
// KV length, query heads) in decode (the latent is one KV head, so the
// query heads are what varies), each at least 1.
func MLAAxes(a Attention) (x, y, z float64) {
	x = float64(max(a.Batch, 1))
	if IsDecode(a) {
		return x, float64(max(a.KeysRead(), 1)), float64(max(a.Heads, 1))
	}
	return x, float64(max(a.QLen, 1)), float64(max(a.Heads, 1))
}

// mlaDecode prices the absorbed MLA decode with the MLA table's decode
// parameters (AttentionParams.Decode*, fitted to TensorRT-LLM's and
// FlashMLA's kernels). A CTA takes a block of h_b = decode_max_group
// query heads (default 64, FlashMLA's block) of one sequence and a split
// of its KV; for each key it loads the latent, D elements of e bytes,
// and scores it against its heads, 2·h_b·(D + D_v) FLOPs at its share of
// the peak. With U = B·⌈H/h_b⌉ blocks the KV of L keys is split s ways
// to fill the S compute units, s = min(⌈L/L_s⌉, max(1, ⌊S/U⌋)):
//
//	N     = U·s;  W = max(1, N/S)
//	t_key = D·e/β + 2·min(H, h_b)·(D + D_v)/(η_c·peak/S)
//	t_cta = (W−1)·a + W·(L/s)·t_key
//	t     = t0 + a + ((max(t_m, t_c))^p + t_cta^p)^(1/p) + [s > 1]·t_r
//
// where t_c and t_m are the whole kernel's arithmetic and traffic at η_c
// and η_m of the peak and the bandwidth. Without a per-CTA bandwidth β
// it is the plain roofline of latentDecode.
func (p *Processor) mlaDecode(a Attention, e *AttentionParams, pk, bw float64) (tc, tm, t, t0 float64) {
	beta := nonNeg(float64(e.DecodeCTABandwidth))
	if beta == 0 {
		return p.latentDecode(a, e, pk, bw)
	}
	t0 = nonNeg(float64(e.DecodeLaunch))
	ec := e.DecodeCompute
	if sz := a.KVDType.Size(); sz > 0 && sz < 2 && e.DecodeCompute8 > 0 {
		ec = e.DecodeCompute8
	}
	ec = clampEff(ec)
	if pk > 0 {
		tc = float64(a.FLOPs()) / (pk * ec)
	}
	if bw > 0 {
		tm = float64(a.Bytes()) / (bw * clampEff(e.DecodeMemory))
	}
	h, b := float64(max(a.Heads, 1)), float64(max(a.Batch, 0))
	hb := float64(e.DecodeMaxGroup)
	if !(hb > 0) {
		hb = 64
	}
	hb = math.Min(hb, h)
	units := b * math.Ceil(h/hb)
	cus := float64(p.ComputeUnits)
	if !(units > 0) || !(cus > 0) {
		return tc, tm, t0 + math.Max(tc, tm), t0
	}
	kv := float64(max(a.KeysRead(), 0))
	split := 1.0
	if e.DecodeSplitTokens > 0 {
		split = math.Max(1, math.Min(math.Ceil(kv/float64(e.DecodeSplitTokens)), math.Floor(cus/units)))
	}
	w := math.Max(1, units*split/cus)
	d := float64(max(a.HeadDim, 0))
	key := d * a.KVDType.Size() / beta
	if pk > 0 {
		key += 2 * hb * (d + float64(a.ValueDim())) / (ec * pk / cus)
	}
	fixed := nonNeg(float64(e.DecodeCTAOverhead))
	tcta := (w-1)*fixed + w*kv/split*key
	t = t0 + fixed + SoftMax(math.Max(tm, tc), tcta, nonNeg(e.DecodeOverlap))
	if split > 1 {
		t += nonNeg(float64(e.DecodeSplitCost))
	}
	return tc, tm, t, t0
}

// latentDecode returns the compute, memory and total time of a decode
// attention over a latent cache (MLA with the up-projections absorbed, as
// FlashMLA runs it) and its launch cost. FlashMLA gives each CTA a block
// of 64 query heads of one sequence and a split of its KV, reading each
// latent once for all the heads of the block (DeepSeek's FlashMLA
// README: up to 3000 GB/s memory-bound and 660 TFLOP/s compute-bound on
// H800), so the kernel is a roofline of the whole latent read against
// the heads' products — which the 128 heads of DeepSeek-V3 make close to
// the ridge point — with the decode efficiencies and launch:
//
//	t = t0 + (t_c^p + t_m^p)^(1/p),  t_c = FLOPs/(peak·η_c),  t_m = bytes/(bandwidth·η_m)
func (p *Processor) latentDecode(a Attention, e *AttentionParams, pk, bw float64) (tc, tm, t, t0 float64) {
	pick := func(dec, pre float64) float64 {
		if dec > 0 {
			return dec
		}
		return pre
	}
	t0 = pick(float64(e.DecodeLaunch), float64(e.Launch))
	if !(t0 > 0) {
		t0 = float64(p.Launch)
	}
	t0 = nonNeg(t0)
	if pk > 0 {
		tc = float64(a.FLOPs()) / (pk * clampEff(pick(e.DecodeCompute, e.Compute)))
	}
	if bw > 0 {
		tm = float64(a.Bytes()) / (bw * clampEff(pick(e.DecodeMemory, e.Memory)))
	}
	return tc, tm, t0 + SoftMax(tc, tm, nonNeg(pick(e.DecodeOverlap, e.Overlap))), t0
}
