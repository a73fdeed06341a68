package main

import (
	"strings"
	"testing"
)

// TestServe_horizon: times beyond serve.MaxTime (1e8 s) are usage
// errors naming the flag; they printed "requests 10 over +Inf s", NaN
// queue times, TTFTs of 0 and +Inf joules, and --format json failed
// with "json: unsupported value: +Inf".
func TestServe_horizon(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "128", "--output", "8", "--requests", "10"}
	for _, tt := range []struct {
		args []string
		flag string
	}{
		{[]string{"--rate", "1e-308"}, "--rate"},
		{[]string{"--users", "2", "--think", "1e300s"}, "--think"},
		{[]string{"--rate", "5", "--step-overhead", "1e300s"}, "--step-overhead"},
		{[]string{"--rate", "5", "--request-overhead", "1e300s"}, "--request-overhead"},
	} {
		_, stderr, code := perfsim(t, append(base, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.flag) {
			t.Errorf("%v: exit %d, want 2 naming %s: %s", tt.args, code, tt.flag, stderr)
		}
	}
	_, stderr, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "1e-300", "--ttft-p99", "1s", "--tp", "1", "--pp", "1", "--dtypes", "bf16", "--max-seqs", "0", "--requests", "20")
	if code != 2 || !strings.Contains(stderr, "--rate") {
		t.Errorf("plan serve --rate 1e-300: exit %d, want 2 naming --rate: %s", code, stderr)
	}
}

// TestPlanServe_countFlags: each count flag below 1 is named alone; one
// message had blamed "--requests, --max-gpus, --dp" for any of them.
func TestPlanServe_countFlags(t *testing.T) {
	base := []string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--ttft-p99", "1s"}
	for _, flag := range []string{"--requests", "--max-gpus"} {
		_, stderr, code := perfsim(t, append(base, flag, "0")...)
		if code != 2 || !strings.Contains(stderr, flag+": must be at least 1, got 0") {
			t.Errorf("%s 0: exit %d: %s", flag, code, stderr)
		}
		for _, other := range []string{"--requests", "--max-gpus", "--dp"} {
			if other != flag && strings.Contains(stderr, other) {
				t.Errorf("%s 0: the error names %s too: %s", flag, other, stderr)
			}
		}
	}
}

// TestServe_lengthSD: a length distribution's SD beyond the largest
// length is a usage error naming --input; lognormal:100:1e308 had drawn
// -9223372036854775808 tokens for every request (exit 1).
func TestServe_lengthSD(t *testing.T) {
	for _, in := range []string{"lognormal:100:1e308", "normal:100:1e308"} {
		_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--requests", "20", "--input", in)
		if code != 2 || !strings.Contains(stderr, "--input") || strings.Contains(stderr, "-9223372036854775808") {
			t.Errorf("--input %s: exit %d: %s", in, code, stderr)
		}
	}
}

