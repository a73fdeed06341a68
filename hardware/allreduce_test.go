package hardware

import (
	"math"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestEngineAllReduceOn checks vLLM's all-reduce as fitted against points
// of the measurements it was fitted to (aiconfigurator's vLLM 0.14.0
// custom_allreduce_perf, graph, bf16; ai-dynamo/aiconfigurator@095f58a5):
// the fit's stated leave-one-out p90 is 5–14%, so each point must be
// within 15%.
func TestEngineAllReduceOn(t *testing.T) {
	for _, c := range []struct {
		hw      string
		ranks   int
		kib     float64 // message size
		measure float64 // µs
	}{
		{"h100", 4, 32, 4.97}, {"h100", 4, 128, 5.84}, {"h100", 4, 256, 7.10}, {"h100", 4, 512, 11.36}, {"h100", 4, 4096, 30.45},
		{"h100", 2, 1024, 8.39}, {"h100", 8, 128, 7.72},
		{"a100", 4, 256, 0}, {"h200", 4, 256, 0},
	} {
		d, err := Lookup(c.hw)
		if err != nil {
			t.Fatal(err)
		}
		k, ok, err := EngineAllReduceOn("vllm", d)
		if err != nil || !ok {
			t.Fatalf("%s: %v, %v", c.hw, ok, err)
		}
		got, took := k.Time(model.Collective{Kind: model.AllReduce, Size: model.Bytes(c.kib * 1024), Ranks: c.ranks}, d.Intra.Link())
		if !took || got <= 0 {
			t.Errorf("%s %d GPUs %g KiB: not taken (%v)", c.hw, c.ranks, c.kib, got)
			continue
		}
		if c.measure > 0 {
			if e := float64(got)/(c.measure*1e-6) - 1; math.Abs(e) > 0.15 {
				t.Errorf("%s %d GPUs %g KiB: %.2f µs, measured %.2f (%+.0f%%)", c.hw, c.ranks, c.kib, 1e6*float64(got), c.measure, 100*e)
			}
		}
	}
	// Not measured on the device: the device's own collectives.
	d, err := Lookup("mi300x")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := EngineAllReduceOn("vllm", d); ok || err != nil {
		t.Errorf("mi300x: %v, %v; want not measured", ok, err)
	}
	if _, ok, err := EngineAllReduceOn("vllm", nil); ok || err != nil {
		t.Errorf("no device: %v, %v", ok, err)
	}
	// An unknown name is an error that lists the known ones.
	if _, _, err := EngineAllReduceOn("trtllm", d); err == nil || !strings.Contains(err.Error(), `"trtllm"`) || !strings.Contains(err.Error(), "vllm") {
		t.Errorf("unknown kernel: %v", err)
	}
	if got := AllReduceKernels(); len(got) != 1 || got[0] != "vllm" {
		t.Errorf("AllReduceKernels() = %v", got)
	}
}
