package hardware

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/perfsim/perfsim/model"
)

// Efficiency that carries over to a device nobody has measured.
//
// A calibrated device's fitted parameters are of three kinds, and each
// carries to another device of the same family by its datasheet:
//
//   - fractions of a peak (η_c, η_m, the attention fractions, a link's
//     efficiency) and shapes of the model (the soft-maximum exponent, the
//     L2 factor, the fp8 quantisation bytes, query tile, decode grouping
//     and split): carried as they are. The model multiplies them by the
//     target's own peaks, compute units (P/S per unit), bandwidth and L2,
//     so the ratios of those datasheet numbers scale the times;
//   - per-unit times (a CTA's fixed cost, the K-step floor, the operand
//     load, the split-K reduction, decode CTA overheads): scaled by the
//     clock ratio, f_base/f_target, taken from
//     the datasheets' clocks or, where one lacks a clock and both are of
//     one generation, from the per-unit peak (P/S ∝ clock within a
//     generation); 1 across generations without clocks;
//   - per-unit rates (the softmax rate per unit, a decode CTA's streaming
//     rate): scaled by the clock ratio the other way, the softmax rate
//     also by the number of units;
//   - properties of the architecture generation (tile shapes are the
//     model's; the wave rule, launch costs) and latencies (a prefill
//     attention wave's fixed cost): carried from the base as they are;
//     but the prefill kernel's query tile, resident CTAs per unit and
//     rows to a shared-memory read are the target's own (its file's), as
//     its kernels are; the shared memory's bandwidth is the target's
//     datasheet figure (SharedBandwidth).
//
// The softmax rate of a base whose data has one head size is its
// special-function units' datasheet rate (SoftmaxRate; see
// calibrate.fixedSoftmaxRate), which the units × clock rule carries to
// the target's own.
//
// The residual tables over shape space follow one device's library
// heuristics and are not carried to another device; a what-if of the
// same device keeps them (transferSameChip). The transferred tables' err_median and
// err_p90 are the measured transfer error of their class (TransferBands),
// so that every interval printed for the device is the transfer's.

// Generation is the architecture generation of an NVIDIA part, as its CUDA
// compute capability (source: NVIDIA CUDA C++ Programming Guide, "Compute
// Capabilities": Volta 7.0, Turing 7.5, Ampere 8.0/8.6, Ada 8.9, Hopper
// 9.0, Blackwell 10.0), keyed by the first word of Device.Architecture.
var generations = map[string]float64{
	"volta": 7.0, "turing": 7.5, "ampere": 8.0, "ada": 8.9, "hopper": 9.0, "blackwell": 10.0,
}

// sfuPerClock is the special-function units' throughput of one SM per
// clock, in results of a 32-bit base-2 exponential (exp2f; likewise the
// reciprocal, log2, sine and cosine), by generation (source: NVIDIA CUDA
// C++ Programming Guide, "Arithmetic Instructions", throughput table: 16
// per clock per multiprocessor for compute capabilities 7.x, 8.x and 9.0).
// The tensor cores' rate per SM doubled from Ampere to Hopper and this did
// not: FlashAttention-3 (Shah et al., 2024) puts the H100 SXM5 at 989
// TFLOP/s of FP16 matrix multiply but 3.9 TFLOP/s of special functions.
// Blackwell is left out: its throughput is not in our sources.
var sfuPerClock = map[float64]float64{7.0: 16, 7.5: 16, 8.0: 16, 8.9: 16, 9.0: 16}

// SoftmaxRate returns the rate at which d's special-function units
// compute the softmax's exponentials, one per score: compute units ×
// clock × the generation's results per clock (sfuPerClock), from the
// datasheet; false where d has no clock or compute-unit count or is not
// of a generation with a sourced throughput. The A100 SXM: 108 × 1.41 GHz
// × 16 = 2.44 T/s; the H100 SXM: 132 × 1.98 GHz × 16 = 4.18 T/s.
func SoftmaxRate(d *Device) (model.FLOPRate, bool) {
	r, ok := perClockRate(d, sfuPerClock)
	return model.FLOPRate(r), ok
}