// TestServe_traceNotRegular: --trace and --input file: take regular
// files of at most serve.MaxTraceSize: /dev/zero is refused at once,
// naming the flag (it had been read without end).
func TestServe_traceNotRegular(t *testing.T) {
	for _, args := range [][]string{{"--trace", "/dev/zero"}, {"--rate", "5", "--requests", "10", "--input", "file:/dev/zero"}} {
		_, stderr, code := perfsim(t, append([]string{"serve", "--hw", "h100", "--model", "llama3-8b"}, args...)...)
		if code != 2 || !strings.Contains(stderr, args[len(args)-2]) || !strings.Contains(stderr, "character device") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestPlanServe_dtypeFallbackWarned: a searched data type the device has
// no peak for is warned about, as simulate and serve warn (plan serve
// ranked "tp1 pp1 fp4" on an H100 without a word).
func TestPlanServe_dtypeFallbackWarned(t *testing.T) {
	_, stderr, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--ttft-p99", "1s", "--requests", "50", "--tp", "1", "--pp", "1", "--dtypes", "bf16,fp4", "--max-seqs", "0")
	if code != 0 || !strings.Contains(stderr, "warning: H100 SXM has no fp4 peak") {
		t.Errorf("exit %d, no fp4 warning: %s", code, stderr)
	}
	if strings.Count(stderr, "no fp4 peak") != 1 {
		t.Errorf("the warning is not given once: %s", stderr)
	}
}

// TestSweep_warnings: what simulate warns about (a data type emulated at
// another's rate, lengths beyond the trained context) a sweep says once
// on stderr; its table and CSV had said nothing (only the JSON rows carry
// a warnings key).
func TestSweep_warnings(t *testing.T) {
	_, stderr, code := perfsim(t, "sweep", "--hw", "a100", "--model", "llama3-8b", "--dtype", "fp8", "--batch", "1,2,4", "--format", "csv")
	if code != 0 || strings.Count(stderr, "warning: A100 80GB SXM has no fp8 peak") != 1 {
		t.Errorf("exit %d, want the fp8 warning once: %s", code, stderr)
	}
}

// TestPlot_warnings: the plots built on a sweep say its warnings once, as
// sweep does (plot sweep --hw a100 --dtype fp8 drew fp8 at the fp16 rate
// without a word).
func TestPlot_warnings(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{"sweep", "breakdown", "roofline", "energy"} {
		_, stderr, code := perfsim(t, "plot", c, "--hw", "a100", "--model", "llama3-8b", "--dtype", "fp8", "-o", dir+"/"+c+".svg")
		if code != 0 || strings.Count(stderr, "warning: A100 80GB SXM has no fp8 peak") != 1 {
			t.Errorf("plot %s: exit %d, want the fp8 warning once: %s", c, code, stderr)
		}
	}
}

// TestServe_routerOneReplica: --router with a single replica would be
// ignored, and is refused (issue 17 item 11's rule); with --dp 2 it runs.
func TestServe_routerOneReplica(t *testing.T) {
	base := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--requests", "20", "--router", "least-outstanding"}
	if _, stderr, code := perfsim(t, base...); code != 2 || !strings.Contains(stderr, "--router") {
		t.Errorf("one replica: exit %d: %s", code, stderr)
	}
	if _, stderr, code := perfsim(t, append(base, "--dp", "2")...); code != 0 {
		t.Errorf("--dp 2: exit %d: %s", code, stderr)
	}
}

// TestServe_closedLoopHorizon: a closed loop's think time over the
// requests each user sends is bounded by serve.MaxTime like an open
// loop's arrivals: --users 1 --think 1e8s --requests 100000 ran to
// 1e13 s, where TTFTs came out in steps of 2^-7 s.
func TestServe_closedLoopHorizon(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--users", "1", "--think", "1e8s", "--requests", "100000", "--input", "128", "--output", "8")
	if code != 2 || !strings.Contains(stderr, "--think") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestServe_disaggPoolFlags: a pool's own layout flag is named when it is
// at fault, for both pools at once (--prefill-tp 3 was blamed on --tp,
// --decode-pp 64 on --pp, and the decode pool was not checked after a bad
// prefill pool).
func TestServe_disaggPoolFlags(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--requests", "30", "--disagg", "1P1D", "--prefill-tp", "3", "--decode-pp", "64")
	for _, w := range []string{"--prefill-tp: tensor parallelism 3", "--decode-pp: 64 pipeline stages"} {
		if code != 2 || !strings.Contains(stderr, w) {
			t.Errorf("exit %d, %q not in: %s", code, w, stderr)
		}
	}
	// Without the pool's own flag, the shared one is at fault.
	_, stderr, code = perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--requests", "30", "--disagg", "1P1D", "--tp", "3")
	if code != 2 || !strings.Contains(stderr, "--tp: tensor parallelism 3") {
		t.Errorf("--tp 3: exit %d: %s", code, stderr)
	}
}
