package model

import (
	"fmt"
	"math"
)

// A Processor is what the cost model needs to know of one device: its
// peaks, its memory, its compute units, and the efficiencies that turn a
// roofline into a predictor. hardware.Device builds one.
type Processor struct {
	Name         string
	ComputeUnits int                // SMs, CUs, cores
	Matrix       map[DType]FLOPRate // dense matrix (tensor-core) peaks
	Vector       map[DType]FLOPRate // vector (CUDA-core) peaks, where they differ
	Bandwidth    ByteRate           // memory bandwidth
	L2           Bytes              // last-level on-chip cache
	Launch       Seconds            // kernel launch overhead
	Eff          Efficiency
	// CPU selects the CPU rule of the GEMM model (gemm.go): C is computed
	// in 64×64 blocks spread over the cores, rows and columns are not
	// padded to a tensor-core granule and K is never split.
	CPU bool
	// PowerModel is the device's power model (power.go); zero for none.
	PowerModel PowerParams
}

// Efficiency holds the achievable fractions and overheads of a device:
// defaults from measured figures until the device is calibrated, fitted
// parameters after.
type Efficiency struct {
	// GEMM holds the GEMM model's parameters per compute type. A type
	// without an entry uses Default.
	GEMM map[DType]GEMMParams `toml:"gemm"`
	// Memory is the streaming (copy/triad) bandwidth model.
	Memory MemoryParams `toml:"memory"`
	// Attention is the fused attention kernel's model.
	Attention AttentionParams `toml:"attention"`
	// MLA is the model of the multi-head latent attention kernels
	// (DeepSeek's prefill at query/key width 192 and value width 128, and
	// the absorbed decode over the latent; see IsMLA and mla.go), where
	// they are fitted apart from the other attention kernels; a table
	// without a source means the attention table prices them.
	MLA AttentionParams `toml:"mla"`
	// MoE is the grouped-GEMM model of the routed experts (see
	// MoEParams); a table without a source means the GEMM model.
	MoE MoEParams `toml:"moe"`
	// Vector is the achievable fraction of the vector peak for
	// elementwise arithmetic.
	Vector float64 `toml:"vector"`
}

// GEMMParams are the parameters of the GEMM cost model (see GEMMTime).
// The TOML keys are those of an [efficiency.gemm.<dtype>] table.
type GEMMParams struct {
	Compute     float64 `toml:"compute"`          // η_c: fraction of the matrix peak a full tile sustains
	Memory      float64 `toml:"memory"`           // η_m: fraction of the bandwidth GEMM traffic sustains
	Launch      Seconds `toml:"launch"`           // t0: fixed cost per GEMM launch
	CTAOverhead Seconds `toml:"cta_overhead"`     // a: fixed cost per CTA (prologue, epilogue)
	StepFloor   Seconds `toml:"k_step_floor"`     // τ: latency floor of one K step of a tile
	SplitK      Seconds `toml:"split_k_cost"`     // t_split: cost of a split-K reduction
	Overlap     float64 `toml:"overlap_exponent"` // p: soft maximum exponent; 0 means max
	L2Factor    float64 `toml:"l2_factor"`        // l2f: L2 bandwidth as a multiple of HBM, for activations that fit
	QuantBytes  float64 `toml:"quant_bytes"`      // q: bytes per activation element of an fp8 quantisation pass
	Waves       string  `toml:"waves,omitempty"`  // "whole" (⌈CTAs/S⌉, default) or "fractional" (max(1, CTAs/S)); see gemm.go
	// OperandLoad (c_e) is the time per operand element a CTA loads per K
	// step (T'm+T'n elements); 0 for none. See gemm.go.
	OperandLoad Seconds `toml:"operand_load,omitempty"`
	// Residual is a fitted correction over log-shape space; nil for none.
	Residual  *Residual `toml:"residual,omitempty"`
	Source    string    `toml:"source"`               // where these came from
	Points    int       `toml:"points,omitempty"`     // measurements fitted, when fitted
	ErrMedian float64   `toml:"err_median,omitempty"` // held-out median |relative error|
	ErrP90    float64   `toml:"err_p90,omitempty"`    // held-out p90 |relative error|
}