// sharedBytesPerClock is the shared memory's bandwidth of one SM per
// clock, by generation (source: NVIDIA CUDA C++ Programming Guide,
// "Compute Capability 5.x", Shared Memory: 32 banks, each with a
// bandwidth of 32 bits per clock cycle; the 7.x, 8.x and 9.0 sections
// keep the 5.x organisation): 128 bytes. Blackwell is left out with the
// special-function units (sfuPerClock).
var sharedBytesPerClock = map[float64]float64{7.0: 128, 7.5: 128, 8.0: 128, 8.9: 128, 9.0: 128}

// SharedBandwidth returns d's shared-memory bandwidth over all its
// compute units, units × clock × the generation's bytes per clock
// (sharedBytesPerClock), from the datasheet; false where d has no clock
// or compute-unit count or is not of a generation with a sourced figure.
// The A100 SXM: 108 × 1.41 GHz × 128 B = 19.5 TB/s.
func SharedBandwidth(d *Device) (model.ByteRate, bool) {
	r, ok := perClockRate(d, sharedBytesPerClock)
	return model.ByteRate(r), ok
}

// perClockRate returns compute units × clock × d's generation's figure
// in perClock (per unit per clock), in base units per second; false
// where d has no clock or compute-unit count or its generation has no
// figure (SoftmaxRate, SharedBandwidth).
func perClockRate(d *Device, perClock map[float64]float64) (float64, bool) {
	g, ok := generation(d)
	per := perClock[g]
	if !ok || per == 0 || !(d.Clock > 0) || d.ComputeUnits <= 0 {
		return 0, false
	}
	return float64(d.ComputeUnits) * float64(d.Clock) * per, true
}

