package main

// Metamorphic tests of the command: the same question asked two ways
// (JSON, CSV and table; a catalog name and the model file it comes from;
// one replica and two) must give the same numbers, and no JSON output
// over a grid of inputs holds a negative figure where none can be.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// flatten returns the numbers and strings of a JSON document by dotted
// path (arrays indexed by position).
func flatten(prefix string, v any, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
	default:
		out[prefix] = x
	}
}

func jsonOf(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, stderr, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	m := map[string]any{}
	flatten("", v, m)
	return m
}

// TestMeta_formatsAgree: simulate's CSV holds the same numbers as its
// JSON, key for key, and its table the same to the digits it prints.
func TestMeta_formatsAgree(t *testing.T) {
	for _, args := range [][]string{
		{"simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "8"},
		{"simulate", "--hw", "a100", "--model", "mixtral-8x7b", "--tp", "2", "--batch", "3", "--input", "900", "--output", "33"},
		{"simulate", "--hw", "l40s", "--model", "nemotron-h-8b", "--dtype", "fp8"},
		{"simulate", "--hw", "h100", "--model", "gpt3-1.3b", "--mode", "training", "--global-batch", "8", "--recompute", "selective"},
	} {
		name := strings.Join(args, " ")
		j := jsonOf(t, append(args, "--format", "json")...)
		out, stderr, code := perfsim(t, append(args, "--format", "csv")...)
		if code != 0 {
			t.Fatalf("%s csv: exit %d: %s", name, code, stderr)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		matched := 0
		for _, r := range rows[1:] {
			if len(r) != 2 {
				continue
			}
			k, v := r[0], r[1]
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			jv, ok := j[k]
			if !ok {
				continue
			}
			matched++
			if f, ok := jv.(float64); !ok || f != x {
				t.Errorf("%s: %s is %v in CSV, %v in JSON", name, k, v, jv)
			}
		}
		if matched < 10 {
			t.Errorf("%s: only %d CSV numbers found in the JSON", name, matched)
		}
		table, stderr, code := perfsim(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		for label, key := range map[string]string{"TTFT": "ttft_s", "TPOT": "tpot_s", "E2E": "e2e_s", "step": "step_time_s"} {
			want, ok := j[key].(float64)
			if !ok {
				continue
			}
			got, ok := tableSeconds(table, label)
			if !ok {
				t.Errorf("%s: no %s line in the table:\n%s", name, label, table)
				continue
			}
			// Four significant digits printed.
			if math.Abs(got/want-1) > 5e-4 {
				t.Errorf("%s: table %s %v, JSON %v", name, label, got, want)
			}
		}
	}
}

// tableSeconds returns the time printed after label at the start of a
// line of a simulate table.
func tableSeconds(table, label string) (float64, bool) {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != label {
			continue
		}
		s, err := model.ParseSeconds(f[1] + f[2])
		if err != nil {
			continue
		}
		return float64(s), true
	}
	return 0, false
}

// TestMeta_modelFileEqualsCatalog: a catalog model and the TOML file it
// is built from give the same report.
func TestMeta_modelFileEqualsCatalog(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []string{"llama3-8b", "qwen3-30b-a3b", "deepseek-v3", "gemma2-9b", "mamba2-2.7b", "nemotron-h-8b", "qwen3-next-80b-a3b", "gpt-oss-20b"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "workloads", "models", m+".toml"))
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, m+".toml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, extra := range [][]string{
			{"--batch", "4", "--input", "1500", "--output", "20", "--tp", "2"},
			{"--mode", "training", "--global-batch", "4", "--seq", "1024", "--tp", "2"},
		} {
			if m == "deepseek-v3" && extra[0] == "--mode" {
				continue
			}
			a := jsonOf(t, append([]string{"simulate", "--hw", "h100", "--model", m, "--format", "json"}, extra...)...)
			b := jsonOf(t, append([]string{"simulate", "--hw", "h100", "--model", file, "--format", "json"}, extra...)...)
			var diffs []string
			for k, v := range a {
				if k == "model" {
					continue
				}
				if w, ok := b[k]; !ok || w != v {
					diffs = append(diffs, fmt.Sprintf("%s: %v vs %v", k, v, w))
				}
			}
			for k := range b {
				if _, ok := a[k]; !ok {
					diffs = append(diffs, k+" only from the file")
				}
			}
			sort.Strings(diffs)
			if len(diffs) > 0 {
				t.Errorf("%s %v: the catalog entry and its file differ in %d figures: %s", m, extra, len(diffs), strings.Join(diffs[:min(len(diffs), 8)], "; "))
			}
		}
	}
}

