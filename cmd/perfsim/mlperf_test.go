package main

import (
	"regexp"
	"strings"
	"testing"
)

func TestMLPerfGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"mlperf_h100.stdout", []string{"mlperf", "--system", "dgx-h100"}},
		{"mlperf_resnet50_json.stdout", []string{"mlperf", "--hw", "a100", "--gpus", "1", "--benchmark", "resnet50", "--queries", "5000", "--format", "json"}},
		{"mlperf_llama2_json.stdout", []string{"mlperf", "--hw", "h100", "--gpus", "8", "--benchmark", "llama2-70b", "--input", "llama2-70b=1024", "--format", "json"}},
		{"mlperf_training.stdout", []string{"mlperf", "--suite", "training", "--system", "dgx-h100"}},
		{"mlperf_training_json.stdout", []string{"mlperf", "--suite", "training", "--hw", "a100", "--gpus", "8", "--benchmark", "resnet", "--global-batch", "2048", "--format", "json"}},
		{"mlperf_bert_csv.stdout", []string{"mlperf", "--hw", "h100", "--gpus", "2", "--benchmark", "bert", "--scenario", "server", "--queries", "5000", "--format", "csv"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := perfsim(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, tt.name, out)
			if again, _, _ := perfsim(t, tt.args...); again != out {
				t.Error("a second run differs")
			}
		})
	}
}

// TestMLPerf_everyBenchmark: the suite prints every datacenter benchmark
// in both scenarios, each with a result or a note saying what it lacks.
func TestMLPerf_everyBenchmark(t *testing.T) {
	out, stderr, code := perfsim(t, "mlperf", "--hw", "h100", "--gpus", "1", "--queries", "2000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, b := range []string{"resnet50", "retinanet", "3d-unet-99", "bert-99", "gptj-99", "llama2-70b-99", "llama3.1-405b", "mixtral-8x7b", "stable-diffusion-xl", "dlrm-v2-99", "rgat"} {
		for _, sc := range []string{"Offline", "Server"} {
			found := false
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) >= 4 && f[0] == b && f[2] == sc {
					found = true
					if f[3] == "-" && !strings.Contains(line, "lacks") && !strings.Contains(line, "needs") && !strings.Contains(line, "Offline only") && !strings.Contains(line, "fit") {
						t.Errorf("%s %s: no result and no reason: %q", b, sc, line)
					}
				}
			}
			if !found {
				t.Errorf("no row for %s %s", b, sc)
			}
		}
	}
}

// TestMLPerf_llmRowsPriced: the LLM rows whose datasets' mean lengths
// are documented constants print a figure in both scenarios on
// dgx-h100 without --input; GPT-J, whose mean input is not, asks for
// --input alone (its output is LoadGen's 69 tokens).
func TestMLPerf_llmRowsPriced(t *testing.T) {
	for _, b := range []string{"llama2-70b-99", "llama3.1-405b", "mixtral-8x7b", "gptj-99"} {
		out, stderr, code := perfsim(t, "mlperf", "--system", "dgx-h100", "--benchmark", b)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", b, code, stderr)
		}
		rows := 0
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || f[0] != b {
				continue
			}
			rows++
			switch priced := f[4] == "tokens/s" && f[3] != "-"; {
			case b == "gptj-99" && (priced || !strings.Contains(line, "give --input gptj-99=TOKENS") || strings.Contains(line, "--output")):
				t.Errorf("gptj-99: want no figure and a request for the input length alone: %q", line)
			case b != "gptj-99" && (!priced || strings.Contains(line, "needs")):
				t.Errorf("%s: want a figure in tokens/s: %q", b, line)
			}
		}
		if rows != 2 {
			t.Errorf("%s: %d rows, want Offline and Server:\n%s", b, rows, out)
		}
	}
}

