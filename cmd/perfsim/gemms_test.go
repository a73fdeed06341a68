package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/internal/csvtest"
)

func TestGemmsGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"gemms-gpt3-175b.table", []string{"gemms", "--model", "gpt3-175b", "--seq", "2048", "--batch", "1", "--phase", "prefill"}},
		{"gemms-gpt3-175b.csv", []string{"gemms", "--model", "gpt3-175b", "--seq", "2048", "--batch", "1", "--phase", "prefill", "--format", "csv"}},
		{"gemms-gpt3-175b.json", []string{"gemms", "--model", "gpt3-175b", "--seq", "2048", "--batch", "1", "--phase", "prefill", "--format", "json"}},
		{"gemms-llama3-70b-decode.csv", []string{"gemms", "--model", "llama3-70b", "--phase", "decode", "--batch", "8", "--context", "4096", "--format", "csv", "--embedding", "gather", "--fused-qkv"}},
		{"gemms-mixtral-train-bwd-all.table", []string{"gemms", "--model", "mixtral-8x7b", "--phase", "train-bwd", "--batch", "2", "--seq", "1024", "--tp", "2", "--all"}},
		{"gemms-resnet50-all.csv", []string{"gemms", "--model", "resnet50", "--all", "--format", "csv"}},
		{"gemms-qwen3-next-decode-all.table", []string{"gemms", "--model", "qwen3-next-80b-a3b", "--phase", "decode", "--batch", "8", "--context", "4096", "--tp", "2", "--all"}},
		{"gemms-hf-qwen2.table", []string{"gemms", "--model", filepath.Join("..", "..", "workloads", "testdata", "hf", "qwen2-7b.json"), "--seq", "512", "--logits", "last"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := perfsim(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			golden(t, tt.name, stdout)
			again, _, _ := perfsim(t, tt.args...)
			if again != stdout {
				t.Error("output differs between two runs")
			}
		})
	}
}

