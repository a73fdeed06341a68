package hardware

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

func TestTransfer_catalog(t *testing.T) {
	// Every catalog device says where its efficiencies come from; the
	// uncalibrated NVIDIA GPUs take the nearest calibrated family
	// member's, scaled, with the measured band.
	tests := []struct {
		name, kind, from string
	}{
		{"h100", "calibrated", ""},
		{"b200", "calibrated", ""},
		{"h100-pcie", "transferred", "H100 SXM"},
		{"a100-40gb", "transferred", "A100 80GB SXM"},
		{"gb200", "transferred", "B200"},
		{"l40s", "transferred", "A100 80GB SXM"}, // Ada is sm_89: Ampere's tensor-core instructions
		{"v100", "transferred", "A100 80GB SXM"},
		{"mi300x", "uncalibrated", ""},
		{"tpu-v5e", "uncalibrated", ""},
	}
	for _, tt := range tests {
		d, err := Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		c := d.Calibration()
		if c.Kind != tt.kind || c.From != tt.from {
			t.Errorf("%s: %+v, want %s from %q", tt.name, c, tt.kind, tt.from)
		}
		label := d.CalibrationLabel()
		if !strings.HasPrefix(label, tt.kind) || (tt.from != "" && !strings.Contains(label, "transferred from "+tt.from)) {
			t.Errorf("%s: label %q", tt.name, label)
		}
	}
}

func TestTransfer_scaling(t *testing.T) {
	// H100 PCIe from H100 SXM: the fractions carried, per-unit times
	// scaled by the clock ratio (1.98 GHz / 1.755 GHz), the residual
	// dropped, and the band the same-generation experiment measured.
	base, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Lookup("h100-pcie")
	if err != nil {
		t.Fatal(err)
	}
	b, g := base.Eff.GEMM[model.BF16], d.Eff.GEMM[model.BF16]
	r := 1.98 / 1.755
	if g.Compute != b.Compute || g.Memory != b.Memory || g.Overlap != b.Overlap || g.Waves != b.Waves {
		t.Errorf("fractions not carried: %+v from %+v", g, b)
	}
	if math.Abs(float64(g.CTAOverhead)/float64(b.CTAOverhead)/r-1) > 1e-9 || math.Abs(float64(g.StepFloor)/float64(b.StepFloor)/r-1) > 1e-9 {
		t.Errorf("per-unit times: cta %v floor %v from %v %v, want × %.4f", g.CTAOverhead, g.StepFloor, b.CTAOverhead, b.StepFloor, r)
	}
	if g.Residual != nil || g.Points != 0 {
		t.Errorf("residual %v points %d: want none", g.Residual != nil, g.Points)
	}
	band := sameGenerationBands["gemm"]
	if g.ErrMedian != band.Median || g.ErrP90 != band.P90 || !strings.Contains(g.Source, "transferred from H100 SXM") {
		t.Errorf("band %.3f/%.3f source %q", g.ErrMedian, g.ErrP90, g.Source)
	}
	// fp16 takes the bf16 fit (same tensor rate).
	if f := d.Eff.GEMM[model.FP16]; f.Compute != b.Compute {
		t.Errorf("fp16 compute %.4g, want the bf16 fit's %.4g", f.Compute, b.Compute)
	}
	// The cross-generation band for V100 from A100.
	v, _ := Lookup("v100")
	if got := v.Eff.GEMM[model.FP16].ErrP90; got != crossGenerationBands["gemm"].P90 {
		t.Errorf("v100 fp16 band p90 %.3f, want %.3f", got, crossGenerationBands["gemm"].P90)
	}
	// GB200 has no clock: within Blackwell the per-unit peak gives the
	// ratio (2.25/148 over 2.5/148).
	gb, _ := Lookup("gb200")
	bb, _ := Lookup("b200")
	want := 2.25 / 2.5
	if got := float64(gb.Eff.GEMM[model.BF16].CTAOverhead) / float64(bb.Eff.GEMM[model.BF16].CTAOverhead); math.Abs(got/want-1) > 1e-6 {
		t.Errorf("gb200 from b200: cta ratio %.4f, want %.4f", got, want)
	}
}

