package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestServe_golden pins the three formats of a small run.
func TestServe_golden(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "lognormal:600:400:16:4000", "--output", "uniform:16:400",
		"--requests", "200", "--rate", "12", "--seed", "3", "--ttft-slo", "200ms", "--tpot-slo", "20ms"}
	for _, f := range []string{"table", "json", "csv"} {
		out, errOut, code := perfsim(t, append(base, "--format", f)...)
		if code != 0 {
			t.Fatalf("--format %s exited %d: %s", f, code, errOut)
		}
		golden(t, "serve."+f, out)
	}
}

// TestServe_deterministic: the same seed gives the same bytes; another
// seed other bytes.
func TestServe_deterministic(t *testing.T) {
	args := []string{"serve", "--hw", "a100", "--model", "llama3-8b", "--workload", "sharegpt", "--requests", "300", "--rate", "6", "--format", "json"}
	a, _, _ := perfsim(t, append(args, "--seed", "9")...)
	b, _, _ := perfsim(t, append(args, "--seed", "9")...)
	c, _, _ := perfsim(t, append(args, "--seed", "10")...)
	if a != b || a == c {
		t.Errorf("seed 9 twice equal: %v; seed 10 differs: %v", a == b, a != c)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(a), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ttft_s", "tpot_s", "e2e_s", "output_tokens_per_s", "overloaded"} {
		if _, ok := v[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
}

// TestServe_requestsOut writes one row per request, and nothing on a
// failed run.
func TestServe_requestsOut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "req.csv")
	_, errOut, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "50", "--rate", "2", "--requests-out", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != 51 || !strings.HasPrefix(string(data), "id,arrival_s,start_s,first_token_s") {
		t.Errorf("%d lines:\n%.200s", lines, data)
	}
	bad := filepath.Join(dir, "bad.csv")
	if _, _, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "50", "--rate", "0", "--requests-out", bad); code != 2 {
		t.Errorf("--rate 0 exited %d", code)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed run wrote %s", bad)
	}
}

