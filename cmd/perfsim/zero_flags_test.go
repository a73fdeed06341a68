package main

import (
	"strings"
	"testing"
)

// TestServe_explicitZero: an explicitly given --kv-tokens 0 or
// --scheduler-steps 0 is a usage error naming the flag, not a silent
// "the default" (the default is what leaving the flag out means).
func TestServe_explicitZero(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--requests", "20"}
	for _, flag := range []string{"--kv-tokens", "--scheduler-steps", "--max-seq-len"} {
		_, errOut, code := perfsim(t, append(append([]string{}, base...), flag, "0")...)
		if code != 2 || !strings.Contains(errOut, flag) {
			t.Errorf("%s 0: exit %d, stderr %q; want exit 2 naming %s", flag, code, errOut, flag)
		}
	}
}

// TestLists_emptyOrRepeated: an empty item or a repeated value in a
// comma list flag is a usage error naming the flag (and the value),
// never dropped silently.
func TestLists_emptyOrRepeated(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"h100,,a100", "empty item"},
		{"h100,a100,", "empty item"},
		{"h100, ,a100", "empty item"},
		{"h100,a100,h100", "h100 is in the list twice"},
	} {
		_, err := parseNameList("hw", tt.in)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--hw") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseNameList(%q): %v; want a usage error naming --hw and %q", tt.in, err, tt.want)
		}
	}
	if _, err := parseCounts("scaling", "8,16,8"); err == nil || !strings.Contains(err.Error(), "8 is in the list twice") {
		t.Errorf("parseCounts(8,16,8): %v; want one naming the repeated 8", err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--hw", "h100,,a100", "--model", "llama3-8b"}, `--hw "h100,,a100": empty item 2`},
		{[]string{"sweep", "--hw", "h100", "--model", "llama3-8b,llama3-8b"}, "llama3-8b is in the list twice"},
		{[]string{"plot", "sweep", "--hw", "h100,a100,h100", "--model", "llama3-8b", "-o", "x.svg"}, "h100 is in the list twice"},
		{[]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--ttft-p99", "1s", "--tp", "1,1,1"}, "--tp"},
		{[]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--ttft-p99", "1s", "--pp", "1,2,1"}, "--pp"},
		{[]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--ttft-p99", "1s", "--max-seqs", "0,64,0"}, "--max-seqs"},
		{[]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--ttft-p99", "1s", "--dtypes", "bf16,BF16"}, "--dtypes"},
		{[]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--ttft-p99", "1s", "--dtypes", "bf16,,fp8"}, "--dtypes"},
	} {
		_, errOut, code := perfsim(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s", tt.args, code, errOut, tt.want)
		}
	}
}

// TestCalibrate_listItems: calibrate's --measurements and --kernels
// refuse an empty or repeated item, naming the flag.
func TestCalibrate_listItems(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "validate", "--hw", "h100", "--measurements", "a.csv,,b.csv"}, "--measurements"},
		{[]string{"calibrate", "validate", "--hw", "h100", "--measurements", "a.csv,a.csv"}, "--measurements"},
		{[]string{"calibrate", "measure", "--kernels", "gemm,gemm", "-o", t.TempDir() + "/m.csv"}, "--kernels"},
	} {
		_, errOut, code := perfsim(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "twice") && !strings.Contains(errOut, "empty item") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s", tt.args, code, errOut, tt.want)
		}
	}
}

// TestSensitivity_bounds: --step below 0.1% printed "+0%" rows and an
// SLO below a nanosecond printed "1e-288 ps"; both are usage errors
// naming the flag, as are SLOs under 1 ns in serve and plan serve.
func TestSensitivity_bounds(t *testing.T) {
	sens := []string{"sensitivity", "--hw", "h100", "--model", "llama3-8b"}
	planArgs := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1"}
	serveArgs := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1", "--requests", "20"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{append(append([]string{}, sens...), "--step", "1e-300"), "--step"},
		{append(append([]string{}, sens...), "--step", "0.0009"), "--step"},
		{append(append([]string{}, sens...), "--slo-tpot", "1e-300s"), "--slo-tpot 1e-300 s: want"},
		{append(append([]string{}, planArgs...), "--ttft-p99", "1e-300s"), "--ttft-p99"},
		{append(append([]string{}, planArgs...), "--ttft-p99", "1s", "--tpot-p99", "0.5ns"), "--tpot-p99"},
		{append(append([]string{}, serveArgs...), "--ttft-slo", "1e-300s"), "--ttft-slo"},
		{append(append([]string{}, serveArgs...), "--tpot-slo", "0s"), "--tpot-slo"},
	} {
		_, errOut, code := perfsim(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s", tt.args[len(tt.args)-2:], code, errOut, tt.want)
		}
	}
	if _, errOut, code := perfsim(t, append(append([]string{}, sens...), "--step", "0.001", "--slo-tpot", "1ns")...); code == 2 {
		t.Errorf("--step 0.001 --slo-tpot 1ns (the bounds): %s", errOut)
	}
}

// TestSimulate_sampleUnit: a model without decode prints its throughput
// in its own unit: images/s for an image model, samples/s for DLRM
// (user-item pairs), R-GAT (seed nodes) and BERT (sequences), which
// printed none.
func TestSimulate_sampleUnit(t *testing.T) {
	for _, tt := range []struct {
		model, want, not string
	}{
		{"resnet50", "images/s", "samples/s"},
		{"dlrm-dcnv2", "samples/s", "images/s"},
		{"rgat", "samples/s", "images/s"},
		{"bert-large", "samples/s", "images/s"},
	} {
		out, errOut, code := perfsim(t, "simulate", "--hw", "h100", "--model", tt.model)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.model, code, errOut)
		}
		if !strings.Contains(out, "\n"+tt.want) || strings.Contains(out, tt.not) {
			t.Errorf("%s:\n%s\nwant a %s row and no %s", tt.model, out, tt.want, tt.not)
		}
	}
}
