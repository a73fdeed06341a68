package main

import (
	"math"
	"strconv"
	"testing"
)

// TestServe_dpAttention: serve --dp-attention of deepseek-v3 on 8 H200s
// (dp 8 × tp 1, ep 8) with a static batch of one request per replica
// (trtllm's preset, as simulate prices it) gives simulate --dp 8 --ep 8
// --batch 1's TTFT, TPOT and E2E within 0.5%; its JSON says the layout,
// and the 8 replicas hold 8 KV pools of their own, together more than
// tp 8's one (MLA's latent cache is whole on every rank under TP).
func TestServe_dpAttention(t *testing.T) {
	const in, out = 512, 64
	model := []string{"--hw", "h200", "--model", "deepseek-v3", "--dtype", "fp8", "--act", "bf16", "--kv", "bf16"}
	var s struct {
		TTFT float64 `json:"ttft_s"`
		TPOT float64 `json:"tpot_s"`
		E2E  float64 `json:"e2e_s"`
	}
	perfsimJSON(t, &s, append([]string{"simulate", "--tp", "1", "--dp", "8", "--ep", "8", "--batch", "1", "--input", strconv.Itoa(in), "--output", strconv.Itoa(out),
		"--max-num-tokens", strconv.Itoa(in), "--format", "json"}, model...)...)
	type stats struct {
		Mean float64 `json:"mean"`
	}
	type served struct {
		DP          int   `json:"dp"`
		EP          int   `json:"ep"`
		GPUs        int   `json:"gpus"`
		DPAttention bool  `json:"dp_attention"`
		KV          int   `json:"kv_cache_tokens"`
		TTFT        stats `json:"ttft_s"`
		TPOT        stats `json:"tpot_s"`
		E2E         stats `json:"e2e_s"`
	}
	var g served
	perfsimJSON(t, &g, append([]string{"serve", "--static", "--engine", "trtllm", "--cuda-graphs", "--tp", "1", "--dp", "8", "--ep", "8", "--dp-attention",
		"--arrival", "all", "--requests", "8", "--max-seqs", "1", "--input", strconv.Itoa(in), "--output", strconv.Itoa(out), "--format", "json"}, model...)...)
	if g.DP != 8 || g.EP != 8 || g.GPUs != 8 || !g.DPAttention {
		t.Errorf("layout: dp %d, ep %d, %d GPUs, dp_attention %v; want 8, 8, 8, true", g.DP, g.EP, g.GPUs, g.DPAttention)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"TTFT", g.TTFT.Mean, s.TTFT}, {"TPOT", g.TPOT.Mean, s.TPOT}, {"E2E", g.E2E.Mean, s.E2E}} {
		if !(math.Abs(c.got/c.want-1) <= 0.005) {
			t.Errorf("%s: serve %g s, simulate %g s (%+.3f%%)", c.name, c.got, c.want, 100*(c.got/c.want-1))
		}
	}
	var tp8 served
	perfsimJSON(t, &tp8, append([]string{"serve", "--static", "--engine", "trtllm", "--cuda-graphs", "--tp", "8", "--ep", "8",
		"--arrival", "all", "--requests", "8", "--max-seqs", "1", "--input", strconv.Itoa(in), "--output", strconv.Itoa(out), "--format", "json"}, model...)...)
	if tp8.DPAttention || !(8*g.KV > 2*tp8.KV) {
		t.Errorf("KV pools: dp 8 × %d tokens against tp 8's %d (dp_attention %v): want the 8 pools together well above tp 8's one", g.KV, tp8.KV, tp8.DPAttention)
	}
}