// MemoryParams model streaming bandwidth against transfer size:
// efficiency η·b/(b+Half), so that small copies see their latency.
type MemoryParams struct {
	Efficiency float64 `toml:"efficiency"`       // large-transfer fraction of the bandwidth
	Half       Bytes   `toml:"half_size"`        // size at which half of Efficiency is reached; 0 for flat
	Launch     Seconds `toml:"launch,omitempty"` // fixed cost of a streaming kernel; 0 means the device's launch overhead
	Points     int     `toml:"points,omitempty"`
	Source     string  `toml:"source"`
	ErrMedian  float64 `toml:"err_median,omitempty"`
	ErrP90     float64 `toml:"err_p90,omitempty"`
}

// AttentionParams model an attention kernel, with one set of parameters
// per phase. Prefill uses the plain fields, decode (see IsDecode) the
// Decode* fields. Unset efficiencies mean 1,
// an unset launch the device's launch cost, an unset overlap exponent a
// plain max. The models are described at AttentionCost.
type AttentionParams struct {
	Compute      float64  `toml:"compute"`                    // η_c: fraction of the matrix peak (16-bit and wider)
	Compute8     float64  `toml:"compute_fp8,omitempty"`      // η_c when the kernel runs at an 8-bit peak (in the MLA table: the context kernel with an 8-bit cache); 0 means Compute
	SoftmaxRate  FLOPRate `toml:"softmax_rate,omitempty"`     // R_s: softmax scores per second (exp on the special-function units); 0 for none
	Memory       float64  `toml:"memory"`                     // η_m: fraction of the bandwidth
	Launch       Seconds  `toml:"launch"`                     // t0
	Overlap      float64  `toml:"overlap_exponent,omitempty"` // soft-maximum exponent p; 0 means max
	WaveOverhead Seconds  `toml:"wave_overhead,omitempty"`    // fixed cost per wave of CTAs
	Waves        string   `toml:"waves,omitempty"`            // "whole" (default) or "fractional"
	QueryTile    int      `toml:"query_tile,omitempty"`       // queries per prefill CTA; 0 means 128

	DecodeCompute float64 `toml:"decode_compute,omitempty"`
	DecodeMemory  float64 `toml:"decode_memory,omitempty"`
	DecodeLaunch  Seconds `toml:"decode_launch,omitempty"`
	DecodeOverlap float64 `toml:"decode_overlap_exponent,omitempty"`
	// DecodeWaveOverhead is the per-wave cost of the coarse decode model
	// used when DecodeCTABandwidth is unset (one CTA per sequence and
	// query head, no KV split).
	DecodeWaveOverhead Seconds `toml:"decode_wave_overhead,omitempty"`
	// The split-KV decode model (set DecodeCTABandwidth to use it).
	DecodeCTABandwidth  ByteRate `toml:"decode_cta_bandwidth,omitempty"`  // β: KV bytes per second one CTA streams
	DecodeCTAOverhead   Seconds  `toml:"decode_cta_overhead,omitempty"`   // a_g: fixed cost of a grouped CTA (one KV head's query group)
	DecodeGroupOverhead Seconds  `toml:"decode_group_overhead,omitempty"` // a_q: added cost per query head in a grouped CTA
	DecodeHeadOverhead  Seconds  `toml:"decode_head_overhead,omitempty"`  // a_h: fixed cost of a per-head CTA; 0 means a_g
	DecodeMaxGroup      int      `toml:"decode_max_group,omitempty"`      // largest query group a grouped CTA takes; 0 means any
	DecodeSplitTokens   int      `toml:"decode_split_tokens,omitempty"`   // fewest KV tokens per split; 0 means no split
	DecodeSplitCost     Seconds  `toml:"decode_split_cost,omitempty"`     // t_r: reduction of split partial results
	// The per-head kernel streams at its own rate (0 means β), and a KV
	// cache of 8-bit elements runs other kernels (on Hopper, TensorRT-LLM's
	// grouped XQA kernel for an fp8 cache is a tensor-core kernel with
	// other fixed costs; the per-head kernel converts each element, which
	// costs more per byte): their own rates and grouped-CTA overheads,
	// each 0 meaning the 16-bit value.
	DecodeHeadBandwidth  ByteRate `toml:"decode_head_bandwidth,omitempty"`     // β_h: KV bytes per second one per-head CTA streams
	DecodeCTABandwidth8  ByteRate `toml:"decode_cta_bandwidth_kv8,omitempty"`  // β at an 8-bit KV cache
	DecodeHeadBandwidth8 ByteRate `toml:"decode_head_bandwidth_kv8,omitempty"` // β_h at an 8-bit KV cache
	DecodeCTAOverhead8   Seconds  `toml:"decode_cta_overhead_kv8,omitempty"`   // a_g at an 8-bit KV cache
	DecodeGroupOverhead8 Seconds  `toml:"decode_group_overhead_kv8,omitempty"` // a_q at an 8-bit KV cache
	DecodeDimOverhead    Seconds  `toml:"decode_dim_overhead,omitempty"`       // a_d: added cost of a CTA per query head per 128 head-dim elements (Q load, output)
	DecodeLaunch8        Seconds  `toml:"decode_launch_kv8,omitempty"`         // t0 of the grouped kernel at an 8-bit KV cache
	DecodeHeadLaunch     Seconds  `toml:"decode_head_launch,omitempty"`        // t0 of the per-head kernel; 0 means decode_launch
	DecodeCompute8       float64  `toml:"decode_compute_fp8,omitempty"`        // η_c of the MLA decode at an 8-bit KV cache; 0 means decode_compute

	// Residual tables (see Residual) correct the times over shape space:
	// prefill over (batch, query length, query heads), decode over
	// (batch, KV length, KV heads); nil for none.
	Residual       *Residual `toml:"residual,omitempty"`
	DecodeResidual *Residual `toml:"decode_residual,omitempty"`

	Source    string  `toml:"source"`
	Points    int     `toml:"points,omitempty"`
	ErrMedian float64 `toml:"err_median,omitempty"`
	ErrP90    float64 `toml:"err_p90,omitempty"`
}

