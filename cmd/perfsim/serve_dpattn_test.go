package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	// SGLang's own settings under --enable-dp-attention: its chunked
	// prefill halved (8192 to 4096 tokens on an H200).
	var sg struct {
		MaxTokens int `json:"max_tokens"`
	}
	perfsimJSON(t, &sg, append([]string{"serve", "--engine", "sglang", "--tp", "1", "--dp", "8", "--ep", "8", "--dp-attention",
		"--arrival", "all", "--requests", "8", "--input", strconv.Itoa(in), "--output", "4", "--format", "json"}, model...)...)
	if sg.MaxTokens != 4096 {
		t.Errorf("sglang under --dp-attention: max_tokens %d, want 4096 (its chunked prefill halved)", sg.MaxTokens)
	}
	var tp8 served
	perfsimJSON(t, &tp8, append([]string{"serve", "--static", "--engine", "trtllm", "--cuda-graphs", "--tp", "8", "--ep", "8",
		"--arrival", "all", "--requests", "8", "--max-seqs", "1", "--input", strconv.Itoa(in), "--output", strconv.Itoa(out), "--format", "json"}, model...)...)
	if tp8.DPAttention || !(8*g.KV > 2*tp8.KV) {
		t.Errorf("KV pools: dp 8 × %d tokens against tp 8's %d (dp_attention %v): want the 8 pools together well above tp 8's one", g.KV, tp8.KV, tp8.DPAttention)
	}
}

