package serve_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestGraphLimit: the largest batch each preset replays as a CUDA graph,
// as the engines' code derives it (serve/graphs.go gives the sources):
// vLLM v0.6.0 max_num_seqs padded up to 1, 2, 4 or a multiple of 8 (at
// most 8192); vLLM V1 the largest of [1, 2, 4] + range(8, min(2 ×
// max_num_seqs, 512) + 1, 8) within the token budget, in tokens; SGLang
// v0.4.0 the largest of 1, 2, 4, 8 … 160 within cuda_graph_max_bs;
// TensorRT-LLM v0.14 none (no graphs, 0).
func TestGraphLimit(t *testing.T) {
	h100 := model.Bytes(79.11 * (1 << 30))
	small := model.Bytes(24 << 30)
	for _, c := range []struct {
		name             string
		engine           string
		capacity         model.Bytes
		seqs, tokens, bs int // 0: the preset's
		want             int
	}{
		{"vllm-0.6 defaults", "vllm-0.6", h100, 0, 0, 0, 256},
		{"vllm-0.6 100 seqs", "vllm-0.6", h100, 100, 0, 0, 104},
		{"vllm-0.6 3 seqs", "vllm-0.6", h100, 3, 0, 0, 4},
		{"vllm-0.6 1 seq", "vllm-0.6", h100, 1, 0, 0, 1},
		{"vllm-0.6 9000 seqs", "vllm-0.6", h100, 9000, 0, 0, 8192},
		{"vllm-0.6 given 60", "vllm-0.6", h100, 0, 0, 60, 56},
		{"vllm h100 (1024 seqs)", "vllm", h100, 0, 0, 0, 512},
		{"vllm 24 GiB (256 seqs)", "vllm", small, 0, 0, 0, 512},
		{"vllm 100 seqs", "vllm", h100, 100, 0, 0, 200},
		{"vllm 5 seqs", "vllm", h100, 5, 0, 0, 8},
		{"vllm 1 seq", "vllm", h100, 1, 0, 0, 4},
		{"vllm budget 300", "vllm", h100, 0, 300, 0, 296},
		{"vllm budget 3", "vllm", h100, 0, 3, 0, 2},
		{"vllm cuda_graph_sizes 1024", "vllm", h100, 0, 0, 1024, 1024},
		{"vllm cuda_graph_sizes 100", "vllm", h100, 0, 0, 100, 96},
		{"sglang h100", "sglang", h100, 0, 0, 0, 160},
		{"sglang 24 GiB", "sglang", small, 0, 0, 0, 8},
		{"sglang given 31", "sglang", h100, 0, 0, 31, 24},
		{"sglang given 256", "sglang", h100, 0, 0, 256, 160},
		{"sglang given 3", "sglang", h100, 0, 0, 3, 2},
		{"trtllm", "trtllm", h100, 0, 0, 0, 0},
	} {
		e, err := serve.Preset(c.engine, c.capacity)
		if err != nil {
			t.Fatal(err)
		}
		if c.seqs > 0 {
			e.MaxSeqs = c.seqs
		}
		if c.tokens > 0 {
			e.MaxTokens = c.tokens
		}
		if c.bs > 0 {
			e.GraphMaxBatch = c.bs
		}
		if got := e.GraphLimit(); got != c.want {
			t.Errorf("%s: graphs to batch %d, want %d", c.name, got, c.want)
		}
	}
	e, _ := serve.Preset("vllm", h100)
	e.Graphs = false
	if got := e.GraphLimit(); got != 0 {
		t.Errorf("vllm without graphs: limit %d, want 0", got)
	}
}

// TestVLLMGraphLimit: vLLM V1 runs an iteration of more tokens than its
// largest captured size without graphs. 600 requests of 4 + 64 tokens
// at once on Llama 3 8B on an H100 (max_num_seqs 1024): after one
// prefill of every prompt (2400 tokens) every step decodes 600 tokens,
// above the default 512, to the end (all finish together), so the
// run is the one of an engine without CUDA graphs, to the bit; captured
// to 1024 (--cuda-graph-max-bs, vLLM's --cuda-graph-sizes 1024) the steps
// run in piecewise graphs and TPOT falls. vLLM v0.6.0 likewise launches a
// decode step eagerly once a sequence is longer than
// max_seq_len_to_capture (8192): 4 requests of 8300 + 64 tokens of Llama
// 3.1 8B decode as an engine without graphs does, and 4 of 8000 + 64 as
// one with them (4 is captured: no padding), but for the LM head, which
// vLLM runs outside the graph.
func TestVLLMGraphLimit(t *testing.T) {
	run := func(hw, mdl, engine string, wl serve.Workload, set func(*serve.Engine)) float64 {
		t.Helper()
		sys, w := setup(t, hw, mdl, 1)
		e, err := serve.Preset(engine, sys.Device.Memory.Limit())
		if err != nil {
			t.Fatal(err)
		}
		set(&e)
		return mustServe(t, pricer(t, sys, w, e.Scenario(sim.Default())), e, wl).TPOT.P50
	}
	many := serve.Workload{N: 600, Arrival: serve.AllAtOnce, Input: serve.Fixed(4), Output: serve.Fixed(64)}
	def := run("h100", "llama3-8b", "vllm", many, func(*serve.Engine) {})
	eager := run("h100", "llama3-8b", "vllm", many, func(e *serve.Engine) { e.Graphs = false })
	wide := run("h100", "llama3-8b", "vllm", many, func(e *serve.Engine) { e.GraphMaxBatch = 1024 })
	if def != eager || !(wide < def) {
		t.Errorf("vllm, 600 decoding: TPOT p50 %.6g s with graphs to 512, %.6g without graphs, %.6g to 1024; want the first two equal and the last below", def, eager, wide)
	}
	long := serve.Workload{N: 4, Arrival: serve.AllAtOnce, Input: serve.Fixed(8300), Output: serve.Fixed(64)}
	graphs := run("h100", "llama3.1-8b", "vllm-0.6", long, func(*serve.Engine) {})
	none := run("h100", "llama3.1-8b", "vllm-0.6", long, func(e *serve.Engine) { e.Graphs = false })
	if graphs != none {
		t.Errorf("vllm-0.6, sequences past 8192: TPOT p50 %.6g s, without graphs %.6g; want equal", graphs, none)
	}
	short := serve.Workload{N: 4, Arrival: serve.AllAtOnce, Input: serve.Fixed(8000), Output: serve.Fixed(64)}
	graphs = run("h100", "llama3.1-8b", "vllm-0.6", short, func(*serve.Engine) {})
	any := run("h100", "llama3.1-8b", "vllm-0.6", short, func(e *serve.Engine) { e.Capture = serve.CaptureAny })
	none = run("h100", "llama3.1-8b", "vllm-0.6", short, func(e *serve.Engine) { e.Graphs = false })
	if !(any < graphs && graphs-any < 1e-3*graphs && graphs < none) {
		t.Errorf("vllm-0.6, sequences under 8192: TPOT p50 %.6g s, every step in one unpadded graph %.6g, without graphs %.6g; want the first a little above the second (its LM head outside the graph), below the last", graphs, any, none)
	}
}
