package calibrate

import (
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
)

// TestPrefill_perScoreSplit splits the H100's and H200's own long-prompt
// prefill attention (aiconfigurator, TensorRT-LLM 1.3.0rc20; prompts of
// 8k tokens or more, at least 128 sequence-heads, no window) into a part
// that grows with the head size and one that does not: for each type, the
// 10th percentile of the time per causal score at head sizes 64, 128 and
// 256, and the least-squares line t = c + s·D through them. 4/s is the
// matrix products' rate (4·D FLOPs a score) and 1/c the rate of whatever
// a score costs besides. In fp8, 1/c is the special-function units'
// datasheet rate of one exponential a score (hardware.SoftmaxRate, 4.18
// T/s): measured 4.20 (H100) and 4.17 T/s (H200), so the fp8 kernel's
// exponentials do not overlap its matrix products, although its two
// warpgroups take turns (setup.py enable_mutex, warpspec/compute.h); in
// bf16, 1/c is 6.3 T/s, a third of the exponentials hidden. The matrix
// products reach 0.63 (bf16) and 0.55 (fp8) of the peak: the fp8 kernel's
// shortfall past its exponentials is in its matrix products, 0.88 of the
// bf16 fraction, which no exponential term can carry (docs/hardware.md).
func TestPrefill_perScoreSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 50,000 measurements; skipped with -short")
	}
	v := filepath.Join(validationDir(t), "aiconfigurator")
	for _, dev := range []struct{ stem, file string }{
		{"h100-sxm", "h100_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv"},
		{"h200-sxm", "h200_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv"},
	} {
		d := catalogDeviceFile(t, dev.stem)
		names := strings.Join(append([]string{d.Name}, d.Aliases...), "|")
		all, _, err := ReadFile(filepath.Join(v, dev.file), FormatAuto, names)
		if err != nil {
			t.Fatal(err)
		}
		sfu, ok := hardware.SoftmaxRate(d)
		if !ok {
			t.Fatalf("%s: no special-function rate", dev.stem)
		}
		p := d.Processor()
		frac := map[model.DType]float64{}
		for _, dt := range []model.DType{model.BF16, model.FP8} {
			per := map[int][]float64{}
			for _, m := range all {
				if classOf(m) != KernelAttentionPrefill || m.DType != dt || m.QLen < 8192 || m.KVLen != m.QLen || m.Batch*m.Heads < 128 {
					continue
				}
				q := float64(m.QLen)
				per[m.HeadDim] = append(per[m.HeadDim], float64(m.Time)/(float64(m.Batch*m.Heads)*q*(q+1)/2))
			}
			var xs, ys []float64
			for _, hd := range []int{64, 128, 256} {
				ts := per[hd]
				if len(ts) < 20 {
					t.Fatalf("%s %s: %d rows at head size %d", dev.stem, dt, len(ts), hd)
				}
				sort.Float64s(ts)
				xs, ys = append(xs, float64(hd)), append(ys, ts[len(ts)/10])
			}
			s, c := line(xs, ys)
			peak, _ := p.Peak(dt)
			frac[dt] = 4 / s / float64(peak)
			rest := 1 / c / float64(sfu)
			t.Logf("%s %s: matrix products %.3f of the peak, the rest one score per %.3g ps = %.2f T/s, %.2f× the special-function rate",
				dev.stem, dt, frac[dt], c*1e12, 1/c/1e12, rest)
			switch {
			case dt == model.FP8 && math.Abs(rest-1) > 0.1:
				t.Errorf("%s fp8: the rest at %.2f× the special-function rate; want 1 ± 0.1", dev.stem, rest)
			case dt == model.BF16 && rest < 1.2:
				t.Errorf("%s bf16: the rest at %.2f× the special-function rate; want the exponentials partly hidden (≥ 1.2×)", dev.stem, rest)
			}
		}
		if r := frac[model.FP8] / frac[model.BF16]; r > 0.95 || r < 0.75 {
			t.Errorf("%s: fp8 matrix fraction %.2f of bf16's; want 0.75–0.95", dev.stem, r)
		}
	}
}

// line returns the least-squares slope and intercept of y on x.
func line(x, y []float64) (slope, intercept float64) {
	var mx, my float64
	for i := range x {
		mx += x[i] / float64(len(x))
		my += y[i] / float64(len(y))
	}
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	slope = sxy / sxx
	return slope, my - slope*mx
}