// TestServe_dpAttentionGroups: --gpus, a multiple of a data-parallel
// attention group's dp × tp GPUs, runs that many groups behind the
// round-robin router (the group's replicas from --dp, or --ep / --tp
// without it, the same run); the output says the groups where there is
// more than one, and --gpus equal to one group's is the run without it,
// byte for byte. Physics: with constant arrivals and fixed lengths, each
// of two groups at 2r sees a group's arrivals at r (shifted for the
// second), so the latencies are one group's at r and the throughput
// twice it.
func TestServe_dpAttentionGroups(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "mixtral-8x7b", "--dtype", "fp8", "--engine", "sglang", "--tp", "1", "--ep", "2", "--dp-attention",
		"--input", "512", "--output", "64", "--arrival", "constant"}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := perfsim(t, append(append([]string{}, base...), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	two := run("--gpus", "4", "--rate", "16", "--requests", "200", "--format", "json")
	if withDP := run("--dp", "2", "--gpus", "4", "--rate", "16", "--requests", "200", "--format", "json"); withDP != two {
		t.Errorf("--dp 2 --gpus 4 differs from --gpus 4 (--dp --ep / --tp):\n%s", diff(two, withDP))
	}
	one := run("--rate", "8", "--requests", "100", "--format", "json")
	if g := run("--gpus", "2", "--rate", "8", "--requests", "100", "--format", "json"); g != one {
		t.Errorf("--gpus 2 (one group) differs from the run without it:\n%s", diff(one, g))
	}
	type stats struct {
		Mean, P50, P99, Max float64
	}
	type served struct {
		DP     int     `json:"dp"`
		Groups int     `json:"dp_attention_groups"`
		GPUs   int     `json:"gpus"`
		Router string  `json:"router"`
		TTFT   stats   `json:"ttft_s"`
		TPOT   stats   `json:"tpot_s"`
		E2E    stats   `json:"e2e_s"`
		Rate   float64 `json:"requests_per_s"`
	}
	var g2, g1 served
	for _, c := range []struct {
		out string
		v   *served
	}{{two, &g2}, {one, &g1}} {
		if err := json.Unmarshal([]byte(c.out), c.v); err != nil {
			t.Fatal(err)
		}
	}
	if g2.DP != 2 || g2.Groups != 2 || g2.GPUs != 4 || g2.Router != "round-robin" || g1.DP != 2 || g1.Groups != 0 || g1.GPUs != 2 {
		t.Errorf("layouts: two groups %+v, one %+v; want dp 2 in each, 2 groups of 4 GPUs behind round-robin, and no groups key for one", g2, g1)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	for _, c := range []struct {
		name string
		a, b stats
	}{{"TTFT", g2.TTFT, g1.TTFT}, {"TPOT", g2.TPOT, g1.TPOT}, {"E2E", g2.E2E, g1.E2E}} {
		if !near(c.a.Mean, c.b.Mean) || !near(c.a.P50, c.b.P50) || !near(c.a.P99, c.b.P99) || !near(c.a.Max, c.b.Max) {
			t.Errorf("%s: two groups at 16 req/s %+v, one at 8 %+v: want the same", c.name, c.a, c.b)
		}
	}
	if !(math.Abs(g2.Rate/g1.Rate-2) < 0.02) {
		t.Errorf("throughput: two groups %g req/s, one %g: want twice", g2.Rate, g1.Rate)
	}
	table := run("--gpus", "4", "--rate", "16", "--requests", "200")
	if !strings.Contains(table, "layout    2 groups of tp 1 × pp 1 × dp 2 = 4 GPUs, data-parallel attention with ep 2 over each group, round-robin router") {
		t.Errorf("table's layout does not say the groups:\n%s", table)
	}
	if csv := run("--gpus", "4", "--rate", "16", "--requests", "200", "--format", "csv"); !strings.Contains(csv, "\ndp_attention_groups,2,") {
		t.Errorf("CSV does not say the groups:\n%s", csv)
	} else if csv1 := run("--rate", "8", "--requests", "100", "--format", "csv"); strings.Contains(csv1, "dp_attention_groups") {
		t.Errorf("CSV of one group names groups:\n%s", csv1)
	}
}

// TestServe_dpAttentionGroupsBad: a --gpus that is no whole number of
// groups, an --ep that is no multiple of --tp, another router than
// round-robin and --router with one replica are usage errors (exit 2)
// naming the flag, said beside the other flags' problems, and nothing
// is written to --requests-out.
func TestServe_dpAttentionGroupsBad(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--tp", "2", "--dp", "4", "--ep", "8", "--gpus", "12"}, []string{"--gpus: 12 GPUs do not divide into data-parallel attention groups of --dp 4 × --tp 2 (8 GPUs each, --ep 8): give a multiple of 8"}},
		{[]string{"--tp", "2", "--ep", "8", "--gpus", "12", "--requests", "0"}, []string{"--requests: must be at least 1", "--gpus: 12 GPUs do not divide into data-parallel attention groups of --dp 4 × --tp 2"}},
		{[]string{"--tp", "4", "--ep", "6", "--gpus", "12"}, []string{"--ep: 6 is not a multiple of --tp 4"}},
		{[]string{"--tp", "2", "--ep", "8", "--gpus", "16", "--router", "least-outstanding"}, []string{"--router: least-outstanding with --dp-attention is not modelled"}},
		{[]string{"--tp", "2", "--dp", "2", "--ep", "8", "--gpus", "16"}, []string{"--ep: 8, but --dp-attention spreads each MoE layer's experts over every replica's GPUs: --ep must be --dp 2 × --tp 2 = 4"}},
		{[]string{"--tp", "1", "--router", "round-robin"}, []string{"--router: one replica has nothing to route"}},
		{[]string{"--tp", "1", "--ep", "2", "--gpus", "0"}, []string{"--gpus: must be at least 1, got 0"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			reqOut := filepath.Join(t.TempDir(), "requests.csv")
			_, errOut, code := perfsim(t, append([]string{"serve", "--hw", "h100", "--model", "mixtral-8x7b", "--dp-attention", "--rate", "1", "--requests-out", reqOut}, c.args...)...)
			for _, w := range c.want {
				if code != 2 || !strings.Contains(errOut, w) {
					t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, w)
				}
			}
			if _, err := os.Stat(reqOut); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--requests-out written on failure (%v)", err)
			}
		})
	}
}
