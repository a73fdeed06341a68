package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestParseIntList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{"1,2,4", []int{1, 2, 4}, ""},
		{"1..256x2", []int{1, 2, 4, 8, 16, 32, 64, 128, 256}, ""},
		{"1..100*10", []int{1, 10, 100}, ""},
		{"1..8+1", []int{1, 2, 3, 4, 5, 6, 7, 8}, ""},
		{"1..10+4", []int{1, 5, 9}, ""},
		{"3..5", []int{3, 4, 5}, ""},
		{"512..4096x2,6144", []int{512, 1024, 2048, 4096, 6144}, ""},
		{"4,1,4", nil, "4 is in the list twice"},
		{"1..4,2", nil, "2 is in the list twice"},
		{"1,,2", nil, "not a whole number"},
		{" 8 ", []int{8}, ""},
		{"", nil, "empty list"},
		{"0", nil, "at least 1"},
		{"-1", nil, "at least 1"},
		{"4k,2Ki", []int{4000, 2048}, ""}, // simulate's count suffixes
		{"4q", nil, "not a whole number"},
		{"1.5", nil, "not a whole number"},
		{"8..1", nil, "below its start"},
		{"1..8x1", nil, "factor of at least 2"},
		{"1..8+0", nil, "at least 1"},
		{"1..", nil, "range end"},
		{"1..x", nil, "range end: missing"}, // had said 'range step: "" is not a whole number'
		{"1..+2", nil, "range end: missing"},
		{"1..1000000000", nil, "more than"},
	}
	for _, tt := range tests {
		got, err := parseIntList("batch", tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "--batch") {
				t.Errorf("parseIntList(%q) error = %v, want one naming --batch and %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseIntList(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseIntList(f *testing.F) {
	for _, s := range []string{"1,2,4", "1..256x2", "1..8+1", "5..3", "1..9×3", ",,", "1..2..3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseIntList("batch", s)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, x := range v {
			if x < 1 || seen[x] {
				t.Fatalf("parseIntList(%q) = %v: a value below 1 or repeated", s, v)
			}
			seen[x] = true
		}
	})
}

