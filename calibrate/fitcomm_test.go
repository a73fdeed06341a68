package calibrate

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// exhaustive turns on the slow fits over every third-party attention
// measurement (minutes on a loaded machine): go test ./calibrate
// -run AIConfigurator -exhaustive.
var exhaustive = flag.Bool("exhaustive", false, "run the slow fits of every third-party attention file, 5-fold")

// withIntra returns a copy of testDevice with an NVLink 4 link
// (NVIDIA H100 datasheet: 900 GB/s bidirectional, 450 per direction).
func withIntra(link hardware.Network) *hardware.Device {
	d := testDevice()
	link.Name, link.Bandwidth, link.DevicesPerNode, link.Topology = "NVLink 4", 450e9, 8, "switch"
	d.Intra = link
	src := map[string]string{}
	for k, v := range d.Sources {
		src[k] = v
	}
	d.Sources = src
	for _, k := range []string{"bandwidth", "latency", "efficiency", "base_latency", "allreduce_latency", "allreduce_efficiency", "efficiency_half_size", "efficiency_slope", "efficiency_rank_factor", "devices_per_node"} {
		d.Sources["interconnect.intra."+k] = "assumed: test link"
	}
	return d
}

// syntheticCollectives times all-reduces, all-gathers and one-shot
// all-reduces from 1 KiB to 256 MiB on 2, 4 and 8 ranks over dev's link,
// with a relative noise of sd.
func syntheticCollectives(dev *hardware.Device, sd float64) []Measurement {
	rng := rand.New(rand.NewPCG(3, 9))
	var ms []Measurement
	for _, k := range []string{KernelAllReduce, KernelAllGather, KernelAllReduceOneShot} {
		for _, r := range []int{2, 4, 8} {
			for s := model.Bytes(1 << 10); s <= 256<<20; s *= 2 {
				m := Measurement{Device: dev.Name, Kernel: k, DType: model.BF16, Ranks: r, Bytes: s, Line: len(ms) + 2}
				if k == KernelAllReduceOneShot && s > 1<<20 {
					continue
				}
				m.Time = collectiveTime(m, dev.Intra.Link()) * model.Seconds(math.Exp(sd*rng.NormFloat64()))
				ms = append(ms, m)
			}
		}
	}
	return ms
}

func TestFitCollectives_recoversSynthetic(t *testing.T) {
	want := hardware.Network{Latency: 0.7e-6, Efficiency: 0.8, Base: 5e-6, AllReduceLatency: 3e-6, AllReduceEfficiency: 0.6,
		EfficiencyHalf: 4 << 20, EfficiencySlope: 0.45, RankFactor: 0.5}
	truth := withIntra(want)
	ms := syntheticCollectives(truth, 0.01)
	start := withIntra(hardware.Network{Latency: 1e-6, Efficiency: 1})
	res, err := Fit(start, ms, Options{Folds: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Device.Intra
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"latency", float64(got.Latency), float64(want.Latency), 0.1},
		{"efficiency", got.Efficiency, want.Efficiency, 0.05},
		{"base_latency", float64(got.Base), float64(want.Base), 0.1},
		{"allreduce_latency", float64(got.AllReduceLatency), float64(want.AllReduceLatency), 0.05},
		{"allreduce_efficiency", got.AllReduceEfficiency, want.AllReduceEfficiency, 0.05},
		{"efficiency_half_size", float64(got.EfficiencyHalf), float64(want.EfficiencyHalf), 0.15},
		{"efficiency_slope", got.EfficiencySlope, want.EfficiencySlope, 0.1},
		{"efficiency_rank_factor", got.RankFactor, want.RankFactor, 0.15},
	} {
		if math.Abs(c.got/c.want-1) > c.tol {
			t.Errorf("%s: fitted %g, want %g ± %.0f%%", c.name, c.got, c.want, 100*c.tol)
		}
	}
	if h := res.Classes[0].HeldOut; h.Median > 0.02 {
		t.Errorf("held-out median %.1f%% on 1%% noise", 100*h.Median)
	}
}