// generation returns d's generation number and true, or false when its
// architecture is not a known NVIDIA generation.
func generation(d *Device) (float64, bool) {
	if !strings.EqualFold(d.Vendor, "NVIDIA") || d.Kind != "gpu" {
		return 0, false
	}
	// The architecture's first word, found without allocating: the
	// pricer asks for every run (SharedBandwidth, SoftmaxRate).
	w := strings.TrimLeftFunc(d.Architecture, unicode.IsSpace)
	if i := strings.IndexFunc(w, unicode.IsSpace); i >= 0 {
		w = w[:i]
	}
	var lower [16]byte
	if len(w) > len(lower) {
		return 0, false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	g, ok := generations[string(lower[:len(w)])]
	return g, ok
}

// A Band is a measured relative error: the median and p90 of |predicted/
// measured − 1|.
type Band struct{ Median, P90 float64 }

// Measured errors of transferred efficiencies per kernel class, from the
// transfer experiment (calibrate/transfer_test.go,
// TestTransfer_crossGeneration -exhaustive, 2026-11-24, on aiconfigurator's
// tables in ../shared/validation; figures in docs/hardware.md).
var (
	// crossGenerationBands: the larger of A100 → H100 and H100/H200 →
	// B200, per class (A100 → H100: bf16 GEMM 12.3% / 30.8%, prefill
	// 11.8% / 22.0% (2026-11-26, with the Ampere kernel's shared-memory
	// bound on its operand reads; 12.8% / 26.7% before, with each
	// generation's prefill kernel shape: 64-query CTAs two to an A100 SM,
	// one persistent CTA a Hopper SM; 18.8% / 33.2% before that, 22.5% /
	// 44.4% before the softmax at the special-function rate and the wave
	// overhead carried as a latency),
	// decode 18.7% / 77.9%; H100 → B200: bf16 GEMM 9.4% / 32.1%, fp8 GEMM
	// 11.7% / 19.8%, prefill 8.4% / 19.5%, decode 19.8% / 51.7%), rounded
	// up.
	crossGenerationBands = map[string]Band{
		"gemm":              {0.13, 0.33},
		"attention_prefill": {0.12, 0.22},
		"attention_decode":  {0.20, 0.78},
		// MoE modules (TestTransfer_crossGeneration, 1-in-16 sample of
		// the MoE tables, 2026-11-26, after the finalisation's reduction
		// time): A100 → H100 21.5% / 62.2%, H100 → B200 14.2% / 42.6%
		// (20.3% / 62.1% and 18.5% / 47.8% before), rounded up.
		"moe": {0.22, 0.63},
	}
	// sameGenerationBands: H200 → H100, one chip with other memory (bf16
	// GEMM 4.7% / 13.3%, fp8 GEMM 4.9% / 20.1%, prefill 6.9% / 24.0%,
	// decode 11.1% / 28.0%), rounded up.
	sameGenerationBands = map[string]Band{
		"gemm":              {0.05, 0.21},
		"attention_prefill": {0.07, 0.25},
		"attention_decode":  {0.12, 0.29},
		// Not measured within a generation for MoE: the cross-generation
		// figure, which is the larger.
		"moe": {0.22, 0.63},
	}
)

// TransferBands returns the measured transfer error per kernel class
// ("gemm", "attention_prefill", "attention_decode") that applies to
// efficiencies carried from base to d: the same-generation figures when
// both are of one generation, the cross-generation ones otherwise.
func TransferBands(d, base *Device) map[string]Band {
	gd, ok1 := generation(d)
	gb, ok2 := generation(base)
	if ok1 && ok2 && gd == gb {
		return sameGenerationBands
	}
	return crossGenerationBands
}

// Calibration says where a device's efficiencies come from.
type Calibration struct {
	// Kind is "calibrated" (fitted to its own measured kernels),
	// "transferred" (a calibrated family member's, scaled by datasheet
	// ratios) or "uncalibrated" (hand-written default fractions).
	Kind string
	// From is the device a transferred device's efficiencies came from.
	From string
}

// Calibration returns where d's efficiencies come from.
func (d *Device) Calibration() Calibration {
	if d.TransferredFrom != "" {
		return Calibration{Kind: "transferred", From: d.TransferredFrom}
	}
	for _, g := range d.Eff.GEMM {
		if g.Points > 0 {
			return Calibration{Kind: "calibrated"}
		}
	}
	return Calibration{Kind: "uncalibrated"}
}

// CalibrationLabel is the line every output about d prints: which of
// calibrated, transferred (from which device, with the band the transfer
// was measured to) or uncalibrated its efficiencies are; for an
// uncalibrated device, the GEMM efficiency of its main compute type and,
// where they are KindDefaults', where they came from.
func (d *Device) CalibrationLabel() string {
	c := d.Calibration()
	switch c.Kind {
	case "calibrated":
		t, g := d.labelGEMM(func(g model.GEMMParams) bool { return g.Points > 0 })
		if d.WhatIfBase != "" {
			// A what-if whose changes reach no kernel (KernelNeutral).
			return fmt.Sprintf("what-if of %s: kernels as calibrated (%s GEMM held out: median %.1f%%, p90 %.1f%%); changed: %s", d.WhatIfBase, t, 100*g.ErrMedian, 100*g.ErrP90, changed(d.WhatIfChanges))
		}
		return fmt.Sprintf("calibrated: fitted to measured kernels (%s GEMM held out: median %.1f%%, p90 %.1f%%)", t, 100*g.ErrMedian, 100*g.ErrP90)
	case "transferred":
		if d.Kept != nil {
			return d.partialLabel()
		}
		t, g := d.labelGEMM(func(g model.GEMMParams) bool { return g.ErrP90 > 0 })
		return fmt.Sprintf("transferred from %s: its fitted efficiencies scaled by datasheet ratios (measured transfer error: %s GEMM median %.0f%%, p90 %.0f%%)", c.From, t, 100*g.ErrMedian, 100*g.ErrP90)
	}
	t := d.mainType()
	eta := d.Eff.GEMM[t].Compute
	if eta == 0 {
		eta = 1
	}
	s := fmt.Sprintf("uncalibrated: datasheet peaks at %.0f%% efficiency", 100*eta)
	if t != model.BF16 {
		s = fmt.Sprintf("uncalibrated: datasheet peaks at %.0f%% efficiency (%s GEMM)", 100*eta, t)
	}
	if d.DefaultsFrom != "" {
		s += fmt.Sprintf("; default efficiencies of %s, the nearest calibrated %s, not measured on this device", d.DefaultsFrom, d.Kind)
	}
	return s
}

// changed lists a what-if's settings, or says there are none.
func changed(sets []string) string {
	if len(sets) == 0 {
		return "nothing"
	}
	return strings.Join(sets, ", ")
}

// labelGEMM returns the GEMM type a calibrated or transferred device's
// label quotes, and its parameters: bf16 where its entry has figures (ok),
// else the first type in model.DTypes order that has them (a V100 carries
// only an fp16 fit, a CPU fp32 and fp64 ones), else bf16's empty entry.
func (d *Device) labelGEMM(ok func(model.GEMMParams) bool) (model.DType, model.GEMMParams) {
	return labelGEMMIn(d.Eff.GEMM, ok)
}

// labelGEMMIn is labelGEMM over the GEMM tables m.
func labelGEMMIn(m map[model.DType]model.GEMMParams, ok func(model.GEMMParams) bool) (model.DType, model.GEMMParams) {
	if g := m[model.BF16]; ok(g) {
		return model.BF16, g
	}
	for _, t := range model.DTypes {
		if g, has := m[t]; has && ok(g) {
			return t, g
		}
	}
	return model.BF16, m[model.BF16]
}

// mainType is the GEMM type an uncalibrated device's label quotes: bf16
// when it has a bf16 peak, else its first matrix (then vector) type in
// model.DTypes order, widest first.
func (d *Device) mainType() model.DType {
	if _, ok := d.Matrix[model.BF16]; ok || (len(d.Matrix) == 0 && len(d.Vector) == 0) {
		return model.BF16
	}
	for _, peaks := range []map[model.DType]model.FLOPRate{d.Matrix, d.Vector} {
		for _, t := range model.DTypes {
			if _, ok := peaks[t]; ok {
				return t
			}
		}
	}
	return model.BF16
}

// clockRatio returns f_base/f_target for scaling per-unit times from base
// to d.
func clockRatio(d, base *Device) float64 {
	if d.Clock > 0 && base.Clock > 0 {
		return float64(base.Clock) / float64(d.Clock)
	}
	gd, ok1 := generation(d)
	gb, ok2 := generation(base)
	if ok1 && ok2 && gd == gb && d.ComputeUnits > 0 && base.ComputeUnits > 0 {
		pd, pb := d.Matrix[model.BF16], base.Matrix[model.BF16]
		if pd > 0 && pb > 0 {
			return (float64(pb) / float64(base.ComputeUnits)) / (float64(pd) / float64(d.ComputeUnits))
		}
	}
	return 1
}

// Transfer sets d's efficiencies from base's fitted ones by the rules
// above and marks d as transferred from base. Tables base has not fitted,
// and types d has no peak for, keep d's own.
func Transfer(d, base *Device) { transfer(d, base, false) }

// transferSameChip is Transfer to a what-if of base (Derive): the same
// chip, whose kernels are base's own, with some datasheet numbers
// changed. Each carried table keeps base's residual table (the GEMM's,
// prefill and decode attention's, the MoE's) on top of the carried
// fractions, so that a kernel takes base's time, shape by shape, where
// the numbers it reads are base's, and moves continuously with them. A
// residual corrects the model, per shape, for what it does not follow:
// the library's choice of kernel and tile and the quantisation that
// comes with it, which are the software's and the chip's, not the
// datasheet number's, and persist when a peak or the bandwidth moves.
// The band stays the transfer's (the fractions are not measured at the
// new numbers).
func transferSameChip(d, base *Device) { transfer(d, base, true) }

// transfer is Transfer; keepResiduals keeps base's residual tables on
// the tables it carries (transferSameChip).
func transfer(d, base *Device, keepResiduals bool) {
	r := clockRatio(d, base)
	scale := func(s model.Seconds) model.Seconds { return model.Seconds(float64(s) * r) }
	gemm := make(map[model.DType]model.GEMMParams, len(d.Eff.GEMM))
	for t, g := range d.Eff.GEMM {
		gemm[t] = g
	}
	bands := TransferBands(d, base)
	band := bands["gemm"]
	for t := range d.Eff.GEMM {
		b, ok := base.Eff.GEMM[t]
		if !ok || b.Points == 0 {
			if t != model.FP16 {
				continue
			}
			// fp16 runs at the bf16 rate: it takes the bf16 fit.
			if b, ok = base.Eff.GEMM[model.BF16]; !ok || b.Points == 0 {
				continue
			}
		}
		if _, has := d.Matrix[t.Peak()]; !has {
			continue
		}
		g := b
		g.CTAOverhead, g.StepFloor, g.OperandLoad, g.SplitK = scale(b.CTAOverhead), scale(b.StepFloor), scale(b.OperandLoad), scale(b.SplitK)
		if !keepResiduals {
			g.Residual = nil
		}
		g.Points = 0
		g.ErrMedian, g.ErrP90 = band.Median, band.P90
		g.Source = fmt.Sprintf("transferred from %s (%s): fractions carried, per-unit times × %.3g (clock ratio); measured transfer error median %.0f%%, p90 %.0f%%", base.Name, firstClause(b.Source), r, 100*band.Median, 100*band.P90)
		gemm[t] = g
	}
	d.Eff.GEMM = gemm
	if a := base.Eff.Attention; a.Points > 0 {
		n := a
		// A prefill wave's fixed cost is a latency, not a count of clock
		// cycles: aiconfigurator's TensorRT-LLM context rows of 16 tokens
		// (head size 128, 32 query and 8 KV heads, batch 256: 8,192 CTAs)
		// take 280 µs on the A100 (38 waves of two CTAs on each of 108
		// SMs at 1.41 GHz) and 228 µs on the H100 (62 waves of one CTA on
		// each of 132 at 1.98 GHz); the A100's fitted overhead, 4.38 µs a
		// wave, and the H100's own, 3.62 µs, differ by 1.21×, where the
		// clock ratio would make it 1.40×. It carries as it is.
		//
		// The prefill kernel's shape, its query tile and the CTAs resident
		// on a compute unit, is the target's own (its file's; 128 queries
		// and one CTA where it gives none), not the base's: the kernels
		// differ by generation. TensorRT-LLM's Ampere kernel takes 64
		// queries a CTA, two CTAs to an A100 SM; its Hopper kernel is
		// persistent, one CTA a unit, with tiles of 128 queries. The wave
		// overhead, a latency per resident CTA, carries with it. So do the
		// rows that share one shared-memory read of a key and value tile
		// (a warp's 16 on Ampere and Ada, a warpgroup's 64 on Hopper): the
		// base's η_c is a fraction of what its own kernel's shared memory
		// allows (the A100's 0.80 of its peak), the target's is of its own.
		n.QueryTile, n.CTAsPerUnit, n.OperandRows = d.Eff.Attention.QueryTile, d.Eff.Attention.CTAsPerUnit, d.Eff.Attention.OperandRows
		n.DecodeCTAOverhead, n.DecodeGroupOverhead, n.DecodeHeadOverhead = scale(a.DecodeCTAOverhead), scale(a.DecodeGroupOverhead), scale(a.DecodeHeadOverhead)
		n.DecodeCTAOverhead8, n.DecodeGroupOverhead8, n.DecodeDimOverhead, n.DecodeSplitCost = scale(a.DecodeCTAOverhead8), scale(a.DecodeGroupOverhead8), scale(a.DecodeDimOverhead), scale(a.DecodeSplitCost)
		rate := func(x model.ByteRate) model.ByteRate { return model.ByteRate(float64(x) / r) }
		n.DecodeCTABandwidth, n.DecodeHeadBandwidth = rate(a.DecodeCTABandwidth), rate(a.DecodeHeadBandwidth)
		n.DecodeCTABandwidth8, n.DecodeHeadBandwidth8 = rate(a.DecodeCTABandwidth8), rate(a.DecodeHeadBandwidth8)
		if a.SoftmaxRate > 0 && d.ComputeUnits > 0 && base.ComputeUnits > 0 {
			n.SoftmaxRate = model.FLOPRate(float64(a.SoftmaxRate) / r * float64(d.ComputeUnits) / float64(base.ComputeUnits))
		}
		if !keepResiduals {
			n.Residual, n.DecodeResidual = nil, nil
		}
		n.Points = 0
		pb, db := bands["attention_prefill"], bands["attention_decode"]
		n.ErrMedian, n.ErrP90 = math.Max(pb.Median, db.Median), math.Max(pb.P90, db.P90)
		n.Source = fmt.Sprintf("transferred from %s: fractions carried, per-unit times × %.3g (clock ratio); measured transfer error prefill median %.0f%% p90 %.0f%%, decode median %.0f%% p90 %.0f%%",
			base.Name, r, 100*pb.Median, 100*pb.P90, 100*db.Median, 100*db.P90)
		d.Eff.Attention = n
	}
	// The MoE table carries the same way: fractions kept, the per-expert
	// time scaled by the clock, no residual table. The MLA table does
	// not: the MLA kernels differ by generation (no FlashMLA-class decode
	// kernel before Hopper: the A100's fit carried to the H100 is off by
	// a median 107% on its MLA decode), so a transferred device prices
	// them with its transferred attention table.
	if m := base.Eff.MoE; m.Points > 0 {
		n := m
		n.ExpertOverhead, n.ExpertOverhead4 = scale(m.ExpertOverhead), scale(m.ExpertOverhead4)
		// The finalisation's reduction runs on every compute unit: its
		// time per element scales with the clock and with the units.
		n.ReduceElement = scale(m.ReduceElement)
		if d.ComputeUnits > 0 && base.ComputeUnits > 0 {
			n.ReduceElement = model.Seconds(float64(n.ReduceElement) * float64(base.ComputeUnits) / float64(d.ComputeUnits))
		}
		if !keepResiduals {
			n.Residual = nil
		}
		n.Points = 0
		b := bands["moe"]
		n.ErrMedian, n.ErrP90 = b.Median, b.P90
		n.Source = fmt.Sprintf("transferred from %s: fractions carried, per-expert time × %.3g (clock ratio); measured transfer error median %.0f%% p90 %.0f%%", base.Name, r, 100*b.Median, 100*b.P90)
		d.Eff.MoE = n
	}
	// The collective fit carries to a link of the same kind (the same
	// NVLink generation and topology): its fractions and latencies are the
	// link's and the library's. What d states of its own tier (bandwidth,
	// name, devices, topology, in-network reduction) stays d's: a what-if's
	// --set interconnect.intra.in_network_reduction had been replaced by
	// the base's whenever another number moved too.
	if d.Intra.Name != "" && d.Intra.Name == base.Intra.Name && d.Intra.Topology == base.Intra.Topology && base.Intra.Base > 0 {
		own := d.Intra
		d.Intra = base.Intra
		d.Intra.Bandwidth, d.Intra.Name, d.Intra.DevicesPerNode, d.Intra.Topology, d.Intra.Reduction = own.Bandwidth, own.Name, own.DevicesPerNode, own.Topology, own.Reduction
	}
	d.TransferredFrom = base.Name
}

// firstClause returns s up to its first ';'.
func firstClause(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		return s[:i]
	}
	return s
}