// DecodeQueries is the most queries per sequence an attention kernel may
// have and still be priced as decode.
const DecodeQueries = 16

// IsDecode reports whether a is priced as decode: at most DecodeQueries
// new queries per sequence against a KV cache longer than they are. A
// short prompt (its queries are all its keys, KVLen = QLen) runs the
// prefill (context) kernel: aiconfigurator's TensorRT-LLM context rows of
// 1 and 16 tokens take 13.5 µs at batch 1 on H100 where the generation
// kernel takes 8.7 µs, and follow the prefill model.
func IsDecode(a Attention) bool { return a.QLen <= DecodeQueries && a.KVLen > a.QLen }

// Bound says what limits an op.
type Bound uint8

const (
	ComputeBound Bound = iota
	MemoryBound
	LatencyBound // launch overhead or a latency floor dominates
	NetworkBound
)

func (b Bound) String() string {
	return [...]string{"compute", "memory", "latency", "network"}[b]
}

// Cost is the predicted cost of one kernel launch.
type Cost struct {
	FLOPs   FLOPs
	Bytes   Bytes
	Compute Seconds // arithmetic at the attainable rate
	Memory  Seconds // traffic at the attainable bandwidth
	Time    Seconds // the prediction: compute and memory combined, plus overheads
	Bound   Bound
	DType   DType // the type whose peak the op ran at
	// Power is the device's draw while the op runs (Processor.Capped);
	// 0 until priced with a power model.
	Power Watts
}

// Intensity returns the cost's arithmetic intensity.
func (c Cost) Intensity() Intensity { return IntensityOf(c.FLOPs, c.Bytes) }

