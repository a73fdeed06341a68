package plan

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/sim"
)

// TestTrainSpace_layerSlots: a pipeline degree that does not divide the
// layers is tried with the embedding and the loss as a layer slot each
// when the layers plus the two slots divide (126 layers over pp 8, as
// NVIDIA runs Llama 3.1 405B), its virtual stages dividing the slots a
// stage (16: up to 8); a degree that divides the layers keeps Megatron's
// default split; one that divides neither is not tried.
func TestTrainSpace_layerSlots(t *testing.T) {
	sys, err := hardware.LookupSystem("dgx-h100", 512)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.Shape{Arch: sim.Decoder, Layers: 126, Heads: 128, KVHeads: 8, DModel: 16384, FFN: 53248, Vocab: 128256}
	req := TrainRequest{GPUs: 512, GlobalBatch: 1152, Seq: 8192, Base: sim.Default(), MicroBatches: []int{1},
		Recomputes: []sim.Recompute{sim.RecomputeNone}, ZeROStages: []int{1}}
	vs := map[int]bool{}
	seen := map[int]bool{}
	for _, sc := range trainSpace(sys, s, req) {
		seen[sc.PP] = true
		slots := sc.EmbeddingSlot && sc.LossSlot
		if sc.EmbeddingSlot != sc.LossSlot {
			t.Fatalf("pp %d: embedding slot %v, loss slot %v", sc.PP, sc.EmbeddingSlot, sc.LossSlot)
		}
		if want := s.Layers%sc.PP != 0; slots != want {
			t.Errorf("pp %d: layer slots %v, want %v", sc.PP, slots, want)
		}
		if sc.PP == 8 && sc.Schedule == sim.Interleaved {
			vs[sc.VirtualStages] = true
		}
		if _, err := sim.ChunkLayers(s.Layers, sc.PP, sc.VirtualStages, slots, slots); err != nil {
			t.Errorf("pp %d × %d: %v", sc.PP, sc.VirtualStages, err)
		}
	}
	if !seen[8] || !seen[2] {
		t.Errorf("pipeline degrees tried %v; want 8 (with slots) and 2", seen)
	}
	for _, v := range []int{2, 4, 8} {
		if !vs[v] {
			t.Errorf("pp 8: interleaved × %d not tried (%v)", v, vs)
		}
	}

	// On 96 GPUs: pp 3 divides 126, pp 12 divides neither 126 nor 128.
	if sys, err = hardware.LookupSystem("dgx-h100", 96); err != nil {
		t.Fatal(err)
	}
	req.GPUs, req.GlobalBatch = 96, 1152
	seen = map[int]bool{}
	for _, sc := range trainSpace(sys, s, req) {
		seen[sc.PP] = true
	}
	if !seen[3] || seen[12] {
		t.Errorf("96 GPUs: pipeline degrees tried %v; want 3, not 12", seen)
	}
}

// TestTrainSpace_zeroWithPipelines: the search tries only layouts a
// framework runs: with pipeline parallelism, ZeRO 0 or 1 (Megatron-LM's
// distributed optimizer is ZeRO 1; DeepSpeed's PipelineEngine asserts
// "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
// deepspeed/runtime/pipe/engine.py, DeepSpeed issue #1110). ZeRO 2 beside
// PP had won Llama 3 70B's search on 1,024 H100s (tp 4 pp 2 dp 128,
// 4.369 s), a layout nobody can launch. Without PP, every stage is tried.
func TestTrainSpace_zeroWithPipelines(t *testing.T) {
	sys, err := hardware.LookupSystem("dgx-h100", 64)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.Shape{Arch: sim.Decoder, Layers: 32, Heads: 32, KVHeads: 8, DModel: 4096, FFN: 14336, Vocab: 128256}
	req := TrainRequest{GPUs: 64, GlobalBatch: 512, Seq: 4096, Base: sim.Default(), MicroBatches: []int{1},
		Recomputes: []sim.Recompute{sim.RecomputeNone}}
	flat := map[int]bool{}
	for _, sc := range trainSpace(sys, s, req) {
		if sc.PP > 1 && sc.ZeRO >= 2 {
			t.Fatalf("pp %d with ZeRO %d tried", sc.PP, sc.ZeRO)
		}
		if sc.PP == 1 {
			flat[sc.ZeRO] = true
		}
	}
	if len(flat) != 4 {
		t.Errorf("ZeRO stages tried without PP: %v, want 0–3", flat)
	}
}
