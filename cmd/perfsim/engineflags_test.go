package main

import (
	"strings"
	"testing"
)

// TestHostFlags: --seq-overhead and --async-output set the engine's
// host settings. Giving a preset's own values changes nothing; other
// values move the latencies the way the settings mean.
func TestHostFlags(t *testing.T) {
	base := []string{"serve", "--hw", "a100", "--model", "llama3-8b", "--engine", "vllm-0.6", "--input", "512", "--output", "64",
		"--requests", "200", "--rate", "4", "--seed", "2", "--format", "json"}
	run := func(extra ...string) map[string]any {
		t.Helper()
		var v map[string]any
		perfsimJSON(t, &v, append(append([]string{}, base...), extra...)...)
		return v
	}
	p50 := func(v map[string]any, k string) float64 { return v[k].(map[string]any)["p50"].(float64) }
	def := run()
	same := run("--seq-overhead", "36.5us", "--async-output")
	if p50(def, "tpot_s") != p50(same, "tpot_s") || p50(def, "ttft_s") != p50(same, "ttft_s") {
		t.Errorf("the preset's own values (36.5us, async on) changed the run: TPOT %g -> %g, TTFT %g -> %g",
			p50(def, "tpot_s"), p50(same, "tpot_s"), p50(def, "ttft_s"), p50(same, "ttft_s"))
	}
	none := run("--seq-overhead", "0s")
	more := run("--seq-overhead", "200us")
	if !(p50(none, "tpot_s") < p50(def, "tpot_s") && p50(def, "tpot_s") < p50(more, "tpot_s")) {
		t.Errorf("TPOT p50 at 0, 42 and 200 µs per sequence: %g, %g, %g; want increasing", p50(none, "tpot_s"), p50(def, "tpot_s"), p50(more, "tpot_s"))
	}
	// Without the asynchronous output processor a first token reaches
	// the client when its iteration ends, not one iteration later.
	sync := run("--async-output=false")
	if !(p50(sync, "ttft_s") < p50(def, "ttft_s")) {
		t.Errorf("TTFT p50 with outputs processed synchronously %g, asynchronously %g; want lower", p50(sync, "ttft_s"), p50(def, "ttft_s"))
	}
}

// TestHostFlags_bad: a bad value exits 2 naming its flag, in serve and
// in plan serve.
func TestHostFlags_bad(t *testing.T) {
	serveArgs := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1"}
	planArgs := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--ttft-p99", "1s"}
	for _, base := range [][]string{serveArgs, planArgs} {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--seq-overhead", "42"}, "--seq-overhead"},    // no unit
			{[]string{"--seq-overhead", "-1ms"}, "--seq-overhead"},  // negative
			{[]string{"--seq-overhead", "inf s"}, "--seq-overhead"}, // not finite
			{[]string{"--async-output=maybe"}, "--async-output"},
			{[]string{"--all-reduce", "nccl"}, "--all-reduce"},
			{[]string{"--engine", "sglang", "--schedule-conservativeness", "-1"}, "--schedule-conservativeness"},
			{[]string{"--engine", "sglang", "--schedule-conservativeness", "NaN"}, "--schedule-conservativeness"},
			{[]string{"--engine", "sglang", "--schedule-conservativeness", "0.5", "--decode-reserve=false"}, "--schedule-conservativeness"},
			{[]string{"--engine", "vllm", "--decode-reserve"}, "--decode-reserve"},
			{[]string{"--engine", "trtllm", "--schedule-conservativeness", "0.5"}, "--schedule-conservativeness"},
			{[]string{"--engine", "sglang", "--cuda-graph-max-bs", "-1"}, "--cuda-graph-max-bs"},
			{[]string{"--schedule-policy", "lof"}, "--schedule-policy"},
		} {
			_, errOut, code := perfsim(t, append(append([]string{}, base...), tt.args...)...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("%s %v: exit %d, stderr %q; want 2 and %q", base[0], tt.args, code, errOut, tt.want)
			}
		}
	}
}