// calibratedStems lists the catalog devices with a fitted overlay.
func calibratedStems() []string {
	ents, err := devicesFS.ReadDir(path.Join("devices", "fitted"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if s, ok := strings.CutSuffix(e.Name(), ".toml"); ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

var (
	calibratedOnce sync.Once
	calibrated     []*Device // the calibrated catalog devices, read-only
)

// calibratedDevices returns the calibrated catalog devices (loaded once;
// callers must not change them).
func calibratedDevices() []*Device {
	calibratedOnce.Do(func() {
		for _, stem := range calibratedStems() {
			d, err := loadCatalogFileOnly(stem)
			if err != nil {
				panic(fmt.Sprintf("hardware: embedded catalog: %v", err))
			}
			calibrated = append(calibrated, d)
		}
	})
	return calibrated
}

// NearestCalibrated returns the calibrated device of d's family nearest
// to it, or nil: the same vendor's GPUs, nearest first by generation
// (major compute capability, then minor), then by the ridge point (bf16 peak over bandwidth), then by name. A
// device that is itself calibrated has none.
func NearestCalibrated(d *Device, among []*Device) *Device {
	g, ok := generation(d)
	if !ok || d.Calibration().Kind == "calibrated" {
		return nil
	}
	var best *Device
	var bestKey [3]float64
	for _, c := range among {
		gc, ok := generation(c)
		if !ok || c.Name == d.Name {
			continue
		}
		// The major compute capability first (sm_8x parts share Ampere's
		// tensor-core instructions, Ada's included), then the minor.
		key := [3]float64{math.Abs(math.Floor(gc) - math.Floor(g)), math.Abs(gc - g), math.Abs(math.Log(ridgePoint(c) / ridgePoint(d)))}
		if best == nil || key[0] < bestKey[0] || (key[0] == bestKey[0] && (key[1] < bestKey[1] || (key[1] == bestKey[1] && key[2] < bestKey[2]))) {
			best, bestKey = c, key
		}
	}
	return best
}

// ridgePoint returns x's ridge point, its bf16 matrix peak over its
// bandwidth (FLOPs per byte), or 1 when it lacks either: how calibrated
// devices are ranked as a base for another.
func ridgePoint(x *Device) float64 {
	pr := x.Processor()
	p, _ := pr.Peak(model.BF16)
	if p <= 0 || x.Memory.Bandwidth <= 0 {
		return 1
	}
	return float64(p) / float64(x.Memory.Bandwidth)
}
