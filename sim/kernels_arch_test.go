package sim_test

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// TestKernels_InferSimH800 compares the MLA decode (FlashMLA) and the
// grouped-GEMM MoE (DeepGEMM fp8) kernels with InferSim's H800
// measurements (../shared/validation/raw/alibaba__InferSim/bench_data;
// SOURCES.md), priced on the catalog's H100 SXM: the H800 is the same
// silicon, its NVLink cut. The H100's MLA and MoE tables are fitted to
// aiconfigurator's TensorRT-LLM kernels (TRT-LLM's MLA, CUTLASS MoE
// modules), never to these libraries' kernels: this is the transferred
// figure (8.9% and 8.7% median |error|, 2026-11-26; 16.0% for the grouped
// GEMM before the MoE table priced the module's finalisation by its
// reduction time, which the grouped GEMMs' fractions had absorbed; before
// the MLA and MoE tables, 15.5% and 7.6%), and the test fails beyond 25%. Fitted to
// these tables, 5-fold held out, they are within 4.1% and 4.3%
// (calibrate's TestInferSim_H800). Rows faster than the HBM floor (the
// decode grouped GEMMs at 1 token per expert, 256 experts' fp8 weights
// in under 2.2 ms) are left out as impossible.
func TestKernels_InferSimH800(t *testing.T) {
	root := filepath.Join("..", "..", "shared", "validation", "raw", "alibaba__InferSim", "bench_data")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("../shared/validation not available: %v", err)
	}
	sys, _ := load(t, "h100", "", 1)
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	median := func(e []float64) float64 {
		sort.Float64s(e)
		if len(e) == 0 {
			return math.NaN()
		}
		return e[len(e)/2]
	}
	price := func(k model.Kernel) float64 {
		r, err := sim.Kernel(sys.Device, k, true)
		if err != nil {
			t.Fatal(err)
		}
		return float64(r.Time)
	}
	// MLA decode: 128 heads, latent 512 + rope 64.
	var mla []float64
	for _, r := range csvtest.Rows(t, filepath.Join(root, "mla", "decode", "h800", "128-512-64.csv"), "batch_size", "kv_len", "kv_dtype", "latency_us") {
		kv := model.BF16
		if r["kv_dtype"] == "fp8" {
			kv = model.FP8
		}
		a := model.Attention{Batch: int(num(r["batch_size"])), Heads: 128, KVHeads: 1, QLen: 1, KVLen: int(num(r["kv_len"])),
			HeadDim: 576, VDim: 512, Latent: true, Causal: true, Fused: true, DType: model.BF16, KVDType: kv}
		mla = append(mla, math.Abs(price(a)/(num(r["latency_us"])*1e-6)-1))
	}
	// Grouped GEMM (fp8): up = gate and up (N = 2·inter), down.
	var moe []float64
	floor := float64(sys.Device.Memory.Bandwidth)
	for _, p := range []string{"decode", "prefill"} {
		for _, r := range csvtest.Rows(t, filepath.Join(root, "grouped_gemm", p, "h800", "data.csv"), "num_local_experts", "tokens_per_expert", "hidden_size", "intermediate_size", "up_proj_us", "down_proj_us") {
			e, per := num(r["num_local_experts"]), num(r["tokens_per_expert"])
			h, in := int(num(r["hidden_size"])), int(num(r["intermediate_size"]))
			for _, g := range []struct {
				k, n int
				us   float64
			}{{h, 2 * in, num(r["up_proj_us"])}, {in, h, num(r["down_proj_us"])}} {
				k := model.GroupedGEMM{Rows: int(e * per), Experts: e, K: g.k, N: g.n, A: model.FP8, B: model.FP8, C: model.BF16}
				if float64(k.Bytes())/(g.us*1e-6) > floor {
					continue // faster than HBM: impossible
				}
				moe = append(moe, math.Abs(price(k)/(g.us*1e-6)-1))
			}
		}
	}
	mm, mg := median(mla), median(moe)
	t.Logf("H800 (InferSim) on the H100 model: FlashMLA decode median |error| %.1f%% over %d rows; DeepGEMM grouped GEMM %.1f%% over %d rows", 100*mm, len(mla), 100*mg, len(moe))
	if !(mm < 0.25) || !(mg < 0.25) {
		t.Errorf("median |error|: MLA decode %.1f%%, grouped GEMM %.1f%% (want under 25%% uncalibrated)", 100*mm, 100*mg)
	}
}
