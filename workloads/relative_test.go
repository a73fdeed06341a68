package workloads

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestRelativeAttention: T5 v1.1 XXL's attention at batch 2 over 300
// tokens, kernel by kernel as HF's T5Attention runs it (bf16 = 2 bytes,
// fp32 = 4), with the first layer's bias and mask once a forward.
func TestRelativeAttention(t *testing.T) {
	const b, s, h, hd, d, layers = 2, 300, 64, 64, 4096, 24
	const tok, e = float64(b * s), float64(b * h * s * s) // tokens; scores
	ops := mustOps(t, mustResolve(t, "t5-v1.1-xxl-encoder"), Phase{Kind: Prefill, Batch: b, Seq: s, Act: model.BF16, Weights: model.BF16, KV: model.BF16})
	byName := map[string]model.Op{}
	for _, op := range ops {
		byName[op.Name] = op
		if _, ok := op.Kernel.(model.Attention); ok {
			t.Errorf("%s: a fused attention kernel", op.Name)
		}
	}
	gemm := func(m, k, n, batch int) model.GEMM {
		return withBatch(model.GEMM{M: m, K: k, N: n, A: model.BF16, B: model.BF16, C: model.BF16}, batch)
	}
	pass := func(kind string, elems, flops, read, written float64) model.Elementwise {
		return model.Elementwise{Kind: kind, Elements: elems, Work: model.FLOPs(flops), Read: model.Bytes(read), Written: model.Bytes(written)}
	}
	for _, tt := range []struct {
		name  string
		count int
		k     model.Kernel
	}{
		{"embed.relative_bias", 1, model.Gather{Rows: s * s, Width: h, DType: model.BF16}},
		{"embed.relative_mask", 1, pass("add", e, e, 2*(h*s*s+b*s), 2*e)},
		{"attn.q", layers, gemm(b*s, d, h*hd, 1)},
		{"attn.k", layers, gemm(b*s, d, h*hd, 1)},
		{"attn.v", layers, gemm(b*s, d, h*hd, 1)},
		{"attn.copy", 3 * layers, pass("copy", tok*h*hd, 0, 2*tok*h*hd, 2*tok*h*hd)},
		{"attn.scores", layers, gemm(s, hd, s, b*h)},
		{"attn.bias", layers, pass("add", e, e, 2*2*e, 2*e)},
		{"attn.upcast", layers, pass("cast", e, 0, 2*e, 4*e)},
		{"attn.softmax", layers, pass("softmax", e, 5*e, 4*e, 4*e)},
		{"attn.downcast", layers, pass("cast", e, 0, 4*e, 2*e)},
		{"attn.context", layers, gemm(s, s, hd, b*h)},
		{"attn.transpose", layers, pass("copy", tok*h*hd, 0, 2*tok*h*hd, 2*tok*h*hd)},
		{"attn.out", layers, gemm(b*s, h*hd, d, 1)},
	} {
		op, ok := byName[tt.name]
		if !ok {
			t.Errorf("no %s", tt.name)
			continue
		}
		if op.Count != tt.count || op.Kernel != tt.k {
			t.Errorf("%s: ×%d %+v\nwant ×%d %+v", tt.name, op.Count, op.Kernel, tt.count, tt.k)
		}
	}
}

// TestRelativeAttention_badInput: buckets without the bias, and the bias
// where it is not modelled (a decoder, grouped KV heads).
func TestRelativeAttention_badInput(t *testing.T) {
	base := Config{Name: "r", Kind: Encoder, Layers: 2, DModel: 64, Heads: 4, FFN: 128, Vocab: 100, Norm: "rmsnorm", Activation: "gelu"}
	for _, tt := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Position = "relative" }, "relative_buckets"},
		{func(c *Config) { c.Position, c.RelativeBuckets = "none", 32 }, `relative_buckets: only a relative position bias (position "relative") has buckets`},
		{func(c *Config) { c.Kind, c.Position, c.RelativeBuckets = Decoder, "relative", 32 }, "position: a relative position bias is modelled for an encoder"},
		// T5Attention projects a key and a value per head: grouped KV
		// heads would be counted in the parameters but priced as full
		// heads in relativeAttnOps.
		{func(c *Config) { c.Position, c.RelativeBuckets, c.KVHeads = "relative", 32, 1 }, "kv_heads: 1 differs from heads 4: T5's relative-position attention"},
	} {
		c := base
		tt.edit(&c)
		_, err := New(c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", c, err, tt.want)
		}
	}
	c := base
	c.Position, c.RelativeBuckets = "relative", 32
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Position, c.RelativeBuckets = "none", 0
	if plain := mustNew(t, c).Params(); m.Params() != plain+32*4 {
		t.Errorf("a 32-bucket bias over 4 heads adds %.0f parameters, want 128", m.Params()-plain)
	}
}

func mustNew(t *testing.T, c Config) *Model {
	t.Helper()
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
