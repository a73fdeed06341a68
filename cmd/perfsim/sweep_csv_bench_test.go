package main

import (
	"context"
	"io"
	"runtime/debug"
	"testing"
)

// BenchmarkSweepCSV runs a slice of the million-point sweep of issue 14
// (docs/speed.md) through the CSV writer, as the command does but on one
// worker: every prompt length of 128..128000+128 at batches 1..20, on
// H100s at TP 4 (20,000 points). Its ns/point, times the million points
// of the big sweep over two cores, is about that sweep's wall time.
func BenchmarkSweepCSV(b *testing.B) {
	o := sweepFlags{hw: "h100", model: "llama3-70b", batch: "1..20", input: "128..128000+128", output: "128", tp: "4", pp: "1", dtype: "bf16"}
	s, err := o.spec()
	if err != nil {
		b.Fatal(err)
	}
	n := s.size()
	defer debug.SetGCPercent(debug.SetGCPercent(sweepGCPercent)) // as the command runs
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := writeSweep(context.Background(), io.Discard, s, formatCSV, 1, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/point")
}