func TestWriteDevice_attentionAndLinkKeys(t *testing.T) {
	// The decode keys of 8-bit KV caches and the link's efficiency curve
	// are written and read back by the hardware loader.
	dev := withIntra(hardware.Network{Latency: 0.7e-6, Efficiency: 0.8, Base: 5e-6, AllReduceLatency: 3e-6, AllReduceEfficiency: 0.6, EfficiencyHalf: 4 << 20, EfficiencySlope: 0.45, RankFactor: 0.5})
	dev.Eff.Attention = model.AttentionParams{Compute: 0.5, Memory: 0.8, Launch: 10e-6, DecodeMemory: 0.85, DecodeLaunch: 7e-6,
		DecodeCTABandwidth: 60e9, DecodeCTAOverhead: 4.8e-6, DecodeGroupOverhead: 20e-9, DecodeHeadOverhead: 1.1e-6, DecodeMaxGroup: 32,
		DecodeSplitTokens: 1024, DecodeSplitCost: 1e-6, DecodeHeadBandwidth: 70e9, DecodeCTABandwidth8: 1e12, DecodeHeadBandwidth8: 40e9,
		DecodeCTAOverhead8: 1.3e-6, DecodeGroupOverhead8: 20e-9, DecodeLaunch8: 5e-6, DecodeDimOverhead: 0.1e-6, Source: "test"}
	path := filepath.Join(t.TempDir(), "h100.toml")
	if err := WriteDeviceFile(path, dev, []string{"test"}); err != nil {
		t.Fatal(err)
	}
	back, err := hardware.LoadFile(path)
	if err != nil {
		data, _ := os.ReadFile(path)
		t.Fatalf("%v\n%s", err, data)
	}
	if back.Eff.Attention.DecodeCTAOverhead8 != dev.Eff.Attention.DecodeCTAOverhead8 || back.Eff.Attention.DecodeDimOverhead != dev.Eff.Attention.DecodeDimOverhead {
		t.Errorf("attention read back %+v", back.Eff.Attention)
	}
	if back.Intra.EfficiencyHalf != dev.Intra.EfficiencyHalf || back.Intra.EfficiencySlope != dev.Intra.EfficiencySlope || back.Intra.RankFactor != dev.Intra.RankFactor {
		t.Errorf("link read back %+v", back.Intra)
	}
	p1, p2 := dev.Processor(), back.Processor()
	for _, kv := range []model.DType{model.BF16, model.FP8} {
		a := model.Attention{Batch: 64, Heads: 32, KVHeads: 8, QLen: 1, KVLen: 2048, HeadDim: 128, Causal: true, Fused: true, DType: model.BF16, KVDType: kv}
		if x, y := p1.AttentionCost(a).Time, p2.AttentionCost(a).Time; x != y {
			t.Errorf("decode with %v KV: %v written, %v read back", kv, x, y)
		}
	}
	c := model.Collective{Kind: model.AllReduce, Size: 1 << 20, Ranks: 8}
	if x, y := model.CollectiveTime(c, dev.Intra.Link()), model.CollectiveTime(c, back.Intra.Link()); x != y {
		t.Errorf("all-reduce: %v written, %v read back", x, y)
	}
}

// commFiles are aiconfigurator's NCCL and TensorRT-LLM custom all-reduce
// tables per device.
var commFiles = map[string][]string{
	"h100": {"h100_sxm_comm_nccl_2.29.2_nccl_perf.csv", "h100_sxm_comm_trtllm_1.3.0rc20_custom_allreduce_perf.csv"},
	"h200": {"h200_sxm_comm_nccl_2.29.2_nccl_perf.csv", "h200_sxm_comm_trtllm_1.3.0rc20_custom_allreduce_perf.csv"},
	"a100": {"a100_sxm_comm_nccl_2.27.3_nccl_perf.csv", "a100_sxm_comm_trtllm_1.0.0_custom_allreduce_perf.csv"},
}

