package main

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
)

// tpotWith returns simulate's TPOT and hardware fields for llama3-8b at
// batch 1 on an H100 whose bandwidth is bw (a --set what-if).
func tpotWith(t *testing.T, bw string) (float64, simJSON) {
	t.Helper()
	out, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--set", "memory.bandwidth="+bw, "--model", "llama3-8b",
		"--batch", "1", "--input", "512", "--output", "64", "--format", "json")
	if code != 0 {
		t.Fatalf("bandwidth %s: exit %d: %s", bw, code, stderr)
	}
	var j simJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	return *j.TPOT, j
}

// TestWhatIf_doubleBandwidth: a memory-bound decode step on an H100 with
// twice the bandwidth takes its fixed costs plus its bandwidth-bound part
// halved. The two parts are measured on what-if devices at half and 1.5×
// the H100's bandwidth, where the step is T(x) = F + B/x (x the
// bandwidth as a multiple of 3.35 TB/s): B = (T(½) − T(1.5))/(2 − ⅔),
// F = T(½) − 2B. F is what does not move with bandwidth (kernel
// launches, per-CTA costs); B is the bytes at the attainable bandwidth.
// At 2× the step must be F + B/2. (The H100's own bandwidth is no
// what-if: it prices the H100 as calibrated, residual tables included,
// where every what-if of the bandwidth carries the calibration.) (At
// 1000× the step is 1.70 ms, not F: the GEMVs' K-step latency, hidden
// under the memory traffic at real bandwidths by the soft maximum, shows
// once the traffic is gone.)
func TestWhatIf_doubleBandwidth(t *testing.T) {
	half, _ := tpotWith(t, "1.675TB/s")
	t15, _ := tpotWith(t, "5.025TB/s")
	t2, j := tpotWith(t, "6.7TB/s")
	b := (half - t15) / (2 - 1/1.5)
	fixed := half - 2*b
	want := fixed + b/2
	t.Logf("decode step = fixed costs %.4g ms + bandwidth-bound part %.4g ms at 3.35 TB/s; at 6.7 TB/s %.4g ms, fixed + half the bandwidth part %.4g ms (%+.2f%%)",
		fixed*1e3, b*1e3, t2*1e3, want*1e3, 100*(t2/want-1))
	if b < 2*fixed || fixed <= 0 {
		t.Errorf("the step is not memory-bound: bandwidth part %.4g ms, fixed %.4g ms", b*1e3, fixed*1e3)
	}
	if math.Abs(t2/want-1) > 0.03 {
		t.Errorf("at 2× bandwidth: %.4g ms, want fixed + half the bandwidth part, %.4g ms (within 3%%)", t2*1e3, want*1e3)
	}
	if !strings.Contains(j.Hardware, "H100 SXM what-if") || !strings.Contains(j.Calibration, "transferred from H100 SXM") {
		t.Errorf("the output does not name the base device: hardware %q, calibration %q", j.Hardware, j.Calibration)
	}
}

