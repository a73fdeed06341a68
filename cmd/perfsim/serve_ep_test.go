package main

import (
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// epArgs are a Mixtral 8x7B replica of four H100s with --ep N within its
// TP group.
func epArgs(ep int) []string {
	return []string{"--hw", "h100", "--model", "mixtral-8x7b", "--tp", "4", "--ep", strconv.Itoa(ep)}
}

// TestServe_epEqualsSimulate: serve --ep prices a replica's iterations
// with simulate's expert-parallel pricing. Static batching (trtllm's
// preset with CUDA graphs, as simulate prices decode) of a batch queued
// at t = 0, and one request at a time at a low rate, give simulate's
// TTFT, TPOT and E2E for the same scenario within 0.5% (issue #11's
// static-mode tolerance), at ep 1, 2 and 4; and simulate's figures move
// with --ep, so a serve that ignored --ep would fail.
func TestServe_epEqualsSimulate(t *testing.T) {
	type sim struct{ TTFT, TPOT, E2E float64 }
	type stats struct {
		Mean float64 `json:"mean"`
	}
	type served struct {
		EP   int   `json:"ep"`
		TTFT stats `json:"ttft_s"`
		TPOT stats `json:"tpot_s"`
		E2E  stats `json:"e2e_s"`
	}
	for _, c := range []struct {
		name           string
		batch, in, out int
		serve          []string
	}{
		{"static batch 8", 8, 512, 128, []string{"--arrival", "all", "--requests", "8", "--max-seqs", "8"}},
		{"low rate", 1, 1024, 64, []string{"--rate", "0.05", "--requests", "4", "--max-seqs", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ttft := map[int]float64{}
			for _, ep := range []int{1, 2, 4} {
				var s sim
				var v struct {
					TTFT float64 `json:"ttft_s"`
					TPOT float64 `json:"tpot_s"`
					E2E  float64 `json:"e2e_s"`
				}
				// A static batch is prefilled whole: no token budget
				// chunks it in simulate either.
				perfsimJSON(t, &v, append([]string{"simulate", "--batch", strconv.Itoa(c.batch), "--input", strconv.Itoa(c.in), "--output", strconv.Itoa(c.out),
					"--max-num-tokens", strconv.Itoa(c.batch * c.in), "--format", "json"}, epArgs(ep)...)...)
				s = sim{v.TTFT, v.TPOT, v.E2E}
				ttft[ep] = s.TTFT
				var g served
				perfsimJSON(t, &g, append(append([]string{"serve", "--static", "--engine", "trtllm", "--cuda-graphs", "--input", strconv.Itoa(c.in), "--output", strconv.Itoa(c.out),
					"--format", "json"}, epArgs(ep)...), c.serve...)...)
				if g.EP != ep {
					t.Errorf("ep %d: JSON ep %d", ep, g.EP)
				}
				for _, m := range []struct {
					name      string
					got, want float64
				}{{"TTFT", g.TTFT.Mean, s.TTFT}, {"TPOT", g.TPOT.Mean, s.TPOT}, {"E2E", g.E2E.Mean, s.E2E}} {
					t.Logf("ep %d: %s serve %.6g s, simulate %.6g s (%+.4f%%)", ep, m.name, m.got, m.want, 100*(m.got/m.want-1))
					if !(math.Abs(m.got/m.want-1) <= 0.005) {
						t.Errorf("ep %d: serve %s %.6g s, simulate %.6g s (%+.3f%%)", ep, m.name, m.got, m.want, 100*(m.got/m.want-1))
					}
				}
			}
			// The all-to-all and the split experts change the prefill.
			if ttft[2] == ttft[1] || ttft[4] == ttft[2] {
				t.Errorf("simulate's TTFT does not move with --ep (ep 1, 2, 4: %v): the comparison shows nothing", ttft)
			}
		})
	}
}

// TestServe_epMemory: the memory serve sizes the KV cache against (one
// device's weights and activations, a prefill of the engine's token
// budget) is simulate's for that scenario at each --ep, and the KV cache
// follows it.
func TestServe_epMemory(t *testing.T) {
	kv := map[int]int{}
	acts := map[int]float64{}
	for _, ep := range []int{1, 2, 4} {
		var o serveOptions
		fs := newFlagSet("serve", serveSynopsis, serveExamples, io.Discard)
		o.AddFlags(fs)
		if err := fs.Parse(append(epArgs(ep), "--rate", "1", "--requests", "20")); err != nil {
			t.Fatal(err)
		}
		s, err := o.setup(fs)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.pricer.Footprint(s.engine.MaxTokens)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Memory struct {
				Weights float64 `json:"weights_bytes"`
				Acts    float64 `json:"activations_bytes"`
			} `json:"memory"`
		}
		perfsimJSON(t, &v, append([]string{"simulate", "--batch", "1", "--input", strconv.Itoa(s.engine.MaxTokens), "--output", "1", "--format", "json"}, epArgs(ep)...)...)
		if float64(m.Weights) != v.Memory.Weights || float64(m.Activations) != v.Memory.Acts {
			t.Errorf("ep %d: serve's device holds %d B weights, %d B activations; simulate's %.0f B, %.0f B", ep, int64(m.Weights), int64(m.Activations), v.Memory.Weights, v.Memory.Acts)
		}
		acts[ep] = v.Memory.Acts
		var g struct {
			KV int `json:"kv_cache_tokens"`
		}
		perfsimJSON(t, &g, append(append([]string{"serve", "--format", "json"}, epArgs(ep)...), "--rate", "1", "--requests", "20")...)
		kv[ep] = g.KV
	}
	// Less of each expert's activations on a device leaves more for
	// the KV cache.
	if !(acts[2] < acts[1] && acts[4] < acts[2]) || !(kv[2] > kv[1] && kv[4] > kv[2]) {
		t.Errorf("ep 1, 2, 4: activations %v B, KV cache %v tokens; want the activations falling and the cache growing", acts, kv)
	}
}

