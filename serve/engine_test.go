package serve_test

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestEngine_validate: every bad setting is reported, naming its flag;
// the presets are valid.
func TestEngine_validate(t *testing.T) {
	for _, name := range serve.Engines() {
		e, err := serve.Preset(name, 80<<30)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	e, _ := serve.Preset("vllm-0.6", 80<<30)
	e.MaxSeqs, e.SeqOverhead, e.SchedulerSteps = 0, model.Seconds(-1e-6), -1
	e.StepOverhead = model.Seconds(math.Inf(1))
	err := e.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"--max-seqs", "--seq-overhead", "--step-overhead", "--scheduler-steps"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestEngine_kvTokensBelowBlock: a KV cache smaller than one block is
// refused naming --kv-tokens; it had become "the KV cache of 0 tokens"
// in every request's error.
func TestEngine_kvTokensBelowBlock(t *testing.T) {
	e, _ := serve.Preset("vllm", 80<<30)
	e.KVTokens = e.BlockSize - 1
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "--kv-tokens") || !strings.Contains(err.Error(), "block") {
		t.Errorf("--kv-tokens %d with blocks of %d: error %v", e.KVTokens, e.BlockSize, err)
	}
	e.KVTokens = e.BlockSize
	if err := e.Validate(); err != nil {
		t.Errorf("--kv-tokens of one block: %v", err)
	}
}

// TestKVCapacity_blockLargerThanCache: a block larger than the whole KV
// cache names --block-size; it had been "no memory left for the KV
// cache" with 60 GB free.
func TestKVCapacity_blockLargerThanCache(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, _ := serve.Preset("vllm", 80<<30)
	e.BlockSize = 1 << 30
	p := pricer(t, sys, w, e.Scenario(sim.Default()))
	_, _, err := e.KVCapacity(p)
	if err == nil || !strings.Contains(err.Error(), "--block-size") {
		t.Errorf("blocks of 2^30 tokens: error %v, want one naming --block-size", err)
	}
}

// TestPreset_allReduce: the presets name the all-reduce their engines
// run within a node (serve.Preset cites the code): vLLM's custom kernel
// for vLLM v0.6.0, vLLM V1 v0.10 and SGLang v0.4; none for TensorRT-LLM,
// whose own one-shot kernel is the one the devices' collectives are
// fitted to. The scenario a run is priced by carries it.
func TestPreset_allReduce(t *testing.T) {
	for _, tt := range []struct{ engine, want string }{
		{"vllm", "vllm"}, {"vllm-0.6", "vllm"}, {"sglang", "vllm"}, {"trtllm", ""},
	} {
		e, err := serve.Preset(tt.engine, 80<<30)
		if err != nil {
			t.Fatal(err)
		}
		if e.AllReduce != tt.want {
			t.Errorf("%s: AllReduce %q, want %q", tt.engine, e.AllReduce, tt.want)
		}
		if sc := e.Scenario(sim.Default()); sc.AllReduce != tt.want {
			t.Errorf("%s: scenario AllReduce %q, want %q", tt.engine, sc.AllReduce, tt.want)
		}
	}
}

// TestEngine_gemmAllReduce: the engine hands its fused GEMM and
// all-reduce to the pricer's scenario; no preset fuses them.
func TestEngine_gemmAllReduce(t *testing.T) {
	for _, name := range serve.Engines() {
		e, err := serve.Preset(name, 80<<30)
		if err != nil {
			t.Fatal(err)
		}
		if e.GEMMAllReduce || e.Scenario(sim.Default()).GEMMAllReduce {
			t.Errorf("%s: the preset fuses the GEMMs and all-reduces; TensorRT-LLM's plugin is off by default", name)
		}
		e.GEMMAllReduce = true
		if !e.Scenario(sim.Default()).GEMMAllReduce {
			t.Errorf("%s: GEMMAllReduce set, but not in the scenario", name)
		}
	}
}
