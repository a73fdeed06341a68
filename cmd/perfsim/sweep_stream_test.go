package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/perfsim/perfsim/internal/racedetect"
)

// TestSweepStream_sameBytes checks that the streamed output is, byte for
// byte, what encoding the whole list of rows at once writes (as sweep did
// before it streamed): json.Encoder's indented array, csv.Writer's
// records, the table's aligned columns.
func TestSweepStream_sameBytes(t *testing.T) {
	o := sweepFlags{hw: "h100,a100", model: "llama3-8b", batch: "1,8,512", input: "128,4096", output: "16", tp: "1,3", pp: "1", dtype: "bf16"}
	s, err := o.spec()
	if err != nil {
		t.Fatal(err)
	}
	res, err := runSweep(context.Background(), s, sweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []simJSON
	for _, r := range res {
		if r.Err == nil {
			j := simulateJSON(r.Report, s.HW[r.Point.HW].CalibrationLabel(), limitsResult{}, false)
			j.Energy, j.Cost = sweepEnergy(s, &r)
			j.Phases = []phaseJSON{}
			rows = append(rows, j)
		}
	}
	if len(rows) == 0 || len(rows) == len(res) {
		t.Fatalf("%d of %d points ran; want some left out (tp 3) and some run", len(rows), len(res))
	}
	want := map[format]*bytes.Buffer{formatJSON: {}, formatCSV: {}, formatTable: {}}
	if err := writeJSON(want[formatJSON], rows); err != nil {
		t.Fatal(err)
	}
	cw := csv.NewWriter(want[formatCSV])
	cw.Write(sweepColumns)
	for i := range rows {
		cw.Write(sweepCSVRow(&rows[i]))
	}
	cw.Flush()
	tw := newTable(want[formatTable])
	fmt.Fprintln(tw, sweepTableHeader+energyHeader(priced(s)))
	for i := range rows {
		tw.Write(sweepTableRow(nil, &rows[i]))
	}
	tw.Flush()
	for f, w := range want {
		var got bytes.Buffer
		skipped, _, err := writeSweep(context.Background(), &got, s, f, 2, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if countSkipped(skipped) != len(res)-len(rows) {
			t.Errorf("%s: %d points left out, want %d", f, countSkipped(skipped), len(res)-len(rows))
		}
		if !bytes.Equal(got.Bytes(), w.Bytes()) {
			t.Errorf("%s: streamed output differs from the whole-list encoding:\n%s\nwant\n%s", f, trunc(got.String()), trunc(w.String()))
		}
	}
}

// TestSweepStream_hugeLazy runs a sweep of 10¹² points (issue 17: it
// panicked in makeslice, and 2·10⁷ points allocated 11 GB up front) and
// stops it after a few thousand rows: the points are enumerated lazily,
// so it starts at once and allocates a bounded amount, not memory by the
// point count.
func TestSweepStream_hugeLazy(t *testing.T) {
	o := sweepFlags{hw: "h100", model: "llama3-8b", batch: "1..1000000", input: "1..1000000", output: "2", tp: "1", pp: "1", dtype: "bf16", yes: true}
	s, err := o.spec()
	if err != nil {
		t.Fatal(err)
	}
	if s.size() != 1e12 {
		t.Fatalf("%v points, want 1e12", s.size())
	}
	stop := errors.New("enough")
	for _, how := range []string{"emit fails", "context cancelled"} {
		ctx, cancel := context.WithCancel(context.Background())
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		n := 0
		err := streamSweep(ctx, s, sweepOptions{Workers: 3}, func(r *sweepResult) error {
			if r.Point.Index != n {
				t.Fatalf("point %d emitted at position %d", r.Point.Index, n)
			}
			n++
			if n == 2000 {
				if how == "emit fails" {
					return stop
				}
				cancel()
			}
			return nil
		})
		runtime.ReadMemStats(&after)
		cancel()
		want := stop
		if how == "context cancelled" {
			want = context.Canceled
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: err %v, want %v", how, err, want)
		}
		// A Run allocates about 10 KB; 2000 points and the window's
		// few hundred more stay far below what numbering 10¹² points
		// would take.
		// Not under -race, whose sync.Pool drops recycled runners at
		// random: 210 MB there, the detector's count, not the sweep's.
		if got := after.TotalAlloc - before.TotalAlloc; got > 200<<20 && !racedetect.Enabled {
			t.Errorf("%s: allocated %d MB for %d points of a 10¹²-point sweep", how, got>>20, n)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: took %v", how, d)
		}
	}
}

// TestSweepStream_tooManyToNumber refuses a sweep whose points cannot be
// numbered exactly, rather than overflowing.
func TestSweepStream_tooManyToNumber(t *testing.T) {
	_, errs, code := perfsim(t, "sweep", "--yes", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..1000000", "--input", "1..1000000", "--output", "1..100000")
	if code != 2 || !bytes.Contains([]byte(errs), []byte("more than the")) {
		t.Errorf("exit %d, stderr %q; want exit 2 and a message", code, errs)
	}
}
