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

// AttentionParams model an attention kernel: a soft-maximum roofline per
// phase. Prefill (more than DecodeQueries queries per sequence) uses
// Compute, Memory, Launch, Overlap and WaveOverhead; decode uses the
// Decode* fields, each falling back to its prefill counterpart when unset.
// Unset efficiencies mean 1, an unset launch the device's launch cost, an
// unset overlap exponent a plain max.
//
// Prefill compute runs in CTAs of 128 queries of one head of one sequence
// (FlashAttention-2 and -3 on Ampere and Hopper), in waves over the
// compute units: t_c = W·WaveOverhead + W·S/CTAs · F/(P·η_c), with W
// whole or fractional waves as for GEMMs (Waves). Decode runs one CTA per
// sequence and query head.
type AttentionParams struct {
	Compute      float64 `toml:"compute"` // fraction of the matrix peak
	Memory       float64 `toml:"memory"`  // fraction of the bandwidth
	Launch       Seconds `toml:"launch"`
	Overlap      float64 `toml:"overlap_exponent,omitempty"` // soft-maximum exponent p; 0 means max
	WaveOverhead Seconds `toml:"wave_overhead,omitempty"`    // fixed cost per wave of CTAs
	Waves        string  `toml:"waves,omitempty"`            // "whole" (default) or "fractional"

	DecodeCompute      float64 `toml:"decode_compute,omitempty"`
	DecodeMemory       float64 `toml:"decode_memory,omitempty"`
	DecodeLaunch       Seconds `toml:"decode_launch,omitempty"`
	DecodeOverlap      float64 `toml:"decode_overlap_exponent,omitempty"`
	DecodeWaveOverhead Seconds `toml:"decode_wave_overhead,omitempty"`

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
	case Collective:
		return Cost{Bytes: k.Bytes(), Bound: NetworkBound}
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
	Latency    Seconds  // per step
	Efficiency float64  // achievable fraction of Bandwidth; 0 means 1
}

// CollectiveTime prices c over l with the alpha-beta ring model:
// Steps·latency + Traffic/(bandwidth·efficiency).
func CollectiveTime(c Collective, l Link) Seconds {
	if c.Traffic() == 0 {
		return 0
	}
	e := l.Efficiency
	if e <= 0 {
		e = 1
	}
	return Seconds(float64(c.Steps())*float64(l.Latency)) + c.Traffic().At(ByteRate(float64(l.Bandwidth)*e))
}
