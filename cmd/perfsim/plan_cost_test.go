package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestPlanServe_cost: with a price per GPU-hour every candidate costs its
// GPUs times the price, per million output tokens that over its tokens;
// the cost objective needs a price; an unknown objective is a usage error.
func TestPlanServe_cost(t *testing.T) {
	args := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "20", "--ttft-p99", "500ms", "--tpot-p99", "30ms",
		"--input", "1000", "--output", "200", "--requests", "300", "--tp", "1,2", "--pp", "1", "--dtypes", "bf16,fp8"}
	out, stderr, code := perfsim(t, append(args, "--price", "2.5/h", "--objective", "cost", "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var j struct {
		Best       *candJSON  `json:"best"`
		Candidates []candJSON `json:"candidates"`
		Objective  string     `json:"objective"`
		Currency   string     `json:"currency"`
		CostInputs string     `json:"cost_inputs"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.Best == nil || j.Objective != "cost" || j.Currency != "USD" || !strings.Contains(j.CostInputs, "2.5") {
		t.Fatalf("best %+v, objective %q, currency %q, inputs %q", j.Best, j.Objective, j.Currency, j.CostInputs)
	}
	for _, c := range j.Candidates {
		if c.CostPerHour == nil || math.Abs(*c.CostPerHour-2.5*float64(c.GPUs)) > 1e-9 {
			t.Errorf("tp%d dp%d %s: cost per hour %v, want %d GPUs × 2.5 USD", c.TP, c.DP, c.DType, c.CostPerHour, c.GPUs)
			continue
		}
		if want := *c.CostPerHour / (3600 * c.TokensPerS) * 1e6; math.Abs(*c.CostPerMOutput/want-1) > 1e-12 {
			t.Errorf("tp%d dp%d %s: %v per million output tokens, want %v", c.TP, c.DP, c.DType, *c.CostPerMOutput, want)
		}
		if c.Meets && *c.CostPerHour < *j.Best.CostPerHour {
			t.Errorf("tp%d dp%d %s meets the SLO for less than the best", c.TP, c.DP, c.DType)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--objective", "cost"}, "needs a price"},
		{[]string{"--objective", "money", "--price", "2/h"}, "--objective"},
		{[]string{"--price", "2.5"}, "--price"},
	} {
		_, stderr, code := perfsim(t, append(args, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tt.args, code, tt.want, stderr)
		}
	}
}
