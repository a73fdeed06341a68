package main

import (
	"context"
	"io"
	"runtime/debug"
	"testing"
)

// BenchmarkSweepCSV runs a slice of the million-point sweep of issue 14
// (docs/speed.md) through the CSV writer on one worker, as the command does: every
// prompt length of 128..128000+128, two devices, two TP degrees, batches
// 1..5 (20,000 points). Its ns/point is the figure that, times a million
// over two cores, is the big sweep's wall time.
func BenchmarkSweepCSV(b *testing.B) {
	o := sweepFlags{hw: "h100,mi300x", model: "llama3-70b", batch: "1..5", input: "128..128000+128", output: "128", tp: "2,8", pp: "1", dtype: "bf16"}
	s, err := o.spec()
	if err != nil {
		b.Fatal(err)
	}
	n := s.size()
	defer debug.SetGCPercent(debug.SetGCPercent(sweepGCPercent)) // as the command runs
	b.ReportAllocs()
	for b.Loop() {
		if _, err := writeSweep(context.Background(), io.Discard, s, formatCSV, 1, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/point")
}
