package serve_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestServe_windowedPool: a model with sliding-window layers runs as
// many sequences at once as its engine's per-layer charge fits in the KV
// budget, the charge worked by hand from the catalog's configs (bf16 KV,
// one H100, every request at once, 16 output tokens, so that a
// sequence's charge hardly moves while it decodes):
//
//   - mistral-7b-v0.1 (32 layers, all with a 4,096-token window; 8 KV
//     heads of 128: 4,096 B a layer a token), vllm: one sliding group of
//     the 32 layers, a page 16 tokens × 32 × 4,096 B = 2 MiB; a
//     sequence of 6,001 to 6,016 tokens holds the blocks from the one
//     of token t − 4,096 on: ⌈t/16⌉ − ⌊(t − 4,096)/16⌋ = 257 pages at
//     6,001 (376 − 119), 256 at 6,016;
//   - the same under vllm-0.6 (V0's block_sliding_window): at most
//     ⌈4,096/16⌉ = 256 blocks of the 32 layers;
//   - the same under sglang (v0.4.0 holds every token in every layer):
//     6,016 one-token blocks of 131,072 B;
//   - gpt-oss-20b (12 full and 12 sliding layers of 128 tokens; 8 KV
//     heads of 64: 2,048 B a layer a token), vllm: group_size 12, one
//     full and one sliding group, a page 16 × 12 × 2,048 = 393,216 B;
//     2,001 to 2,016 tokens hold ⌈t/16⌉ = 126 full pages and
//     126 − ⌊(t − 128)/16⌋ = 9 or 8 sliding ones: 135 at most;
//   - gemma3-27b (10 full and 52 sliding layers of 1,024 tokens; 16 KV
//     heads of 128: 8,192 B a layer a token), vllm: group_size 10, one
//     full group and ⌈52/10⌉ = 6 sliding ones (the last padded), a page
//     16 × 10 × 8,192 = 1,310,720 B; 126 full pages and 6 × (126 −
//     ⌊(t − 1,024)/16⌋) = 6 × 65 sliding ones at 2,001 tokens: 516.
//
// The budget holds ⌊⌊budget/page⌋/pages⌋ such sequences; one more
// prefilling (its whole chunk held in the sliding groups until its next
// iteration) may take the room of one or two. The average per token
// that had been charged (the windowed layers' cache spread over
// --max-tokens + 1 tokens) ran 1.4× as many for Mistral 7B, 2.4× for
// Gemma 3 27B; the full cache per token that SGLang holds, half as many
// for Mistral as vLLM V1.
func TestServe_windowedPool(t *testing.T) {
	for _, c := range []struct {
		model, engine string
		static        bool
		in, out       int
		page          float64 // bytes
		pages         int     // per sequence at its last token, by hand
	}{
		{"mistral-7b-v0.1", "vllm", false, 6000, 256, 16 * 32 * 4096, 257},
		{"mistral-7b-v0.1", "vllm-0.6", false, 6000, 256, 16 * 32 * 4096, 256},
		{"mistral-7b-v0.1", "sglang", false, 6000, 16, 32 * 4096, 6016},
		{"gpt-oss-20b", "vllm", true, 2000, 16, 16 * 12 * 2048, 135},
		{"gemma3-27b", "vllm", false, 2000, 16, 16 * 10 * 8192, 516},
	} {
		t.Run(c.model+"/"+c.engine, func(t *testing.T) {
			sys, w := setup(t, "h100", c.model, 1)
			p := pricer(t, sys, w, sim.Default())
			e, err := serve.Preset(c.engine, sys.Device.Memory.Limit())
			if err != nil {
				t.Fatal(err)
			}
			e.MaxSeqs = 8192 // the memory, not the batch cap, limits
			e.Static = c.static
			budget, _, _ := kvBudget(t, e, p)
			fit := int(math.Floor(math.Floor(budget/c.page) / float64(c.pages)))
			reqs := mustRequests(t, serve.Workload{N: fit*3/2 + 4, Arrival: serve.AllAtOnce, Input: serve.Fixed(c.in), Output: serve.Fixed(c.out)})
			res, err := serve.Run(p, e, reqs, serve.Options{SeriesPoints: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			most := 0
			for _, s := range res.Series {
				most = max(most, s.Running)
			}
			t.Logf("budget %.3f GiB, %d pages of %.0f B a sequence: %d fit, most running %d (KV cache %d tokens, %d blocks)",
				budget/(1<<30), c.pages, c.page, fit, most, res.KVTokens, res.KVBlocks)
			if most > fit+1 || most < fit-2 {
				t.Errorf("most running %d, the per-layer charge fits %d", most, fit)
			}
		})
	}
}

// TestServe_windowedProperty: for the catalog's windowed models under
// the vllm, vllm-0.6 and sglang presets, under workloads of fixed lengths
// shorter and longer than the windows, the requests running at once
// never hold more than the KV budget: each, once its first token is
// out, holds at least its prompt in the full-attention layers and the
// prompt's last window tokens in the windowed ones (sim.Memory's
// KVGrowth and KVWindowed).
func TestServe_windowedProperty(t *testing.T) {
	for _, mdl := range []string{"mistral-7b-v0.1", "gemma3-27b", "gpt-oss-20b"} {
		for _, c := range []struct {
			engine  string
			in, out int
		}{{"vllm", 600, 200}, {"vllm", 5000, 300}, {"vllm-0.6", 5000, 100}, {"sglang", 1500, 200}} {
			t.Run(fmt.Sprintf("%s/%s/%d+%d", mdl, c.engine, c.in, c.out), func(t *testing.T) {
				sys, w := setup(t, "h100", mdl, 1)
				p := pricer(t, sys, w, sim.Default())
				e, err := serve.Preset(c.engine, sys.Device.Memory.Limit())
				if err != nil {
					t.Fatal(err)
				}
				e.MaxSeqs = 8192
				budget, _, _ := kvBudget(t, e, p)
				_, m, err := e.KVCapacity(p)
				if err != nil {
					t.Fatal(err)
				}
				if m.KVWindow == 0 || !(m.KVWindowed > 0) {
					t.Fatalf("%s: no window in its footprint", mdl)
				}
				prompt := float64(m.KVGrowth)*float64(c.in) + float64(m.KVWindowed)*float64(min(c.in, m.KVWindow))
				n := int(1.5*budget/prompt) + 8
				reqs := mustRequests(t, serve.Workload{N: min(n, 4000), Arrival: serve.AllAtOnce, Input: serve.Fixed(c.in), Output: serve.Fixed(c.out)})
				res, err := serve.Run(p, e, reqs, serve.Options{Records: true})
				if err != nil {
					t.Fatal(err)
				}
				held, running := heldBytes(res, 0, prompt/float64(c.in))
				t.Logf("budget %.2f GiB: most running %d, holding at least %.2f GiB", budget/(1<<30), running, held/(1<<30))
				if held > budget {
					t.Errorf("%d running hold at least %.3f GiB, more than the budget of %.3f GiB", running, held/(1<<30), budget/(1<<30))
				}
			})
		}
	}
}