// TestMeta_dataParallel: DP replicas each serve a batch: twice the
// replicas, twice the system's throughput, energy and devices, the same
// latencies and the same figures per device; in serve, twice the
// requests at once on twice the replicas finish as one replica's do.
func TestMeta_dataParallel(t *testing.T) {
	for _, m := range []string{"llama3-8b", "qwen3-30b-a3b", "nemotron-h-8b"} {
		a := jsonOf(t, "simulate", "--hw", "h100", "--model", m, "--batch", "4", "--format", "json")
		b := jsonOf(t, "simulate", "--hw", "h100", "--model", m, "--batch", "4", "--dp", "2", "--format", "json")
		for k, v := range a {
			x, ok := v.(float64)
			if !ok || k == "devices" || k == "scenario.dp" {
				continue
			}
			y, _ := b[k].(float64)
			want := x
			switch k {
			case "output_tokens_per_s", "energy.gpu_j", "energy.kernels_j", "energy.gaps_j", "energy.node_j", "energy.facility_j":
				want = 2 * x
			}
			if !nearRel(y, want, 1e-12) {
				t.Errorf("simulate %s --dp 2: %s %v, want %v", m, k, y, want)
			}
		}
		s1 := jsonOf(t, "serve", "--hw", "h100", "--model", m, "--requests", "24", "--arrival", "all", "--input", "300", "--output", "40", "--format", "json")
		s2 := jsonOf(t, "serve", "--hw", "h100", "--model", m, "--dp", "2", "--requests", "48", "--arrival", "all", "--input", "300", "--output", "40", "--format", "json")
		for _, k := range []string{"ttft_s.mean", "ttft_s.p99", "tpot_s.mean", "e2e_s.mean", "duration_s", "output_tokens_per_s_per_gpu"} {
			x, _ := s1[k].(float64)
			y, _ := s2[k].(float64)
			if !(x > 0) || !nearRel(x, y, 1e-9) {
				t.Errorf("serve %s: %s %v on one replica, %v on two with twice the requests", m, k, x, y)
			}
		}
		x, _ := s1["output_tokens_per_s"].(float64)
		y, _ := s2["output_tokens_per_s"].(float64)
		if !nearRel(2*x, y, 1e-9) {
			t.Errorf("serve %s: %v tokens/s on one replica, %v on two", m, x, y)
		}
	}
}

