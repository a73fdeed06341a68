package main

import (
	"strings"
	"testing"
)

// TestSimulate_gemmAllReduce: --gemm-allreduce fuses the TP all-reduces
// with their GEMMs (TensorRT-LLM's gemm_allreduce_plugin): a 2,560-token
// Llama 3.1 405B prefill at TP 8 on H200s takes less time, all of it
// from the communication; the scenario says so in text and JSON; a
// one-token decode step is unchanged; training refuses the flag.
func TestSimulate_gemmAllReduce(t *testing.T) {
	base := []string{"simulate", "--hw", "h200", "--model", "llama3.1-405b", "--tp", "8", "--dtype", "fp8", "--input", "2560", "--output", "2", "--format", "json"}
	run := func(extra ...string) (ttft, tpot float64, fused bool) {
		t.Helper()
		var j struct {
			Scenario struct {
				GEMMAllReduce bool `json:"gemm_allreduce"`
			} `json:"scenario"`
			TTFT float64 `json:"ttft_s"`
			TPOT float64 `json:"tpot_s"`
		}
		perfsimJSON(t, &j, append(append([]string{}, base...), extra...)...)
		return j.TTFT, j.TPOT, j.Scenario.GEMMAllReduce
	}
	ttft0, tpot0, f0 := run()
	ttft1, tpot1, f1 := run("--gemm-allreduce")
	if f0 || !f1 {
		t.Errorf("scenario gemm_allreduce: %v without the flag, %v with it", f0, f1)
	}
	if !(ttft1 < 0.9*ttft0) || ttft0 == 0 {
		t.Errorf("TTFT %g s fused, %g s not: want at least 10%% less", ttft1, ttft0)
	}
	if tpot1 != tpot0 {
		t.Errorf("TPOT %g s fused, %g s not: a one-token step is one wave of tiles, and should not change", tpot1, tpot0)
	}
	out, _, _ := perfsim(t, "simulate", "--hw", "h200", "--model", "llama3.1-405b", "--tp", "8", "--dtype", "fp8", "--gemm-allreduce")
	if !strings.Contains(out, "collectives bf16 (TP all-reduces fused with their GEMMs)") {
		t.Errorf("the scenario line does not name the fusion:\n%s", out)
	}
	_, stderr, code := perfsim(t, "simulate", "--mode", "training", "--hw", "h200", "--model", "llama3-8b", "--gemm-allreduce")
	if code != 2 || !strings.Contains(stderr, "--gemm-allreduce") {
		t.Errorf("training with --gemm-allreduce: exit %d, %q; want a usage error naming the flag", code, stderr)
	}
}

// TestServe_gemmAllReduce: serve's --gemm-allreduce prices the fused
// kernel in every iteration (a trtllm replica of Llama 3.1 405B at TP 8
// on H200s reaches its first tokens sooner), says so on the engine line
// and in the JSON, and is refused beside vLLM's own all-reduce.
func TestServe_gemmAllReduce(t *testing.T) {
	base := []string{"serve", "--hw", "h200", "--tp", "8", "--model", "llama3.1-405b", "--dtype", "fp8", "--engine", "trtllm",
		"--input", "8000", "--output", "20", "--requests", "20", "--rate", "0.3", "--max-seqs", "64", "--max-tokens", "2560", "--format", "json"}
	run := func(extra ...string) (ttft float64, fused bool) {
		t.Helper()
		var j struct {
			GEMMAllReduce bool `json:"gemm_allreduce"`
			TTFT          struct {
				Mean float64 `json:"mean"`
			} `json:"ttft_s"`
		}
		perfsimJSON(t, &j, append(append([]string{}, base...), extra...)...)
		return j.TTFT.Mean, j.GEMMAllReduce
	}
	t0, f0 := run()
	t1, f1 := run("--gemm-allreduce")
	if f0 || !f1 {
		t.Errorf("gemm_allreduce: %v without the flag, %v with it", f0, f1)
	}
	if !(t1 < 0.95*t0) {
		t.Errorf("mean TTFT %g s fused, %g s not: want at least 5%% less", t1, t0)
	}
	out, _, _ := perfsim(t, append(append([]string{}, base[:len(base)-2]...), "--gemm-allreduce")...)
	if !strings.Contains(out, "TP all-reduces fused with their GEMMs") {
		t.Errorf("the engine line does not name the fusion:\n%s", out)
	}
	_, stderr, code := perfsim(t, "serve", "--hw", "h200", "--tp", "8", "--model", "llama3-70b", "--engine", "vllm", "--gemm-allreduce", "--rate", "1")
	if code != 2 || !strings.Contains(stderr, "--gemm-allreduce") || !strings.Contains(stderr, "--all-reduce device") {
		t.Errorf("vllm with --gemm-allreduce: exit %d, %q; want a usage error naming both flags", code, stderr)
	}
}
