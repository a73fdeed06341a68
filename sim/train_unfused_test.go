package sim

import (
	"errors"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestUnfusedAttention: a fused attention op of a training pass becomes
// Megatron-LM's unfused kernels, each over every pair of the scores:
// forward two batched products, the softmax (scores read, probabilities
// written) and, with dropout, a pass that also writes a one-byte mask;
// backward four products, dropout's and the softmax's passes, at half
// the backward op's count (it counted two launches a layer). The FLOPs
// the fused ops counted come back for the model's FLOPs.
func TestUnfusedAttention(t *testing.T) {
	a := model.Attention{Batch: 2, Heads: 4, KVHeads: 4, QLen: 256, KVLen: 256, HeadDim: 64, Causal: true, Fused: true, DType: model.BF16, KVDType: model.BF16}
	n := 2.0 * 4 * 256 * 256 // scores
	gemm := 2 * n * 64       // one product over every pair
	for _, tc := range []struct {
		backward, dropout bool
		count             int
		gemms             int
		bytes             float64 // of the elementwise passes, one launch
	}{
		{false, false, 12, 2, 4 * n},
		{false, true, 12, 2, 4*n + 5*n},
		{true, false, 24, 4, 6 * n},
		{true, true, 24, 4, 6*n + 5*n},
	} {
		ops := []model.Op{{Name: "attn.qkv", Kernel: model.GEMM{M: 512, K: 256, N: 768}, Count: 12},
			{Name: "attn.core", Class: model.ClassAttention, Kernel: a, Count: tc.count}}
		out, fused, run := unfusedAttention(ops, tc.backward, tc.dropout)
		if want := model.FLOPs(float64(a.FLOPs()) * float64(tc.count)); fused != want {
			t.Errorf("%+v: fused FLOPs %v, want %v", tc, fused, want)
		}
		var gemms int
		var flops, bytes float64
		for _, o := range out[1:] {
			if o.Count != 12 || o.Class != model.ClassAttention {
				t.Errorf("%+v: %s count %d class %v, want 12 a layer, attention", tc, o.Name, o.Count, o.Class)
			}
			switch k := o.Kernel.(type) {
			case model.GEMM:
				gemms++
				flops += float64(k.FLOPs())
			case model.Elementwise:
				bytes += float64(k.Bytes())
			default:
				t.Errorf("%+v: %s is a %T", tc, o.Name, k)
			}
		}
		if gemms != tc.gemms || flops != float64(tc.gemms)*gemm || bytes != tc.bytes {
			t.Errorf("%+v: %d products of %v FLOPs, passes of %v bytes; want %d of %v, %v", tc, gemms, flops, bytes, tc.gemms, float64(tc.gemms)*gemm, tc.bytes)
		}
		if want := model.FLOPs(12 * flops); run != want {
			t.Errorf("%+v: the products' FLOPs %v, want %v", tc, run, want)
		}
		if out[0].Name != "attn.qkv" {
			t.Errorf("%+v: the other ops changed: %v", tc, out[0].Name)
		}
	}
	// An fp8 step's unfused core runs in bf16.
	a8 := a
	a8.DType, a8.KVDType = model.FP8, model.FP8
	out, _, _ := unfusedAttention([]model.Op{{Name: "attn.core", Class: model.ClassAttention, Kernel: a8, Count: 1}}, false, true)
	for _, o := range out {
		switch k := o.Kernel.(type) {
		case model.GEMM:
			if k.A != model.BF16 || k.C != model.BF16 {
				t.Errorf("fp8: %s in %v→%v, want bf16", o.Name, k.A, k.C)
			}
		case model.Elementwise:
			if got := float64(k.Read) / k.Elements; got < 2 {
				t.Errorf("fp8: %s reads %v bytes a score, want bf16's 2 or more", o.Name, got)
			}
		}
	}
}

// TestHiddenDropout: the forward's residual adds write a one-byte mask an
// element more; the backward gains one pass an add (its residual passes
// count two an add), the gradient and the mask read and the gradient
// written.
func TestHiddenDropout(t *testing.T) {
	res := model.Elementwise{Kind: "add", Elements: 1000, Read: 4000, Written: 2000}
	fwd := hiddenDropout([]model.Op{{Name: "residual", Kernel: res, Count: 8}}, false)
	if got := fwd[0].Kernel.(model.Elementwise); got.Written != 3000 || got.Read != 4000 || len(fwd) != 1 {
		t.Errorf("forward residual %+v (%d ops), want 1000 bytes of mask written more", got, len(fwd))
	}
	bwd := hiddenDropout([]model.Op{{Name: "residual.bwd", Kernel: res, Count: 16}}, true)
	if len(bwd) != 2 {
		t.Fatalf("backward: %d ops, want a dropout pass added", len(bwd))
	}
	if d := bwd[1]; d.Count != 8 || d.Kernel.(model.Elementwise).Read != 3000 || d.Kernel.(model.Elementwise).Written != 2000 {
		t.Errorf("backward dropout %+v count %d, want 8 passes reading 3000 bytes and writing 2000", d.Kernel, d.Count)
	}
}

// TestDropoutScenario: the settings are refused where they price
// nothing, each naming its flag.
func TestDropoutScenario(t *testing.T) {
	shape := Shape{Arch: Decoder, Layers: 2, DModel: 64, Heads: 4, KVHeads: 4, HeadDim: 16, Vocab: 100}
	base := Default()
	base.Mode, base.Seq, base.GlobalBatch = Training, 128, 1
	for _, tc := range []struct {
		name  string
		mod   func(*Scenario)
		shape Shape
		field string
	}{
		{"dropout 1", func(s *Scenario) { s.Dropout = 1 }, shape, "dropout"},
		{"dropout negative", func(s *Scenario) { s.Dropout = -0.1 }, shape, "dropout"},
		{"dropout inference", func(s *Scenario) { s.Mode, s.Dropout = Inference, 0.1 }, shape, "dropout"},
		{"unfused inference", func(s *Scenario) { s.Mode, s.UnfusedAttention = Inference, true }, shape, "unfused-attention"},
		{"unfused cnn", func(s *Scenario) { s.UnfusedAttention = true }, Shape{Arch: CNN}, "unfused-attention"},
		{"unfused cp", func(s *Scenario) { s.UnfusedAttention, s.CP = true, 2 }, shape, "unfused-attention"},
	} {
		sc := base
		tc.mod(&sc)
		err := sc.Validate(tc.shape)
		var se *ScenarioError
		found := false
		for _, e := range flatten(err) {
			if errors.As(e, &se) && se.Field == tc.field {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.field)
		}
	}
	ok := base
	ok.Dropout, ok.UnfusedAttention = 0.1, true
	for _, e := range flatten(ok.Validate(shape)) {
		var se *ScenarioError
		if errors.As(e, &se) && (se.Field == "dropout" || se.Field == "unfused-attention") {
			t.Errorf("a transformer's training step with dropout 0.1, unfused: %v", e)
		}
	}
}

// flatten returns the errors err joins, or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}
