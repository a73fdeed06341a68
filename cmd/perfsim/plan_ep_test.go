package main

import (
	"strings"
	"testing"
)

// mixtralPlan is a small plan of Mixtral 8x7B on H100s: tp 2 and 4, one
// stage, fp8, the engine's cap.
var mixtralPlan = []string{"plan", "serve", "--hw", "h100", "--model", "mixtral-8x7b", "--rate", "20", "--ttft-p99", "1s", "--tpot-p99", "50ms",
	"--input", "1024", "--output", "256", "--tp", "2,4", "--pp", "1", "--dtypes", "fp8", "--max-seqs", "0", "--requests", "200"}

// TestPlanServe_ep: an MoE plan searches the EP degrees within each TP
// degree (tp 2: ep 1, 2; tp 4: ep 1, 2, 4) and, with data-parallel
// attention, groups whose EP spans them (2 or 4 replicas of tp 2: ep 4
// or 8; 2 of tp 4: ep 8); --ep pins them, and each candidate's JSON
// gives its ep and its GPUs (TP × PP × DP, times a group's replicas: EP
// within TP adds none); a dense model's search is unchanged (ep 1
// alone).
func TestPlanServe_ep(t *testing.T) {
	type cand struct {
		Deployment string `json:"deployment"`
		TP         int    `json:"tp"`
		PP         int    `json:"pp"`
		EP         int    `json:"ep"`
		DP         int    `json:"dp"`
		DPAttn     int    `json:"dp_attention"`
		GPUs       int    `json:"gpus"`
		Prefill    int    `json:"prefill_instances"`
		Decode     int    `json:"decode_instances"`
		DecodeTP   int    `json:"decode_tp"`
		DecodePP   int    `json:"decode_pp"`
	}
	type out struct {
		Best       *cand  `json:"best"`
		Candidates []cand `json:"candidates"`
		Seen       int    `json:"layouts_seen"`
	}
	for _, tt := range []struct {
		name string
		args []string
		seen int
		eps  []int // the EP degrees the candidates show
	}{
		{"searched", mixtralPlan, 5 + 3, []int{1, 2, 4, 8}},
		{"without data-parallel attention", append(mixtralPlan[:len(mixtralPlan):len(mixtralPlan)], "--dp-attention", "off"), 5, []int{1, 2, 4}},
		{"data-parallel attention alone", append(mixtralPlan[:len(mixtralPlan):len(mixtralPlan)], "--dp-attention", "on"), 3, []int{4, 8}},
		{"pinned", append(mixtralPlan[:len(mixtralPlan):len(mixtralPlan)], "--ep", "2"), 2, []int{2}},
		// ep 4: tp 4's, and 2 replicas of tp 2's.
		{"pinned list", append(mixtralPlan[:len(mixtralPlan):len(mixtralPlan)], "--ep", "1,4"), 3 + 1, []int{1, 4}},
		// Pairs share one EP that divides both pools' TP: (2, 2) and
		// (2, 4) and (4, 2) take ep 1 or 2, (4, 4) ep 1, 2 or 4.
		{"disaggregated", append(mixtralPlan[:len(mixtralPlan):len(mixtralPlan)], "--disagg"), 5 + 3 + 9, []int{1, 2, 4, 8}},
		{"dense", []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "10", "--ttft-p99", "1s", "--tp", "1,2", "--pp", "1",
			"--dtypes", "bf16", "--max-seqs", "0", "--requests", "100"}, 2, []int{1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var v out
			perfsimJSON(t, &v, append(tt.args, "--format", "json")...)
			if v.Seen != tt.seen {
				t.Errorf("%d layouts seen, want %d", v.Seen, tt.seen)
			}
			seen := map[int]bool{}
			for _, c := range v.Candidates {
				seen[c.EP] = true
				want := c.TP * c.PP * c.DP * max(c.DPAttn, 1)
				if c.DPAttn > 0 && (c.EP != c.DPAttn*c.TP || c.PP != 1 || !strings.HasPrefix(c.Deployment, "dp-attn ")) {
					t.Errorf("%s: ep %d, pp %d, want ep dp-attention %d × tp %d, one stage, named", c.Deployment, c.EP, c.PP, c.DPAttn, c.TP)
				}
				if c.Prefill > 0 {
					want = c.Prefill*c.TP*c.PP + c.Decode*c.DecodeTP*c.DecodePP
				}
				if c.GPUs != want {
					t.Errorf("%s: %d GPUs, want %d", c.Deployment, c.GPUs, want)
				}
				if c.EP > 1 && c.Prefill == 0 && !strings.Contains(c.Deployment, "ep") {
					t.Errorf("%s: ep %d not named", c.Deployment, c.EP)
				}
				if c.EP > 1 && c.Prefill > 0 && (c.TP%c.EP != 0 || c.DecodeTP%c.EP != 0 || strings.Count(c.Deployment, "ep") != 2) {
					t.Errorf("%s: ep %d does not lie within both pools' TP, or is not named for each", c.Deployment, c.EP)
				}
			}
			for _, ep := range tt.eps {
				if !seen[ep] {
					t.Errorf("no candidate at ep %d (saw %v)", ep, seen)
				}
			}
			if len(seen) != len(tt.eps) {
				t.Errorf("candidates at ep %v, want %v", seen, tt.eps)
			}
		})
	}
}