// TestServe_epBad: --ep's problems exit 2 naming the flag, as simulate
// names them, every problem at once; ep above tp is refused without
// --dp-attention, and --dp-attention's layout is checked (ep = dp × tp,
// none of the features it is not modelled with).
func TestServe_epBad(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
		sim  bool // simulate says the same
	}{
		{[]string{"--model", "mixtral-8x7b", "--tp", "4", "--ep", "3"}, []string{"--ep: expert parallelism 3 does not divide the 8 experts"}, true},
		{[]string{"--model", "llama3-8b", "--tp", "2", "--ep", "2"}, []string{"--ep: expert parallelism 2 for a model without experts"}, true},
		{[]string{"--model", "mixtral-8x7b", "--tp", "6", "--ep", "3"}, []string{"--tp: tensor parallelism 6 does not divide the 32 attention heads", "--ep: expert parallelism 3 does not divide the 8 experts"}, true},
		{[]string{"--model", "mixtral-8x7b", "--tp", "2", "--ep", "4"}, []string{"--ep: expert parallelism 4 is more than --tp 2", "need --dp-attention"}, false},
		{[]string{"--model", "mixtral-8x7b", "--tp", "2", "--dp", "2", "--ep", "8", "--dp-attention"}, []string{"--ep: 8, but --dp-attention spreads each MoE layer's experts over every replica's GPUs: --ep must be --dp 2 × --tp 2 = 4"}, false},
		{[]string{"--model", "mixtral-8x7b", "--tp", "2", "--dp", "2", "--ep", "4", "--dp-attention", "--pp", "2", "--router", "least-outstanding", "--users", "4"}, []string{"--pp: 2 pipeline stages with --dp-attention", "--router: least-outstanding with --dp-attention", "--dp-attention: not with --users"}, false},
		{[]string{"--model", "mixtral-8x7b", "--tp", "1", "--ep", "2", "--dp-attention", "--disagg", "1P1D"}, []string{"--dp-attention: not with --disagg"}, false},
		{[]string{"--model", "mixtral-8x7b", "--tp", "1", "--dp", "2", "--ep", "2", "--dp-attention", "--engine", "vllm-0.6", "--scheduler-steps", "4"}, []string{"--dp-attention: --engine vllm-0.6 decodes 4 steps per scheduling decision"}, false},
		{[]string{"--model", "mixtral-8x7b", "--tp", "4", "--ep", "0", "--requests", "0"}, []string{"--ep: must be at least 1, got 0", "--requests: must be at least 1"}, false},
		{[]string{"--model", "mixtral-8x7b", "--tp", "4", "--ep", "4", "--disagg", "1P1D", "--prefill-tp", "2"}, []string{"--ep: expert parallelism 4 is more than --prefill-tp 2"}, false},
		// The model's refusal of the layout beside another flag's problem,
		// where it had been said only once the flags were right.
		{[]string{"--model", "mixtral-8x7b", "--tp", "3", "--ep", "3", "--requests", "0"}, []string{"--requests: must be at least 1", "--tp: tensor parallelism 3 does not divide the 32 attention heads", "--ep: expert parallelism 3 does not divide the 8 experts"}, false},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, errOut, code := perfsim(t, append([]string{"serve", "--hw", "h100", "--rate", "1"}, c.args...)...)
			for _, w := range c.want {
				if code != 2 || !strings.Contains(errOut, w) {
					t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, w)
				}
			}
			if c.sim {
				_, simErr, code := perfsim(t, append([]string{"simulate", "--hw", "h100"}, c.args...)...)
				for _, w := range c.want {
					if code != 2 || !strings.Contains(simErr, w) {
						t.Errorf("simulate: exit %d, stderr %q; want 2 and %q", code, simErr, w)
					}
				}
			}
		})
	}
}
