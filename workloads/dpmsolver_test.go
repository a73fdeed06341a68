package workloads

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestGuidedDPMSolverStep: the kernels around one PixArt-Σ step at
// 1024² for 3 prompts (latents 4×128×128, output 8×128×128), counted
// pass by pass: bytes in bf16 (2) and fp32 (4), one FLOP per element
// written.
func TestGuidedDPMSolverStep(t *testing.T) {
	const n, m = 3 * 4 * 128 * 128.0, 3 * 8 * 128 * 128.0
	guidance := [][3]float64{ // elements, bytes read, bytes written
		{2 * n, 2 * n, 2 * 2 * n}, // torch.cat([latents] * 2)
		{m, 2 * 2 * m, 2 * m},     // text − uncond
		{m, 2 * m, 2 * m},         // · guidance_scale
		{m, 2 * 2 * m, 2 * m},     // uncond + …
	}
	convert := [][3]float64{
		{n, 2 * n, 2 * n},     // sigma_t · eps
		{n, 2 * 2 * n, 2 * n}, // sample − …
		{n, 2 * n, 2 * n},     // … / alpha_t
		{n, 2 * n, 4 * n},     // sample.to(float32)
		{n, 4 * n, 4 * n},     // (sigma_t/sigma_s) · sample
	}
	tail := [][3]float64{{n, 4 * n, 2 * n}} // prev_sample.to(bf16)
	sub := [3]float64{n, 4*n + 2*n, 4 * n}  // fp32 − bf16 → fp32
	term := [3]float64{n, 2 * n, 2 * n}
	for _, tt := range []struct {
		order int
		want  [][3]float64
	}{
		{1, catRows(guidance, convert, [][3]float64{term, sub}, tail)},
		{2, catRows(guidance, convert, [][3]float64{{n, 2 * 2 * n, 2 * n}, term, term, term, sub, sub}, tail)},
	} {
		ops, err := GuidedDPMSolverStep(3, 4*128*128, 8*128*128, tt.order, model.BF16)
		if err != nil {
			t.Fatal(err)
		}
		var got [][3]float64
		for _, op := range ops {
			e, ok := op.Kernel.(model.Elementwise)
			if !ok {
				t.Fatalf("order %d: %s is %T", tt.order, op.Name, op.Kernel)
			}
			if float64(e.Work) != e.Elements {
				t.Errorf("order %d: %s: %v FLOPs over %.0f elements", tt.order, op.Name, e.Work, e.Elements)
			}
			for range op.Count {
				got = append(got, [3]float64{e.Elements, float64(e.Read), float64(e.Written)})
			}
		}
		if !sameMultiset(got, tt.want) {
			t.Errorf("order %d: kernels %v\nwant %v", tt.order, got, tt.want)
		}
	}
	for _, bad := range [][4]int{{0, 1, 1, 1}, {1, 1, 1, 3}, {1, -1, 1, 2}} {
		if _, err := GuidedDPMSolverStep(bad[0], bad[1], bad[2], bad[3], model.BF16); err == nil {
			t.Errorf("GuidedDPMSolverStep%v: no error", bad)
		}
	}
}

func catRows(xs ...[][3]float64) [][3]float64 {
	var r [][3]float64
	for _, x := range xs {
		r = append(r, x...)
	}
	return r
}

// sameMultiset says a and b hold the same rows, in any order.
func sameMultiset(a, b [][3]float64) bool {
	if len(a) != len(b) {
		return false
	}
	left := map[[3]float64]int{}
	for _, x := range a {
		left[x]++
	}
	for _, x := range b {
		left[x]--
	}
	for _, v := range left {
		if v != 0 {
			return false
		}
	}
	return true
}
