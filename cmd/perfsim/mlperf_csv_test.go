package main

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestMLPerf_csvAgreesWithJSON: every key of each mlperf JSON row is a
// CSV column of the same value (the sources aside, which the JSON gives
// once for the report). The CSV had dropped the calibration band
// (value_low, value_high), an LLM's p99 TTFT and TPOT that the table
// prints, its TP, engine, samples and duration.
func TestMLPerf_csvAgreesWithJSON(t *testing.T) {
	for _, args := range [][]string{
		{"--hw", "h100", "--gpus", "1", "--benchmark", "bert"},
		{"--hw", "h100", "--gpus", "1", "--benchmark", "mixtral-8x7b"},
	} {
		base := append([]string{"mlperf"}, args...)
		js, stderr, code := perfsim(t, append(base, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v json: exit %d: %s", args, code, stderr)
		}
		cs, stderr, code := perfsim(t, append(base, "--format", "csv")...)
		if code != 0 {
			t.Fatalf("%v csv: exit %d: %s", args, code, stderr)
		}
		var rep struct {
			Results []map[string]any `json:"results"`
		}
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(cs)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs)-1 != len(rep.Results) {
			t.Fatalf("%v: %d CSV rows, %d JSON rows", args, len(recs)-1, len(rep.Results))
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for i, row := range rep.Results {
			for k, v := range row {
				c, ok := col[k]
				if !ok {
					t.Errorf("%v: CSV has no column %s (JSON %v)", args, k, v)
					continue
				}
				cell := recs[i+1][c]
				switch v := v.(type) {
				case string:
					if cell != v {
						t.Errorf("%v row %d %s: CSV %q, JSON %q", args, i, k, cell, v)
					}
				case float64:
					if got, err := strconv.ParseFloat(cell, 64); err != nil || got != v {
						t.Errorf("%v row %d %s: CSV %q, JSON %v", args, i, k, cell, v)
					}
				}
			}
		}
	}
}

// TestMLPerfCSV_absentIsEmpty: a cell the JSON leaves out is empty in
// the CSV, not 0: BERT's Server row had read ttft_bound_s and
// tpot_bound_s 0 (a bound of no time), and an Offline row a
// latency_bound_s and p99_latency_s of 0 where it has none.
func TestMLPerfCSV_absentIsEmpty(t *testing.T) {
	out, stderr, code := perfsim(t, "mlperf", "--hw", "h100", "--gpus", "1", "--benchmark", "bert", "--queries", "5000", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := csv.NewReader(strings.NewReader(out))
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, row := range rows[1:] {
		empty := []string{"ttft_bound_s", "tpot_bound_s", "p99_ttft_s", "p99_tpot_s"}
		if row[col["scenario"]] == "Offline" {
			empty = append(empty, "latency_bound_s", "p99_latency_s")
		}
		for _, k := range empty {
			if v := row[col[k]]; v != "" {
				t.Errorf("%s %s: %s %q, want empty", row[col["benchmark"]], row[col["scenario"]], k, v)
			}
		}
	}
}
