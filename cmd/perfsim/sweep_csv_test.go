package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/spf13/pflag"
)

// TestAppendSweepCSV checks the sweep's CSV rows, appended straight from
// the reports, against simulate's JSON encoded by encoding/csv (how
// sweep wrote them before), over decoders, an encoder, a ViT and a CNN,
// fitting and not, unpriced, priced by the hour and by TCO, and capped.
func TestAppendSweepCSV(t *testing.T) {
	for _, tt := range []struct {
		name  string
		o     sweepFlags
		flags []string
	}{
		{"decoders", sweepFlags{hw: "h100,mi300x,t4", model: "llama3-8b,gpt3-175b,mixtral-8x7b", batch: "1,64", input: "128,8192", output: "1,16", tp: "1,4", pp: "1,2", dtype: "bf16,fp8"}, nil},
		{"others", sweepFlags{hw: "a100,epyc-7742", model: "bert-large,vit-b16,resnet50,mamba2-2.7b", batch: "1,32", input: "128", output: "1", tp: "1", pp: "1", dtype: "fp16"}, nil},
		{"hourly", sweepFlags{hw: "h100,a100", model: "llama3-8b", batch: "1,8", input: "512", output: "32", tp: "1", pp: "1", dtype: "bf16"}, []string{"--price", "2.5/h"}},
		{"tco", sweepFlags{hw: "h100", model: "llama3-70b", batch: "1,8", input: "512", output: "32", tp: "4", pp: "1", dtype: "bf16"},
			[]string{"--purchase", "25000 USD", "--years", "4", "--energy-price", "0.10/kWh", "--pue", "1.3", "--power-cap", "500W"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
			o.energy.AddFlags(fs)
			if err := fs.Parse(tt.flags); err != nil {
				t.Fatal(err)
			}
			s, err := o.spec()
			if err != nil {
				t.Fatal(err)
			}
			if err := o.energy.sweep(fs, s); err != nil {
				t.Fatal(err)
			}
			res, err := runSweep(context.Background(), s, sweepOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for i := range res {
				r := &res[i]
				if r.Err != nil {
					continue
				}
				n++
				j := simulateJSON(r.Report, s.HW[r.Point.HW].CalibrationLabel(), limitsResult{}, false)
				j.Energy, j.Cost = sweepEnergy(s, r)
				var want bytes.Buffer
				w := csv.NewWriter(&want)
				w.Write(sweepCSVRow(&j))
				w.Flush()
				if got := appendSweepCSV(nil, r.Report, s.HW[r.Point.HW].CalibrationLabel(), j.Energy, j.Cost); !bytes.Equal(got, want.Bytes()) {
					t.Errorf("point %d:\n got %s\nwant %s", r.Point.Index, got, want.Bytes())
				}
			}
			if n == 0 {
				t.Fatal("no point ran")
			}
		})
	}
}

// TestAppendCSVField checks the field quoting against encoding/csv.
func TestAppendCSVField(t *testing.T) {
	for _, s := range []string{"", "a", "H100 SXM", " lead", "\tx", "a,b", `say "hi"`, "two\nlines", "cr\r", `\.`, `\.x`, "\u00a0nbsp", "é", `""`, "x\"y\"z"} {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		w.Write([]string{s})
		w.Flush()
		if got := string(appendCSVField(nil, s)) + "\n"; got != want.String() {
			t.Errorf("%q: got %q, want %q", s, got, want.String())
		}
	}
}

// The reference encoding: simulate's JSON of a point as CSV cells (how
// sweep wrote its rows before appendSweepCSV).

func optNum(v *float64) string {
	if v == nil {
		return ""
	}
	return num(*v)
}

// sweepCSVRow returns the CSV fields of one row.
func sweepCSVRow(j *simJSON) []string {
	sc, m := j.Scenario, j.Memory
	row := []string{j.Model, j.Hardware, j.Calibration, j.Mode, strconv.Itoa(j.Devices), strconv.FormatInt(j.Params, 10),
		strconv.Itoa(sc.Batch), optInt(sc.InputTokens), optInt(sc.OutputTokens), strconv.Itoa(sc.TP), strconv.Itoa(sc.PP),
		sc.Weights, sc.Act, sc.KV,
		optNum(j.TTFT), optNum(j.TPOT), optNum(j.E2E), optNum(j.OutTok), optNum(j.OutTokDevice), optNum(j.Images), optNum(j.Samples),
		j.PrefillBound, j.DecodeBound, strconv.FormatBool(j.Fits),
		itoa64(m.Weights), itoa64(m.KVCache), itoa64(m.Activations), itoa64(m.Reserve), itoa64(m.Total), itoa64(m.Capacity), itoa64(m.Usable), itoa64(m.Headroom)}
	return append(row, sweepEnergyCells(*j)...)
}

// sweepEnergyCells are a sweep row's energy and cost CSV cells, in the
// order of sweepColumns.
func sweepEnergyCells(j simJSON) []string {
	cells := make([]string, 0, 10)
	e := j.Energy
	if e == nil {
		e = &energyJSON{}
	}
	opt := func(v float64) string {
		if v == 0 {
			return ""
		}
		return num(v)
	}
	cells = append(cells, opt(e.AverageW), opt(e.PrefillJTok), opt(e.DecodeJTok), opt(e.JPerOutTok), opt(e.TokensPerJ))
	if c := j.Cost; c != nil {
		cells = append(cells, c.Currency, optNum(c.PerRequest), optNum(c.PerMInput), optNum(c.PerMOutput), c.Inputs)
	} else {
		cells = append(cells, "", "", "", "", "")
	}
	return cells
}

// optInt is a CSV cell of an optional count: empty for none.
func optInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}
