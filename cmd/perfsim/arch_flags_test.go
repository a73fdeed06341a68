package main

import (
	"strings"
	"testing"
)

// TestSimulate_archFlags: an inference flag the model's architecture has
// no use for is refused (a CNN's --input, --output, --kv,
// --max-num-tokens, --attention; an encoder's --output, --kv,
// --max-num-tokens), and an encoder's scenario says its tokens and warns
// beyond its trained context. They had been ignored: resnet50 --attention
// fa2 even printed "FlashAttention-2", and bert-large ran 2048 tokens
// (its context is 512) without saying how many.
func TestSimulate_archFlags(t *testing.T) {
	for _, tt := range []struct {
		model string
		flags []string
	}{
		{"resnet50", []string{"--input", "100", "--output", "5", "--kv", "fp8", "--max-num-tokens", "100", "--attention", "fa2"}},
		{"vit-b16", []string{"--input", "100", "--output", "5"}},
		{"bert-large", []string{"--output", "5", "--kv", "fp8"}},
	} {
		_, stderr, code := perfsim(t, append([]string{"simulate", "--hw", "h100", "--model", tt.model}, tt.flags...)...)
		for i := 0; i < len(tt.flags); i += 2 {
			if code != 2 || !strings.Contains(stderr, tt.flags[i]+":") {
				t.Errorf("%s %v: exit %d, %s not named: %s", tt.model, tt.flags, code, tt.flags[i], stderr)
			}
		}
	}
	out, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "bert-large", "--input", "1024")
	if code != 0 || !strings.Contains(out, "1024 tokens") || !strings.Contains(stderr, "trained context of 512") {
		t.Errorf("bert-large --input 1024: exit %d:\n%s%s", code, out, stderr)
	}
}

// TestSimulate_cnnOnlyFlags: --amp and --exec fused change only a CNN
// (fused: its inference); elsewhere they were ignored (llama3-8b with
// --weights fp32 --amp printed the same 473.8 ms TTFT as without).
func TestSimulate_cnnOnlyFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--model", "llama3-8b", "--weights", "fp32", "--act", "bf16", "--amp"},
		{"--model", "llama3-8b", "--exec", "fused"},
		{"--model", "resnet50", "--mode", "training", "--batch", "32", "--exec", "fused"},
	} {
		_, stderr, code := perfsim(t, append([]string{"simulate", "--hw", "h100"}, args...)...)
		flag := args[len(args)-1]
		if flag == "fused" {
			flag = "--exec"
		}
		if code != 2 || !strings.Contains(stderr, flag+":") {
			t.Errorf("%v: exit %d, %s not named: %s", args, code, flag, stderr)
		}
	}
	if _, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "resnet50", "--exec", "fused", "--weights", "fp32", "--act", "bf16", "--amp"); code != 0 {
		t.Errorf("resnet50 --exec fused --amp: exit %d: %s", code, stderr)
	}
}