func TestAIConfigurator_collectivesHeldOut(t *testing.T) {
	// NCCL (all-reduce, all-gather, reduce-scatter, all-to-all; half and
	// int8) and TensorRT-LLM's custom all-reduce, 5-fold held out.
	// Measured 2026-11-22 (median / p90): H100 7.2% / 28.6%, H200 7.9% /
	// 26.2%, A100 8.7% / 24.5% (before the size-dependent efficiency and
	// message_size read as elements: 14.5/47.4, 14.7/46.0, 17.9/48.4).
	// With the rank factor (2026-11-26): H100 5.9% / 24.5%, H200 6.5% /
	// 22.0%, A100 6.7% / 22.5%; the bounds below hold that gain.
	// The p90 is NCCL's protocol switches (steps, not a smooth curve) and
	// the custom all-reduce beyond 1 MiB (two-shot, priced one-shot).
	v := validationDir(t)
	for _, tt := range []struct {
		hw       string
		med, p90 float64
	}{{"h100", 0.065, 0.26}, {"h200", 0.07, 0.24}, {"a100", 0.075, 0.24}} {
		t.Run(tt.hw, func(t *testing.T) {
			dev := catalogDevice(t, tt.hw)
			names := strings.Join(append([]string{dev.Name}, dev.Aliases...), "|")
			var ms []Measurement
			for _, f := range commFiles[tt.hw] {
				ms = append(ms, readKind(t, filepath.Join(v, "aiconfigurator", f), names, "collective", model.Invalid)...)
			}
			res, err := Fit(dev, ms, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Classes[0]
			t.Logf("%s collective n=%d in-sample %.1f%%/%.1f%% held-out %.1f%%/%.1f%%", tt.hw, c.Points,
				100*c.InSample.Median, 100*c.InSample.P90, 100*c.HeldOut.Median, 100*c.HeldOut.P90)
			if c.HeldOut.Median > tt.med || c.HeldOut.P90 > tt.p90 {
				t.Errorf("held-out |error| median %.1f%% p90 %.1f%%, want ≤ %.1f%%, %.1f%%", 100*c.HeldOut.Median, 100*c.HeldOut.P90, 100*tt.med, 100*tt.p90)
			}
		})
	}
}

// With every ring point at one traffic share (one kind at one rank
// count), the rank factor γ trades off against the efficiency and no
// value of it is measured: the fit must hold the device's γ, not write
// whatever the optimiser wandered to as fitted (γ 0.77 from a γ-0 truth),
// and say so.
func TestFitCollectives_rankFactorNeedsTwoShares(t *testing.T) {
	for _, g := range []float64{0, 0.3} {
		truth := withIntra(hardware.Network{Latency: 0.7e-6, Efficiency: 0.8, Base: 5e-6, EfficiencyHalf: 4 << 20, EfficiencySlope: 0.45, RankFactor: g})
		var ms []Measurement
		for _, m := range syntheticCollectives(truth, 0.01) {
			if m.Kernel == KernelAllGather && m.Ranks == 8 {
				ms = append(ms, m)
			}
		}
		start := withIntra(hardware.Network{Latency: 1e-6, Efficiency: 1, RankFactor: g})
		start.Sources["interconnect.intra.efficiency_rank_factor"] = "test: given"
		res, err := Fit(start, ms, Options{Folds: 3})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Device.Intra
		if got.RankFactor != g {
			t.Errorf("γ %v: fitted γ %v from one traffic share; want the device's %v", g, got.RankFactor, g)
		}
		if s := res.Device.Sources["interconnect.intra.efficiency_rank_factor"]; s != "test: given" {
			t.Errorf("γ %v: source of γ %q, want the device's", g, s)
		}
		if math.Abs(got.Efficiency/0.8-1) > 0.05 {
			t.Errorf("γ %v: efficiency %v, want 0.8 ± 5%%", g, got.Efficiency)
		}
		warned := false
		for _, w := range res.Warnings {
			warned = warned || strings.Contains(w.Error(), "efficiency_rank_factor")
		}
		if !warned {
			t.Errorf("γ %v: no warning that efficiency_rank_factor was not fitted: %v", g, res.Warnings)
		}
	}
}
