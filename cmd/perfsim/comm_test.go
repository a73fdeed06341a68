package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSimulate_commType checks that --dtype fp8 prices the tensor-parallel
// all-reduces in bf16, as engines run them, that --comm overrides it, and
// that the scenario says so.
func TestSimulate_commType(t *testing.T) {
	base := []string{"simulate", "--hw", "h100", "--model", "llama3-70b", "--tp", "4", "--batch", "16", "--breakdown", "--format", "json"}
	allReduce := func(extra ...string) (bytes float64, comm string) {
		t.Helper()
		out, stderr, code := perfsim(t, append(append([]string{}, base...), extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var j struct {
			Scenario struct {
				Comm string `json:"comm"`
			} `json:"scenario"`
			Phases []struct {
				Name string `json:"name"`
				Ops  []struct {
					Name  string  `json:"name"`
					Count int     `json:"count"`
					Bytes float64 `json:"bytes"`
				} `json:"ops"`
			} `json:"phases"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		for _, o := range j.Phases[0].Ops {
			if o.Name == "attn.allreduce" {
				return o.Bytes / float64(o.Count), j.Scenario.Comm
			}
		}
		t.Fatalf("%v: no attn.allreduce in the prefill", extra)
		return 0, ""
	}
	bf16, c := allReduce("--dtype", "bf16")
	if c != "bf16" {
		t.Errorf("--dtype bf16: comm %q, want bf16", c)
	}
	for _, tc := range []struct {
		args  []string
		ratio float64 // all-reduce bytes over bf16's
		comm  string
	}{
		{[]string{"--dtype", "fp8"}, 1, "bf16"},
		{[]string{"--dtype", "int8"}, 1, "bf16"},
		{[]string{"--dtype", "fp8", "--comm", "fp8"}, 0.5, "fp8"},
		{[]string{"--dtype", "fp8", "--comm", "bf16"}, 1, "bf16"},
		{[]string{"--dtype", "fp32"}, 2, "fp32"},
		{[]string{"--dtype", "bf16", "--comm", "fp32"}, 2, "fp32"},
	} {
		got, comm := allReduce(tc.args...)
		if got != tc.ratio*bf16 || comm != tc.comm {
			t.Errorf("%v: all-reduce %g bytes in %s, want %g× bf16's %g in %s", tc.args, got, comm, tc.ratio, bf16, tc.comm)
		}
	}
	out, _, _ := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-70b", "--tp", "4", "--dtype", "fp8")
	if !strings.Contains(out, "KV cache fp8, collectives bf16") {
		t.Errorf("the scenario line does not say the collectives are bf16:\n%s", out)
	}
	out, _, _ = perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--dtype", "fp8")
	if strings.Contains(out, "collectives") {
		t.Errorf("one device has no collectives, but the scenario names their type:\n%s", out)
	}
}

// TestHelp_dtypeCoverage checks that the help says what --dtype covers.
func TestHelp_dtypeCoverage(t *testing.T) {
	for _, cmd := range []string{"simulate", "serve"} {
		_, help, _ := perfsim(t, cmd, "--help")
		for _, want := range []string{"GEMM inputs", "attention", "KV cache", "collectives stay in bf16", "--comm"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help does not say %q", cmd, want)
			}
		}
	}
}

// TestHelp_noContradictoryDefaults checks every command's help for a flag
// that states its default in words and then gets pflag's "(default X)"
// too, and for placeholder defaults such as "invalid".
func TestHelp_noContradictoryDefaults(t *testing.T) {
	twice := regexp.MustCompile(`\(default[^)]*\).*\(default`)
	cmds := [][]string{{"simulate"}, {"sweep"}, {"serve"}, {"maxmodel"}, {"gemms"}, {"kernel"}, {"hardware", "show"}, {"hardware", "list"},
		{"plan", "serve"}, {"plan", "train"}, {"mlperf"}, {"sensitivity"}, {"version"},
		{"plot", "roofline"}, {"plot", "sweep"}, {"plot", "memory"}, {"plot", "breakdown"}, {"plot", "gemms"}, {"plot", "energy"},
		{"calibrate", "fit"}, {"calibrate", "merge"}, {"calibrate", "measure"}}
	for _, c := range cmds {
		_, help, _ := perfsim(t, append(c, "--help")...)
		for _, line := range strings.Split(help, "\n") {
			if twice.MatchString(line) || strings.Contains(line, "(default invalid)") || strings.Contains(line, "(default )") {
				t.Errorf("%s --help: %s", strings.Join(c, " "), strings.TrimSpace(line))
			}
		}
	}
}

// TestReadmeHardwareFile_defaults runs the README's example hardware file
// (the H100's datasheet peaks, no efficiencies): it takes the calibrated
// H100's efficiencies as defaults, says so in every output, and its TTFT
// and TPOT come within 5% of the calibrated H100's (a perfect roofline
// gave a TTFT 25% below).
func TestReadmeHardwareFile_defaults(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "A hardware file in short:\n\n```toml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no example hardware file after \"A hardware file in short:\"")
	}
	file := filepath.Join(t.TempDir(), "my.toml")
	if err := os.WriteFile(file, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	times := func(hw string) (ttft, tpot float64, cal string) {
		out, stderr, code := perfsim(t, "simulate", "--hw", hw, "--model", "llama3-8b", "--format", "json")
		if code != 0 {
			t.Fatalf("--hw %s: exit %d: %s", hw, code, stderr)
		}
		var j struct {
			Calibration string  `json:"calibration"`
			TTFT        float64 `json:"ttft_s"`
			TPOT        float64 `json:"tpot_s"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		return j.TTFT, j.TPOT, j.Calibration
	}
	ttft, tpot, cal := times(file)
	href, hpot, _ := times("h100")
	t.Logf("README file: TTFT %.4g s, TPOT %.4g s; H100: %.4g s, %.4g s; %s", ttft, tpot, href, hpot, cal)
	if math.Abs(ttft/href-1) > 0.05 || math.Abs(tpot/hpot-1) > 0.05 {
		t.Errorf("README file: TTFT %.4g s, TPOT %.4g s; want within 5%% of the H100's %.4g s, %.4g s", ttft, tpot, href, hpot)
	}
	want := regexp.MustCompile(`^uncalibrated: datasheet peaks at \d+% efficiency; default efficiencies of H100 SXM`)
	if !want.MatchString(cal) {
		t.Errorf("calibration %q, want it to match %s", cal, want)
	}
	for _, args := range [][]string{
		{"simulate", "--hw", file, "--model", "llama3-8b"},
		{"simulate", "--hw", file, "--model", "llama3-8b", "--format", "csv"},
		{"hardware", "show", file},
		{"kernel", "gemm", "--hw", file, "--m", "4096", "--k", "4096", "--n", "4096"},
		{"sweep", "--hw", file, "--model", "llama3-8b", "--batch", "1,8"},
		{"sweep", "--hw", file, "--model", "llama3-8b", "--batch", "1,8", "--format", "json"},
	} {
		out, stderr, code := perfsim(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(out, "uncalibrated: datasheet peaks at") {
			t.Errorf("%v does not say the device is uncalibrated:\n%s", args[:2], out)
		}
	}
}