func nearRel(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// mayBeNegative names the JSON keys whose figures may be below zero.
func mayBeNegative(k string) bool {
	return strings.HasSuffix(k, "headroom_bytes")
}

// TestMeta_jsonNonNegative: over a grid of models, devices (calibrated,
// datasheet, what-if), data types and modes, simulate's JSON holds no
// negative figure (bar a memory shortfall) and no non-finite one (the
// encoder refuses those: the command would fail).
func TestMeta_jsonNonNegative(t *testing.T) {
	hws := [][]string{{"--hw", "a100"}, {"--hw", "b200"}, {"--hw", "mi300x"}, {"--hw", "tpu-v5p"}, {"--hw", "h100", "--set", "memory.bandwidth=1TB/s"}}
	models := []string{"llama3-8b", "qwen3-30b-a3b", "gemma2-9b", "nemotron-h-8b", "qwen3-next-80b-a3b", "resnet50", "vit-b16", "bert-large"}
	n := 0
	for i, hw := range hws {
		for j, m := range models {
			b := strconv.Itoa(1 + (i+j)%5*7)
			extras := [][]string{
				{"--batch", b},
				{"--mode", "training", "--global-batch", "8", "--dp", "2"},
			}
			switch m {
			case "resnet50", "vit-b16":
			case "bert-large":
				extras[0] = append(extras[0], "--input", strconv.Itoa(16+97*i))
			default:
				extras = [][]string{
					{"--batch", b, "--input", strconv.Itoa(100 + 997*j), "--output", strconv.Itoa(1 + 31*i)},
					{"--dtype", "fp8", "--tp", "2", "--batch", "3"},
					{"--mode", "training", "--global-batch", "8", "--tp", "2", "--dp", "2", "--recompute", "full"},
				}
			}
			for _, extra := range extras {
				args := append(append([]string{"simulate", "--model", m, "--format", "json"}, hw...), extra...)
				out, stderr, code := perfsim(t, args...)
				if code != 0 {
					t.Errorf("%v: exit %d: %s", args, code, strings.TrimSpace(stderr))
					continue
				}
				checkNonNegativeJSON(t, args, out)
				n++
			}
		}
	}
	t.Logf("%d reports checked", n)
}

// checkNonNegativeJSON checks that the JSON report out, of the command
// args, holds no negative number but where a key may be (mayBeNegative).
func checkNonNegativeJSON(t *testing.T, args []string, out string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	flat := map[string]any{}
	flatten("", v, flat)
	for k, x := range flat {
		if f, ok := x.(float64); ok && f < 0 && !mayBeNegative(k) {
			t.Errorf("%v: %s = %v", args, k, f)
		}
	}
}

// TestMeta_serveJSONNonNegative: serve's JSON over models of every kind
// that serves, engines, arrivals and layouts holds no negative figure.
func TestMeta_serveJSONNonNegative(t *testing.T) {
	for i, args := range [][]string{
		{"--hw", "h100", "--model", "llama3-8b", "--rate", "20", "--engine", "vllm"},
		{"--hw", "a100", "--model", "gemma2-9b", "--rate", "5", "--engine", "sglang", "--arrival", "gamma"},
		{"--hw", "h200", "--model", "nemotron-h-8b", "--arrival", "all", "--engine", "trtllm"},
		{"--hw", "h100", "--model", "qwen3-next-80b-a3b", "--tp", "4", "--rate", "4", "--engine", "vllm-0.6"},
		{"--hw", "b200", "--model", "qwen3-30b-a3b", "--dp", "2", "--rate", "30", "--router", "least-outstanding"},
		{"--hw", "h100", "--model", "llama3-8b", "--disagg", "1P1D", "--rate", "8"},
		{"--hw", "h100", "--set", "memory.bandwidth=1TB/s", "--model", "mistral-7b-v0.1", "--users", "8", "--prefix-hit", "0.5"},
	} {
		args = append([]string{"serve", "--requests", "120", "--input", strconv.Itoa(200 + 300*i), "--output", strconv.Itoa(20 + 17*i), "--format", "json"}, args...)
		out, stderr, code := perfsim(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, strings.TrimSpace(stderr))
			continue
		}
		checkNonNegativeJSON(t, args, out)
	}
}

// TestMeta_hfConfigEqualsCatalog: a catalog model and the HuggingFace
// config.json of the same model give the same report (the imported
// architecture: GQA, MoE, MLA, sliding windows, Mamba and Gated DeltaNet
// layers, an encoder).
func TestMeta_hfConfigEqualsCatalog(t *testing.T) {
	for _, c := range []struct{ name, file, tp string }{
		{"llama2-7b", "llama2-7b.json", "2"},
		{"mixtral-8x7b", "mixtral-8x7b.json", "2"},
		{"llama3.1-8b", "today/llama-3.1-8b.json", "1"},
		{"deepseek-v3", "today/deepseek-v3.json", "8"},
		{"gemma2-9b", "today/gemma-2-9b.json", "1"},
		{"gemma3-27b", "today/gemma-3-27b-it.json", "2"},
		{"gpt-oss-120b", "today/gpt-oss-120b.json", "2"},
		{"nemotron-h-8b", "today/nemotron-h-8b.json", "1"},
		{"qwen3-30b-a3b", "today/qwen3-30b-a3b.json", "1"},
		{"qwen3-next-80b-a3b", "today/qwen3-next-80b-a3b.json", "2"},
		{"phi3-mini", "today/phi-3-mini-4k.json", "1"},
	} {
		file := filepath.Join("..", "..", "workloads", "testdata", "hf", c.file)
		args := []string{"--batch", "4", "--input", "3000", "--output", "50", "--tp", c.tp, "--format", "json"}
		a := jsonOf(t, append([]string{"simulate", "--hw", "h100", "--model", c.name}, args...)...)
		b := jsonOf(t, append([]string{"simulate", "--hw", "h100", "--model", file}, args...)...)
		var diffs []string
		for k, v := range a {
			if _, num := v.(float64); !num {
				continue // names and labels
			}
			if w, ok := b[k]; !ok || w != v {
				diffs = append(diffs, fmt.Sprintf("%s: %v vs %v", k, v, w))
			}
		}
		sort.Strings(diffs)
		if len(diffs) > 0 {
			t.Errorf("%s: the catalog entry and %s differ in %d figures: %s", c.name, c.file, len(diffs), strings.Join(diffs[:min(len(diffs), 8)], "; "))
		}
	}
}
