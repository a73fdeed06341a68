package calibrate

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

func TestFixedPrefillSplit(t *testing.T) {
	// A prefill fit whose rows have one head size fixes the softmax rate
	// at the special-function rate; one head size and one element type
	// also fix η_m at the device's streaming fraction. Anything else, or
	// another class, fits them free (0).
	dev, err := hardware.Lookup("a100")
	if err != nil {
		t.Fatal(err)
	}
	em := dev.Eff.Memory.Efficiency
	sfu, _ := hardware.SoftmaxRate(dev)
	if em <= 0 || sfu <= 0 {
		t.Fatalf("the A100 has streaming fraction %v and softmax rate %v: want both", em, sfu)
	}
	at := func(d int, dt model.DType) model.Attention {
		return model.Attention{Batch: 1, Heads: 32, KVHeads: 8, QLen: 1024, KVLen: 1024, HeadDim: d, Causal: true, Fused: true, DType: dt, KVDType: dt}
	}
	fp8Cache := at(128, model.BF16)
	fp8Cache.KVDType = model.FP8
	tests := []struct {
		name   string
		class  string
		kern   []model.Attention
		rs     model.FLOPRate
		memory float64
	}{
		{"one head size and type", KernelAttentionPrefill, []model.Attention{at(128, model.BF16), at(128, model.BF16)}, sfu, em},
		{"two head sizes", KernelAttentionPrefill, []model.Attention{at(128, model.BF16), at(64, model.BF16)}, 0, 0},
		{"two types", KernelAttentionPrefill, []model.Attention{at(128, model.BF16), at(128, model.FP8)}, sfu, 0},
		{"two cache types", KernelAttentionPrefill, []model.Attention{at(128, model.BF16), fp8Cache}, sfu, 0},
		{"decode", KernelAttentionDecode, []model.Attention{at(128, model.BF16)}, 0, 0},
		{"MLA context", KernelMLAPrefill, []model.Attention{at(128, model.BF16)}, 0, 0},
		{"no rows", KernelAttentionPrefill, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fixedSoftmaxRate(dev, tt.class, tt.kern); got != tt.rs {
				t.Errorf("fixedSoftmaxRate = %v, want %v", got, tt.rs)
			}
			if got := fixedMemory(dev, tt.class, tt.kern); got != tt.memory {
				t.Errorf("fixedMemory = %v, want %v", got, tt.memory)
			}
		})
	}
	// A device without a streaming fraction fits η_m free.
	bare := *dev
	bare.Eff.Memory.Efficiency = 0
	if got := fixedMemory(&bare, KernelAttentionPrefill, []model.Attention{at(128, model.BF16)}); got != 0 {
		t.Errorf("no streaming fraction: fixedMemory = %v, want 0", got)
	}
}
