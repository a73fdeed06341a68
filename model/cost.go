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
	// SharedBandwidth is the shared memory's bandwidth summed over the
	// compute units (bytes a clock per unit × units × clock); 0 where
	// unknown. The prefill attention's operand reads are priced against
	// it (see AttentionCost and AttentionParams.OperandRows).
	SharedBandwidth ByteRate
	Eff             Efficiency
	// CPU selects the CPU rule of the GEMM model (gemm.go): C is computed
	// in 64×64 blocks spread over the cores, rows and columns are not
	// padded to a tensor-core granule and K is never split.
	CPU bool
	// PowerModel is the device's power model (power.go); zero for none.
	PowerModel PowerParams
	// Kept, on a what-if processor whose changes reach only some
	// kernels, is the processor with the calibrated device's own
	// efficiencies, which prices the kernels whose time reads none of the
	// numbers Changed says changed (For, whatif.go); nil otherwise.
	Kept    *Processor
	Changed Changes
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
	CTAsPerUnit  int      `toml:"ctas_per_unit,omitempty"`    // prefill CTAs resident on one compute unit at once (a wave is units × this); 0 means 1
	OperandRows  int      `toml:"operand_rows,omitempty"`     // query rows of a prefill CTA that share one shared-memory read of a key and value tile (a warp's or a warpgroup's); 0 means the shared memory is not priced

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

	// Rates, when set, prices a prefill from a kernel's measured
	// throughput instead (see FlashRates): another kernel than the one
	// these parameters were fitted on. Not read from hardware files.
	Rates *FlashRates `toml:"-"`

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
	MXFP4:   {FP8, FP16, BF16},
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
	p = p.For(k)
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
	launch := p.Eff.Memory.Launch
	if !(launch > 0) {
		launch = p.Launch
	}
	return roofline(f, b, p.streamRate(d), ByteRate(float64(p.Bandwidth)*p.memEff(b)), launch, d)
}

// streamRate is the arithmetic rate of an elementwise pass in type d: the
// vector peak for d where the device lists one, else its peak (Peak), at
// the vector efficiency.
func (p *Processor) streamRate(d DType) FLOPRate {
	peak, _ := p.Peak(d)
	if v, ok := p.Vector[d]; ok {
		peak = v
	}
	ev := p.Eff.Vector
	if ev <= 0 {
		ev = 1
	}
	return FLOPRate(float64(peak) * ev)
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
	// Engine is the serving engine's own all-reduce kernel when it runs
	// one (AllReduceKernel); set, it prices every all-reduce over the
	// link, the ring alone (NCCL) those it does not take, and the one-shot
	// kernel above is not used.
	Engine AllReduceKernel
	// HalfSize and Slope make the ring's efficiency rise with the
	// message size S, as NCCL's does while it moves from its LL to LL128
	// to Simple protocol and fills its channels:
	// Efficiency/(1 + (HalfSize/S)^Slope). HalfSize 0 means a flat
	// Efficiency; Slope 0 means 1.
	HalfSize Bytes
	Slope    float64
	// RankFactor γ makes the ring's efficiency rise with the rank count
	// p, as measured on NVSwitch nodes (NCCL 2.29.2 on H100, 268 MB
	// reduce-scatter: bus bandwidth 229, 297 and 325 GB/s at 2, 4 and 8
	// GPUs; aiconfigurator's nccl_perf table): a collective pays, besides
	// its ring traffic, γ bytes per byte of its whole message at the
	// link's rate, a cost that does not shrink with the ring's (p−1)/p
	// share. The bandwidth term is (Traffic + γ·Size)/(Bandwidth·
	// Efficiency·(1+γ)), so Efficiency stays the fraction a transfer of
	// the whole message achieves (a send, Traffic = Size, is unchanged)
	// and a ring's effective efficiency is Efficiency·(1+γ)·f/(f+γ), f =
	// Traffic/Size: every rank count, measured or not, on one curve. 0
	// means no dependence on p.
	RankFactor float64
}

// ringEfficiency returns l's ring efficiency for a message of s bytes
// of which each rank sends a share f (Traffic/Size; 0 for none).
func (l Link) ringEfficiency(s Bytes, f float64) float64 {
	e := l.Efficiency
	if e <= 0 {
		e = 1
	}
	if g := l.RankFactor; g > 0 && f > 0 {
		e *= (1 + g) * f / (f + g)
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
// Base + Steps·Latency + Traffic/(Bandwidth·e(Size, Ranks)), with e the
// size- and rank-dependent efficiency of Link.HalfSize and RankFactor; an all-reduce over a link
// with a one-shot kernel costs at most OneShotTime; one over a link with
// an engine's kernel (Link.Engine) costs what that kernel does, or the
// ring alone when the kernel does not take it.
func CollectiveTime(c Collective, l Link) Seconds {
	if c.Traffic() == 0 {
		return 0
	}
	if c.Kind == AllReduce && l.Engine.Set() {
		if t, ok := l.Engine.Time(c, l); ok {
			return t
		}
		l.OneShotLatency = 0 // the engine hands it to NCCL
	}
	e := l.ringEfficiency(c.Size, float64(c.Traffic())/float64(c.Size))
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
