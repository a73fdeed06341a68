package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServe_prefixHitZero: --prefix-hit 0 and the default least-
// outstanding of one replica change nothing, byte for byte, in every
// format.
func TestServe_prefixHitZero(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "lognormal:600:400:16:4000", "--output", "uniform:16:400",
		"--requests", "200", "--rate", "12", "--seed", "3", "--ttft-slo", "200ms", "--tpot-slo", "20ms"}
	for _, f := range []string{"table", "json", "csv"} {
		want, _, _ := perfsim(t, append(base, "--format", f)...)
		got, errOut, code := perfsim(t, append(base, "--format", f, "--prefix-hit", "0")...)
		if code != 0 || got != want {
			t.Errorf("--format %s --prefix-hit 0: exit %d (%s), output differs: %v", f, code, errOut, got != want)
		}
	}
}

// TestServe_deployments runs each new deployment through the command
// and checks the JSON says what ran.
func TestServe_deployments(t *testing.T) {
	dir := t.TempDir()
	lens := filepath.Join(dir, "in.txt")
	os.WriteFile(lens, []byte("# prompts\n200\n900\n3000\n"), 0o644)
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "300", "--format", "json"}
	for _, tt := range []struct {
		name string
		args []string
		keys []string
	}{
		{"disagg", []string{"--disagg", "2P1D", "--rate", "8", "--decode-tp", "2", "--gpus", "4"}, []string{"pools", "kv_transfer_s", "router"}},
		{"router", []string{"--dp", "2", "--router", "least-outstanding", "--rate", "8"}, []string{"router", "pools"}},
		{"gpus", []string{"--gpus", "4", "--tp", "2", "--rate", "8"}, []string{"router"}},
		{"closed", []string{"--users", "16", "--think", "1s"}, []string{"users", "think_s"}},
		{"system", []string{"--disagg", "8P1D", "--rate", "8", "--system", "dgx-h100", "--hw", ""}, []string{"pools", "kv_transfer_s"}},
		{"prefix", []string{"--prefix-hit", "0.5", "--rate", "8", "--input", "file:" + lens}, []string{"prefix_hit"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := perfsim(t, append(base, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.keys {
				if _, ok := v[k]; !ok {
					t.Errorf("JSON lacks %q", k)
				}
			}
			if tt.name == "gpus" && v["dp"] != 2.0 {
				t.Errorf("--gpus 4 --tp 2: dp %v, want 2", v["dp"])
			}
			if tt.name == "system" && v["gpus"] != 9.0 {
				t.Errorf("8P1D of tp 1: %v GPUs, want 9 (two nodes of dgx-h100)", v["gpus"])
			}
			if tt.name == "disagg" && v["gpus"] != 4.0 {
				t.Errorf("2P1D of tp 1 and tp 2: %v GPUs, want 4", v["gpus"])
			}
			if pools, ok := v["pools"].([]any); ok && len(pools) == 2 {
				// The prefill pool says what share of its KV cache the
				// transfers held; the decode pool holds none for them.
				pre, dec := pools[0].(map[string]any), pools[1].(map[string]any)
				h, ok := pre["kv_held_fraction"].(float64)
				if _, has := dec["kv_held_fraction"]; !ok || !(h >= 0 && h <= 1) || has {
					t.Errorf("kv_held_fraction: prefill %v, decode has one %v", pre["kv_held_fraction"], has)
				}
			}
		})
	}
}

// TestServe_deployBad: each misuse exits 2 naming its flag.
func TestServe_deployBad(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("100\nlots\n"), 0o644)
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "1", "--disagg", "0P1D"}, "--disagg: \"0P1D\": want xPyD"},
		{[]string{"--rate", "1", "--disagg", "2P"}, "--disagg"},
		{[]string{"--rate", "1", "--disagg", "2P1D", "--dp", "2"}, "--dp: not with --disagg"},
		{[]string{"--rate", "1", "--disagg", "2P1D", "--tp", "2", "--gpus", "8"}, "--gpus: 8 GPUs, but --disagg 2P1D"},
		{[]string{"--rate", "1", "--gpus", "12", "--tp", "8"}, "--gpus: 12 GPUs do not divide into replicas of tp 8"},
		{[]string{"--rate", "1", "--gpus", "8", "--tp", "2", "--dp", "3"}, "--gpus: 8 GPUs, but --dp 3"},
		{[]string{"--rate", "1", "--router", "random"}, "--router"},
		// One instance a pool, as one replica, has nothing to route; it
		// had run as round-robin.
		{[]string{"--rate", "1", "--disagg", "1P1D", "--router", "least-outstanding"}, "--router: one instance in each pool has nothing to route"},
		{[]string{"--rate", "1", "--users", "4"}, "--users"},
		{[]string{"--think", "1s", "--rate", "1"}, "--think: only with --users"},
		{[]string{"--rate", "1", "--prefill-tp", "2"}, "--prefill-tp: only with --disagg"},
		{[]string{"--rate", "1", "--prefix-hit", "1.5"}, "--prefix-hit"},
		{[]string{"--rate", "1", "--system", "dgx-h100"}, "--hw, --system: give one"},
		{[]string{"--rate", "1", "--hw", "", "--system", "dgx-h999"}, "--system"},
		{[]string{"--rate", "1", "--input", "file:" + bad}, "bad.txt:2"},
		{[]string{"--rate", "1", "--input", "file:" + filepath.Join(dir, "none.txt")}, "--input"},
	} {
		_, errOut, code := perfsim(t, append(base, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestServe_seriesOut writes the time series as CSV: time never goes
// back, the KV fraction stays in [0, 1].
func TestServe_seriesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "series.csv")
	_, errOut, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "300", "--rate", "15", "--series-out", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 100 || lines[0] != "time_s,waiting_requests,running_requests,kv_cache_used_fraction,batch_tokens" {
		t.Fatalf("%d lines, header %q", len(lines), lines[0])
	}
	prev := -1.0
	for _, l := range lines[1:] {
		var tm, kv float64
		var w, r, b int
		if _, err := fmt.Sscanf(strings.ReplaceAll(l, ",", " "), "%g %d %d %g %d", &tm, &w, &r, &kv, &b); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if tm < prev || kv < 0 || kv > 1 || w < 0 || r < 0 || b < 1 {
			t.Fatalf("row %q after time %g", l, prev)
		}
		prev = tm
	}
}