// TestSimulate_archFlagsIgnored: --seq in training reads nothing for a
// CNN (its images have their size) or a ViT (its image's tokens, 197 for
// ViT-L/16, are the sequence), and --loader-rate bounds only an image
// model's inference (and any training step): both had been ignored
// without a word (llama3-8b --loader-rate 0.01 printed 152.3 tokens/s;
// vit-l16 --mode training --seq 99 ran at 197 tokens after sim's fix).
func TestSimulate_archFlagsIgnored(t *testing.T) {
	for _, args := range [][]string{
		{"--model", "resnet50", "--mode", "training", "--batch", "32", "--seq", "99"},
		{"--model", "vit-l16", "--mode", "training", "--batch", "32", "--seq", "99"},
		{"--model", "llama3-8b", "--loader-rate", "0.01"},
		{"--model", "bert-large", "--input", "384", "--loader-rate", "10"},
	} {
		_, stderr, code := perfsim(t, append([]string{"simulate", "--hw", "h100"}, args...)...)
		flag := args[len(args)-2]
		if code != 2 || !strings.Contains(stderr, flag+":") {
			t.Errorf("%v: exit %d, %s not named: %s", args, code, flag, stderr)
		}
	}
	for _, args := range [][]string{
		{"--model", "resnet50", "--batch", "32", "--loader-rate", "100"},
		{"--model", "vit-b16", "--batch", "32", "--loader-rate", "100"},
		{"--model", "llama3-8b", "--mode", "training", "--global-batch", "8", "--loader-rate", "100"},
		{"--model", "resnet50", "--mode", "training", "--batch", "32", "--loader-rate", "100"},
	} {
		if _, stderr, code := perfsim(t, append([]string{"simulate", "--hw", "h100"}, args...)...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestSimulate_imageTokensBudget: an image model's --tokens counts images
// (sim divides it by images/s), and the table says so: resnet50's time to
// train had read "for 1 G tokens".
func TestSimulate_imageTokensBudget(t *testing.T) {
	out, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "resnet50", "--mode", "training", "--batch", "256", "--tokens", "1e9")
	if code != 0 || !strings.Contains(out, "for 1 G images") || strings.Contains(out, "tokens") {
		t.Errorf("resnet50 --tokens 1e9: exit %d, want the budget in images:\n%s%s", code, out, stderr)
	}
}

// TestSimulate_imageNoTokenKeys: a key named tokens never holds images.
// An image model's training had written training.tokens_per_s equal to
// samples_per_s (resnet50 at global batch 256: both 5306 images/s) and
// its --tokens budget, a count of images, as scenario.tokens; both are
// now absent for a CNN and a ViT (samples_per_s is the images/s, and the
// budget is scenario.images), and kept for a language model. Likewise
// plan train's candidates for a ViT: images_per_s, not tokens_per_s.
func TestSimulate_imageNoTokenKeys(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"simulate", "--hw", "h100", "--model", "resnet50", "--mode", "training", "--batch", "256", "--tokens", "1e9"},
			[]string{`"samples_per_s"`, `"images": 1000000000`}, []string{`"tokens_per_s"`, `"tokens"`}},
		{[]string{"simulate", "--hw", "h100", "--model", "vit-l16", "--mode", "training", "--batch", "32"},
			[]string{`"samples_per_s"`, `"images": 0`}, []string{`"tokens_per_s"`, `"tokens"`}},
		{[]string{"simulate", "--hw", "h100", "--model", "resnet50"},
			[]string{`"images_per_s"`, `"samples_per_s"`}, []string{`"tokens_per_s"`}},
		{[]string{"simulate", "--hw", "h100", "--model", "gpt3-2.7b", "--mode", "training", "--global-batch", "8", "--tokens", "1e9"},
			[]string{`"tokens_per_s"`, `"samples_per_s"`, `"tokens": 1000000000`}, []string{`"images"`}},
		{[]string{"plan", "train", "--model", "vit-l16", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "256", "--top", "1"},
			[]string{`"images_per_s"`}, []string{`"tokens_per_s"`}},
		{[]string{"plan", "train", "--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "64", "--seq", "2048", "--top", "1"},
			[]string{`"tokens_per_s"`}, []string{`"images_per_s"`}},
	} {
		out, stderr, code := perfsim(t, append(tc.args, "--format", "json")...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
			continue
		}
		for _, k := range tc.want {
			if !strings.Contains(out, k) {
				t.Errorf("%v: no %s in its JSON", tc.args[4:], k)
			}
		}
		for _, k := range tc.not {
			if strings.Contains(out, k) {
				t.Errorf("%v: %s in its JSON", tc.args[4:], k)
			}
		}
	}
	out, _, _ := perfsim(t, "simulate", "--hw", "h100", "--model", "resnet50", "--mode", "training", "--batch", "256", "--format", "csv")
	if strings.Contains(out, "tokens") || !strings.Contains(out, "training.samples_per_s") {
		t.Errorf("resnet50 training CSV: a tokens row, or no samples_per_s:\n%s", out)
	}
}
