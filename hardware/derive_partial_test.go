package hardware

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestDerive_sameValueIsBase: a setting equal to the base's own value
// changes nothing: the device is the base, its name, calibration label
// and efficiencies, not a what-if carrying the calibration (an H100 with
// its own fp8 peak, 1979 TFLOP/s, had been "transferred from H100 SXM",
// its TTFT 2% faster). So is every key at once, and a calibrated,
// a transferred and an uncalibrated base alike.
func TestDerive_sameValueIsBase(t *testing.T) {
	for _, name := range []string{"h100", "l40s", "mi300x"} {
		base, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		own := []string{
			fmt.Sprintf("memory.bandwidth=%g B/s", float64(base.Memory.Bandwidth)),
			fmt.Sprintf("memory.capacity=%g B", float64(base.Memory.Capacity)),
			fmt.Sprintf("compute_units=%d", base.ComputeUnits),
		}
		if base.Memory.L2 > 0 {
			own = append(own, fmt.Sprintf("memory.l2=%g B", float64(base.Memory.L2)))
		}
		if base.Clock > 0 {
			own = append(own, fmt.Sprintf("clock=%g Hz", float64(base.Clock)))
		}
		for _, t := range model.DTypes {
			if r, ok := base.Matrix[t]; ok {
				own = append(own, fmt.Sprintf("peak.matrix.%s=%g FLOP/s", t, float64(r)))
			}
			if r, ok := base.Vector[t]; ok {
				own = append(own, fmt.Sprintf("peak.vector.%s=%g FLOP/s", t, float64(r)))
			}
		}
		if base.Intra.Bandwidth > 0 {
			own = append(own, fmt.Sprintf("interconnect.intra.bandwidth=%g B/s", float64(base.Intra.Bandwidth)))
		}
		if base.Inter.Bandwidth > 0 {
			own = append(own, fmt.Sprintf("interconnect.inter.bandwidth=%g B/s", float64(base.Inter.Bandwidth)))
		}
		cases := make([][]string, 0, len(own)+1)
		for _, s := range own {
			if name == "h100" && strings.HasPrefix(s, "peak.matrix.fp8=") {
				s = "peak.matrix.fp8=1979TFLOP/s" // as the datasheet spells it
			}
			cases = append(cases, []string{s})
		}
		var all []string
		for _, c := range cases {
			all = append(all, c...)
		}
		cases = append(cases, all)
		for _, sets := range cases {
			d, err := Derive(base, sets)
			if err != nil {
				t.Fatalf("%s %v: %v", name, sets, err)
			}
			if d.Name != base.Name || d.CalibrationLabel() != base.CalibrationLabel() || !reflect.DeepEqual(d.Eff, base.Eff) ||
				d.Kept != nil || d.WhatIfBase != "" || !sameDatasheet(d, base) || d.Memory.Usable != base.Memory.Usable || !reflect.DeepEqual(d.Sparse, base.Sparse) {
				t.Errorf("%s %v: %q, %q: want the base itself", name, sets, d.Name, d.CalibrationLabel())
			}
		}
	}
}

