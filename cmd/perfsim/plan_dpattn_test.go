package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/workloads"
)

// TestPlanServe_dpAttentionEqualsServe: the plan's best data-parallel
// attention candidate (qwen3-30b-a3b on H100s, --dp-attention on,
// SGLang's preset) has the figures of the perfsim serve command its
// table prints for it, run over the very requests the plan simulated
// (its Poisson arrivals pinned to the rate, replayed as a trace; same
// seed): GPUs, TTFT and TPOT p99 and tokens/s per user, to the bit; one
// group at 12 req/s, and two groups of 2 × tp1 ep2 at 60 req/s (--gpus
// 4 behind the round-robin router).
func TestPlanServe_dpAttentionEqualsServe(t *testing.T) {
	for _, tt := range []struct {
		rate   float64
		layout []string
		groups int
	}{
		{12, []string{"--tp", "1,2"}, 1},
		{60, []string{"--tp", "1", "--ep", "2"}, 2},
	} {
		t.Run(fmt.Sprint(tt.rate), func(t *testing.T) { planEqualsServe(t, tt.rate, tt.layout, tt.groups) })
	}
}

func planEqualsServe(t *testing.T, rate float64, layout []string, groups int) {
	const n, seed = 200, 3
	args := append([]string{"plan", "serve", "--hw", "h100", "--model", "qwen3-30b-a3b", "--engine", "sglang", "--rate", fmt.Sprint(rate), "--ttft-p99", "1s", "--tpot-p99", "50ms",
		"--input", "uniform:128:1024", "--output", "uniform:16:256", "--pp", "1", "--dtypes", "fp8", "--max-seqs", "0", "--requests", strconv.Itoa(n),
		"--seed", strconv.Itoa(seed), "--dp-attention", "on"}, layout...)
	var v struct {
		Best *struct {
			TP       int     `json:"tp"`
			EP       int     `json:"ep"`
			DP       int     `json:"dp"`
			DPAttn   int     `json:"dp_attention"`
			DType    string  `json:"dtype"`
			MaxSeqs  int     `json:"max_seqs"`
			GPUs     int     `json:"gpus"`
			TTFT     float64 `json:"ttft_p99_s"`
			TPOT     float64 `json:"tpot_p99_s"`
			PerUser  float64 `json:"output_tokens_per_s_per_user"`
			Requests int     `json:"requests"`
		} `json:"best"`
	}
	perfsimJSON(t, &v, append(args, "--format", "json")...)
	b := v.Best
	if b == nil || b.DPAttn < 2 || b.EP != b.DPAttn*b.TP || b.GPUs != b.DP*b.DPAttn*b.TP {
		t.Fatalf("best %+v: want a data-parallel attention group", b)
	}
	t.Logf("best: %+v", *b)
	if b.DP != groups {
		t.Fatalf("best %+v: %d groups, want %d", b, b.DP, groups)
	}
	// The serve command the table prints for the best.
	table, errOut, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	var cmd string
	for _, line := range strings.Split(table, "\n") {
		if rest, ok := strings.CutPrefix(line, "serve"); ok {
			cmd, _, _ = strings.Cut(strings.TrimSpace(rest), ",")
			break
		}
	}
	flags, ok := strings.CutPrefix(cmd, "perfsim serve ")
	if !ok {
		t.Fatalf("the plan's table names no serve command for its best:\n%s", table)
	}
	in, err := serve.ParseLengths("uniform:128:1024")
	if err != nil {
		t.Fatal(err)
	}
	out, err := serve.ParseLengths("uniform:16:256")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := plan.Requests(serve.Workload{N: b.Requests, Arrival: serve.Poisson, Rate: rate, Seed: seed, Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	var tr strings.Builder
	tr.WriteString("arrival_s,input_tokens,output_tokens\n")
	for _, r := range reqs {
		fmt.Fprintf(&tr, "%s,%d,%d\n", strconv.FormatFloat(float64(r.Arrival), 'g', -1, 64), r.Input, r.Output)
	}
	trace := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(trace, []byte(tr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var s struct {
		DP     int `json:"dp"`
		Groups int `json:"dp_attention_groups"`
		GPUs   int `json:"gpus"`
		TTFT   struct {
			P99 float64 `json:"p99"`
		} `json:"ttft_s"`
		TPOT struct {
			Mean float64 `json:"mean"`
			P99  float64 `json:"p99"`
		} `json:"tpot_s"`
		Overloaded bool `json:"overloaded"`
	}
	perfsimJSON(t, &s, append(append([]string{"serve", "--hw", "h100", "--model", "qwen3-30b-a3b", "--engine", "sglang"}, strings.Fields(flags)...),
		"--trace", trace, "--format", "json")...)
	wantGroups := groups
	if groups == 1 {
		wantGroups = 0 // left out
	}
	if s.DP != b.DPAttn || s.Groups != wantGroups || s.GPUs != b.GPUs || s.TTFT.P99 != b.TTFT || s.TPOT.P99 != b.TPOT || 1/s.TPOT.Mean != b.PerUser || s.Overloaded {
		t.Errorf("plan's best %+v; perfsim serve %s on its requests: dp %d, %d groups, %d GPUs, TTFT p99 %v, TPOT p99 %v, %v tokens/s per user, overloaded %v",
			b, flags, s.DP, s.Groups, s.GPUs, s.TTFT.P99, s.TPOT.P99, 1/s.TPOT.Mean, s.Overloaded)
	}
}

// TestPlanServe_dpAttentionBad: --dp-attention's refusals are usage
// errors (exit 2) said beside the other flags' problems.
func TestPlanServe_dpAttentionBad(t *testing.T) {
	for _, tt := range []struct {
		model string
		args  []string
		want  []string
	}{
		{"mixtral-8x7b", []string{"--dp-attention", "yes"}, []string{`--dp-attention: want auto, on or off, got "yes"`}},
		{"llama3-8b", []string{"--dp-attention", "on"}, []string{"--dp-attention: on, but llama3-8b has no routed experts"}},
		// With another flag's problem, both are said.
		{"llama3-8b", []string{"--dp-attention", "on", "--pp", "0"}, []string{"--pp: 0 is below 1", "--dp-attention: on, but llama3-8b has no routed experts"}},
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--router", "least-outstanding"}, []string{"--router: least-outstanding with --dp-attention on is not modelled"}},
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--disagg"}, []string{"--dp-attention: on is not with --disagg"}},
		// ep 4 is tp 4's within its group alone, which on does not search.
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--tp", "4", "--ep", "4,8"}, []string{"--ep: 4 is the expert parallelism of no data-parallel attention group searched (replicas × --tp 4)"}},
		// --max-rate's one group needs its EP.
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--max-rate", "--tp", "2"}, []string{"--dp-attention: on with --max-rate prices one group of replicas × --tp GPUs", "give --ep, a multiple of --tp", "--rate: not with --max-rate"}},
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--max-rate", "--tp", "2", "--ep", "2"}, []string{"--dp-attention: on with --max-rate prices one group"}},
		{"mixtral-8x7b", []string{"--dp-attention", "off", "--max-rate", "--tp", "1", "--ep", "4"}, []string{"--ep: expert parallelism 4 divides none of the TP degrees searched (1)"}},
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--pp", "2"}, []string{"--pp: data-parallel attention runs one pipeline stage"}},
		// 8 experts: no group of tp 8 (ep 16 and up), none within 4 GPUs at tp 4.
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--tp", "8"}, []string{"--dp-attention: on, but no group of 2 or more replicas of --tp 8 within --max-gpus 64"}},
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--tp", "4", "--max-gpus", "4"}, []string{"no group of 2 or more replicas of --tp 4 within --max-gpus 4"}},
		{"mixtral-8x7b", []string{"--dp-attention", "on", "--tp", "2", "--ep", "2"}, []string{"no group of 2 or more replicas of --tp 2 within --max-gpus 64 has an expert parallelism (replicas × tp) among --ep 2"}},
	} {
		_, errOut, code := perfsim(t, append([]string{"plan", "serve", "--hw", "h100", "--model", tt.model, "--rate", "5", "--ttft-p99", "1s"}, tt.args...)...)
		for _, w := range tt.want {
			if code != 2 || !strings.Contains(errOut, w) {
				t.Errorf("%s %v: exit %d, %q; want 2 and %q", tt.model, tt.args, code, errOut, w)
			}
		}
	}
}

// TestDPAttnErrors_engine: an engine serve cannot run data-parallel
// attention with (multi-step decode; no preset is one today) is refused
// naming --engine under on, and said on stderr under auto, which then
// searches none.
func TestDPAttnErrors_engine(t *testing.T) {
	m, err := workloads.Resolve("mixtral-8x7b")
	if err != nil {
		t.Fatal(err)
	}
	s := simWorkload{M: m}.Shape()
	e, _ := serve.Preset("vllm-0.6", 80<<30)
	e.SchedulerSteps = 8
	o := planOptions{model: "mixtral-8x7b", tp: []int{1, 2}, pp: []int{1}, maxGPUs: 64}
	groups := []dpAttnGroup{{1, 2}}
	errs := o.dpAttnErrors(dpAttnOn, s, serve.RoundRobin, &e, groups)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "--engine: vllm-0.6 cannot run data-parallel attention: --dp-attention: multi-step scheduling (8 steps)") {
		t.Errorf("on: %v", errs)
	}
	if errs := o.dpAttnErrors(dpAttnAuto, s, serve.RoundRobin, &e, groups); len(errs) != 0 {
		t.Errorf("auto: %v", errs)
	}
	if n := dpAttnNote(dpAttnAuto, s, serve.RoundRobin, e); !strings.Contains(n, "data-parallel attention not searched: --dp-attention: multi-step") {
		t.Errorf("auto's note: %q", n)
	}
	e.SchedulerSteps = 1
	if errs := o.dpAttnErrors(dpAttnOn, s, serve.RoundRobin, &e, groups); len(errs) != 0 {
		t.Errorf("one step: %v", errs)
	}
}

// TestPlanServe_dpAttentionNote: behind the least-outstanding router an
// MoE plan under auto searches no data-parallel attention (serve models
// it round-robin only), and says so on stderr.
func TestPlanServe_dpAttentionNote(t *testing.T) {
	var v struct {
		Seen int `json:"layouts_seen"`
	}
	args := append(mixtralPlan[:len(mixtralPlan):len(mixtralPlan)], "--router", "least-outstanding", "--format", "json")
	perfsimJSON(t, &v, args...)
	_, errOut, _ := perfsim(t, args...)
	if v.Seen != 5 || !strings.Contains(errOut, "perfsim: data-parallel attention not searched: the least-outstanding router with it is not modelled") {
		t.Errorf("%d layouts seen (want 5); stderr %q", v.Seen, errOut)
	}
}

// TestPlanServe_denseGolden: a dense model's plan is what it was before
// data-parallel attention was searched, byte for byte: the goldens were
// written by perfsim at 6cddf67 (no --dp-attention), and a dense model
// adds no candidate, column or key (go test ./cmd/perfsim -update
// rewrites them).
func TestPlanServe_denseGolden(t *testing.T) {
	for _, f := range []string{"table", "csv", "json"} {
		got, errOut, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "30", "--ttft-p99", "500ms", "--tpot-p99", "30ms",
			"--tp", "1,2", "--pp", "1,2", "--max-seqs", "0,64", "--requests", "200", "--disagg", "--format", f)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		golden(t, "plan_serve_dense."+f, got)
	}
}

// FuzzParseDPAttn: --dp-attention takes auto, on or off in any case and
// refuses anything else naming the flag; it never panics.
func FuzzParseDPAttn(f *testing.F) {
	for _, s := range []string{"auto", "on", "off", "ON", "", "yes", "on ", "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseDPAttn(s)
		switch strings.ToLower(s) {
		case "auto", "on", "off":
			want := map[string]dpAttnMode{"auto": dpAttnAuto, "on": dpAttnOn, "off": dpAttnOff}[strings.ToLower(s)]
			if err != nil || m != want {
				t.Errorf("%q: %v, %v", s, m, err)
			}
		default:
			if err == nil || !strings.HasPrefix(err.Error(), "--dp-attention: want auto, on or off") {
				t.Errorf("%q: accepted as %v (%v)", s, m, err)
			}
		}
	})
}

// TestPlanServe_maxRateDPAttention: --max-rate with an --ep a multiple
// of --tp prices a data-parallel attention group (--dp of them): named,
// its GPUs groups × replicas × tp, dp_attention its replicas; two groups
// sustain more than one, and the table names the perfsim serve command
// that runs them.
func TestPlanServe_maxRateDPAttention(t *testing.T) {
	type rate struct {
		Layout string  `json:"layout"`
		DP     int     `json:"dp"`
		DPAttn int     `json:"dp_attention"`
		GPUs   int     `json:"gpus"`
		Rate   float64 `json:"max_requests_per_s"`
	}
	args := []string{"plan", "serve", "--hw", "h100", "--model", "mixtral-8x7b", "--max-rate", "--tp", "1", "--ep", "4", "--dtypes", "fp8", "--max-seqs", "0",
		"--ttft-p99", "1s", "--tpot-p99", "50ms", "--requests", "200", "--format", "json"}
	var one, two rate
	perfsimJSON(t, &one, args...)
	perfsimJSON(t, &two, append(args, "--dp", "2")...)
	if one.Layout != "dp-attn 4 × tp1 ep4 pp1 fp8" || one.DP != 1 || one.DPAttn != 4 || one.GPUs != 4 || !(one.Rate > 0) {
		t.Errorf("one group: %+v", one)
	}
	if two.DP != 2 || two.GPUs != 8 || !(two.Rate > one.Rate) {
		t.Errorf("two groups: %+v, one: %+v", two, one)
	}
	// The table names the serve command that runs the two groups.
	table, errOut, code := perfsim(t, append(args[:len(args)-2:len(args)-2], "--dp", "2")...)
	want := regexp.MustCompile(`serve +perfsim serve --dp-attention --tp 1 --ep 4 --gpus 8 --dtype fp8 --rate ([0-9.]+) --requests ([0-9]+),`)
	m := want.FindStringSubmatch(table)
	if code != 0 || m == nil {
		t.Fatalf("exit %d (%s); table:\n%s\nwant %v", code, errOut, table, want)
	}
	// The rate is the one found, rounded down to four digits; the
	// requests at least --requests.
	if r, _ := strconv.ParseFloat(m[1], 64); !(r <= two.Rate && r > 0.999*two.Rate) {
		t.Errorf("serve line's --rate %s, the rate found %v", m[1], two.Rate)
	}
	if n, _ := strconv.Atoi(m[2]); n < 200 {
		t.Errorf("serve line's --requests %s, fewer than the plan's 200", m[2])
	}
}

func TestRateFlag(t *testing.T) {
	for _, c := range []struct {
		r    float64
		want string
	}{{63.7649, "63.76"}, {109.6, "109.6"}, {0.123456, "0.1234"}, {1234.56, "1234"}, {5, "5"}, {0, "0"}} {
		if got := rateFlag(c.r); got != c.want {
			t.Errorf("rateFlag(%v) = %s, want %s", c.r, got, c.want)
		}
	}
}