func TestSoftmaxRate(t *testing.T) {
	// Compute units × clock × 16 exponentials per SM per clock (CUDA C++
	// Programming Guide) where the datasheet gives both and the
	// generation's throughput is sourced; none otherwise.
	tests := []struct {
		name string
		want float64 // scores/s; 0 for none
	}{
		{"a100", 108 * 1.41e9 * 16},
		{"h100", 132 * 1.98e9 * 16},
		{"v100", 80 * 1.53e9 * 16},
		{"b200", 0},    // no published clock
		{"mi300x", 0},  // not NVIDIA
		{"tpu-v5p", 0}, // not a GPU
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Lookup(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := SoftmaxRate(d)
			if ok != (tt.want > 0) || math.Abs(float64(got)-tt.want) > 1e-6*tt.want {
				t.Errorf("SoftmaxRate = %v, %v; want %.4g", got, ok, tt.want)
			}
		})
	}
}

func TestTransfer_attention(t *testing.T) {
	// A100 → H100 SXM: the prefill wave overhead (a latency) carried as
	// it is, the decode CTA overheads by the clock ratio, the softmax rate
	// by units × clock (the A100's, fixed at its special-function rate,
	// lands on the H100's).
	base, err := Lookup("a100")
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadFile("devices/h100-sxm.toml")
	if err != nil {
		t.Fatal(err)
	}
	Transfer(d, base)
	b, a := base.Eff.Attention, d.Eff.Attention
	if a.WaveOverhead != b.WaveOverhead || a.Compute != b.Compute || a.Memory != b.Memory {
		t.Errorf("wave overhead %v compute %.4g memory %.4g, want the A100's %v %.4g %.4g", a.WaveOverhead, a.Compute, a.Memory, b.WaveOverhead, b.Compute, b.Memory)
	}
	r := 1.41 / 1.98
	if got := float64(a.DecodeCTAOverhead) / float64(b.DecodeCTAOverhead); math.Abs(got/r-1) > 1e-9 {
		t.Errorf("decode CTA overhead × %.4f, want × %.4f", got, r)
	}
	sfu, _ := SoftmaxRate(d)
	if math.Abs(float64(a.SoftmaxRate)/float64(sfu)-1) > 1e-3 {
		t.Errorf("softmax rate %v, want the H100's special-function rate %v", a.SoftmaxRate, sfu)
	}
	// The prefill kernel's shape is the target's own: the A100's Ampere
	// kernel (64 queries, two CTAs to an SM) does not carry to the H100,
	// whose file gives none (128 queries, one persistent CTA a unit); a
	// device of the A100's own chip keeps its file's.
	if b.QueryTile != 64 || b.CTAsPerUnit != 2 {
		t.Errorf("A100: query tile %d, %d CTAs a unit; want 64, 2 (its file's)", b.QueryTile, b.CTAsPerUnit)
	}
	if a.QueryTile != 0 || a.CTAsPerUnit != 0 {
		t.Errorf("H100 from the A100: query tile %d, %d CTAs a unit; want its own 0, 0", a.QueryTile, a.CTAsPerUnit)
	}
	pcie, err := Lookup("a100-pcie-80gb")
	if err != nil {
		t.Fatal(err)
	}
	if e := pcie.Eff.Attention; pcie.TransferredFrom == "" || e.QueryTile != 64 || e.CTAsPerUnit != 2 {
		t.Errorf("A100 PCIe (transferred from %q): query tile %d, %d CTAs a unit; want 64, 2", pcie.TransferredFrom, e.QueryTile, e.CTAsPerUnit)
	}
}

// TestTransfer_prefillKernelShape: every catalog device of the Ampere
// and Ada generations is transferred from a calibrated device and keeps
// its own file's prefill kernel shape: TensorRT-LLM's 64-query FMHA of
// 80 KiB of shared memory, two CTAs to a GA100 SM (164 KiB; sm80), one to
// an sm86 or sm89 SM (100 KiB), each warp's 16 rows reading the key and
// value tile from shared memory. The Hopper devices take the default (128
// queries, one persistent CTA a unit), with a warpgroup's 64 rows to a
// shared-memory read (wgmma).
func TestTransfer_prefillKernelShape(t *testing.T) {
	for _, tt := range []struct {
		name             string
		tile, ctas, rows int
	}{
		{"a100-pcie-80gb", 64, 2, 16},
		{"a100-sxm-40gb", 64, 2, 16},
		{"a10", 64, 1, 16},
		{"l4", 64, 1, 16},
		{"l40s", 64, 1, 16},
		{"rtx-4090", 64, 1, 16},
		{"h100-pcie", 0, 0, 64},
		{"h100-nvl", 0, 0, 64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Lookup(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if d.TransferredFrom == "" {
				t.Fatalf("%s is not transferred", d.Name)
			}
			if e := d.Eff.Attention; e.QueryTile != tt.tile || e.CTAsPerUnit != tt.ctas || e.OperandRows != tt.rows {
				t.Errorf("%s (from %s): query tile %d, %d CTAs a unit, %d rows a shared-memory read; want %d, %d, %d", d.Name, d.TransferredFrom, e.QueryTile, e.CTAsPerUnit, e.OperandRows, tt.tile, tt.ctas, tt.rows)
			}
		})
	}
}