// TestAllReduceFlag: --all-reduce picks the engine's all-reduce kernel.
// vllm-0.6, vllm (V1, v0.10) and sglang (v0.4) run vLLM's own by
// default (--all-reduce vllm changes nothing); --all-reduce device
// prices the device's fitted kernels instead, which at these batches
// (messages of 16–256 KiB at TP 4 on an H100) are faster than vLLM's
// measured kernel, so TPOT falls.
func TestAllReduceFlag(t *testing.T) {
	for _, engine := range []string{"vllm-0.6", "vllm", "sglang"} {
		base := []string{"serve", "--hw", "h100", "--model", "llama3-70b", "--tp", "4", "--engine", engine, "--input", "256", "--output", "64",
			"--requests", "100", "--rate", "4", "--seed", "2", "--format", "json"}
		tpot := func(extra ...string) float64 {
			t.Helper()
			var v map[string]any
			perfsimJSON(t, &v, append(append([]string{}, base...), extra...)...)
			return v["tpot_s"].(map[string]any)["p50"].(float64)
		}
		def, same, dev := tpot(), tpot("--all-reduce", "vllm"), tpot("--all-reduce", "device")
		if def != same {
			t.Errorf("--all-reduce vllm changed %s's TPOT: %g -> %g", engine, def, same)
		}
		if !(dev < def) {
			t.Errorf("%s: TPOT p50 with the device's all-reduce %g, with vLLM's %g; want lower", engine, dev, def)
		}
	}
}

// TestDecodeReserveFlags: --decode-reserve and --schedule-conservativeness
// set the sglang preset's decode reserve. Under memory pressure (300 ×
// 1,024 + 1,024 tokens at once in 40,000 KV tokens; serve's
// TestHeadroom_tightMemory) the preset retracts 15 times, 451 without the
// reserve, and 34 times at conservativeness 0.3 (a ratio of 0.21 falling
// to 0.029); giving the preset's own values changes nothing. The count is
// not monotone in the conservativeness (0: 12, 0.3: 34, 1: 15, 1.43: 24
// retractions): every prompt reserves its own whole output at any
// setting, a retraction resets the ratio from what is left whatever the
// setting, and at 0 the ratio never decays (SGLang's decay is (initial −
// floor)/600). A retracted request goes to the back of the queue
// (SGLang's waiting_queue.extend); at the front, as before, the counts
// were 36, 229 and 25.
func TestDecodeReserveFlags(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--engine", "sglang", "--kv-tokens", "40000", "--input", "1024", "--output", "1024",
		"--requests", "300", "--arrival", "all", "--format", "json"}
	run := func(extra ...string) (float64, string) {
		t.Helper()
		var v map[string]any
		out := perfsimJSON(t, &v, append(append([]string{}, base...), extra...)...)
		return v["preemptions"].(float64), out
	}
	def, defOut := run()
	same, sameOut := run("--schedule-conservativeness", "1", "--decode-reserve")
	off, _ := run("--decode-reserve=false")
	low, _ := run("--schedule-conservativeness", "0.3")
	if defOut != sameOut {
		t.Errorf("the preset's own values (--decode-reserve, --schedule-conservativeness 1) changed the run: %g -> %g retractions", def, same)
	}
	if def != 15 || off != 451 || low != 34 {
		t.Errorf("retractions: %g with the reserve, %g at conservativeness 0.3, %g without; want 15, 34 and 451", def, low, off)
	}
}

// TestSGLangFractionByTP: the sglang preset's mem_fraction_static follows
// each pool's TP size (SGLang v0.4.0: 0.85 at TP 4, 0.81 at 8), and
// --mem-fraction sets both. Llama 3 70B on H100s (79.11 GiB usable, of
// which SGLang's total is what the CUDA context and NCCL leave, 1.94 GiB
// at TP > 1: serve.SGLangKeptBack, SGLangKVTokens): 80 KiB of KV per
// token per device at TP 4, 40 KiB at TP 8.
func TestSGLangFractionByTP(t *testing.T) {
	run := func(extra ...string) map[string]float64 {
		t.Helper()
		args := append([]string{"serve", "--hw", "h100", "--model", "llama3-70b", "--engine", "sglang", "--disagg", "1P1D", "--prefill-tp", "4", "--decode-tp", "8",
			"--input", "1024", "--output", "128", "--requests", "20", "--rate", "2", "--format", "json"}, extra...)
		var v struct {
			Pools []struct {
				Name string  `json:"name"`
				KV   float64 `json:"kv_cache_tokens"`
			} `json:"pools"`
		}
		perfsimJSON(t, &v, args...)
		kv := map[string]float64{}
		for _, p := range v.Pools {
			kv[p.Name] = p.KV
		}
		return kv
	}
	def, set := run(), run("--mem-fraction", "0.88")
	if def["prefill"] != 429134 || def["decode"] != 1207976 {
		t.Errorf("by TP: prefill (TP 4) %g, decode (TP 8) %g KV tokens; want 429,134 (0.85) and 1,207,976 (0.81)", def["prefill"], def["decode"])
	}
	if set["prefill"] != 459479 || set["decode"] != 1349583 {
		t.Errorf("--mem-fraction 0.88: prefill %g, decode %g KV tokens; want 459,479 and 1,349,583", set["prefill"], set["decode"])
	}
}

