package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestKernelGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"kernel_gemm.stdout", []string{"kernel", "gemm", "--hw", "a100", "--m", "4096", "--k", "4096", "--n", "4096", "--dtype", "fp16"}},
		{"kernel_gemm_json.stdout", []string{"kernel", "gemm", "--hw", "h100", "--m", "1", "--k", "4096", "--n", "14336", "--dtype", "bf16", "--format", "json"}},
		{"kernel_gemm_csv.stdout", []string{"kernel", "gemm", "--hw", "h100", "--m", "8192", "--k", "8192", "--n", "8192", "--dtype", "fp8", "--format", "csv"}},
		{"kernel_copy.stdout", []string{"kernel", "copy", "--hw", "h100", "--bytes", "4GB"}},
		{"kernel_copy_json.stdout", []string{"kernel", "copy", "--hw", "a100", "--bytes", "1MiB", "--format", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := perfsim(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, tt.name, out)
		})
	}
}

// TestKernel_seed003: seed 003's cuBLAS timings of a 4096³ GEMM on an
// A100: FP16 tensor cores 0.58 ms, FP32 7.14 ms; within ±15%.
func TestKernel_seed003(t *testing.T) {
	for _, tt := range []struct {
		dtype string
		want  float64
	}{{"fp16", 0.58e-3}, {"fp32", 7.14e-3}} {
		out, stderr, code := perfsim(t, "kernel", "gemm", "--hw", "a100", "--m", "4096", "--k", "4096", "--n", "4096", "--dtype", tt.dtype, "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var j struct {
			Time       float64 `json:"time_s"`
			FLOPs      float64 `json:"flops"`
			Efficiency float64 `json:"efficiency"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		if math.Abs(j.Time-tt.want)/tt.want > 0.15 {
			t.Errorf("%s: time_s %v, seed 003 %v ±15%%", tt.dtype, j.Time, tt.want)
		}
		if j.FLOPs != 2*4096*4096*4096 || !(j.Efficiency > 0 && j.Efficiency <= 1) {
			t.Errorf("%s: flops %v efficiency %v", tt.dtype, j.FLOPs, j.Efficiency)
		}
	}
}

func TestKernelBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"kernel"}, "gemm or copy"},
		{[]string{"kernel", "conv", "--hw", "h100"}, "conv"},
		{[]string{"kernel", "gemm", "--hw", "h100", "--m", "0", "--k", "1", "--n", "1"}, "--m"},
		{[]string{"kernel", "gemm", "--hw", "h100", "--m", "1", "--k", "1"}, "--n"},
		{[]string{"kernel", "gemm", "--hw", "h100", "--m", "1", "--k", "1", "--n", "1", "--dtype", "fp9"}, "dtype"},
		{[]string{"kernel", "copy", "--hw", "h100"}, "--bytes"},
		{[]string{"kernel", "copy", "--hw", "h100", "--bytes", "12"}, "bytes"},
		{[]string{"kernel", "gemm", "--m", "1", "--k", "1", "--n", "1"}, "--hw"},
	}
	for _, tt := range tests {
		_, stderr, code := perfsim(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q (want 2, naming %s)", tt.args, code, stderr, tt.want)
		}
	}
}

// TestKernel_flagsReviewed: a copy refuses the gemm-only flags it would
// ignore (--dtype, --out, --batch: kernel copy --dtype fp8 had printed
// "computed at fp32"), and every bad flag is named at once.
func TestKernel_flagsReviewed(t *testing.T) {
	for _, flag := range [][]string{{"--dtype", "fp8"}, {"--out", "bf16"}, {"--batch", "4"}} {
		_, stderr, code := perfsim(t, append([]string{"kernel", "copy", "--hw", "h100", "--bytes", "1GB"}, flag...)...)
		if code != 2 || !strings.Contains(stderr, flag[0]) {
			t.Errorf("copy %v: exit %d: %s", flag, code, stderr)
		}
	}
	_, stderr, code := perfsim(t, "kernel", "gemm", "--hw", "h100", "--m", "0", "--k", "-1", "--n", "1", "--bytes", "1GB")
	for _, w := range []string{"--m", "--k", "--bytes"} {
		if code != 2 || !strings.Contains(stderr, w) {
			t.Errorf("gemm with three bad flags: exit %d, %s not named: %s", code, w, stderr)
		}
	}
}

// TestKernel_copyWording: a copy does no arithmetic, so its table does
// not say it was "computed at" a data type.
func TestKernel_copyWording(t *testing.T) {
	out, errOut, code := perfsim(t, "kernel", "copy", "--hw", "h100", "--bytes", "1GB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "computed at") || !strings.Contains(out, "no arithmetic") {
		t.Errorf("kernel copy:\n%s\nwant no \"computed at\" and a bound line saying there is no arithmetic", out)
	}
}

// TestKernel_copyJSON: a copy's JSON names no data type and no FLOP/s
// peak (it had "dtype": "fp32" and the fp32 peak), and its CSV leaves
// those cells empty.
func TestKernel_copyJSON(t *testing.T) {
	out, errOut, code := perfsim(t, "kernel", "copy", "--hw", "h100", "--bytes", "1GB", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, `"dtype"`) || strings.Contains(out, `"peak_flop_per_s"`) {
		t.Errorf("kernel copy JSON:\n%s\nwant no dtype and no peak_flop_per_s", out)
	}
	out, errOut, code = perfsim(t, "kernel", "copy", "--hw", "h100", "--bytes", "1GB", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("kernel copy CSV: %d records, %v", len(recs), err)
	}
	head, row := recs[0], recs[1]
	for i, k := range head {
		if (k == "dtype" || k == "peak_flop_per_s") && i < len(row) && row[i] != "" {
			t.Errorf("kernel copy CSV: %s = %q, want empty", k, row[i])
		}
	}
}

// TestKernel_memoryBoundGEMM: a memory-bound GEMM's table says how much
// of the bandwidth it reaches, as a copy's does; its only efficiency had
// been 0.2% of the FLOP/s peak (H100, 1×8192×8192 fp8), its 1.817 TB/s
// of 3.35 TB/s left to the JSON. A compute-bound GEMM prints no such line.
func TestKernel_memoryBoundGEMM(t *testing.T) {
	out, _, code := perfsim(t, "kernel", "gemm", "--hw", "h100", "--m", "1", "--n", "8192", "--k", "8192", "--dtype", "fp8")
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "memory 1.817 TB/s of 3.35 TB/s bandwidth (54.2%)") {
		t.Errorf("exit %d; output lacks the bandwidth line:\n%s", code, out)
	}
	out, _, _ = perfsim(t, "kernel", "gemm", "--hw", "a100", "--m", "4096", "--k", "4096", "--n", "4096", "--dtype", "fp16")
	if strings.Contains(out, "bandwidth (") {
		t.Errorf("a compute-bound GEMM prints a bandwidth line:\n%s", out)
	}
}
