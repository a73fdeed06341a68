package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestJSON_schema runs every command that writes JSON and checks that the
// object carries a schema field naming it (sweep writes an array of
// simulate's objects, each with simulate's schema).
func TestJSON_schema(t *testing.T) {
	tests := []struct {
		schema string
		args   []string
	}{
		{"perfsim.simulate/v1", []string{"simulate", "--hw", "h100", "--model", "llama3-8b"}},
		{"perfsim.simulate/v1", []string{"simulate", "--hw", "h100", "--model", "gpt3-2.7b", "--mode", "training"}},
		{"perfsim.gemms/v1", []string{"gemms", "--model", "llama3-8b"}},
		{"perfsim.kernel/v1", []string{"kernel", "gemm", "--hw", "h100", "--m", "64", "--k", "64", "--n", "64"}},
		{"perfsim.maxmodel/v1", []string{"maxmodel", "--hw", "h100", "--mode", "inference"}},
		{"perfsim.hardware/v1", []string{"hardware", "show", "h100"}},
		{"perfsim.hardware-list/v1", []string{"hardware", "list"}},
		{"perfsim.serve/v1", []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "20", "--rate", "1"}},
		{"perfsim.plan-train/v1", []string{"plan", "train", "--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "64", "--seq", "2048", "--top", "1"}},
		{"perfsim.mlperf/v1", []string{"mlperf", "--system", "dgx-h100", "--benchmark", "resnet50"}},
		{"perfsim.calibrate-validate/v1", []string{"calibrate", "validate", "--hw", "h200", "--measurements", "../../kernels/testdata/sample.csv"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			out, stderr, code := perfsim(t, append(tc.args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var j struct {
				Schema string `json:"schema"`
			}
			if err := json.Unmarshal([]byte(out), &j); err != nil {
				t.Fatalf("not a JSON object: %v\n%.300s", err, out)
			}
			if j.Schema != tc.schema {
				t.Errorf("schema %q, want %q", j.Schema, tc.schema)
			}
		})
	}
	out, _, _ := perfsim(t, "sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "1,2", "--format", "json")
	var rows []struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[0].Schema != "perfsim.simulate/v1" {
		t.Errorf("sweep: %d rows, err %v, want 2 rows of perfsim.simulate/v1", len(rows), err)
	}
}

// TestJSON_modeKeys checks that an inference run's JSON and CSV carry no
// training keys and a training run's no inference-only scenario keys,
// that counts (parameters, bytes) are integers, and that the CSV summary
// carries the scenario keys the docs promise.
func TestJSON_modeKeys(t *testing.T) {
	trainingOnly := []string{"seq", "global_batch", "recompute", "optimizer", "zero", "tokens", "gradients_bytes", "optimizer_bytes", "training"}
	inferenceOnly := []string{"input_tokens", "output_tokens", "ttft_s", "tpot_s"}
	for _, tc := range []struct {
		mode       string
		args       []string
		absent     []string
		csvPresent []string
	}{
		{"inference", []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--weights", "int4", "--act", "bf16"}, trainingOnly,
			[]string{"scenario.batch", "scenario.input_tokens", "scenario.output_tokens", "scenario.tp", "scenario.pp", "scenario.dp", "scenario.weights", "scenario.act", "scenario.kv", "scenario.comm", "active_params", "memory.fits"}},
		{"training", []string{"simulate", "--hw", "h100", "--model", "gpt3-2.7b", "--mode", "training", "--tokens", "300e9"}, inferenceOnly,
			[]string{"scenario.batch", "scenario.seq", "scenario.global_batch", "scenario.recompute", "scenario.optimizer", "scenario.zero", "scenario.tokens", "memory.gradients_bytes", "memory.optimizer_bytes"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			out, stderr, code := perfsim(t, append(tc.args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, k := range tc.absent {
				if strings.Contains(out, `"`+k+`"`) {
					t.Errorf("%s JSON has the key %q", tc.mode, k)
				}
			}
			// Counts print as integers: no fraction, no exponent.
			counts := regexp.MustCompile(`"(params|active_params|[a-z_]*bytes|tokens)": (-?[0-9.eE+]+)`)
			for _, m := range counts.FindAllStringSubmatch(out, -1) {
				if strings.ContainsAny(m[2], ".eE") {
					t.Errorf("%s = %s, want an integer", m[1], m[2])
				}
			}
			csvOut, _, _ := perfsim(t, append(tc.args, "--format", "csv")...)
			for _, k := range tc.csvPresent {
				if !strings.Contains(csvOut, "\n"+k+",") {
					t.Errorf("%s CSV has no %s row", tc.mode, k)
				}
			}
			for _, k := range tc.absent {
				if strings.Contains(csvOut, "."+k+",") || strings.Contains(csvOut, "\n"+k+",") {
					t.Errorf("%s CSV has the key %q", tc.mode, k)
				}
			}
		})
	}
}

// TestTables_noExponent runs the human tables of the commands and checks
// that none prints a number as 2.985e+04.
func TestTables_noExponent(t *testing.T) {
	exp := regexp.MustCompile(`\d[eE][+-]?\d`)
	for _, args := range [][]string{
		{"simulate", "--hw", "h100", "--model", "gpt3-2.7b", "--mode", "training", "--tokens", "300e9"},
		{"simulate", "--hw", "h100", "--model", "llama3-70b", "--tp", "4", "--batch", "64", "--breakdown"},
		{"simulate", "--hw", "a100", "--model", "resnet50", "--batch", "256"},
		{"simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "64", "--price", "3/h"},
		{"sweep", "--hw", "h100,b200", "--model", "llama3-8b", "--batch", "1,64"},
		{"hardware", "show", "h100"},
		{"hardware", "show", "epyc7742"},
		{"kernel", "copy", "--hw", "h100", "--bytes", "4GB"},
		{"calibrate", "validate", "--hw", "h200", "--measurements", "../../kernels/testdata/sample.csv"},
		{"serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "50", "--rate", "2", "--price", "2/h"},
	} {
		out, stderr, code := perfsim(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, line := range strings.Split(out, "\n") {
			if exp.MatchString(line) {
				t.Errorf("%s: %s", strings.Join(args[:2], " "), strings.TrimSpace(line))
			}
		}
	}
}

// TestFnum checks the table number format.
func TestFnum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{29850, "29850"}, {29853.7, "29850"}, {1803.94, "1804"}, {152.3, "152.3"}, {0.3241, "0.3241"},
		{7.915e-5, "0.00007915"}, {1.055e7, "10.55 M"}, {3e11, "300 G"}, {-2.5e6, "-2.5 M"}, {0, "0"}, {1e21, "1000 E"},
	} {
		if got := fnum(tc.v); got != tc.want {
			t.Errorf("fnum(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
