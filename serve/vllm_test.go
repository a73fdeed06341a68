package serve_test

import (
	"fmt"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestVLLMKVPool: the vllm-0.6 and vllm presets size the KV cache as vLLM
// v0.6.0 (worker.py determine_num_available_blocks) and V1 v0.10
// (gpu_worker.py determine_available_memory with memory_profiling) do
// (serve.VLLMKVTokens): whole 16-token blocks of total × 0.9 less the
// weights, the profile run's activation peak (the larger of sim's forward
// working set at max_num_batched_tokens and the float32 logits of
// min(max_num_seqs, tokens) rows over the 128,256-token vocabulary) and
// the memory outside torch (0.16 GiB; at TP > 1 for V1 4.52 GiB of NCCL
// and custom all-reduce buffers, for v0.6.0 1.79 GiB and, on H100s at
// TP > 2, NCCL 2.20's NVLink SHARP buffers of two communicators, 2.25 GiB
// at TP 4 and 4.5 at TP 8: serve.VLLM06NonTorch); the CUDA context is not
// counted (read before the first reading). By hand (python, the same
// arithmetic), total 84,943,715,697 B on an H100, 84,986,665,370 B on an
// A100:
//   - Llama 3 8B TP 1 (131,072 B a token): v0.6.0 at 2,048 tokens and 256
//     seqs, peak 176,160,768 B (the forward's): H100 ⌊28,629.7⌋ blocks =
//     458,064 tokens, A100 458,368; V1 at 8,192 tokens and 1,024 seqs,
//     peak 704,643,072 B: H100 454,032, A100 454,336;
//   - Llama 3 70B at TP 4 (35,276,853,248 B of weights, 81,920 B a token):
//     the logits bind (256 × 128,256 × 4 = 131,334,144 B; 1,024 rows:
//     525,336,576 B): v0.6.0 ⌊27,871.3⌋ blocks = 445,936 (non-torch 4.20
//     GiB), V1 434,832 (4.68 GiB);
//   - at TP 8 (17,638,426,624 B, 40,960 B): v0.6.0 ⌊78,970.3⌋ blocks =
//     1,263,520 (6.45 GiB), V1 1,300,304.
//
// With the device's flat 2 GiB reserve in their place they had 443,002,
// 443,297, 438,970, 439,265; 475,150, 471,464; 1,380,927 and 1,373,554;
// with V1's 4.52 GiB assumption for v0.6.0 too, 70B had 439,648 at TP 4
// and 1,309,920 at TP 8.
func TestVLLMKVPool(t *testing.T) {
	for _, c := range []struct {
		hw, mdl       string
		tp            int
		v06, v1, unit int
	}{
		{"h100", "llama3-8b", 1, 458064, 454032, 131072},
		{"a100", "llama3-8b", 1, 458368, 454336, 131072},
		{"h100", "llama3-70b", 4, 445936, 434832, 81920},
		{"h100", "llama3-70b", 8, 1263520, 1300304, 40960},
	} {
		sys, w := setup(t, c.hw, c.mdl, c.tp)
		for _, pr := range []struct {
			name string
			want int
		}{{"vllm-0.6", c.v06}, {"vllm", c.v1}} {
			e, err := serve.PresetFor(pr.name, sys.Device.Memory.Limit(), c.tp)
			if err != nil {
				t.Fatal(err)
			}
			sc := sim.Default()
			sc.TP = c.tp
			kv, m, err := e.KVCapacity(pricer(t, sys, w, e.Scenario(sc)))
			if err != nil {
				t.Fatal(err)
			}
			if kv != pr.want {
				t.Errorf("%s %s TP %d %s: %d KV tokens, want %d", c.hw, c.mdl, c.tp, pr.name, kv, pr.want)
			}
			if kv%e.BlockSize != 0 {
				t.Errorf("%s %s TP %d %s: %d KV tokens is not whole blocks of %d", c.hw, c.mdl, c.tp, pr.name, kv, e.BlockSize)
			}
			// The memory report carries the terms counted: the
			// non-torch memory in Reserve, the profile peak in
			// Activations.
			nt := serve.VLLMNonTorch(c.tp)
			if pr.name == "vllm-0.6" {
				nt = serve.VLLM06NonTorch(sys, c.tp, 1)
			}
			if m.Reserve != nt {
				t.Errorf("%s %s TP %d %s: reserve %v, want vLLM's non-torch memory %v", c.hw, c.mdl, c.tp, pr.name, m.Reserve, nt)
			}
			if got := int(float64(c.unit) * float64(kv)); !(float64(got) <= 0.9*float64(m.Usable)-float64(m.Weights+m.Activations+m.Reserve)) {
				t.Errorf("%s %s TP %d %s: %d KV tokens overrun the budget", c.hw, c.mdl, c.tp, pr.name, kv)
			}
		}
	}
}

// TestVLLMKVPool_terms: each term moves the cache as vLLM's code says.
// The device's reserve (the CUDA context in it) does not move it; a
// reserve set in the scenario (sim.Scenario.Reserve) replaces the non-torch figure;
// a larger budget raises the profile's peak and lowers the cache.
func TestVLLMKVPool_terms(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, err := serve.Preset("vllm-0.6", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	kvOf := func(e serve.Engine, sc sim.Scenario) int {
		t.Helper()
		kv, _, err := e.KVCapacity(pricer(t, sys, w, e.Scenario(sc)))
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	base := kvOf(e, sim.Default())
	saved := sys.Device.Memory.Reserve
	sys.Device.Memory.Reserve = 6 << 30
	if kv := kvOf(e, sim.Default()); kv != base {
		t.Errorf("a 6 GiB device reserve moved the cache: %d tokens, want %d (vLLM reads its memory after the CUDA context)", kv, base)
	}
	sys.Device.Memory.Reserve = saved
	sc := sim.Default()
	none := model.Bytes(0)
	sc.Reserve = &none
	// 0.16 GiB more: ⌊28,711.63⌋ − ⌊28,629.71⌋ = 82 blocks, 1,312 tokens.
	if kv := kvOf(e, sc); kv != base+1312 {
		t.Errorf("a scenario reserve of 0: %d tokens, want %d + 1,312", kv, base)
	}
	big := e
	big.MaxTokens = 8192
	if kv := kvOf(big, sim.Default()); !(kv < base) {
		t.Errorf("a budget of 8,192 tokens: %d KV tokens, want fewer than %d at 2,048", kv, base)
	}
	// 0.9 × 100 GiB − 10 GiB = 80 GiB in blocks of 16 × 128 KiB = 2 MiB:
	// 40,960 blocks; a byte short of that, one block fewer.
	if got := serve.VLLMKVTokens(100<<30, 10<<30, 0.9, 1<<17, 16); got != 655360 {
		t.Errorf("VLLMKVTokens: %g tokens, want 40,960 blocks of 16, 655,360", got)
	}
	if got := serve.VLLMKVTokens(100<<30, 10<<30+1, 0.9, 1<<17, 16); got != 655344 {
		t.Errorf("VLLMKVTokens a byte short: %g tokens, want 655,344", got)
	}
}

// TestVLLMKVPool_givenTokens: --kv-tokens (Engine.KVTokens) is bounded by
// what the device holds under the engine's own accounting, the one its
// own sizing uses, and the memory it reports is that accounting's. With
// the vllm presets the bound had counted the device's flat 2 GiB reserve
// and sim's activations instead: a cache that fits beside vLLM's 0.16
// GiB outside torch was refused, and its report said 2 GiB reserved.
func TestVLLMKVPool_givenTokens(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 1)
	e, err := serve.Preset("vllm-0.6", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	p := pricer(t, sys, w, e.Scenario(sim.Default()))
	_, m, err := e.KVCapacity(p)
	if err != nil {
		t.Fatal(err)
	}
	// Every byte vLLM's accounting leaves, in tokens of 128 KiB.
	most := int((float64(m.Usable) - float64(m.Weights+m.Activations+m.Reserve+m.Buffers)) / 131072)
	for _, c := range []struct {
		tokens int
		ok     bool
	}{{most, true}, {most + 1, false}} {
		g := e
		g.KVTokens = c.tokens
		kv, gm, err := g.KVCapacity(p)
		if (err == nil) != c.ok {
			t.Errorf("--kv-tokens %d (at most %d): error %v, want ok %v", c.tokens, most, err, c.ok)
			continue
		}
		if c.ok && (kv != c.tokens || gm.Reserve != m.Reserve || gm.Activations != m.Activations) {
			t.Errorf("--kv-tokens %d: %d tokens, reserve %v and activations %v; want the tokens given, and %v and %v as the engine counts them", c.tokens, kv, gm.Reserve, gm.Activations, m.Reserve, m.Activations)
		}
	}
}

// ExampleVLLMKVTokens sizes vLLM's KV cache for Llama 3 8B on an H100 as
// v0.6.0's determine_num_available_blocks does: 0.9 of cudaMemGetInfo's
// total, less the weights, the profile run's activation peak and the
// memory outside torch at TP 1, in whole blocks of 16 tokens of 128 KiB.
func ExampleVLLMKVTokens() {
	total := model.Bytes(84943715697) // an H100's usable memory
	counted := model.Bytes(16060522496) + model.Bytes(176160768) + serve.VLLMNonTorch(1)
	fmt.Println(serve.VLLMKVTokens(total, counted, 0.9, 131072, 16))
	// Output: 458064
}

// TestVLLM06NonTorch: what vLLM v0.6.0 counts outside torch, by device
// and layout: 0.16 GiB alone; 1.79 GiB more at more than one rank; and
// NCCL 2.20.5's NVLink SHARP buffers of its two TP communicators (24
// channels × 2 × (4 + 2) MiB × TP each) only where NCCL sets them up: more
// than two GPUs of one node behind an NVSwitch of NVLink 4 or later.
func TestVLLM06NonTorch(t *testing.T) {
	const gb = 1 << 30
	for _, c := range []struct {
		hw     string
		tp, pp int
		nvls   bool
		want   float64 // GiB
	}{
		{"h100", 1, 1, false, 0.16},
		{"h100", 2, 1, false, 0.16 + 1.79},       // NVLS off at two GPUs
		{"h100", 1, 2, false, 0.16 + 1.79},       // pipeline ranks: NCCL, no TP group
		{"h100", 4, 1, true, 0.16 + 1.79 + 2.25}, // 2 × 24 × 12 MiB × 4
		{"h100", 8, 1, true, 0.16 + 1.79 + 4.5},  // 2 × 24 × 12 MiB × 8
		{"h200", 8, 1, true, 0.16 + 1.79 + 4.5},  // NVLink 4, NVSwitch
		{"b200", 4, 1, true, 0.16 + 1.79 + 2.25}, // NVLink 5, NVSwitch
		{"a100", 8, 1, false, 0.16 + 1.79},       // NVLink 3: no NVLS
		{"h100-pcie", 2, 1, false, 0.16 + 1.79},  // a bridge, no switch
		{"h100", 16, 1, false, 0.16 + 1.79},      // across nodes: NVLS off
	} {
		sys, _ := setup(t, c.hw, "llama3-70b", c.tp)
		if got := serve.NVLinkSHARP(sys, c.tp); got != c.nvls {
			t.Errorf("%s TP %d: NVLink SHARP %v, want %v", c.hw, c.tp, got, c.nvls)
		}
		got := float64(serve.VLLM06NonTorch(sys, c.tp, c.pp)) / gb
		if d := got - c.want; d < -1e-9 || d > 1e-9 {
			t.Errorf("%s TP %d PP %d: %.4f GiB outside torch, want %.4f", c.hw, c.tp, c.pp, got, c.want)
		}
	}
	// The NCCL log quoted in vllm#9699 (eight H100/H200s): nvlsTotalSize
	// 2,415,919,104 B for one communicator.
	sys, _ := setup(t, "h100", "llama3-70b", 8)
	if got := serve.NVLSBuffers(sys, 8); got != 2415919104 {
		t.Errorf("one communicator's NVLS buffers at 8 GPUs: %d B, want 2,415,919,104 (NCCL's log)", int64(got))
	}
}