// TestSweepMatchesSimulate checks that every sweep row is what simulate
// prints for that point, with the same keys, in point order.
func TestSweepMatchesSimulate(t *testing.T) {
	out, stderr, code := perfsim(t, "sweep", "--hw", "h100,a100", "--model", "llama3-8b", "--batch", "1,8", "--input", "512,2048", "--output", "64", "--format", "json")
	if code != 0 {
		t.Fatalf("sweep exited %d: %s", code, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 2 hw × 2 batch × 2 input = 8", len(rows))
	}
	i := 0
	for _, hw := range []string{"h100", "a100"} {
		for _, b := range []string{"1", "8"} {
			for _, in := range []string{"512", "2048"} {
				sout, serr, code := perfsim(t, "simulate", "--hw", hw, "--model", "llama3-8b", "--batch", b, "--input", in, "--output", "64", "--format", "json")
				if code != 0 {
					t.Fatalf("simulate exited %d: %s", code, serr)
				}
				var want map[string]any
				if err := json.Unmarshal([]byte(sout), &want); err != nil {
					t.Fatal(err)
				}
				got := rows[i]
				if !reflect.DeepEqual(keys(got), keys(want)) {
					t.Errorf("row %d keys %v, simulate's %v", i, keys(got), keys(want))
				}
				for _, k := range []string{"hardware", "ttft_s", "tpot_s", "e2e_s", "output_tokens_per_s", "fits", "scenario"} {
					if !reflect.DeepEqual(got[k], want[k]) {
						t.Errorf("row %d (%s b=%s in=%s) %s = %v, simulate says %v", i, hw, b, in, k, got[k], want[k])
					}
				}
				gm, wm := got["memory"].(map[string]any), want["memory"].(map[string]any)
				for _, k := range []string{"weights_bytes", "kv_cache_bytes", "total_bytes", "capacity_bytes"} {
					if gm[k] != wm[k] {
						t.Errorf("row %d memory.%s = %v, simulate says %v", i, k, gm[k], wm[k])
					}
				}
				i++
			}
		}
	}
}

func keys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// TestSweepDeterministic checks that the rows come out the same with one
// worker and with many, in point order.
func TestSweepDeterministic(t *testing.T) {
	o := sweepFlags{hw: "h100,mi300x", model: "llama3-8b,llama2-7b", batch: "1..64x2", input: "128..2048x4", output: "16", tp: "1,2", pp: "1", dtype: "bf16,fp8"}
	s, err := o.spec()
	if err != nil {
		t.Fatal(err)
	}
	var one, many bytes.Buffer
	if _, _, err := writeSweep(context.Background(), &one, s, formatJSON, 1, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := writeSweep(context.Background(), &many, s, formatJSON, 7, false, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), many.Bytes()) {
		t.Fatalf("1 worker and 7 workers wrote different output")
	}
	var rows []simJSON
	if err := json.Unmarshal(one.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != int(s.size()) {
		t.Fatalf("%d rows for %v points", len(rows), s.size())
	}
	// The order is hardware, model, dtype, tp, pp, batch, input, output.
	if rows[0].Hardware != "H100 SXM" || rows[len(rows)-1].Hardware == "H100 SXM" {
		t.Errorf("hardware is not the outermost list: first %s, last %s", rows[0].Hardware, rows[len(rows)-1].Hardware)
	}
	if *rows[0].Scenario.InputTokens != 128 || *rows[1].Scenario.InputTokens != 512 || rows[1].Scenario.Batch != 1 {
		t.Errorf("input is not the fastest list: %+v, %+v", rows[0].Scenario, rows[1].Scenario)
	}
}

func TestSweepCLI(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring
		stderr string // a substring
	}{
		{"too many points", []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..10000", "--input", "1..10000"}, 2, "", "more than 10000000"},
		{"bad list", []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "1..x"}, 2, "", "--batch"},
		{"no hw", []string{"sweep", "--model", "llama3-8b"}, 2, "", "--hw"},
		{"bad dtype", []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--dtype", "bf17"}, 2, "", "--dtype"},
		{"csv", []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "1,2", "--format", "csv"}, 0, "model,hardware,calibration,mode,devices,params,scenario.batch", ""},
		{"skipped points", []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--tp", "1,3"}, 0, "llama3-8b", "1 of 2 points left out"},
		{"table", []string{"sweep", "--hw", "h100", "--model", "llama3-70b"}, 0, "short)", ""},
	}
	for _, tt := range tests {
		out, errs, code := perfsim(t, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, %q in stdout, %q in stderr", tt.name, code, trunc(out), errs, tt.code, tt.stdout, tt.stderr)
		}
	}
}

func trunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// TestSweep_noUnsearchedLimits: sweep does not search the inverse
// queries, so its JSON rows leave max_batch and max_context out; they had
// read 0 (nothing fits) beside simulate's 231 and 62972 for the same
// point. simulate keeps them; a CNN has no max_context.
func TestSweep_noUnsearchedLimits(t *testing.T) {
	out, _, code := perfsim(t, "sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "8", "--format", "json")
	if code != 0 || strings.Contains(out, "max_batch") || strings.Contains(out, "max_context") {
		t.Errorf("exit %d; sweep's JSON gives limits it did not search", code)
	}
	out, _, _ = perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "8", "--format", "json")
	if !strings.Contains(out, `"max_batch": 231`) || !strings.Contains(out, `"max_context": 62972`) {
		t.Errorf("simulate lost its limits")
	}
	out, _, _ = perfsim(t, "simulate", "--hw", "h100", "--model", "resnet50", "--format", "json")
	if !strings.Contains(out, `"max_batch": 17178`) || strings.Contains(out, "max_context") {
		t.Errorf("resnet50: limits %q", out[strings.Index(out, `"fits": true,`):][:80])
	}
}

// TestSweep_everyProblem: every bad hardware and model of the lists is
// reported, beside a bad list flag, each once: the first bad name had
// hidden the rest, and a bad --batch all of them.
func TestSweep_everyProblem(t *testing.T) {
	_, stderr, code := perfsim(t, "sweep", "--hw", "h999,h998", "--model", "nope1,nope2", "--batch", "0")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, w := range []string{`--batch "0": 0 must be at least 1`, `--hw: hardware: unknown device "h999"`, `--hw: hardware: unknown device "h998"`,
		`--model: workloads: unknown model "nope1"`, `--model: workloads: unknown model "nope2"`} {
		if strings.Count(stderr, w) != 1 {
			t.Errorf("stderr lacks %q once:\n%s", w, stderr)
		}
	}
	_, stderr, _ = perfsim(t, "sweep", "--hw", "h100,a100", "--set", "foo=1", "--model", "llama3-8b")
	if n := strings.Count(stderr, `--set foo=1: unknown key "foo"`); n != 1 {
		t.Errorf("a bad --set said %d times for two devices:\n%s", n, stderr)
	}
}

// TestSweep_smallThroughputNotZero: a point whose output rate is under
// 0.05 tokens/s a device prints it, not 0.0: llama3-8b with 10 M tokens
// in (12.8 h to its first token) printed TOK/S/DEV 0.0 beside a TOK/J of
// 0.000003962.
func TestSweep_smallThroughputNotZero(t *testing.T) {
	out, stderr, code := perfsim(t, "sweep", "--hw", "h100", "--model", "llama3-8b", "--input", "10M")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The table's columns are aligned: the cell starts where its head does.
	at := strings.Index(lines[0], "TOK/S/DEV")
	cell := strings.Fields(lines[1][at:])[0]
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil || !(v > 0) {
		t.Errorf("TOK/S/DEV %q (row %q): want the rate, above 0", cell, lines[1])
	}
}