// Peak returns the matrix peak for d, falling back to the vector peak, and
// reports whether the device has either.
func (p *Processor) Peak(d DType) (FLOPRate, bool) {
	d = d.Peak()
	if r, ok := p.Matrix[d]; ok && r > 0 {
		return r, true
	}
	if r, ok := p.Vector[d]; ok && r > 0 {
		return r, true
	}
	return 0, false
}

// fallback lists, for each type, the types a device without its peak
// computes it in instead.
var fallback = map[DType][]DType{
	FP4:     {FP8, FP16, BF16},
	INT4:    {INT8, FP8, FP16, BF16},
	INT8:    {FP8, FP16, BF16},
	FP8:     {FP16, BF16},
	FP8E5M2: {FP16, BF16},
	BF16:    {FP16, FP32},
	FP16:    {BF16, FP32},
	TF32:    {FP32},
	FP32:    {TF32, FP64},
	FP64:    {FP32},
}

// Supported returns d if the device has a peak for it, else the first
// fallback type it has, with ok false. It returns Invalid when none fits.
func (p *Processor) Supported(d DType) (DType, bool) {
	if _, ok := p.Peak(d); ok {
		return d.Peak(), true
	}
	for _, f := range fallback[d] {
		if _, ok := p.Peak(f); ok {
			return f, false
		}
	}
	return Invalid, false
}

// Validate checks that p can cost ops: positive finite bandwidth and at
// least one peak.
func (p *Processor) Validate() error {
	if !(p.Bandwidth > 0) || math.IsInf(float64(p.Bandwidth), 0) {
		return fmt.Errorf("model: processor %q has no memory bandwidth", p.Name)
	}
	if len(p.Matrix)+len(p.Vector) == 0 {
		return fmt.Errorf("model: processor %q has no compute peak", p.Name)
	}
	return nil
}

// gemmParams returns the GEMM parameters for compute type d.
func (p *Processor) gemmParams(d DType) GEMMParams {
	if g, ok := p.Eff.GEMM[d]; ok {
		return g
	}
	for _, f := range fallback[d] {
		if g, ok := p.Eff.GEMM[f]; ok {
			return g
		}
	}
	return GEMMParams{Compute: 1, Memory: 1, Launch: p.Launch}
}

// memEff returns the streaming efficiency for a transfer of b bytes.
func (p *Processor) memEff(b Bytes) float64 {
	m := p.Eff.Memory
	e := m.Efficiency
	if e <= 0 {
		e = 1
	}
	if m.Half > 0 {
		e *= float64(b) / float64(b+m.Half)
	}
	return e
}

// Cost prices one launch of k. Collectives are priced by the simulator,
// which knows the network; here they cost nothing.
func (p *Processor) Cost(k Kernel) Cost {
	switch k := k.(type) {
	case GEMM:
		return p.GEMMCost(k)
	case Attention:
		return p.AttentionCost(k)
	case GroupedGEMM:
		return p.GroupedGEMMCost(k)
	case Scan:
		return p.ScanCost(k)
	case Collective:
		return Cost{Bytes: k.Bytes(), Bound: NetworkBound}
	case Elementwise:
		if k.Kind == KindMoEFinalize {
			return p.FinalizeCost(k)
		}
		return p.StreamCost(k.FLOPs(), k.Bytes(), FP32)
	default:
		return p.StreamCost(k.FLOPs(), k.Bytes(), FP32)
	}
}

// roofline combines compute and memory time with launch overhead and
// names the bound.
func roofline(f FLOPs, b Bytes, peak FLOPRate, bw ByteRate, launch Seconds, d DType) Cost {
	c := Cost{FLOPs: f, Bytes: b, DType: d}
	if f > 0 && peak > 0 {
		c.Compute = f.At(peak)
	}
	if b > 0 && bw > 0 {
		c.Memory = b.At(bw)
	}
	c.Time = Seconds(math.Max(float64(c.Compute), float64(c.Memory))) + launch
	switch {
	case launch > c.Compute && launch > c.Memory:
		c.Bound = LatencyBound
	case c.Compute >= c.Memory:
		c.Bound = ComputeBound
	default:
		c.Bound = MemoryBound
	}
	return c
}