// TestDerive_partial: a change that some kernels read carries the
// calibration to those alone. An fp8 peak on the H100 reaches the kernels
// that compute at it (fp8, fp8e5m2, and fp4, which falls back to fp8 on a
// part without an fp4 peak), not bf16 ones: the device keeps the H100's
// own tables (Kept), residuals and held-out figures included, beside the
// carried ones, and its label says which kernels are carried. A change
// every kernel reads (the bandwidth, the compute units, the clock, and on
// a part without a clock the bf16 peak per unit, from which Transfer
// takes the clock ratio) carries them all.
func TestDerive_partial(t *testing.T) {
	h100, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(h100, []string{"peak.matrix.fp8=4PFLOP/s"})
	if err != nil {
		t.Fatal(err)
	}
	fp8 := model.PeakBit(model.FP8) | model.PeakBit(model.FP8E5M2) | model.PeakBit(model.FP4)
	if d.Kept == nil || !reflect.DeepEqual(*d.Kept, h100.Eff) || d.Changed != (model.Changes{Peaks: fp8}) {
		t.Fatalf("fp8 peak: kept %v, changes %+v: want the H100's own tables kept, fp8 (and fp4) changed", d.Kept != nil, d.Changed)
	}
	if f := d.Eff.GEMM[model.FP8]; f.Points != 0 || f.Residual == nil || !reflect.DeepEqual(f.Residual, h100.Eff.GEMM[model.FP8].Residual) || d.Kept.GEMM[model.BF16].Residual == nil {
		t.Error("fp8 peak: want the fp8 GEMM carried with the H100's residual table (transferSameChip), the bf16 one kept")
	}
	if r := d.Sparse[model.FP8]; r != model.FLOPRate(float64(h100.Sparse[model.FP8])*4e15/float64(h100.Matrix[model.FP8])) {
		t.Errorf("fp8 sparse peak %v: want it scaled with the dense one", r)
	}
	p := d.Processor()
	bf := model.GEMM{M: 2048, N: 4096, K: 4096, A: model.BF16, B: model.BF16, C: model.BF16}
	f8 := bf
	f8.A, f8.B = model.FP8, model.FP8
	if p.For(bf) != p.Kept || p.For(f8) != &p {
		t.Error("fp8 peak: want the bf16 GEMM priced as calibrated, the fp8 one carried")
	}
	hp := h100.Processor()
	if a, b := p.GEMMCost(bf), hp.GEMMCost(bf); a != b {
		t.Errorf("fp8 peak: bf16 GEMM %v, want the H100's %v", a.Time, b.Time)
	}
	if a, b := p.GEMMCost(f8), hp.GEMMCost(f8); !(a.Time < b.Time) {
		t.Errorf("fp8 peak ×2: fp8 GEMM %v, want it faster than the H100's %v", a.Time, b.Time)
	}
	label := d.CalibrationLabel()
	for _, want := range []string{"what-if of H100 SXM: fp8 kernels transferred (measured transfer error: GEMM median 5%, p90 21%)", "the others as calibrated (bf16 GEMM held out: median 1.9%", "changed: peak.matrix.fp8=4PFLOP/s"} {
		if !strings.Contains(label, want) {
			t.Errorf("fp8 peak: label %q, want %q in it", label, want)
		}
	}
	if k := d.TransferredKernels(); k != "fp8 kernels" {
		t.Errorf("fp8 peak: TransferredKernels %q", k)
	}

	// A what-if of this what-if is measured from the H100: a bf16 peak
	// adds the bf16 kernels; the fp8 peak set back leaves nothing carried.
	d2, err := Derive(d, []string{"peak.matrix.bf16=1.2PFLOP/s"})
	if err != nil {
		t.Fatal(err)
	}
	if d2.Kept == nil || d2.Changed.Peaks&model.PeakBit(model.BF16) == 0 || d2.Changed.Peaks&model.PeakBit(model.FP8) == 0 || d2.TransferredFrom != "H100 SXM" {
		t.Errorf("fp8 then bf16: changes %+v, from %q: want both, from the H100", d2.Changed, d2.TransferredFrom)
	}
	d3, err := Derive(d, []string{"peak.matrix.fp8=1979TFLOP/s"})
	if err != nil {
		t.Fatal(err)
	}
	if d3.Kept != nil || !reflect.DeepEqual(d3.Eff, h100.Eff) || !strings.HasPrefix(d3.CalibrationLabel(), "what-if of H100 SXM what-if (peak.matrix.fp8=4PFLOP/s): kernels as calibrated") {
		t.Errorf("fp8 set back: %q: want every kernel as calibrated", d3.CalibrationLabel())
	}

	clockless := cloneDevice(h100)
	clockless.Clock = 0
	for _, tc := range []struct {
		base *Device
		set  string
		all  bool
	}{
		{h100, "memory.bandwidth=4TB/s", true},
		{h100, "compute_units=100", true},
		{h100, "clock=1.5GHz", true},
		{h100, "memory.l2=100MB", false},
		{h100, "peak.vector.fp32=100TFLOP/s", false},
		{clockless, "peak.matrix.bf16=1.2PFLOP/s", true},
		{clockless, "peak.matrix.fp8=4PFLOP/s", false},
	} {
		d, err := Derive(tc.base, []string{tc.set})
		if err != nil {
			t.Fatal(err)
		}
		if d.Calibration().Kind != "transferred" || (d.Kept == nil) != tc.all || d.Eff.GEMM[model.BF16].Residual != h100.Eff.GEMM[model.BF16].Residual {
			t.Errorf("%s (clock %v): kept %v, %q: want every kernel carried %v", tc.set, tc.base.Clock, d.Kept != nil, d.CalibrationLabel(), tc.all)
		}
		if tc.all && !strings.HasPrefix(d.CalibrationLabel(), "transferred from H100 SXM") {
			t.Errorf("%s: label %q", tc.set, d.CalibrationLabel())
		}
	}
}
