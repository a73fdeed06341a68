package serve

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// footprint returns the memory of one H100 serving mdl under engine as
// KVCapacity sizes it, and the engine.
func footprint(t *testing.T, mdl, engine string) (Engine, sim.Memory) {
	t.Helper()
	d, err := hardware.Resolve("h100")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(d, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.Resolve(mdl)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.NewPricer(sys, simload.Workload{M: m}, sim.Default())
	if err != nil {
		t.Fatal(err)
	}
	e, err := Preset(engine, sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	_, mem, err := e.KVCapacity(p)
	if err != nil {
		t.Fatal(err)
	}
	return e, mem
}

// TestCharge_windowed: a short and a long request of a windowed model
// are charged their per-layer cache, by hand (bf16, one H100):
//
//   - gemma3-27b under vllm (10 full and 52 sliding layers of 1,024
//     tokens, 8,192 B a layer a token; group_size 10: one full group,
//     six sliding, pages of 10 layers × 8,192 B = 81,920 B a token): a
//     request of 100 tokens holds ⌈100/16⌉ = 7 blocks in each of the 7
//     groups, 49 pages, every token within the window; one of 10,000
//     tokens holds 625 full pages and, in each sliding group, the blocks
//     from that of token 10,000 − 1,024 = 8,976 on, 625 − 561 = 64: 1,009
//     pages. The average that had been charged (the 52 sliding layers'
//     1,024 tokens spread over 8,193) was 16.5 layers a token: 100 tokens
//     took 7 blocks of them (115.5 layer-blocks, for 7 × 62 = 434 held),
//     10,000 took 625 (10,313 for 10 × 625 + 52 × 64 = 9,578 held).
//   - mistral-7b-v0.1 under vllm (one sliding group of all 32 layers):
//     100 tokens, 7 pages; 10,000 tokens, 625 − ⌊5,904/16⌋ = 256; under
//     vllm-0.6, ⌈4,096/16⌉ = 256 at most, and 7 for 100; under sglang
//     and trtllm every token of every layer: 100 and 10,000 blocks of
//     one token (64 for trtllm's blocks of 64 tokens: 2 and 157).
//   - gpt-oss-20b under vllm (12 full and 12 sliding layers of 128
//     tokens; two groups of 12): 100 tokens, 2 × 7 = 14 pages; 10,000
//     tokens, 625 + (625 − 617) = 633.
//
// A prompt of 10,000 tokens computed in chunks of 8,192 holds, in its
// second chunk, its sliding groups' blocks from token 8,192 − 1,024 + 1
// on: Gemma's 625 full pages and 6 × (625 − 448) = 1,062 sliding ones.
func TestCharge_windowed(t *testing.T) {
	for _, c := range []struct {
		model, engine       string
		unit                float64 // bytes of a token of a page
		short, long, second int     // pages held by 100 and 10,000 tokens; the second chunk's
	}{
		{"gemma3-27b", "vllm", 10 * 8192, 49, 1009, 625 + 1062},
		{"mistral-7b-v0.1", "vllm", 32 * 4096, 7, 256, 625 - (8192-4096+1)/16},
		{"mistral-7b-v0.1", "vllm-0.6", 32 * 4096, 7, 256, 256},
		{"mistral-7b-v0.1", "sglang", 32 * 4096, 100, 10000, 10000},
		{"mistral-7b-v0.1", "trtllm", 32 * 4096, 2, 157, 157},
		{"gpt-oss-20b", "vllm", 12 * 2048, 14, 633, 625 + 625 - (8192-128+1)/16},
	} {
		t.Run(c.model+"/"+c.engine, func(t *testing.T) {
			e, mem := footprint(t, c.model, c.engine)
			if got := e.kvUnit(mem); got != c.unit {
				t.Errorf("a token of a page: %.0f B, want %.0f", got, c.unit)
			}
			kv := chargeOf(e, mem)
			if got := kv.blocks(100); got != c.short {
				t.Errorf("100 tokens: %d pages, want %d", got, c.short)
			}
			if got := kv.blocks(10000); got != c.long {
				t.Errorf("10,000 tokens: %d pages, want %d", got, c.long)
			}
			if got := kv.need(8192, 10000); got != c.second {
				t.Errorf("computing tokens 8,192 to 10,000: %d pages, want %d", got, c.second)
			}
			// Unchunked, a prompt of 10,000 tokens holds all of its
			// blocks in every group while it is computed.
			e.Chunked = false
			if got, want := chargeOf(e, mem).most(10000), kv.need(0, 10000); got != want {
				t.Errorf("unchunked, 10,000 tokens hold at most %d pages, want %d", got, want)
			}
		})
	}
}

// TestGrow_freesBehindWindow: under vllm a Mistral 7B request's blocks
// behind the window go back to the pool as it decodes (vLLM V1's
// remove_skipped_blocks before each allocation), and the pool's free
// blocks and the request's always add up to the pool.
func TestGrow_freesBehindWindow(t *testing.T) {
	e, mem := footprint(t, "mistral-7b-v0.1", "vllm")
	l := newLoop(nil, e, Options{}, 1000, mem)
	r := &live{m: &Metrics{}, input: 6000, output: 200}
	if !l.grow(r, 6000) {
		t.Fatal("a 6,000-token prompt does not fit 1,000 blocks")
	}
	if r.blocks != 375 {
		t.Errorf("prefilling 6,000 tokens in one chunk holds %d blocks, want ⌈6,000/16⌉ = 375", r.blocks)
	}
	r.computed = 6000
	if !l.grow(r, 6001) {
		t.Fatal("the first decode step does not fit")
	}
	// Tokens 1,905 to 6,000 are the window of the new token: blocks 119
	// to 375.
	if r.blocks != 257 || l.free != 1000-257 {
		t.Errorf("decoding token 6,001: %d blocks held, %d free; want 257 and 743", r.blocks, l.free)
	}
	for r.computed = 6001; r.computed < 6200; r.computed++ {
		if !l.grow(r, r.computed+1) {
			t.Fatalf("decoding token %d does not fit", r.computed+1)
		}
		if r.blocks < 256 || r.blocks > 257 || r.blocks+l.free != 1000 {
			t.Fatalf("decoding token %d: %d held and %d free of 1,000", r.computed+1, r.blocks, l.free)
		}
	}
}