// StreamCost prices a memory-bound pass doing f of arithmetic in type d
// over b bytes: norms, activations, copies.
func (p *Processor) StreamCost(f FLOPs, b Bytes, d DType) Cost {
	peak, _ := p.Peak(d)
	if v, ok := p.Vector[d]; ok {
		peak = v
	}
	ev := p.Eff.Vector
	if ev <= 0 {
		ev = 1
	}
	launch := p.Eff.Memory.Launch
	if !(launch > 0) {
		launch = p.Launch
	}
	return roofline(f, b, FLOPRate(float64(peak)*ev), ByteRate(float64(p.Bandwidth)*p.memEff(b)), launch, d)
}

// A Link is one network tier as the alpha-beta model sees it.
type Link struct {
	Bandwidth  ByteRate // per device, per direction
	Latency    Seconds  // per ring step
	Efficiency float64  // achievable fraction of Bandwidth; 0 means 1
	// Base is the fixed cost of one collective (launch and
	// synchronisation), paid once whatever the steps; 0 for none.
	Base Seconds
	// OneShotLatency and OneShotEfficiency model a one-shot all-reduce
	// kernel (TensorRT-LLM's custom all-reduce: each rank reads every
	// other rank's buffer over the link and reduces locally); 0 for
	// none. An all-reduce costs the cheaper of it and the ring.
	OneShotLatency    Seconds
	OneShotEfficiency float64
	// HalfSize and Slope make the ring's efficiency rise with the
	// message size S, as NCCL's does while it moves from its LL to LL128
	// to Simple protocol and fills its channels:
	// Efficiency/(1 + (HalfSize/S)^Slope). HalfSize 0 means a flat
	// Efficiency; Slope 0 means 1.
	HalfSize Bytes
	Slope    float64
}

// ringEfficiency returns l's ring efficiency for a message of s bytes.
func (l Link) ringEfficiency(s Bytes) float64 {
	e := l.Efficiency
	if e <= 0 {
		e = 1
	}
	if l.HalfSize > 0 && s > 0 {
		k := l.Slope
		if !(k > 0) {
			k = 1
		}
		e /= 1 + math.Pow(float64(l.HalfSize)/float64(s), k)
	}
	return e
}

// CollectiveTime prices c over l with the alpha-beta ring model,
// Base + Steps·Latency + Traffic/(Bandwidth·e(Size)), with e(S) the
// size-dependent efficiency of Link.HalfSize; an all-reduce over a link
// with a one-shot kernel costs at most OneShotTime.
func CollectiveTime(c Collective, l Link) Seconds {
	if c.Traffic() == 0 {
		return 0
	}
	e := l.ringEfficiency(c.Size)
	t := nonNeg(float64(l.Base)) + float64(c.Steps())*float64(l.Latency) + float64(c.Traffic().At(ByteRate(float64(l.Bandwidth)*e)))
	if c.Kind == AllReduce && l.OneShotLatency > 0 {
		t = math.Min(t, float64(OneShotTime(c, l)))
	}
	return Seconds(t)
}

// OneShotTime prices an all-reduce of c.Size bytes by a one-shot kernel
// over l: OneShotLatency + (p−1)·Size/(Bandwidth·OneShotEfficiency).
func OneShotTime(c Collective, l Link) Seconds {
	if c.Ranks <= 1 || c.Size <= 0 {
		return 0
	}
	e := l.OneShotEfficiency
	if e <= 0 {
		e = 1
	}
	return l.OneShotLatency + Bytes(float64(c.Ranks-1)*float64(c.Size)).At(ByteRate(float64(l.Bandwidth)*e))
}