// TestServe_badInput: every usage mistake exits 2 naming its flag or
// file:line.
func TestServe_badInput(t *testing.T) {
	dir := t.TempDir()
	back := filepath.Join(dir, "back.csv")
	os.WriteFile(back, []byte("arrival_s,input_tokens,output_tokens\n1,100,10\n0.5,100,10\n"), 0o644)
	long := filepath.Join(dir, "long.jsonl")
	os.WriteFile(long, []byte(`{"arrival_s": 0, "input_tokens": 9000, "output_tokens": 10}`+"\n"), 0o644)
	empty := filepath.Join(dir, "empty.csv")
	os.WriteFile(empty, []byte("arrival_s,input_tokens,output_tokens\n"), 0o644)
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "0"}, "--rate"},
		{[]string{"--rate", "-3"}, "--rate"},
		{[]string{}, "--rate: needed"},
		{[]string{"--rate", "1", "--ttft-slo", "1"}, "ttft-slo"},
		{[]string{"--trace", back}, "back.csv:3: arrival_s"},
		{[]string{"--trace", long}, "long.jsonl:1: input_tokens"},
		{[]string{"--trace", empty}, "no requests"},
		{[]string{"--rate", "1", "--tp", "3"}, "--tp"},
		{[]string{"--rate", "1", "--input", "lognormal:x"}, "--input"},
		{[]string{"--rate", "1", "--engine", "tgi"}, "--engine"},
		{[]string{"--rate", "1", "--requests", "0"}, "--requests"},
		{[]string{"--rate", "1", "--max-seqs", "0"}, "--max-seqs"},
		// --max-seq-len sizes only trtllm's runtime buffers (vllm's had
		// been ignored), and a request longer than the engine was built
		// for does not run (trtllm's had).
		{[]string{"--rate", "1", "--requests", "5", "--max-seq-len", "4096"}, "--max-seq-len: sizes only"},
		{[]string{"--rate", "1", "--requests", "5", "--engine", "trtllm", "--max-seq-len", "1000"}, "exceed the engine's max_seq_len of 1000 (--max-seq-len)"},
		// Settings the run would have ignored, each giving the same
		// bytes as without it: multi-step decoding on a decode-first
		// engine, a graph cap on an engine without CUDA graphs, a memory
		// fraction beside a KV cache given in tokens.
		{[]string{"--rate", "1", "--requests", "5", "--scheduler-steps", "4"}, "--scheduler-steps: only a prefill-first engine"},
		{[]string{"--rate", "1", "--requests", "5", "--engine", "trtllm", "--scheduler-steps", "4"}, "--scheduler-steps: only a prefill-first engine"},
		{[]string{"--rate", "1", "--requests", "5", "--engine", "trtllm", "--cuda-graph-max-bs", "16"}, "--cuda-graph-max-bs: trtllm runs no CUDA graphs"},
		{[]string{"--rate", "1", "--requests", "5", "--kv-tokens", "100000", "--mem-fraction", "0.5"}, "--mem-fraction: not with --kv-tokens"},
		// Drawn lengths beyond the context name the flags, once (ten
		// lines of "request N: ..." had named neither).
		{[]string{"--rate", "1", "--requests", "5", "--input", "9000"}, "perfsim: --input, --output: request 0: 9000 + 256 tokens exceed the model's context of 8192\nperfsim: run"},
	} {
		_, errOut, code := perfsim(t, append(base, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestServingDocCommands runs every perfsim command docs/serving.md
// shows, in a temporary directory, and checks each exits 0.
func TestServingDocCommands(t *testing.T) {
	cmds := readmeCommands(t, filepath.Join("..", "..", "docs", "serving.md"))
	if len(cmds) == 0 {
		t.Fatal("docs/serving.md shows no perfsim command")
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	for _, c := range cmds {
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := perfsim(t, c...)
		os.Chdir(wd)
		if code != 0 {
			t.Errorf("perfsim %s exited %d:\n%s", strings.Join(c, " "), code, errOut)
		}
	}
}

// TestServe_runtimeBuffers checks that the trtllm preset reports its
// runtime buffers (runtime_buffers_bytes, sized by --max-seq-len), that
// other engines report none, and that a negative --max-seq-len is
// refused naming the flag.
func TestServe_runtimeBuffers(t *testing.T) {
	buffers := func(args ...string) int64 {
		t.Helper()
		out, stderr, code := perfsim(t, append([]string{"serve", "--hw", "h100", "--model", "llama3-70b", "--tp", "8",
			"--requests", "20", "--arrival", "all", "--input", "128", "--output", "64", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var j struct {
			Buffers int64 `json:"runtime_buffers_bytes"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		return j.Buffers
	}
	short, long := buffers("--engine", "trtllm", "--max-seq-len", "192"), buffers("--engine", "trtllm", "--max-seq-len", "8192")
	if !(short > 0 && long > short) {
		t.Errorf("trtllm runtime buffers %d bytes at max_seq_len 192, %d at 8192: want positive and growing", short, long)
	}
	if v := buffers("--engine", "vllm"); v != 0 {
		t.Errorf("vllm: runtime_buffers_bytes %d, want none", v)
	}
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--engine", "trtllm", "--arrival", "all", "--max-seq-len", "-1")
	if code != 2 || !strings.Contains(stderr, "--max-seq-len") {
		t.Errorf("--max-seq-len -1: exit %d, stderr %q; want 2 naming the flag", code, stderr)
	}
}

// TestServe_csvEnergyCost: serve's CSV carries the energy and the cost
// that its table and JSON give, at the same figures; with --price it had
// dropped the cost (and always the energy) without a word.
func TestServe_csvEnergyCost(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "100", "--rate", "5", "--price", "2/h"}
	js, _, code := perfsim(t, append(base, "--format", "json")...)
	if code != 0 {
		t.Fatal("json run failed")
	}
	var v struct {
		Energy map[string]any `json:"energy"`
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	csv, _, code := perfsim(t, append(base, "--format", "csv")...)
	if code != 0 {
		t.Fatal("csv run failed")
	}
	for row, key := range map[string]string{"gpu_j": "gpu_j", "j_per_output_token": "j_per_output_token", "cost_usd": "cost",
		"cost_per_million_output_tokens_usd": "cost_per_million_output_tokens"} {
		want := fmt.Sprintf("\n%s,%v,", row, strconv.FormatFloat(v.Energy[key].(float64), 'g', -1, 64))
		if !strings.Contains(csv, want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
}

// TestServe_stateSpaceRefused: serving a pure state-space model is
// refused saying why; it had said "sim: mamba2-2.7b: its decode step has
// no attention", which reads as a fault.
func TestServe_stateSpaceRefused(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "mamba2-2.7b", "--requests", "10", "--rate", "1")
	if code == 0 || !strings.Contains(stderr, "mamba2-2.7b has no attention layer: serving a pure state-space model is not modelled") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestServe_dashOutput: "-" for a file flag is refused, naming the flag,
// with exit 2; a file named "-" had been written in the working
// directory (plot's -o - is standard output, so users expect it).
func TestServe_dashOutput(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--requests", "10", "--rate", "1", "--requests-out", "-", "--series-plot", "-")
	for _, want := range []string{`--requests-out: "-": standard output is not written here`, `--series-plot: "-": standard output is not written here`} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q lacks %q", code, stderr, want)
		}
	}
}

// TestServe_kvTokensOverMemory: a --kv-tokens the device cannot hold
// with all the memory the model leaves is refused, naming the flag and
// the most it holds; 100M tokens of Llama 3 8B (13 TB) on one H100 had
// been served as given. A smaller cache is still taken. The most is
// counted as the engine (vllm, V1) counts its memory: 84,943,715,697 B
// less 16,060,522,496 B of weights, its profile's 704,643,072 B and 0.16
// GiB outside torch, in 128 KiB tokens, 518,850 (503,777 when the bound
// counted the device's flat 2 GiB reserve and sim's activations).
func TestServe_kvTokensOverMemory(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--kv-tokens", "100000000", "--requests", "10", "--rate", "1")
	if code == 0 || !strings.Contains(stderr, "--kv-tokens 100000000: more than the device's memory holds") || !strings.Contains(stderr, "at most 518850 tokens") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	out, _, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--kv-tokens", "500000", "--requests", "10", "--rate", "1")
	if code != 0 || !strings.Contains(out, "KV cache 500000 tokens") {
		t.Errorf("--kv-tokens 500000: exit %d\n%s", code, out)
	}
}

// TestServe_ppKVCache: a replica of PP stages runs PP schedulers, each
// with 1/PP of the KV cache; the table says the replica's whole cache
// and each scheduler's (tp 4 × pp 2 of Llama 3 70B had printed one
// scheduler's 683568 tokens as the replica's; 1,293,888 and 646,944 since vLLM's own sizing, serve.VLLMKVTokens).
func TestServe_ppKVCache(t *testing.T) {
	out, _, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-70b", "--tp", "4", "--pp", "2", "--requests", "10", "--rate", "1")
	if code != 0 || !strings.Contains(out, "KV cache 1293888 tokens per replica, 646944 in each of its 2 pipeline schedulers") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestServe_emptyLengthsFile: --input file: without a path names the
// flag and the form; it had said "open : no such file or directory".
func TestServe_emptyLengthsFile(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--input", "file:", "--requests", "10", "--rate", "1")
	if code != 2 || !strings.Contains(stderr, "--input: file: needs the path of a lengths file") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestServe_notDecoderArticle: the refusal of a model that is not a
// decoder reads as English ("bert-large is a encoder" had been said).
func TestServe_notDecoderArticle(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "bert-large", "--requests", "10", "--rate", "1")
	if code == 0 || !strings.Contains(stderr, "bert-large is an encoder: serving needs a decoder") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, _ = perfsim(t, "plot", "sweep", "--hw", "h100", "--model", "bert-large", "-o", "-")
	if !strings.Contains(stderr, "bert-large is an encoder: it generates no output tokens") {
		t.Errorf("plot sweep: stderr %q", stderr)
	}
}

// TestServe_tooFewToJudge: a run of open arrivals with fewer requests
// than the overload verdict judges says so on stderr (5 requests at
// 1,000 req/s on one H100 had printed their figures, no verdict and no
// word); a run at once (no arrivals to keep up with), a closed loop and
// a run of 20 say nothing.
func TestServe_tooFewToJudge(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "128", "--output", "16"}
	const warn = " too few to judge whether the deployment keeps up with the arrivals (the overload verdict needs 20)"
	for _, tt := range []struct {
		args []string
		warn string // the warning's subject, "" for none
	}{
		{[]string{"--requests", "5", "--rate", "1000"}, "5 requests are"},
		{[]string{"--requests", "1", "--rate", "1000"}, "1 request is"}, // it had said "1 request are"
		{[]string{"--requests", "5", "--arrival", "all"}, ""},
		{[]string{"--requests", "5", "--users", "2"}, ""},
		{[]string{"--requests", "20", "--rate", "1"}, ""},
	} {
		_, stderr, code := perfsim(t, append(base, tt.args...)...)
		if code != 0 || strings.Contains(stderr, "too few to judge") != (tt.warn != "") || (tt.warn != "" && !strings.Contains(stderr, "perfsim: warning: "+tt.warn+warn)) {
			t.Errorf("%v: exit %d, stderr %q; want the warning %v", tt.args, code, stderr, tt.warn)
		}
	}
}

// TestServe_goodputOnlyWithObjectives: goodput and the objectives it
// counts by are written only as given; without one there is no goodput
// (JSON and CSV had given the throughput as goodput, under objectives of
// 0 s, and the table "TPOT ≤ 0 s (0: none)" beside a TTFT objective).
func TestServe_goodputOnlyWithObjectives(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "128", "--output", "16", "--requests", "50", "--rate", "5"}
	for _, tt := range []struct {
		args    []string
		present []string
		absent  []string
		table   string
	}{
		{nil, nil, []string{"goodput_requests_per_s", "ttft_slo_s", "tpot_slo_s"}, ""},
		{[]string{"--ttft-slo", "1s"}, []string{"goodput_requests_per_s", "ttft_slo_s"}, []string{"tpot_slo_s"}, "req/s within TTFT ≤ 1 s\n"},
		{[]string{"--ttft-slo", "1s", "--tpot-slo", "20ms"}, []string{"goodput_requests_per_s", "ttft_slo_s", "tpot_slo_s"}, nil, "req/s within TTFT ≤ 1 s and TPOT ≤ 20 ms\n"},
	} {
		var v map[string]any
		perfsimJSON(t, &v, append(append(base, tt.args...), "--format", "json")...)
		cs, _, code := perfsim(t, append(append(base, tt.args...), "--format", "csv")...)
		tab, _, code2 := perfsim(t, append(base, tt.args...)...)
		if code != 0 || code2 != 0 {
			t.Fatalf("%v: exit %d, %d", tt.args, code, code2)
		}
		for _, k := range tt.present {
			if _, ok := v[k]; !ok || !strings.Contains(cs, "\n"+k+",") {
				t.Errorf("%v: %s missing (JSON %v)", tt.args, k, ok)
			}
		}
		for _, k := range tt.absent {
			if _, ok := v[k]; ok || strings.Contains(cs, "\n"+k+",") {
				t.Errorf("%v: %s written without its objective", tt.args, k)
			}
		}
		if got := strings.Contains(tab, "goodput"); got != (tt.table != "") || (tt.table != "" && !strings.Contains(tab, tt.table)) {
			t.Errorf("%v: table's goodput line wrong (want %q):\n%s", tt.args, tt.table, tab)
		}
	}
}

// TestServe_oneToken: with one output token a request has no TPOT and
// no inter-token gap: the table says so, JSON gives null and the CSV
// empty cells (all three had read 0 s, as if infinitely fast).
func TestServe_oneToken(t *testing.T) {
	args := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "128", "--output", "1", "--requests", "30", "--rate", "5"}
	tab, stderr, code := perfsim(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"\nTPOT    none: no request has a second token\n", "\nITL     none: no request has a second token\n"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	var v map[string]any
	perfsimJSON(t, &v, append(args, "--format", "json")...)
	for _, k := range []string{"tpot_s", "itl_s"} {
		if x, ok := v[k]; !ok || x != nil {
			t.Errorf("JSON %s: %v (present %v), want null", k, x, ok)
		}
	}
	cs, _, _ := perfsim(t, append(args, "--format", "csv")...)
	for _, want := range []string{"\ntpot_s,,,,,,\n", "\nitl_s,,,,,,\n"} {
		if !strings.Contains(cs, want) {
			t.Errorf("CSV lacks %q:\n%s", want, cs)
		}
	}
	// Two tokens: a TPOT, as before.
	perfsimJSON(t, &v, append(args[:len(args)-6:len(args)-6], "--output", "2", "--requests", "30", "--rate", "5", "--format", "json")...)
	if tp, ok := v["tpot_s"].(map[string]any); !ok || !(tp["mean"].(float64) > 0) {
		t.Errorf("two tokens: tpot_s %v", v["tpot_s"])
	}
}