func TestCalibrationLabel_noBF16(t *testing.T) {
	// A device without a bf16 GEMM quotes the GEMM its efficiencies were
	// fitted or transferred for, not the absent bf16 entry's zeros: the
	// V100 and T4 (fp16 tensor cores) carry the A100's fp16 fit with the
	// cross-generation band, and a CPU fitted in fp32 and fp64 quotes its
	// own held-out figures.
	for _, name := range []string{"v100", "t4"} {
		d, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want := "measured transfer error: fp16 GEMM median 13%, p90 33%"
		if l := d.CalibrationLabel(); !strings.Contains(l, want) {
			t.Errorf("%s: label %q, want it to contain %q", name, l, want)
		}
	}
	cpu := &Device{Name: "CPU", Kind: "cpu", Vector: map[model.DType]model.FLOPRate{model.FP64: 1e11, model.FP32: 2e11}}
	cpu.Eff.GEMM = map[model.DType]model.GEMMParams{
		model.FP32: {Points: 45, ErrMedian: 0.018, ErrP90: 0.065},
		model.FP64: {Points: 45, ErrMedian: 0.032, ErrP90: 0.077},
	}
	want := "calibrated: fitted to measured kernels (fp64 GEMM held out: median 3.2%, p90 7.7%)"
	if l := cpu.CalibrationLabel(); l != want {
		t.Errorf("cpu fitted in fp32 and fp64: label %q, want %q", l, want)
	}
}

// TestSharedBandwidth: units × clock × 128 bytes a clock (32 banks of 32
// bits) on the generations the CUDA C++ Programming Guide gives, none
// elsewhere (Blackwell, AMD, a device without a clock).
func TestSharedBandwidth(t *testing.T) {
	for _, tt := range []struct {
		name string
		want float64 // B/s; 0 for none
	}{
		{"a100", 108 * 1.41e9 * 128},
		{"h100", 132 * 1.98e9 * 128},
		{"l4", 58 * 2.04e9 * 128},
		{"b200", 0},
		{"mi300x", 0},
	} {
		d, err := Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := SharedBandwidth(d)
		if ok != (tt.want > 0) || math.Abs(float64(got)-tt.want) > 1e-9*tt.want {
			t.Errorf("%s: %v (%v), want %.4g B/s", tt.name, got, ok, tt.want)
		}
		if p := d.Processor(); p.SharedBandwidth != got {
			t.Errorf("%s: the processor's shared bandwidth %v, want %v", tt.name, p.SharedBandwidth, got)
		}
	}
	// An NVIDIA GPU whose file names no architecture has no generation
	// (this had indexed an empty list of words).
	if got, ok := SharedBandwidth(&Device{Vendor: "NVIDIA", Kind: "gpu", ComputeUnits: 108, Clock: 1.41e9}); ok || got != 0 {
		t.Errorf("no architecture: %v (%v), want none", got, ok)
	}
}

// TestGeneration reads an architecture's first word whatever its case and
// spacing, and allocates nothing: the pricer asks for it on every run
// (BenchmarkSimulate had gone from 3 to 5 allocations a run when it split
// and lower-cased the words).
func TestGeneration(t *testing.T) {
	for _, tt := range []struct {
		arch string
		want float64 // 0 for none
	}{
		{"Hopper", 9.0},
		{"  AMPERE (GA100)", 8.0},
		{"blackwell\tB200", 10.0},
		{"Ada Lovelace", 8.9},
		{"", 0},
		{"   ", 0},
		{"Hopperish", 0},
		{"averyveryverylongarchitecturename", 0},
	} {
		d := &Device{Vendor: "NVIDIA", Kind: "gpu", Architecture: tt.arch}
		g, ok := generation(d)
		if ok != (tt.want > 0) || g != tt.want {
			t.Errorf("%q: %v (%v), want %v", tt.arch, g, ok, tt.want)
		}
	}
	d, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { generation(d) }); n != 0 {
		t.Errorf("generation allocates %v times a call, want 0", n)
	}
}
