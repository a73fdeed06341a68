package sim

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// TestEngineAllReduce checks that a scenario naming an engine's
// all-reduce kernel prices the all-reduces within a node by it on a
// device it was measured on, NCCL's ring those it hands on, and leaves
// every other collective, and every device without a measurement, as
// they were.
func TestEngineAllReduce(t *testing.T) {
	h100, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(h100, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	k, ok, err := hardware.EngineAllReduceOn("vllm", h100)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	price := func(name string, c model.Collective) model.Seconds {
		sc := Default()
		sc.AllReduce = name
		r := newRunner(sys, tinyLlama(), sc, tinyLlama().Shape())
		co, _ := r.c.cost(c)
		dc := r.decoder() // the CUDA-graph coster prices it the same
		if co2, _ := dc.cost(c); co2.Time != co.Time {
			t.Errorf("%s %v: decode coster %v, eager %v", name, c, co2.Time, co.Time)
		}
		return co.Time
	}
	intra := sys.Link(model.IntraNode)
	ring := intra
	ring.OneShotLatency = 0
	for _, c := range []model.Collective{
		{Kind: model.AllReduce, Size: 256 << 10, Ranks: 4, Tier: model.IntraNode},
		{Kind: model.AllReduce, Size: 2 << 20, Ranks: 4, Tier: model.IntraNode},
		{Kind: model.AllReduce, Size: 64 << 20, Ranks: 4, Tier: model.IntraNode}, // NCCL
		{Kind: model.AllGather, Size: 1 << 20, Ranks: 4, Tier: model.IntraNode},
		{Kind: model.AllReduce, Size: 1 << 20, Ranks: 16, Tier: model.IntraNode}, // across nodes
	} {
		want := model.CollectiveTime(c, ring)
		if got, ok := k.Time(c, intra); ok {
			want = got
		}
		if c.Kind != model.AllReduce || c.Ranks > 8 {
			want = price("", c) // not the engine kernel's
		}
		if got := price("vllm", c); got != want {
			t.Errorf("vllm %v: %v, want %v", c, got, want)
		}
	}
	// At the batch-16 message of Llama 3 70B at TP 4 (256 KiB) vLLM's
	// kernel is slower than the device's fitted one-shot kernel.
	c := model.Collective{Kind: model.AllReduce, Size: 256 << 10, Ranks: 4, Tier: model.IntraNode}
	if v, d := price("vllm", c), price("", c); !(v > d) {
		t.Errorf("256 KiB at 4 GPUs: vllm %v, device %v", v, d)
	}
	// A device it has not been measured on keeps its own collectives.
	mi, err := hardware.Lookup("mi300x")
	if err != nil {
		t.Fatal(err)
	}
	if sys, err = hardware.NewSystem(mi, 8, 1); err != nil {
		t.Fatal(err)
	}
	if v, d := price("vllm", c), price("", c); v != d {
		t.Errorf("mi300x: vllm %v, device %v", v, d)
	}
}