// TestSGLangQueueFlags: --schedule-policy and --cuda-graph-max-bs set the
// waiting queue's order and the largest graphed decode batch; the sglang
// preset's own values (lpm, 160 on an H100) change nothing. 100 ShareGPT
// requests at once on Llama 3 8B with half of every prompt cached: lpm
// serves the longest cached prefix, so the longest prompt, first (at
// most 128 waiting), and the TTFTs differ from first come, first served
// (p50 250.7 against 252.9 ms). Graphs only to batch 8 price the larger
// decode steps without them: TPOT rises.
func TestSGLangQueueFlags(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--engine", "sglang", "--workload", "sharegpt", "--requests", "100", "--arrival", "all",
		"--prefix-hit", "0.5", "--format", "json"}
	run := func(extra ...string) (map[string]any, string) {
		t.Helper()
		var v map[string]any
		out := perfsimJSON(t, &v, append(append([]string{}, base...), extra...)...)
		return v, out
	}
	p50 := func(v map[string]any, key string) float64 { return v[key].(map[string]any)["p50"].(float64) }
	def, defOut := run()
	_, sameOut := run("--schedule-policy", "lpm", "--cuda-graph-max-bs", "160")
	fcfs, _ := run("--schedule-policy", "fcfs")
	small, _ := run("--cuda-graph-max-bs", "8")
	if defOut != sameOut {
		t.Error("the preset's own --schedule-policy lpm --cuda-graph-max-bs 160 changed the run")
	}
	if p50(def, "ttft_s") == p50(fcfs, "ttft_s") && p50(def, "e2e_s") == p50(fcfs, "e2e_s") {
		t.Errorf("--schedule-policy fcfs: TTFT p50 %g s and E2E p50 %g s, the same as lpm's", p50(fcfs, "ttft_s"), p50(fcfs, "e2e_s"))
	}
	// Any engine takes the order: vLLM V1 (decode-first) under lpm.
	vfcfs, _ := run("--engine", "vllm")
	vlpm, _ := run("--engine", "vllm", "--schedule-policy", "lpm")
	if p50(vfcfs, "ttft_s") == p50(vlpm, "ttft_s") && p50(vfcfs, "e2e_s") == p50(vlpm, "e2e_s") {
		t.Errorf("vllm --schedule-policy lpm: TTFT p50 %g s and E2E p50 %g s, the same as fcfs's", p50(vlpm, "ttft_s"), p50(vlpm, "e2e_s"))
	}
	if !(p50(small, "tpot_s") > p50(def, "tpot_s")) {
		t.Errorf("--cuda-graph-max-bs 8: TPOT p50 %g s, with 160 %g s; want higher", p50(small, "tpot_s"), p50(def, "tpot_s"))
	}
	// 0: every decode step in one graph, unpadded, prefills eager: vLLM
	// V1's decode steps then have their attention in the graph too.
	vany, _ := run("--engine", "vllm", "--cuda-graph-max-bs", "0")
	if !(p50(vany, "tpot_s") < p50(vfcfs, "tpot_s")) {
		t.Errorf("vllm --cuda-graph-max-bs 0: TPOT p50 %g s, piecewise to 512 %g s; want lower", p50(vany, "tpot_s"), p50(vfcfs, "tpot_s"))
	}
}
