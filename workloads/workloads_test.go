package workloads

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/model"
)

func mustResolve(t testing.TB, name string) *Model {
	t.Helper()
	m, err := Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustOps(t testing.TB, m *Model, ph Phase) []model.Op {
	t.Helper()
	ops, err := m.Ops(ph)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

func gemmMACs(ops []model.Op) float64 {
	var s float64
	for _, o := range ops {
		s += o.MACs()
	}
	return s
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// TestCatalogParams checks exact parameter counts against their sources.
func TestCatalogParams(t *testing.T) {
	tests := []struct {
		name   string
		params float64
		source string
	}{
		{"llama2-7b", 6738415616, "issue 3; HF meta-llama/Llama-2-7b-hf safetensors total"},
		{"llama2-13b", 13015864320, "HF meta-llama/Llama-2-13b-hf safetensors total"},
		{"llama2-70b", 68976648192, "HF meta-llama/Llama-2-70b-hf safetensors total"},
		{"llama3-8b", 8030261248, "issue 3; HF meta-llama/Meta-Llama-3-8B"},
		{"llama3-70b", 70553706496, "HF meta-llama/Meta-Llama-3-70B safetensors total"},
		{"llama3.1-405b", 405853388800, "HF meta-llama/Llama-3.1-405B safetensors total"},
		{"mixtral-8x7b", 46702792704, "issue 3; HF mistralai/Mixtral-8x7B-v0.1"},
		{"resnet50", 25557032, "issue 3; torchvision resnet50 weights table"},
		{"vgg16", 138357544, "torchvision vgg16 weights table"},
		{"vit-b16", 86567656, "issue 3; torchvision vit_b_16 weights table"},
		{"vit-l16", 304326632, "torchvision vit_l_16 weights table"},
		{"bert-large", 335141888, "issue 3: BertModel with its pooler"},
		{"gpt3-125m", 125226240, "hand count: 12·(12d²+13d) + (50257+2048)·d + 2d, d=768"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustResolve(t, tt.name)
			if m.Params() != tt.params {
				t.Errorf("%s: Params() = %.0f, want %.0f (%s)", tt.name, m.Params(), tt.params, tt.source)
			}
		})
	}
	// Mixtral: about 12.9 B active per token (Jiang et al. 2024: "13B active").
	if a := mustResolve(t, "mixtral-8x7b").ActiveParams(); !near(a, 12.9e9, 0.01) {
		t.Errorf("mixtral-8x7b: ActiveParams() = %.4g, want about 12.9e9", a)
	}
}

// TestGPT3Params: seed 003 gives 1.7461E+11 for GPT-3 175B with vocabulary
// 51,200 and context 2,048. The GPT-2 architecture has 174,615,846,912
// (1.74616E+11); the seed's figure matches to five digits the count
// without the LayerNorm gains and biases, 174,611,103,744.
func TestGPT3Params(t *testing.T) {
	m := mustResolve(t, "gpt3-175b")
	if got := m.Params(); got != 174615846912 {
		t.Errorf("Params() = %.0f, want 174615846912", got)
	}
	if got := m.Params() - m.NormParams(); strconv.FormatFloat(got, 'E', 4, 64) != "1.7461E+11" {
		t.Errorf("Params()-NormParams() = %.0f, want 1.7461E+11 (seed 003)", got)
	}
	if !near(m.Params(), 1.7461e11, 5e-5) {
		t.Errorf("Params() = %.6g, not within 0.005%% of the seed's 1.7461E+11", m.Params())
	}
}

// TestMACs: published multiply-accumulate counts at 224×224, batch 1.
func TestMACs(t *testing.T) {
	tests := []struct {
		name string
		want float64
		tol  float64
	}{
		{"resnet50", 4.09e9, 0.01}, // issue 3; torchvision resnet50: 4.09 GFLOPS (MACs)
		{"vgg16", 15.47e9, 0.01},   // torchvision vgg16: 15.47 GFLOPS (MACs)
		{"vit-b16", 17.6e9, 0.02},  // issue 3; torchvision vit_b_16: 17.56 GFLOPS (MACs)
		{"vit-l16", 61.55e9, 0.02}, // torchvision vit_l_16: 61.55 GFLOPS (MACs)
	}
	for _, tt := range tests {
		m := mustResolve(t, tt.name)
		ops := ExpandAttention(mustOps(t, m, Phase{Kind: Prefill, Batch: 1}))
		if got := gemmMACs(ops); !near(got, tt.want, tt.tol) {
			t.Errorf("%s: %.4g MACs, want %.4g ±%.0f%%", tt.name, got, tt.want, 100*tt.tol)
		}
	}
}

// seedPhase is the view of seed 003's table.
var seedPhase = Phase{Kind: Prefill, Batch: 1, Seq: 2048, Embedding: EmbedOneHot, PerHead: true, AllLogits: true}

// TestSeedGPT3Table reproduces every row of seed 003's GPT-3 175B table
// (../shared/data/seed-gpt3-gemm-table.csv): m, k, n and MACs per head
// where the row is per head; its Q·Kᵀ row (all 96 heads at once, k =
// 12288) as 96 per-head GEMMs (k = 128) of the same MACs; and the totals.
func TestSeedGPT3Table(t *testing.T) {
	col, recs := csvtest.Read(t, filepath.Join("..", "..", "shared", "data", "seed-gpt3-gemm-table.csv"), "stage", "op", "m", "k", "n", "per", "macs")
	m := mustResolve(t, "gpt3-175b")
	ops := ExpandAttention(mustOps(t, m, seedPhase))
	byName := map[string]model.Op{}
	var total float64
	for _, o := range ops {
		if _, ok := o.Kernel.(model.GEMM); ok {
			byName[o.Name] = o
			total += o.MACs()
		}
	}
	rowOp := map[string]string{
		"one-hot x embedding weights": "embed.onehot", "X*WQ=Q": "attn.q", "X*WK=K": "attn.k", "X*WV=V": "attn.v",
		"Q*KT=QK": "attn.qk", "QK*V": "attn.pv", "linear transformation (output projection)": "attn.out",
		"linear + bias (up)": "ffn.up", "linear + bias (down)": "ffn.down", "hidden x vocabulary (logits)": "lm_head",
	}
	const layers, heads = 96, 96
	var seedTotal float64
	for _, r := range recs {
		stage, name, per := r[col["stage"]], r[col["op"]], r[col["per"]]
		sm, _ := strconv.Atoi(r[col["m"]])
		sk, _ := strconv.Atoi(r[col["k"]])
		sn, _ := strconv.Atoi(r[col["n"]])
		smacs, _ := strconv.ParseFloat(r[col["macs"]], 64)
		op, ok := byName[rowOp[name]]
		if !ok {
			t.Errorf("seed row %q: no op %q", name, rowOp[name])
			continue
		}
		g := op.Kernel.(model.GEMM)
		if op.Stage != stage {
			t.Errorf("%s: stage %q, seed %q", name, op.Stage, stage)
		}
		each := float64(g.M) * float64(g.K) * float64(g.N)
		var count float64
		switch per {
		case "head":
			count = layers * heads
			if g.M != sm || g.K != sk || g.N != sn || g.Batch != heads || op.Count != layers {
				t.Errorf("%s: %dx%dx%d batch %d count %d, seed %dx%dx%d per head ×%d heads ×%d layers", name, g.M, g.K, g.N, g.Batch, op.Count, sm, sk, sn, heads, layers)
			}
		case "all-heads":
			// The seed multiplies Q (2048×12288, all heads) by Kᵀ: per
			// head that is 2048×128 · 128×2048, 96 times.
			count = layers
			if g.M != sm || g.K*heads != sk || g.N != sn || g.Batch != heads {
				t.Errorf("%s: per head %dx%dx%d ×%d, seed all heads %dx%dx%d", name, g.M, g.K, g.N, g.Batch, sm, sk, sn)
			}
			each *= heads
		case "layer":
			count = layers
			if g.M != sm || g.K != sk || g.N != sn || op.Count != layers {
				t.Errorf("%s: %dx%dx%d count %d, seed %dx%dx%d per layer", name, g.M, g.K, g.N, op.Count, sm, sk, sn)
			}
		case "model":
			count = 1
			if g.M != sm || g.K != sk || g.N != sn || op.Count != 1 {
				t.Errorf("%s: %dx%dx%d count %d, seed %dx%dx%d once", name, g.M, g.K, g.N, op.Count, sm, sk, sn)
			}
		default:
			t.Fatalf("seed row %q: unknown per %q", name, per)
		}
		// The seed prints 6 significant digits.
		if !near(each, smacs, 5e-6) {
			t.Errorf("%s: %.6g MACs per %s, seed %.6g", name, each, per, smacs)
		}
		seedTotal += smacs * count
	}
	if !near(total, seedTotal, 1e-5) {
		t.Errorf("total %.6g MACs, seed rows sum to %.6g", total, seedTotal)
	}
}

// TestInvariants: the metamorphic checks of issue 3.
func TestInvariants(t *testing.T) {
	for _, name := range []string{"gpt3-175b", "llama2-7b", "llama3-8b", "mixtral-8x7b", "bert-large", "vit-b16", "resnet50", "gpt-j-6b"} {
		m := mustResolve(t, name)
		decoder := m.Kind() == Decoder
		t.Run(name+"/batch-linear", func(t *testing.T) {
			kinds := []PhaseKind{Prefill, TrainForward, TrainBackward}
			if decoder {
				kinds = append(kinds, Decode)
			}
			for _, k := range kinds {
				ph := Phase{Kind: k, Batch: 2, Seq: 512, Context: 1000, AllLogits: true}
				one, four := ph, ph
				four.Batch = 8
				a := gemmMACs(ExpandAttention(mustOps(t, m, one)))
				b := gemmMACs(ExpandAttention(mustOps(t, m, four)))
				if m.cfg.Experts > 0 {
					continue // routed tokens round to whole experts
				}
				if !near(b, 4*a, 1e-12) {
					t.Errorf("%s: 4× batch gives %.6g MACs, want 4 × %.6g", k, b, a)
				}
			}
		})
		t.Run(name+"/backward-2x", func(t *testing.T) {
			fwd := gemmMACs(ExpandAttention(mustOps(t, m, Phase{Kind: TrainForward, Batch: 2, Seq: 256})))
			bwd := gemmMACs(ExpandAttention(mustOps(t, m, Phase{Kind: TrainBackward, Batch: 2, Seq: 256})))
			if !near(bwd, 2*fwd, 1e-12) {
				t.Errorf("backward %.6g MACs, want 2 × forward %.6g", bwd, fwd)
			}
		})
		if !decoder {
			continue
		}
		t.Run(name+"/decode-context", func(t *testing.T) {
			at := func(ctx int) (attn, rest float64) {
				for _, o := range ExpandAttention(mustOps(t, m, Phase{Kind: Decode, Batch: 4, Context: ctx})) {
					if o.Class == model.ClassAttention {
						attn += o.MACs()
					} else {
						rest += o.MACs()
					}
				}
				return
			}
			a1, r1 := at(1000)
			a2, r2 := at(3000)
			if r1 != r2 {
				t.Errorf("non-attention MACs change with context: %.6g vs %.6g", r1, r2)
			}
			// Q·Kᵀ and P·V grow with the keys: (3000+1)/(1000+1).
			if !near(a2, a1*3001/1001, 1e-12) {
				t.Errorf("attention MACs %.6g at 3000, want %.6g", a2, a1*3001/1001)
			}
		})
		if m.cfg.Experts > 0 {
			continue
		}
		t.Run(name+"/params-times-tokens", func(t *testing.T) {
			// Forward GEMM MACs = (parameters that multiply activations) ×
			// tokens + the attention products. The input embedding of an
			// untied model is a lookup, and positions, biases and norms
			// are additions: together under 0.2% here.
			const b, s = 2, 1024
			ops := ExpandAttention(mustOps(t, m, Phase{Kind: TrainForward, Batch: b, Seq: s}))
			var attn, all float64
			for _, o := range ops {
				all += o.MACs()
				if o.Class == model.ClassAttention {
					attn += o.MACs()
				}
			}
			c := m.cfg
			matrix := m.Params()
			if !c.TiedEmbeddings {
				matrix -= float64(c.Vocab) * float64(c.DModel)
			}
			if got, want := all-attn, matrix*b*s; !near(got, want, 2e-3) {
				t.Errorf("forward GEMM MACs less attention %.6g, want ≈ params × tokens %.6g", got, want)
			}
		})
	}
}

// TestTP: tensor parallelism splits the layer GEMMs and adds two all-reduces.
func TestTP(t *testing.T) {
	m := mustResolve(t, "llama3-70b")
	one := mustOps(t, m, Phase{Kind: Prefill, Batch: 1, Seq: 1024})
	eight := mustOps(t, m, Phase{Kind: Prefill, Batch: 1, Seq: 1024, TP: 8})
	var layer1, layer8 float64
	var allreduces int
	for _, o := range one {
		if o.Count == 80 {
			layer1 += o.MACs()
		}
	}
	for _, o := range eight {
		if o.Count == 80 {
			layer8 += o.MACs()
		}
		if c, ok := o.Kernel.(model.Collective); ok && c.Kind == model.AllReduce && c.Ranks == 8 {
			allreduces += o.Count
			if want := model.BF16.Bytes(1024 * 8192); c.Size != want {
				t.Errorf("all-reduce of %v, want %v", c.Size, want)
			}
		}
	}
	if !near(layer8, layer1/8, 1e-12) {
		t.Errorf("per-device layer MACs %.6g at tp 8, want %.6g", layer8, layer1/8)
	}
	if allreduces != 160 {
		t.Errorf("%d all-reduces, want 2 per layer = 160", allreduces)
	}
	// TP beyond the KV heads replicates them, as vLLM does: each of 16
	// ranks computes 64/16 query heads and one of the 8 KV heads.
	sixteen := mustOps(t, m, Phase{Kind: Prefill, Batch: 1, Seq: 16, TP: 16})
	for _, o := range sixteen {
		if o.Name == "attn.qkv" {
			if g := o.Kernel.(model.GEMM); g.N != (4+2)*128 {
				t.Errorf("tp 16: qkv N = %d, want (4 + 2·1)·128", g.N)
			}
		}
		if a, ok := o.Kernel.(model.Attention); ok && (a.Heads != 4 || a.KVHeads != 1) {
			t.Errorf("tp 16: attention of %d/%d heads, want 4/1", a.Heads, a.KVHeads)
		}
	}
	odd, err := New(Config{Name: "odd", Kind: Decoder, Layers: 2, DModel: 3072, Heads: 24, KVHeads: 8, FFN: 8192, Vocab: 1000, Norm: "rmsnorm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odd.Ops(Phase{Kind: Prefill, Batch: 1, Seq: 16, TP: 12}); err == nil || !strings.Contains(err.Error(), "kv_heads") {
		t.Errorf("tp 12 over 8 kv heads: err = %v, want one naming kv_heads", err)
	}
	if _, err := m.Ops(Phase{Kind: Prefill, Batch: 1, Seq: 16, TP: 3}); err == nil || !strings.Contains(err.Error(), "heads") {
		t.Errorf("tp 3: err = %v, want one naming heads", err)
	}
}

func TestDecodeShapes(t *testing.T) {
	m := mustResolve(t, "llama3-8b")
	ops := mustOps(t, m, Phase{Kind: Decode, Batch: 16, Context: 4095})
	for _, o := range ops {
		switch k := o.Kernel.(type) {
		case model.GEMM:
			if k.M != 16 {
				t.Errorf("%s: M = %d, want the batch 16", o.Name, k.M)
			}
		case model.Attention:
			want := model.Attention{Batch: 16, Heads: 32, KVHeads: 8, QLen: 1, KVLen: 4096, HeadDim: 128, Causal: true, Fused: true, DType: model.BF16, KVDType: model.BF16}
			if k != want {
				t.Errorf("attention %+v, want %+v", k, want)
			}
		}
	}
	if got, want := m.KVBytesPerToken(model.BF16), model.Bytes(2*32*8*128*2); got != want {
		t.Errorf("KVBytesPerToken = %v, want %v", got, want)
	}
	// The embedding and the LM head (128256 × 4096 each) stay in bf16
	// (model.VocabType); the rest is int4 with its group scales.
	vocab := 2 * 128256 * 4096.0
	if got, want := m.WeightBytes(model.INT4), model.Bytes((8030261248-vocab)*0.5*(1+2.0/64)+2*vocab); math.Abs(float64(got-want)) > 1 {
		t.Errorf("WeightBytes(int4) = %v, want %v", got, want)
	}
	if got, want := m.VocabParams(), vocab; got != want {
		t.Errorf("VocabParams = %v, want %v", got, want)
	}
	if _, err := m.Ops(Phase{Kind: Decode}); err == nil {
		t.Error("decode at batch 0 gave no error")
	}
	if _, err := mustResolve(t, "bert-large").Ops(Phase{Kind: Decode, Batch: 1}); err == nil {
		t.Error("decode of an encoder gave no error")
	}
}

func TestCNNActivations(t *testing.T) {
	m := mustResolve(t, "resnet50")
	a1, a4 := m.ActivationBytes(1, model.FP16), m.ActivationBytes(4, model.FP16)
	if a1 <= 0 || a4 != 4*a1 {
		t.Errorf("ActivationBytes = %v at batch 1, %v at 4", a1, a4)
	}
	// The stem's conv output alone is 64×112×112 elements.
	if a1 < model.FP16.Bytes(64*112*112) {
		t.Errorf("ActivationBytes(1) = %v, less than the first conv's output", a1)
	}
}

func TestScale(t *testing.T) {
	tests := []struct {
		family string
		params float64
		dModel int // the family's published width at that size
	}{
		{"gpt3", 175e9, 12288}, // Brown et al. 2020, Table 2.1
		{"gpt3", 1.3e9, 2048},
		{"llama", 70e9, 8192}, // Llama 3 70B
		{"llama", 8e9, 4096},
	}
	for _, tt := range tests {
		m, err := Scale(tt.family, tt.params)
		if err != nil {
			t.Fatal(err)
		}
		if !near(m.Params(), tt.params, 0.05) {
			t.Errorf("Scale(%s, %.3g) has %.4g parameters", tt.family, tt.params, m.Params())
		}
		if d := m.Shape().DModel; !near(float64(d), float64(tt.dModel), 0.1) {
			t.Errorf("Scale(%s, %.3g): d_model %d, want about %d", tt.family, tt.params, d, tt.dModel)
		}
	}
	prev := 0.0
	for p := 1e8; p < 2e12; p *= 1.5 {
		m, err := Scale("llama", p)
		if err != nil {
			t.Fatalf("Scale(llama, %.3g): %v", p, err)
		}
		if m.Params() <= prev {
			t.Errorf("Scale(llama, %.3g) = %.4g, not above the previous %.4g", p, m.Params(), prev)
		}
		prev = m.Params()
	}
	if _, err := Scale("bloom", 1e9); err == nil {
		t.Error("Scale(bloom) gave no error")
	}
}

func TestCatalogSources(t *testing.T) {
	ms, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 20 {
		t.Errorf("catalog has %d models", len(ms))
	}
	for _, m := range ms {
		if m.Source() == "" {
			t.Errorf("%s has no source", m.Name())
		}
		for _, k := range []PhaseKind{Prefill, TrainForward, TrainBackward} {
			ops := mustOps(t, m, Phase{Kind: k, Batch: 2, Seq: 128})
			for _, o := range ops {
				f, b := float64(o.FLOPs()), float64(o.Bytes())
				if !finite(f) || !finite(b) || f < 0 || b < 0 || o.Count <= 0 {
					t.Errorf("%s %s %s: FLOPs %v bytes %v count %d", m.Name(), k, o.Name, f, b, o.Count)
				}
			}
		}
	}
}

func BenchmarkOps(b *testing.B) {
	m := mustResolve(b, "llama3-70b")
	for _, bc := range []struct {
		name string
		ph   Phase
	}{
		{"llama3-70b/decode", Phase{Kind: Decode, Batch: 8, Context: 4096}},
		{"llama3-70b/prefill-2048", Phase{Kind: Prefill, Batch: 1, Seq: 2048}},
		{"llama3-70b/train-bwd-tp8", Phase{Kind: TrainBackward, Batch: 1, Seq: 2048, TP: 8}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Ops(bc.ph); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestScale_llamaGQA checks that large scaled Llama models use grouped-query
// attention with 8 KV heads, as Llama 2 70B and Llama 3 do (their HF
// config.json files: num_key_value_heads = 8).
func TestScale_llamaGQA(t *testing.T) {
	for _, p := range []float64{8e9, 70e9, 280e9, 405e9} {
		m, err := Scale("llama", p)
		if err != nil {
			t.Fatal(err)
		}
		s := m.Shape()
		if s.KVHeads != 8 || s.Heads%8 != 0 {
			t.Errorf("Scale(llama, %.3g): %d heads, %d KV heads; want 8 KV heads and heads a multiple of 8", p, s.Heads, s.KVHeads)
		}
	}
}

// TestResolve_dirAndSuggestion checks --model's forms beyond a catalog
// name and a file: a HuggingFace model directory reads its config.json;
// an empty directory, or one without a config.json, is a clear error; a
// misspelt name gets the closest catalog name.
