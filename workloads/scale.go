package workloads

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Families lists the model families Scale grows.
var Families = []string{"gpt3", "llama"}

// anchor is a published size of a family: its parameters, width, and
// FFN width as a multiple of d_model.
type anchor struct {
	params, dModel, ffnRatio float64
}

// gpt3Anchors are the eight sizes of Brown et al. (2020), Table 2.1
// (d_ff = 4·d_model; the 13B d_model read as 5,120, see gpt3-13b.toml).
var gpt3Anchors = []anchor{
	{125e6, 768, 4}, {350e6, 1024, 4}, {760e6, 1536, 4}, {1.3e9, 2048, 4},
	{2.7e9, 2560, 4}, {6.7e9, 4096, 4}, {13e9, 5120, 4}, {175e9, 12288, 4},
}

// llamaAnchors are Llama 2 7B and 13B and Llama 3 70B and 3.1 405B (HF
// config.json files): d_model and intermediate_size/d_model.
var llamaAnchors = []anchor{
	{6.74e9, 4096, 11008.0 / 4096}, {13.0e9, 5120, 13824.0 / 5120},
	{70.6e9, 8192, 28672.0 / 8192}, {405.9e9, 16384, 53248.0 / 16384},
}

// Scale returns a model of the family with about params parameters,
// growing width and depth as the family does: d_model and the FFN ratio
// are interpolated (log-log, extrapolated along the end segments) between
// the family's published sizes, rounded to whole heads of 128 (64 below
// d_model 1,024), and the depth is what brings the count nearest params.
// "gpt3" is a GPT-3 (learned positions, LayerNorm, GELU, biases, tied
// embeddings, vocabulary 50,257, context 2,048); "llama" a Llama 3
// (RoPE, RMSNorm, SwiGLU, 8 KV heads, vocabulary 128,256, context 8,192).
func Scale(family string, params float64) (*Model, error) {
	if !(params >= 1e6 && params <= MaxParams) {
		return nil, fmt.Errorf("workloads: scale: %g parameters is outside 1e6 to %g", params, MaxParams)
	}
	var c Config
	var anchors []anchor
	switch strings.ToLower(family) {
	case "gpt3", "gpt-3", "gpt":
		anchors = gpt3Anchors
		c = Config{Kind: Decoder, Vocab: 50257, MaxContext: 2048, Norm: "layernorm", Activation: "gelu",
			Position: "learned", Bias: bptr(true), TiedEmbeddings: true,
			Source: "workloads.Scale: GPT-3 shapes (Brown et al. 2020, Table 2.1) interpolated"}
	case "llama", "llama3":
		anchors = llamaAnchors
		c = Config{Kind: Decoder, Vocab: 128256, MaxContext: 8192, Norm: "rmsnorm", Activation: "swiglu",
			Position: "rope", Bias: bptr(false),
			Source: "workloads.Scale: Llama 2/3 shapes (HF config.json files) interpolated"}
	default:
		return nil, fmt.Errorf("workloads: scale: unknown family %q (want one of %s)", family, strings.Join(Families, ", "))
	}
	d, ratio := interpolate(anchors, params)
	hd := 128.0
	if d < 1024 {
		hd = 64
	}
	heads := math.Max(1, math.Round(d/hd))
	gqa := c.Kind == Decoder && c.Activation == "swiglu"
	if gqa && heads >= 32 {
		// Llama 2 70B and every Llama 3 size have 8 KV heads, and query
		// heads a multiple of 8 (32, 64, 128), so that each KV head
		// serves a whole group and tensor parallelism up to 8 divides both.
		heads = 8 * math.Round(heads/8)
	}
	c.DModel, c.Heads, c.HeadDim = int(heads*hd), int(heads), int(hd)
	if gqa {
		c.KVHeads = 8
		if c.Heads%8 != 0 {
			c.KVHeads = c.Heads
		}
		c.FFN = int(256 * math.Ceil(ratio*float64(c.DModel)/256))
	} else {
		c.FFN = int(ratio) * c.DModel
	}
	// Depth: the count is affine in the layers; one layer tells the slope.
	c.Layers = 1
	c.Name = "scaled"
	one, err := New(c)
	if err != nil {
		return nil, err
	}
	c.Layers = 2
	two, err := New(c)
	if err != nil {
		return nil, err
	}
	per := two.Params() - one.Params()
	c.Layers = max(1, int(math.Round((params-(one.Params()-per))/per)))
	c.Name = fmt.Sprintf("%s-scaled-%s", strings.ToLower(family), shortCount(params))
	return New(c)
}

// interpolate returns d_model and the FFN ratio at params.
func interpolate(as []anchor, params float64) (d, ratio float64) {
	i := sort.Search(len(as), func(i int) bool { return as[i].params >= params })
	switch {
	case i == 0:
		i = 1
	case i == len(as):
		i = len(as) - 1
	}
	a, b := as[i-1], as[i]
	t := (math.Log(params) - math.Log(a.params)) / (math.Log(b.params) - math.Log(a.params))
	d = math.Exp(math.Log(a.dModel) + t*(math.Log(b.dModel)-math.Log(a.dModel)))
	ratio = a.ffnRatio + math.Max(0, math.Min(1, t))*(b.ffnRatio-a.ffnRatio)
	return d, ratio
}

// shortCount writes a parameter count as 350m, 6.7b, 1.2t.
func shortCount(p float64) string {
	switch {
	case p >= 1e12:
		return trimFloat(p/1e12) + "t"
	case p >= 1e9:
		return trimFloat(p/1e9) + "b"
	}
	return trimFloat(p/1e6) + "m"
}

func trimFloat(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", x), "0"), ".")
}