// TestPlanServe_epGolden: the table and the CSV of an MoE plan with
// disaggregated pools name each candidate's EP (go test ./cmd/perfsim
// -update rewrites them).
func TestPlanServe_epGolden(t *testing.T) {
	args := append(mixtralPlan[:len(mixtralPlan):len(mixtralPlan)], "--disagg")
	for _, f := range []string{"table", "csv"} {
		got, errOut, code := perfsim(t, append(args, "--format", f)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		golden(t, "plan_serve_ep."+f, got)
	}
}

// TestPlanServe_epBad: a pinned EP the model cannot take is a usage
// error naming --ep and why; every problem is said.
func TestPlanServe_epBad(t *testing.T) {
	for _, tt := range []struct {
		model string
		args  []string
		want  []string
	}{
		{"mixtral-8x7b", []string{"--ep", "3"}, []string{"--ep: expert parallelism 3 does not divide mixtral-8x7b's 8 experts"}},
		{"mixtral-8x7b", []string{"--ep", "3,16"}, []string{"--ep: expert parallelism 3 does not divide mixtral-8x7b's 8 experts",
			"--ep: expert parallelism 16 does not divide mixtral-8x7b's 8 experts"}},
		{"llama3-8b", []string{"--ep", "2"}, []string{"--ep: expert parallelism 2 for llama3-8b, which has no experts"}},
		// Without data-parallel attention, whose groups of tp 1, 2 or 4
		// would take it.
		{"mixtral-8x7b", []string{"--ep", "8", "--tp", "1,2,4", "--dp-attention", "off"}, []string{"--ep: expert parallelism 8 divides none of the TP degrees searched (1,2,4)"}},
		{"mixtral-8x7b", []string{"--ep", "0"}, []string{"--ep: 0 is below 1"}},
		{"mixtral-8x7b", []string{"--ep", "2,2"}, []string{"--ep: 2 is in the list twice"}},
		// With another flag's problem, both are said.
		{"mixtral-8x7b", []string{"--ep", "3", "--pp", "0"}, []string{"--pp: 0 is below 1", "--ep: expert parallelism 3 does not divide"}},
	} {
		_, errOut, code := perfsim(t, append([]string{"plan", "serve", "--hw", "h100", "--model", tt.model, "--rate", "5", "--ttft-p99", "1s"}, tt.args...)...)
		for _, w := range tt.want {
			if code != 2 || !strings.Contains(errOut, w) {
				t.Errorf("%s %v: exit %d, %q; want 2 and %q", tt.model, tt.args, code, errOut, w)
			}
		}
	}
	_, errOut, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "mixtral-8x7b", "--max-rate", "--tp", "4", "--ep", "1,2", "--ttft-p99", "1s")
	if code != 2 || !strings.Contains(errOut, "--ep: 2 values, but --max-rate prices one deployment") {
		t.Errorf("--max-rate --ep 1,2: exit %d, %q", code, errOut)
	}
}

// TestPlanServe_maxRateEP: --max-rate prices the deployment at the EP
// given, and names it.
func TestPlanServe_maxRateEP(t *testing.T) {
	var v struct {
		Layout string  `json:"layout"`
		GPUs   int     `json:"gpus"`
		Rate   float64 `json:"max_requests_per_s"`
	}
	perfsimJSON(t, &v, "plan", "serve", "--hw", "h100", "--model", "mixtral-8x7b", "--max-rate", "--tp", "4", "--ep", "2", "--dtypes", "fp8", "--max-seqs", "0",
		"--ttft-p99", "1s", "--tpot-p99", "50ms", "--requests", "200", "--format", "json")
	if v.Layout != "tp4 ep2 pp1 fp8" || v.GPUs != 4 || !(v.Rate > 0) {
		t.Errorf("--max-rate --tp 4 --ep 2: %+v", v)
	}
}
