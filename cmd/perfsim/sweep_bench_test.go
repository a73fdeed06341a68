package main

import (
	"context"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/workloads"
)

// benchSpec is the sweep of issue 6's speed target: llama3-70b, 4 hardware
// × 4 tp × 50 batch sizes × 125 input lengths = 100,000 points, every one
// valid (tp 16 would not divide llama3-70b's 8 KV heads, so the fifth tp
// value of the 4 × 5 × 50 × 100 is traded for 25 more lengths).
func benchSpec(tb testing.TB) *sweepSpec {
	tb.Helper()
	m, err := workloads.Resolve("llama3-70b")
	if err != nil {
		tb.Fatal(err)
	}
	var hw []*hardware.Device
	for _, n := range benchHardware {
		d, err := hardware.Resolve(n)
		if err != nil {
			tb.Fatal(err)
		}
		hw = append(hw, d)
	}
	batch, _ := parseIntList("batch", "1..50")
	input, _ := parseIntList("input", "128..16000+128")
	return &sweepSpec{HW: hw, Models: []*workloads.Model{m}, DTypes: []model.DType{model.BF16},
		TP: []int{1, 2, 4, 8}, PP: []int{1}, Batch: batch, Input: input[:125], Output: []int{128}}
}

func BenchmarkSweep(b *testing.B) {
	s := benchSpec(b)
	if n := s.size(); n != 100000 {
		b.Fatalf("benchmark sweep has %v points, want 100000", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := runSweep(context.Background(), s, sweepOptions{Keep: func(r *sweepResult) { r.Report = nil }})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e5, "ns/point")
}

// benchHardware are the catalog devices the benchmark sweeps.
var benchHardware = []string{"h100", "a100", "h200", "mi300x"}