// TestGemmsSeedTable runs perfsim gemms as issue 3 says and checks every
// row of seed 003's GPT-3 175B table (../shared/data/seed-gpt3-gemm-table.csv)
// and its total.
func TestGemmsSeedTable(t *testing.T) {
	scol, seed := csvtest.Read(t, filepath.Join("..", "..", "..", "shared", "data", "seed-gpt3-gemm-table.csv"), "op", "m", "k", "n", "per", "macs")
	stdout, stderr, code := perfsim(t, "gemms", "--model", "gpt3-175b", "--seq", "2048", "--batch", "1", "--phase", "prefill", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range out[0] {
		col[h] = i
	}
	rows := map[string][]string{}
	var total float64
	for _, r := range out[1:] {
		rows[r[col["description"]]] = r
		v, _ := strconv.ParseFloat(r[col["macs"]], 64)
		total += v
	}
	const layers, heads = 96, 96
	var seedTotal float64
	for _, s := range seed {
		name, per := s[scol["op"]], s[scol["per"]]
		want := map[string]string{"m": s[scol["m"]], "k": s[scol["k"]], "n": s[scol["n"]]}
		smacs, _ := strconv.ParseFloat(s[scol["macs"]], 64)
		desc := name
		if per == "head" || per == "all-heads" {
			desc += " (per head)"
		}
		if name == "X*WK=K" || name == "X*WV=V" {
			desc = name + " (per kv head)"
		}
		r, ok := rows[desc]
		if !ok {
			t.Errorf("no row %q in\n%s", desc, stdout)
			continue
		}
		each, _ := strconv.ParseFloat(r[col["macs_each"]], 64)
		count, _ := strconv.ParseFloat(r[col["count"]], 64)
		mult := 1.0
		switch per {
		case "all-heads":
			// the seed's Q·Kᵀ row multiplies all 96 heads at once (k = 12288);
			// perfsim lists it per head (k = 128) with count heads × layers.
			want["k"] = strconv.Itoa(128)
			each *= heads
			mult = layers
		case "head":
			mult = layers * heads
		case "layer":
			mult = layers
		}
		for _, k := range []string{"m", "k", "n"} {
			if r[col[k]] != want[k] {
				t.Errorf("%s: %s = %s, seed %s", name, k, r[col[k]], want[k])
			}
		}
		if math.Abs(each-smacs) > 5e-6*smacs {
			t.Errorf("%s: %g MACs per %s, seed %g", name, each, per, smacs)
		}
		if per != "all-heads" && count != mult {
			t.Errorf("%s: count %g, want %g", name, count, mult)
		}
		seedTotal += smacs * mult
	}
	if math.Abs(total-seedTotal) > 1e-5*seedTotal {
		t.Errorf("total %g MACs, seed %g", total, seedTotal)
	}
	// Parameters: 1.7461E+11 in the seed, which leaves out the LayerNorms.
	stdout, _, _ = perfsim(t, "gemms", "--model", "gpt3-175b", "--seq", "2048", "--format", "json")
	var rep struct {
		Parameters float64 `json:"parameters"`
		Norm       float64 `json:"norm_parameters"`
		TotalMACs  float64 `json:"total_macs"`
		TotalFLOPs float64 `json:"total_flops"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if got := strconv.FormatFloat(rep.Parameters-rep.Norm, 'E', 4, 64); got != "1.7461E+11" {
		t.Errorf("parameters less norms = %s, seed 1.7461E+11", got)
	}
	if rep.TotalFLOPs != 2*rep.TotalMACs || rep.TotalMACs != total {
		t.Errorf("json totals %g MACs %g FLOPs, csv %g MACs", rep.TotalMACs, rep.TotalFLOPs, total)
	}
}

func TestGemmsErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gemms"}, 2, "--model is required"},
		{[]string{"gemms", "--model", "nosuch"}, 2, "not in the catalog"},
		{[]string{"gemms", "--model", "gpt3-175b", "--phase", "sideways"}, 2, "unknown phase"},
		{[]string{"gemms", "--model", "gpt3-175b", "--batch", "0"}, 2, "--batch 0"},
		{[]string{"gemms", "--model", "gpt3-175b", "--format", "xml"}, 2, "unknown format"},
		{[]string{"gemms", "--model", "gpt3-175b", "--embedding", "lookup"}, 2, "--embedding"},
		// A --tp or --phase the model cannot take names the flag (exit 1
		// and "workloads: llama3-70b prefill: 128 does not divide ..." before).
		{[]string{"gemms", "--model", "llama3-70b", "--tp", "128"}, 2, "--tp: workloads: llama3-70b prefill: 128 does not divide heads (tp) 64"},
		{[]string{"gemms", "--model", "bert-large", "--phase", "decode"}, 2, "--phase: bert-large is an encoder: it has no decode phase"},
		{[]string{"gemms", "--model", "resnet50", "--phase", "decode"}, 2, "--phase: resnet50 is a cnn: it has no decode phase"},
		// A bad model file is bad input, exit 2 (it was 1).
		{[]string{"gemms", "--model", filepath.Join("..", "..", "workloads", "testdata", "bad", "transformer.toml")}, 2, "transformer.toml:6: kv_heads"},
		{[]string{"gemms", "--model", filepath.Join("..", "..", "workloads", "testdata", "hf", "t5.json")}, 2, "unsupported architecture \"T5ForConditionalGeneration\""},
		{[]string{"gemms", "--help"}, 0, "Usage: perfsim gemms"},
	}
	for _, tt := range tests {
		_, stderr, code := perfsim(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("perfsim %v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}

// TestGemms_flagsReviewed: every flag problem at once; --seq and
// --context on a model without a token sequence (a CNN) are refused, not
// ignored; a prefill's --context shows in the table's title. gemms had
// stopped at the first bad flag, printed resnet50's GEMMs for --seq 100
// as if it applied, and titled a prefill after 100 cached tokens "seq
// 2048" alone.
func TestGemms_flagsReviewed(t *testing.T) {
	_, stderr, code := perfsim(t, "gemms", "--model", "llama3-8b", "--phase", "sideways", "--batch", "0", "--seq", "-1", "--tp", "0")
	for _, want := range []string{"--phase", "--batch", "--seq", "--tp"} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("four bad flags: exit %d, %s not named: %s", code, want, stderr)
		}
	}
	for _, flag := range []string{"--seq", "--context"} {
		_, stderr, code := perfsim(t, "gemms", "--model", "resnet50", flag, "100")
		if code != 2 || !strings.Contains(stderr, flag) {
			t.Errorf("resnet50 %s 100: exit %d: %s", flag, code, stderr)
		}
	}
	out, stderr, code := perfsim(t, "gemms", "--model", "llama3-8b", "--context", "100")
	if code != 0 || !strings.HasPrefix(out, "llama3-8b, prefill, batch 1, seq 2048, context 100;") {
		t.Errorf("prefill after 100 tokens: exit %d, title %q: %s", code, strings.SplitN(out, "\n", 2)[0], stderr)
	}
}

// TestGemms_perLayerOfSome: a GEMM in some of the layers is per layer, as
// one in all of them is; DeepSeek-V3's 58 MoE and 3 dense layers of 61
// had been said per "model".
func TestGemms_perLayerOfSome(t *testing.T) {
	out, _, code := perfsim(t, "gemms", "--model", "deepseek-v3", "--seq", "128", "--format", "csv")
	if code != 0 {
		t.Fatal("gemms failed")
	}
	for _, want := range []string{"ffn,expert.gate_up,", "ffn,ffn.gate,", "ffn,moe.router,"} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, want) {
				found = true
				if f := strings.Split(l, ","); f[8] != "layer" {
					t.Errorf("%s per %q, want layer", f[1], f[8])
				}
			}
		}
		if !found {
			t.Errorf("no %s row", want)
		}
	}
}

// TestGemms_pastContext: a --seq or --context past the model's trained
// context is warned about, as simulate warns; gemms had decomposed
// llama3-8b at a 100000-token context without a word. The defaults,
// capped at the context, give none.
func TestGemms_pastContext(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "llama3-8b", "--phase", "decode", "--context", "100000"}, "warning: a context of 100001 tokens exceeds llama3-8b's trained context of 8192"},
		{[]string{"--model", "gpt3-2.7b", "--seq", "4096"}, "warning: 4096 tokens exceed gpt3-2.7b's trained context of 2048"},
		{[]string{"--model", "gpt3-2.7b", "--phase", "decode"}, ""},
	} {
		_, stderr, code := perfsim(t, append([]string{"gemms"}, tt.args...)...)
		if code != 0 || (tt.want == "" && stderr != "") || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestGemms_ignoredFlags: --context on a training pass or an encoder and
// --logits on a decode step are refused: each had been taken and ignored
// (the context zeroed while the title said "context 100"); and a bad
// --model is reported beside bad flags.
func TestGemms_ignoredFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--model", "llama3-8b", "--phase", "train-fwd", "--context", "100"}, []string{"--context: a training pass (--phase train-fwd) attends within its sequence"}},
		{[]string{"--model", "bert-large", "--context", "100"}, []string{"--context: bert-large is an encoder, with no KV cache to set"}},
		{[]string{"--model", "llama3-8b", "--phase", "decode", "--logits", "last"}, []string{"--logits: only for a prefill"}},
		{[]string{"--model", "nope", "--batch", "0"}, []string{"--batch 0: must be positive", `--model: workloads: unknown model "nope"`}},
	} {
		_, stderr, code := perfsim(t, append([]string{"gemms"}, tt.args...)...)
		for _, w := range tt.want {
			if code != 2 || !strings.Contains(stderr, w) {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr, w)
			}
		}
	}
}
