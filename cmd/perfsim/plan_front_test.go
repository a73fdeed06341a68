package main

import (
	"testing"

	"github.com/perfsim/perfsim/plan"
)

// TestPlanFrontLines: the front chart joins the Pareto front in order of
// tokens/s per user and marks the other candidates without joining them:
// they come in search order, and a line through them (as the chart had
// drawn) zig-zags across the plot and reads as a second front.
func TestPlanFrontLines(t *testing.T) {
	c := func(user, gpu float64) plan.Candidate {
		return plan.Candidate{TokensPerSecondPerUser: user, TokensPerSecondPerGPU: gpu, GPUs: 4}
	}
	p := &plan.ServePlan{
		Front: []plan.Candidate{c(30, 700), c(70, 280)},
		All:   []plan.Candidate{c(30, 700), c(35, 350), c(70, 280), c(44, 270), c(31, 150)},
	}
	l, err := planFrontLines(p)
	if err != nil {
		t.Fatal(err)
	}
	// The candidates off the front, marks alone, drawn first; then the
	// front, joined, over them.
	if len(l.Lines) != 2 || !l.Lines[0].Scatter || l.Lines[1].Scatter || len(l.Lines[0].Points) != 3 || len(l.Lines[1].Points) != 2 {
		t.Fatalf("lines %+v: want the 3 candidates off the front as marks alone, then the front of 2 joined", l.Lines)
	}
}
