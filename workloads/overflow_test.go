package workloads

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestOverflowRefused: sizes whose products would wrap an int are refused
// with an error, never computed wrong or panicking (issue 3, bad input).
func TestOverflowRefused(t *testing.T) {
	files := []struct{ file, want string }{
		{"cnn-overflow.toml", "cnn-overflow.toml:11: layer[0].out: the output, 16777216x65536x65536, is over the limit"},
		{"image-overflow.toml", "image-overflow.toml:4: image_size: a 16777216x1048576x1048576 input is over the limit"},
	}
	for _, tt := range files {
		_, err := Resolve(filepath.Join("testdata", "bad", tt.file))
		if err == nil || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want ErrTooLarge containing %q", tt.file, err, tt.want)
		}
	}

	// A mixture of 2^24 experts, all of them routed: 2^40 tokens × top_k
	// 2^24 would wrap the routed-token count (it divided by zero before).
	moe, err := New(Config{Name: "moe", Kind: Decoder, Layers: 1, DModel: 1, Heads: 1, Vocab: 2,
		Norm: "rmsnorm", Activation: "swiglu", Experts: 1 << 24, TopK: 1 << 24, ExpertFFN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := moe.Ops(Phase{Kind: Prefill, Batch: 1 << 20, Seq: 1 << 20}); err == nil || !strings.Contains(err.Error(), "routed tokens") {
		t.Errorf("moe with 2^64 routed tokens: err = %v, want one about routed tokens", err)
	}
	if _, err := moe.Ops(Phase{Kind: Prefill, Batch: 1, Seq: 4}); err != nil {
		t.Errorf("moe at a small shape: %v", err)
	}

	// ResNet-50 at batch 2^62: batch × 112·112 would wrap the GEMM M.
	r := mustResolve(t, "resnet50")
	if _, err := r.Ops(Phase{Kind: Prefill, Batch: 1 << 62}); err == nil || !strings.Contains(err.Error(), "output positions") {
		t.Errorf("resnet50 at batch 2^62: err = %v, want one about output positions", err)
	}
	// The largest batch accepted still gives exact, positive GEMM shapes.
	ops := mustOps(t, r, Phase{Kind: Prefill, Batch: (1 << 40) / (112 * 112)})
	for _, o := range ops {
		if g, ok := o.Kernel.(model.GEMM); ok && (g.M <= 0 || g.K <= 0 || g.N <= 0) {
			t.Errorf("%s: %dx%dx%d", o.Name, g.M, g.K, g.N)
		}
	}
}
