package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// serveJSONOnly are serve's JSON keys that describe the run's settings
// rather than measure it: the CSV, one row per metric, leaves them out
// (docs/serving.md, Metrics).
var serveJSONOnly = map[string]bool{
	"schema": true, "model": true, "hardware": true, "calibration": true, "engine": true, "verdict": true, "router": true,
	"tp": true, "pp": true, "dp": true, "ep": true, "gpus": true, "requests": true, "max_seqs": true, "max_tokens": true,
	"users": true, "think_s": true, "prefix_hit": true, "pools": true, "energy": true,
}

// TestServe_csvAgreesWithJSON: every metric serve's JSON gives, the CSV
// gives at the same figure: each summary's six columns and each scalar
// (overloaded as 1 or 0), for plain, trtllm (runtime buffers), hybrid
// (state per sequence) and disaggregated (KV transfer) runs. The CSV had
// dropped kv_transfer_s, runtime_buffers_bytes,
// kv_state_tokens_per_sequence and overloaded without a word.
func TestServe_csvAgreesWithJSON(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--requests", "60", "--input", "512", "--output", "64"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"plain", []string{"--model", "llama3-8b", "--rate", "4"}},
		{"trtllm", []string{"--model", "llama3-8b", "--rate", "4", "--engine", "trtllm"}},
		{"hybrid", []string{"--model", "nemotron-h-8b", "--rate", "4"}},
		{"disagg", []string{"--model", "llama3-8b", "--rate", "4", "--disagg", "1P1D", "--ttft-slo", "1s"}},
		{"overloaded", []string{"--model", "llama3-8b", "--rate", "400", "--kv-tokens", "4000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{}, base...), c.args...)
			js, errOut, code := perfsim(t, append(args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("json: exit %d: %s", code, errOut)
			}
			cs, errOut, code := perfsim(t, append(args, "--format", "csv")...)
			if code != 0 {
				t.Fatalf("csv: exit %d: %s", code, errOut)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(js), &v); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(strings.NewReader(cs)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			header, rows := recs[0], map[string][]string{}
			for _, r := range recs[1:] {
				rows[r[0]] = r
			}
			same := func(key, cell string, want float64) {
				got, err := strconv.ParseFloat(cell, 64)
				if err != nil || got != want {
					t.Errorf("%s: CSV %q, JSON %v", key, cell, want)
				}
			}
			for k, x := range v {
				if serveJSONOnly[k] {
					continue
				}
				r, ok := rows[k]
				switch x := x.(type) {
				case map[string]any:
					if !ok {
						t.Errorf("CSV lacks the summary %s", k)
						continue
					}
					for i, col := range header[1:] {
						same(k+"."+col, r[i+1], x[col].(float64))
					}
				case float64:
					if !ok && !(x == 0 && strings.HasSuffix(k, "_slo_s")) {
						t.Errorf("CSV lacks %s (JSON %v)", k, x)
					} else if ok {
						same(k, r[1], x)
					}
				case bool:
					want := 0.0
					if x {
						want = 1
					}
					if !ok {
						t.Errorf("CSV lacks %s (JSON %v)", k, x)
					} else {
						same(k, r[1], want)
					}
				}
			}
		})
	}
}

// TestServe_requestsOutTransfer: with --disagg, --requests-out gives each
// request's kv_transfer_s (first token to the KV cache's arrival at the
// decode instance), as docs/serving.md says; its mean is the JSON's
// kv_transfer_s mean. The column had never been written.
func TestServe_requestsOutTransfer(t *testing.T) {
	path := t.TempDir() + "/req.csv"
	args := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "40", "--rate", "4", "--input", "512", "--output", "32",
		"--disagg", "1P1D", "--format", "json", "--requests-out", path}
	js, errOut, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		KVTransfer struct{ Mean float64 } `json:"kv_transfer_s"`
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "kv_transfer_s")
	if col < 0 {
		t.Fatalf("no kv_transfer_s column: %v", recs[0])
	}
	sum := 0.0
	for _, r := range recs[1:] {
		x, err := strconv.ParseFloat(r[col], 64)
		if err != nil || !(x > 0) {
			t.Fatalf("kv_transfer_s %q", r[col])
		}
		sum += x
	}
	if mean := sum / float64(len(recs)-1); math.Abs(mean-v.KVTransfer.Mean) > 1e-12*mean {
		t.Errorf("mean kv_transfer_s %v, JSON %v", mean, v.KVTransfer.Mean)
	}
	// An aggregated run keeps the columns it had.
	agg := filepath.Join(t.TempDir(), "agg.csv")
	if _, errOut, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "10", "--rate", "4", "--requests-out", agg); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if data, _ := os.ReadFile(agg); strings.Contains(string(data), "kv_transfer_s") {
		t.Errorf("an aggregated run's --requests-out has kv_transfer_s")
	}
}

// TestServe_disaggTableKV: a disaggregated run's table gives each pool's
// KV cache on its pool line and no "per replica" figure on the engine
// line, which had printed the decode pool's cache as every replica's
// (1P1D with a prefill TP 2 and a decode TP 1: the two differ).
func TestServe_disaggTableKV(t *testing.T) {
	out, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "20", "--rate", "2", "--input", "512", "--output", "32",
		"--disagg", "1P1D", "--prefill-tp", "2", "--decode-tp", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "per replica") {
		t.Errorf("a disaggregated run's table names a KV cache per replica:\n%s", out)
	}
	for _, pool := range []string{"prefill pool", "decode pool"} {
		if !strings.Contains(out, pool) || !strings.Contains(out[strings.Index(out, pool):], "KV cache") {
			t.Errorf("no %s line with its KV cache:\n%s", pool, out)
		}
	}
}

// TestServe_noKVLayout: a layout whose weights leave no KV cache says
// which layout, so that a disaggregated deployment tells its pools
// apart (1P1D with a prefill TP 8 that fits and a decode TP 1 that does
// not had named neither).
func TestServe_noKVLayout(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-70b", "--disagg", "1P1D", "--prefill-tp", "8", "--decode-tp", "1", "--rate", "1", "--requests", "5")
	if code == 0 || !strings.Contains(stderr, "no memory left for the KV cache at tp 1 × pp 1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
