package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/sim"
)

// TestPlanTrainGolden pins perfsim plan train's output, and simulate's
// training at scale on a catalog system.
func TestPlanTrainGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int // 3: no layout fits (no answer)
	}{
		{"plan_train.stdout", []string{"plan", "train", "--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "16", "--global-batch", "64", "--seq", "2048", "--tokens", "300e9", "--top", "4"}, 0},
		{"plan_train_nofit.stdout", []string{"plan", "train", "--model", "llama3-70b", "--system", "dgx-a100", "--gpus", "2", "--global-batch", "8", "--seq", "4096"}, 3},
		{"simulate_training_scale.stdout", []string{"simulate", "--system", "dgx-h100", "--model", "llama3-70b", "--mode", "training", "--seq", "4096",
			"--tp", "8", "--sp", "--pp", "4", "--dp", "32", "--global-batch", "1024", "--schedule", "interleaved", "--virtual-stages", "5", "--zero", "1", "--tokens", "15e12"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := perfsim(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			golden(t, tt.name, out)
			if again, _, _ := perfsim(t, tt.args...); again != out {
				t.Error("a second run differs")
			}
		})
	}
}

func TestPlanTrainJSON(t *testing.T) {
	out, stderr, code := perfsim(t, "plan", "train", "--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "32",
		"--seq", "2048", "--format", "json", "--scaling", "8,16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var j planTrainJSONOut
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Best) == 0 || j.Best[0].Rank != 1 || j.Seen < j.Simulated || len(j.Scaling) != 2 {
		t.Fatalf("plan train json: %+v", j)
	}
	for i := 1; i < len(j.Best); i++ {
		if j.Best[i].Step < j.Best[i-1].Step || j.Best[i].Why == "" {
			t.Errorf("rank %d: step %v after %v, why %q", i+1, j.Best[i].Step, j.Best[i-1].Step, j.Best[i].Why)
		}
	}
	if s := j.Scaling[1]; s.Speedup <= 1 || s.StrongEff > 1.0001 {
		t.Errorf("strong scaling 8 -> 16 GPUs: speedup %v efficiency %v", s.Speedup, s.StrongEff)
	}
}

func TestPlanTrainBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--system", "dgx-h100", "--gpus", "8", "--global-batch", "8"}, "--model"},
		{[]string{"--model", "gpt3-2.7b", "--gpus", "8", "--global-batch", "8"}, "--system"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h999", "--gpus", "8", "--global-batch", "8"}, "--system"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "0", "--global-batch", "8"}, "--gpus"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8"}, "--global-batch"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--scaling", "8,x"}, "--scaling"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--tokens", "-1"}, "--tokens"},
		// An explicit empty --scaling or a zero --tokens had meant none
		// without a word.
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--scaling", ""}, "--scaling: empty list"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--tokens", "0"}, "--tokens: 0 is no token budget"},
		// --dropout is a probability below 1, as simulate's.
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--dropout", "1"}, "--dropout: want a probability from 0 to below 1, got 1"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--dropout", "-0.1"}, "--dropout: want a probability"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--dropout", "NaN"}, "--dropout: want a probability"},
		{[]string{"--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "8", "--unfused-attention=maybe"}, "--unfused-attention"},
	}
	for _, tt := range tests {
		_, stderr, code := perfsim(t, append([]string{"plan", "train"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 naming %s", tt.args, code, stderr, tt.want)
		}
	}
	if _, _, code := perfsim(t, "plan", "nonsense"); code != 2 {
		t.Errorf("plan nonsense: exit %d, want 2", code)
	}
}

// TestPlanTrainChart checks the charts' series: a bar per ranked layout
// whose total is its step, and the scaling curve's efficiencies.
func TestPlanTrainChart(t *testing.T) {
	m, err := resolveModel("gpt3-2.7b")
	if err != nil {
		t.Fatal(err)
	}
	req := plan.TrainRequest{GPUs: 8, GlobalBatch: 32, Seq: 2048, Top: 3, Base: sim.Default()}
	p, err := searchOn("dgx-h100", simWorkload{M: m}, req)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scaling("dgx-h100", simWorkload{M: m}, req, []int{8, 16})
	if err != nil {
		t.Fatal(err)
	}
	c, err := planTrainChart(m.Name(), p)
	if err != nil {
		t.Fatal(err)
	}
	tot, ok := c.Series("step by layout/total")
	if !ok || len(tot) != len(p.Best) {
		t.Fatalf("totals %v (%v), want %d bars", tot, ok, len(p.Best))
	}
	for i, xy := range tot {
		if d := xy.Y - float64(p.Best[i].Step); d > 1e-9 || d < -1e-9 {
			t.Errorf("bar %d total %v, step %v", i, xy.Y, p.Best[i].Step)
		}
	}
	sc2, err := scalingChart(m.Name(), sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"strong scaling efficiency", "weak scaling efficiency"} {
		s, ok := sc2.Series(n)
		if !ok || len(s) != 2 || s[0].X != 8 || s[0].Y != 100 {
			t.Errorf("%s: series %v (%v), want 2 points from (8, 100)", n, s, ok)
			continue
		}
		want := 100 * sc[1].StrongEff
		if n[0] == 'w' {
			want = 100 * sc[1].WeakEff
		}
		if d := s[1].Y - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s at 16 GPUs: %v, want %v", n, s[1].Y, want)
		}
	}
	if _, err := planTrainChart("x", &plan.TrainPlan{}); err == nil {
		t.Error("a chart of nothing")
	}
	if _, err := scalingChart("x", nil); err == nil {
		t.Error("a scaling curve without points")
	}
}

// TestLeading: the winner's "then" names the biggest part of its step
// after compute among all of them. The overlap slowdown and the optimizer
// had been left out, so gpt3-2.7b's winner on 16 GPUs said "then DP comm
// 0.2%" beside an overlap of 1.3% and an optimizer step of 0.8%.
func TestLeading(t *testing.T) {
	for _, tt := range []struct {
		b    sim.Breakdown
		want string
	}{
		{sim.Breakdown{Compute: 0.98, DPComm: 0.002, Overlap: 0.013, Optimizer: 0.005}, "compute 98% of the step, then overlap 1.3%"},
		{sim.Breakdown{Compute: 0.9, DPComm: 0.01, Optimizer: 0.09}, "compute 90% of the step, then optimizer 9.0%"},
		{sim.Breakdown{Compute: 0.5, Input: 0.4, Bubble: 0.1}, "compute 50% of the step, then input 40.0%"},
		{sim.Breakdown{Compute: 0.9, TPComm: 0.06, Overlap: 0.04}, "compute 90% of the step, then TP comm 6.0%"},
	} {
		c := &plan.TrainCandidate{Break: tt.b, Step: tt.b.Total()}
		if got := leading(c); got != tt.want {
			t.Errorf("leading(%+v) = %q, want %q", tt.b, got, tt.want)
		}
	}
}

// TestPlanTrain_saysItsInputs: the search's answer names the settings
// every candidate shares and its figures depend on (the data type, the
// gradients' type, no overlap, the experts' imbalance, the token budget),
// in the table and the JSON: an fp8 search with fp32 gradients and no
// overlap had printed the same header as a bf16 one, its MFU (of the fp8
// peak) indistinguishable from a bf16 MFU.
func TestPlanTrain_saysItsInputs(t *testing.T) {
	args := []string{"plan", "train", "--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "32", "--seq", "2048", "--top", "1",
		"--dtype", "fp8", "--grad-dtype", "fp32", "--no-overlap", "--tokens", "1e9"}
	out, stderr, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	head, _, _ := strings.Cut(out, "\n")
	for _, want := range []string{"fp8", "gradients fp32", "no overlap"} {
		if !strings.Contains(head, want) {
			t.Errorf("the header does not say %q: %s", want, head)
		}
	}
	out, stderr, code = perfsim(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var j struct {
		DType     string  `json:"dtype"`
		GradDType string  `json:"grad_dtype"`
		NoOverlap bool    `json:"no_overlap"`
		Tokens    float64 `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.DType != "fp8" || j.GradDType != "fp32" || !j.NoOverlap || j.Tokens != 1e9 {
		t.Errorf("json settings %+v, want fp8, fp32, no overlap, 1e9 tokens", j)
	}
}

// TestPlanTrain_visionModel: a ViT's search runs at its image's tokens
// and says so, its throughput in images/s: vit-l16's had read "global
// batch 256 × 4096 tokens" (--seq's default, which sim no longer reads
// for a ViT) and "tokens/s 5344" of images, and tried context
// parallelism over 4096 tokens (1,008 configurations refused). --seq is
// refused for it, as simulate refuses it.
func TestPlanTrain_visionModel(t *testing.T) {
	args := []string{"plan", "train", "--model", "vit-l16", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "256", "--top", "1"}
	out, stderr, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	head, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(head, "256 images of 197 tokens") || !strings.Contains(out, "images/s") || strings.Contains(out, "tokens/s") {
		t.Errorf("want the batch in images of 197 tokens and images/s:\n%s", out)
	}
	if !strings.Contains(stderr, " 0 refused") {
		t.Errorf("configurations refused: %s", stderr)
	}
	if _, stderr, code := perfsim(t, append(args, "--seq", "197")...); code != 2 || !strings.Contains(stderr, "--seq:") {
		t.Errorf("--seq for a ViT: exit %d: %s", code, stderr)
	}
}

// TestPlanTrain_imageBudget: a ViT's --tokens counts images (sim divides
// it by images/s, as simulate's does), so the help says so and the JSON
// names the budget "images", not "tokens"; a language model's stays
// "tokens". The help had said only "training token budget".
func TestPlanTrain_imageBudget(t *testing.T) {
	_, help, _ := perfsim(t, "plan", "train", "--help")
	if !strings.Contains(help, "images for an image model") {
		t.Errorf("plan train --help does not say an image model's --tokens counts images:\n%s", help)
	}
	// --global-batch likewise counts a ViT's images (it had said only
	// "sequences per optimizer step").
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--global-batch") && !strings.Contains(line, "images") {
			t.Errorf("plan train --help: %q does not say an image model's batch counts images", strings.TrimSpace(line))
		}
	}
	for _, tc := range []struct {
		model, key, not string
		args            []string
	}{
		{"vit-l16", `"images": 1000000000`, `"tokens":`, []string{"--global-batch", "256"}},
		{"llama3-8b", `"tokens": 1000000000`, `"images":`, []string{"--global-batch", "64", "--seq", "2048"}},
	} {
		args := append([]string{"plan", "train", "--model", tc.model, "--system", "dgx-h100", "--gpus", "8", "--tokens", "1e9", "--top", "1", "--format", "json"}, tc.args...)
		out, stderr, code := perfsim(t, args...)
		if code != 0 || !strings.Contains(out, tc.key) || strings.Contains(out, tc.not) {
			t.Errorf("%s: exit %d, want %s and no %s:\n%s%s", tc.model, code, tc.key, tc.not, out, stderr)
		}
	}
}