// AttentionCost prices a fused or unfused attention kernel with the
// parameters of its phase (see AttentionParams). Unfused attention moves
// the scores through memory (Attention.Bytes counts them); its arithmetic
// is priced the same way.
//
// Prefill (FlashAttention-2/-3, TensorRT-LLM's context FMHA) runs CTAs of
// QueryTile queries of one head of one sequence, N = B·H·⌈Q/T⌉ of them,
// in W waves over the S compute units (W = ⌈N/S⌉ whole, or max(1, N/S)
// fractional). The arithmetic of the pairs scored, P = B·H·pairs, is the
// two matrix products on the tensor cores and the softmax exponentials on
// the special-function units, which the tensor cores do not speed up (the
// reason an fp8 kernel is not twice as fast, and small head dims are slow):
//
//	t_c = W·wave_overhead + W·S/N · (4·D·P/(peak·η_c) + P/R_s)
//	t_m = bytes/(bandwidth·η_m)
//	t   = (t_c^p + t_m^p)^(1/p) + t0
//
// with η_c = compute_fp8 at an 8-bit peak. Without a softmax rate the
// softmax counts 5 FLOPs per score at the matrix peak.
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
	d, peak, _ := p.supportedPeak(a.DType)
	return p.attentionCost(a, d, peak, nil)
}

// CappedAttentionCost is Capped(AttentionCost(a)), the peak looked up
// once: the cost of an attention kernel priced anew (a decode step's, at
// every context) as a caller of both would have it.
func (p *Processor) CappedAttentionCost(a Attention) Cost {
	d, peak, ok := p.supportedPeak(a.DType)
	return p.capped(p.attentionCost(a, d, peak, nil), peak, ok)
}

// CappedAttentionCosts sets costs[i] to CappedAttentionCost(a) with a's
// KV length kv[i] (costs is as long as kv): a decode step's attention at
// the contexts of a generation, the peak looked up once.
func (p *Processor) CappedAttentionCosts(a Attention, kv []int, costs []Cost) {
	d, peak, ok := p.supportedPeak(a.DType)
	var memo residualMemo
	for i, l := range kv {
		a.KVLen = l
		costs[i] = p.capped(p.attentionCost(a, d, peak, &memo), peak, ok)
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

// settle sets c's time to t, held at or above the roofline floor
// (c.FLOPs at the peak pk, c.Bytes at the bandwidth bw; the floor where t
// is not a finite number), its compute and memory parts to tc and tm,
// and its bound to whichever of the fixed cost t0, tc and tm is largest.
func (c *Cost) settle(t, t0, tc, tm, pk, bw float64) {
	floor := 0.0
	if pk > 0 {
		floor = float64(c.FLOPs) / pk
	}
	if bw > 0 {
		floor = math.Max(floor, float64(c.Bytes)/bw)
	}
	if !(t >= floor) || math.IsInf(t, 0) {
		t = floor
	}
	c.Compute, c.Memory, c.Time = Seconds(tc), Seconds(tm), Seconds(t)
	switch {
	case t0 >= tc && t0 >= tm:
		c.Bound = LatencyBound
	case tc >= tm:
		c.Bound = ComputeBound
	default:
		c.Bound = MemoryBound
	}
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
		if rs := nonNeg(float64(e.SoftmaxRate)); rs > 0 {
			tc = 2*float64(a.HeadDim+a.ValueDim())*scores/(pk*clampEff(ec)) + scores/rs
		} else {
			tc = float64(a.FLOPs()) / (pk * clampEff(ec))
		}
		tile := e.QueryTile
		if tile <= 0 {
			tile = 128
		}
		ctas := float64(a.Batch) * float64(a.Heads) * math.Ceil(float64(a.QLen)/float64(tile))
		if w := p.waves(ctas, e.Waves); w > 0 {
			tc = w*nonNeg(float64(e.WaveOverhead)) + w*float64(p.ComputeUnits)/ctas*tc
		}
	}
	if bw > 0 {
		tm = float64(a.Bytes()) / (bw * clampEff(e.Memory))
	}
	return tc, tm, SoftMax(tc, tm, nonNeg(e.Overlap)) + t0, t0
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