// TestWhatIf_badSet: --set errors are usage errors (exit 2) that name
// the key and what was expected, every problem at once.
func TestWhatIf_badSet(t *testing.T) {
	_, stderr, code := perfsim(t, "kernel", "gemm", "--hw", "h100", "--m", "8", "--n", "8", "--k", "8",
		"--set", "memory.speed=1TB/s", "--set", "memory.bandwidth=8", "--set", "peak.matrix.fp8")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	for _, want := range []string{`unknown key "memory.speed"`, `"8" is not a bandwidth: missing unit`, `--set "peak.matrix.fp8": want key=value`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	_, stderr, code = perfsim(t, "simulate", "--hw", "h999", "--set", "memory.bandwidth=8TB/s", "--model", "llama3-8b")
	if code != 2 || !strings.Contains(stderr, "h999") {
		t.Errorf("unknown base device: exit %d: %s", code, stderr)
	}
}

// TestSensitivityCmd: the report names the device and its calibration,
// has a row per knob, and bad flags are usage errors.
func TestSensitivityCmd(t *testing.T) {
	out, stderr, code := perfsim(t, "sensitivity", "--hw", "h100", "--set", "memory.bandwidth=8TB/s", "--model", "llama3-8b", "--batch", "4", "--input", "512", "--output", "32")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"H100 SXM what-if (memory.bandwidth=8TB/s)", "transferred from H100 SXM", "memory bandwidth", "matrix peak", "memory capacity", "link bandwidth", "throughput at SLO"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, args := range [][]string{
		{"sensitivity", "--hw", "h100"},
		{"sensitivity", "--hw", "h100", "--model", "llama3-8b", "--step", "0"},
		{"sensitivity", "--hw", "h100", "--model", "llama3-8b", "--slo-tpot", "50"},
		{"sensitivity", "--hw", "h100", "--model", "llama3-8b", "--set", "memory.bandwidth=8"},
	} {
		if _, stderr, code := perfsim(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// TestWhatIf_serveSweepPlan: --set reaches serve, sweep and plan serve.
// Twice an H100's bandwidth makes serving's memory-bound decode faster
// (p50 TPOT) and sweep's TPOT too; both outputs name the what-if device
// and its base; plan serve accepts it; a bad key is a usage error naming
// the flag in each.
func TestWhatIf_serveSweepPlan(t *testing.T) {
	serveTPOT := func(sets ...string) (float64, string) {
		args := []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "512", "--output", "64", "--requests", "100", "--rate", "2", "--format", "json"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		out, stderr, code := perfsim(t, args...)
		if code != 0 {
			t.Fatalf("serve %v: exit %d: %s", sets, code, stderr)
		}
		var j struct {
			Hardware, Calibration string
			TPOT                  struct{ P50 float64 } `json:"tpot_s"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		return j.TPOT.P50, j.Hardware + " | " + j.Calibration
	}
	base, _ := serveTPOT()
	fast, name := serveTPOT("memory.bandwidth=6.7TB/s")
	if !(fast < 0.75*base) {
		t.Errorf("serve: p50 TPOT %.4g ms at 6.7 TB/s, %.4g ms at 3.35 TB/s: want a memory-bound decode clearly faster", fast*1e3, base*1e3)
	}
	if !strings.Contains(name, "H100 SXM what-if (memory.bandwidth=6.7TB/s)") || !strings.Contains(name, "transferred from H100 SXM") {
		t.Errorf("serve does not name the what-if device and its base: %q", name)
	}
	out, stderr, code := perfsim(t, "sweep", "--hw", "h100,a100", "--set", "memory.bandwidth=8TB/s", "--model", "llama3-8b", "--batch", "1", "--format", "csv")
	if code != 0 || strings.Count(out, "what-if (memory.bandwidth=8TB/s)") != 2 {
		t.Errorf("sweep --set: exit %d, want both devices changed:\n%s%s", code, out, stderr)
	}
	_, stderr, code = perfsim(t, "plan", "serve", "--hw", "h100", "--set", "memory.bandwidth=6.7TB/s", "--model", "llama3-8b", "--rate", "5",
		"--ttft-p99", "1s", "--tpot-p99", "50ms", "--input", "512", "--output", "64", "--requests", "100", "--tp", "1", "--pp", "1", "--dtypes", "bf16")
	if code != 0 {
		t.Errorf("plan serve --set: exit %d: %s", code, stderr)
	}
	for _, cmd := range [][]string{
		{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "512", "--output", "64", "--requests", "10", "--rate", "2"},
		{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "1"},
		{"plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "5", "--ttft-p99", "1s", "--tpot-p99", "50ms"},
	} {
		_, stderr, code := perfsim(t, append(cmd, "--set", "memory.speed=1TB/s")...)
		if code != 2 || !strings.Contains(stderr, "--set") || !strings.Contains(stderr, "memory.speed") {
			t.Errorf("%s --set memory.speed: exit %d, want 2 and a message naming the flag and the key:\n%s", cmd[0], code, stderr)
		}
	}
}

// TestServe_hardwareFile: serve runs on a hardware file (it re-resolved the
// device by its name for the energy figures, which a file's device is not
// in the catalog by).
func TestServe_hardwareFile(t *testing.T) {
	_, stderr, code := perfsim(t, "serve", "--hw", "testdata/hardware-user.toml", "--model", "llama3-8b", "--input", "512", "--output", "64", "--requests", "20", "--rate", "2")
	if code != 0 {
		t.Errorf("serve --hw testdata/hardware-user.toml: exit %d: %s", code, stderr)
	}
}

// TestSensitivityCmd_base: every row is relative to the device as
// calibrated, which is what simulate prints for it. The rows that change
// kernels (bandwidth, peak) carry the calibration to them with the
// H100's residual tables, so their base, the device priced that way with
// nothing changed, is the calibrated one, and the report gives one base
// and unmarked rows. It had given two, the carried one without the
// residual tables ("TTFT 359 ms, TPOT 7.063 ms", where simulate gives
// 362.6 ms and 7.274 ms), and marked each row by its base; and before
// that one, the carried one, for every row. A device that is not
// calibrated has one base.
func TestSensitivityCmd_base(t *testing.T) {
	out, stderr, code := perfsim(t, "sensitivity", "--hw", "h100", "--model", "llama3-8b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sim, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "8")
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	var ttft, tpot string
	for _, l := range strings.Split(sim, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "TTFT" {
			ttft = "TTFT " + f[1] + " " + f[2]
		} else if len(f) >= 3 && f[0] == "TPOT" {
			tpot = "TPOT " + f[1] + " " + f[2]
		}
	}
	if !strings.Contains(out, "\nbase: "+ttft+", "+tpot+",") || strings.Contains(out, "base with the efficiencies carried") || strings.Contains(out, "~ memory bandwidth") {
		t.Errorf("want one base, simulate's %s, %s, and unmarked rows:\n%s", ttft, tpot, out)
	}
	out, stderr, code = perfsim(t, "sensitivity", "--hw", "h100-pcie", "--model", "llama3-8b", "--batch", "2", "--input", "256", "--output", "16")
	if code != 0 {
		t.Fatalf("h100-pcie: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "\nbase: TTFT ") || strings.Contains(out, "base as calibrated") || strings.Contains(out, "= memory capacity") {
		t.Errorf("a device that is not calibrated: want one base and unmarked rows:\n%s", out)
	}
}

// TestSensitivityCmd_decoderOnly: sensitivity's rows are a decoder's
// TTFT, TPOT and tokens/s; a CNN, a ViT or an encoder is a usage error
// naming --model (resnet50 had printed "batch 8, 2048 tokens in, 128 out
// ... TPOT 0 s, throughput at TPOT ≤ 50 ms: 0 tokens/s").
func TestSensitivityCmd_decoderOnly(t *testing.T) {
	for _, m := range []string{"resnet50", "vit-b16", "bert-large"} {
		out, stderr, code := perfsim(t, "sensitivity", "--hw", "h100", "--model", m)
		if code != 2 || !strings.Contains(stderr, "--model: "+m+" is not a decoder") || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q", m, code, stderr, out)
		}
	}
}

// TestSensitivityCmd_doesNotFit: a scenario whose batch does not fit the
// device says so under its base line, and a change from nothing is not
// printed as +0.0%: Llama 3 70B in bf16 on one H100 (140 GB of weights)
// had printed "base: TTFT 3.235 s, TPOT 53.53 ms, max batch 0, ...
// 0 tokens/s (batch 0)" and "+0.0%" for every max batch and throughput,
// as if the run were real and nothing moved it. The help no longer
// speaks of two bases (one has been gone since every row came to be
// relative to the device as given).
func TestSensitivityCmd_doesNotFit(t *testing.T) {
	out, stderr, code := perfsim(t, "sensitivity", "--hw", "h100", "--model", "llama3-70b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^base: .*\nDOES NOT FIT: batch 8 is [0-9.]+ GiB short`).MatchString(out) {
		t.Errorf("want the base line followed by one saying batch 8 does not fit:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || !(strings.HasPrefix(l, "memory ") || strings.HasPrefix(l, "matrix ") || strings.HasPrefix(l, "link ")) {
			continue
		}
		if n := len(f); f[n-1] == "+0.0%" || f[n-2] == "+0.0%" {
			t.Errorf("row %q: a change from a max batch and a throughput of 0 printed as +0.0%%", l)
		}
	}
	// A batch that fits says nothing of it; a change from 0 to a batch
	// that fits names both.
	out, _, _ = perfsim(t, "sensitivity", "--hw", "h100", "--model", "llama3-8b")
	if strings.Contains(out, "DOES NOT FIT") {
		t.Errorf("llama3-8b at batch 8 fits an H100:\n%s", out)
	}
	help, _, _ := perfsim(t, "help", "sensitivity")
	if strings.Contains(help, "relative to the device priced that way") {
		t.Errorf("help speaks of a second base:\n%s", help)
	}
}
