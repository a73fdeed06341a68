package workloads

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestTP_commType checks the type the collectives move: the compute type
// at 16 bits and wider, bf16 under 8- and 4-bit compute (engines keep the
// residual stream in bf16), and an explicit Comm whatever the compute.
func TestTP_commType(t *testing.T) {
	dense := mustResolve(t, "llama3-70b")
	moe := mustResolve(t, "deepseek-v3")
	for _, tc := range []struct {
		name       string
		m          *Model
		act, comm  model.DType
		kind       model.CollectiveKind
		tp, ep     int
		width      float64 // elements per token the collective moves
		wantPerElm float64
	}{
		{"bf16", dense, model.BF16, model.Invalid, model.AllReduce, 8, 0, 8192, 2},
		{"fp32", dense, model.FP32, model.Invalid, model.AllReduce, 8, 0, 8192, 4},
		{"fp8 keeps bf16", dense, model.FP8, model.Invalid, model.AllReduce, 8, 0, 8192, 2},
		{"int8 keeps bf16", dense, model.INT8, model.Invalid, model.AllReduce, 8, 0, 8192, 2},
		{"fp4 keeps bf16", dense, model.FP4, model.Invalid, model.AllReduce, 8, 0, 8192, 2},
		{"fp8 with comm fp8", dense, model.FP8, model.FP8, model.AllReduce, 8, 0, 8192, 1},
		{"bf16 with comm fp32", dense, model.BF16, model.FP32, model.AllReduce, 8, 0, 8192, 4},
		{"moe all-to-all fp8", moe, model.FP8, model.Invalid, model.AllToAll, 1, 8, 7168 * 8, 2},
		{"moe all-to-all comm fp8", moe, model.FP8, model.FP8, model.AllToAll, 1, 8, 7168 * 8, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const seq = 64
			ops := mustOps(t, tc.m, Phase{Kind: Prefill, Batch: 1, Seq: seq, TP: tc.tp, EP: tc.ep, Weights: tc.act, Act: tc.act, Comm: tc.comm})
			n := 0
			for _, o := range ops {
				c, ok := o.Kernel.(model.Collective)
				if !ok || c.Kind != tc.kind {
					continue
				}
				n++
				if want := model.Bytes(seq * tc.width * tc.wantPerElm); c.Size != want {
					t.Errorf("%s %s of %v, want %v (%g bytes an element)", o.Name, c.Kind, c.Size, want, tc.wantPerElm)
				}
			}
			if n == 0 {
				t.Fatalf("no %v collective", tc.kind)
			}
		})
	}
}

// TestResidualStream: a decoder's norms and residual adds move the
// residual stream in the collectives' type (bf16 under 8-bit GEMMs); an
// encoder keeps the activation type.
func TestResidualStream(t *testing.T) {
	cases := []struct {
		model    string
		act      model.DType
		wantSize float64 // bytes per element the norm reads
	}{
		{"llama3-70b", model.BF16, 2},
		{"llama3-70b", model.FP8, 2},
		{"llama3-70b", model.INT8, 2},
		{"llama3-70b", model.FP32, 4},
		{"bert-large", model.INT8, 1},
	}
	for _, c := range cases {
		t.Run(c.model+"/"+c.act.String(), func(t *testing.T) {
			m := mustResolve(t, c.model)
			ops := mustOps(t, m, Phase{Kind: Prefill, Batch: 1, Seq: 64, TP: 2, Weights: c.act, Act: c.act, KV: c.act})
			d := float64(m.Shape().DModel)
			seen := 0
			for _, o := range ops {
				if k, ok := o.Kernel.(model.Elementwise); ok && (o.Class == model.ClassNorm || o.Name == "residual") {
					reads := 1.0
					if o.Name == "residual" {
						reads = 2
					}
					if want := model.Bytes(reads * 64 * d * c.wantSize); k.Read != want {
						t.Errorf("%s reads %v, want %v", o.Name, k.Read, want)
					}
					seen++
				}
			}
			if seen == 0 {
				t.Error("no norm or residual add found")
			}
		})
	}
}