func TestMLPerf_badInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"mlperf", "--hw", "h100", "--benchmark", "resnet"}, []string{"--benchmark: unknown benchmark \"resnet\"", "resnet50, retinanet"}},
		{[]string{"mlperf", "--hw", "h100", "--scenario", "singlestream", "--gpus", "0"}, []string{"--scenario: unknown scenario", "want offline or server", "--gpus: want 1"}},
		{[]string{"mlperf", "--hw", "nosuch"}, []string{"nosuch"}},
		{[]string{"mlperf", "--system", "dgx-h10"}, []string{"--system: hardware: unknown system \"dgx-h10\" (did you mean \"dgx-h100\"?)"}},
		{[]string{"mlperf", "--system", "dgx-h100", "--hw", "h100"}, []string{"--system and --hw: give one"}},
		{[]string{"mlperf", "--suite", "train", "--hw", "h100"}, []string{"--suite: unknown suite \"train\" (want inference or training)"}},
		{[]string{"mlperf", "--suite", "training", "--hw", "h100", "--benchmark", "ssd"}, []string{"--benchmark: unknown training benchmark \"ssd\"", "resnet, bert, gpt3"}},
		{[]string{"mlperf", "--hw", "h100", "--input", "resnet50=10", "--input", "llama9=5", "--output", "mixtral-8x7b=0"}, []string{"--input: resnet50 is not an LLM benchmark", "--input: unknown benchmark \"llama9\"", "--output: mixtral-8x7b=0: want 1 to"}},
	} {
		_, stderr, code := perfsim(t, tt.args...)
		if code == 0 {
			t.Errorf("%v: exit 0", tt.args)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, stderr, w)
			}
		}
	}
}

func TestSig4(t *testing.T) {
	for v, want := range map[float64]string{494812.3: "494,800", 22.7512: "22.75", 1234.56: "1,235", 0.012345: "0.01235", 5681.9: "5,682", 123456789: "123,500,000"} {
		if got := sig4(v); got != want {
			t.Errorf("sig4(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestMLPerfTraining_numberStyle: the convergence column writes epochs
// as it writes samples (thousands grouped, four significant digits, no
// trailing zeros): it had mixed "2127 epochs" with "2,414,000 samples".
func TestMLPerfTraining_numberStyle(t *testing.T) {
	out, errOut, code := perfsim(t, "mlperf", "--suite", "training", "--system", "dgx-h100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if m := regexp.MustCompile(`(^|[^\d.,])\d{4,}(\.\d+)? (epochs|samples)`).FindString(out); m != "" {
		t.Errorf("%q: a count of four or more digits without grouping", m)
	}
	for _, want := range []string{"2,127 epochs", " 4 epochs", "35.15 epochs", "2,414,000 samples"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestMLPerfTraining_evalNotPriced: a benchmark whose evaluations are
// counted but not priced (3D U-Net: its cases' window counts are not
// published) shows no evaluation time, not 0 s, in the table and the
// CSV; one whose evaluations are priced shows theirs.
func TestMLPerfTraining_evalNotPriced(t *testing.T) {
	out, stderr, code := perfsim(t, "mlperf", "--suite", "training", "--system", "dgx-h100", "--benchmark", "unet3d")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	row := regexp.MustCompile(`(?m)^unet3d .*$`).FindString(out)
	if row == "" || regexp.MustCompile(`samples/s\s+0 s\s`).MatchString(row) || !regexp.MustCompile(`samples/s\s+-\s`).MatchString(row) {
		t.Errorf("unet3d's row: %q: want '-' for its evaluations, counted but not priced", row)
	}
	csv, stderr, code := perfsim(t, "mlperf", "--suite", "training", "--system", "dgx-h100", "--benchmark", "unet3d", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	head, vals := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	for i, h := range head {
		if h == "eval_time_s" && vals[i] != "" {
			t.Errorf("unet3d's eval_time_s %q: want empty (not priced)", vals[i])
		}
	}
	out, _, _ = perfsim(t, "mlperf", "--suite", "training", "--system", "dgx-h100", "--benchmark", "resnet")
	if row := regexp.MustCompile(`(?m)^resnet .*$`).FindString(out); !regexp.MustCompile(`samples/s\s+[0-9.]+ s\s`).MatchString(row) {
		t.Errorf("resnet's row: %q: want its evaluation time", row)
	}
}
