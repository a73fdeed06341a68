package workloads

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// sumOps returns the MACs, bytes and launches of ops.
func sumOps(ops []model.Op) (macs float64, bytes model.Bytes, launches int) {
	for _, o := range ops {
		macs += o.MACs()
		bytes += o.Bytes()
		launches += o.Count
	}
	return macs, bytes, launches
}

// TestCNN_fused: the TensorRT-style graph of ResNet-50 does the same
// convolutions (4.09 GMACs per 224² image) in fewer launches and moves
// fewer bytes than the eager one: no batch-norm or activation passes, and
// the residual adds read one operand in a convolution's epilogue instead
// of reading two and writing one.
func TestCNN_fused(t *testing.T) {
	// fp16 batch 1: 174 launches and 210.7 MB eager, 72 and 105.7 MB fused
	// (50% fewer bytes); int8 batch 256: 20.46 GB against 7.027 GB (66%).
	// The convolutions read their input tensors, not the unfolded
	// matrices (implicit GEMM; see model.GEMM's AElems).
	m := mustResolve(t, "resnet50")
	for _, tt := range []struct {
		d                         model.DType
		batch                     int
		eagerGB, fusedGB, savedGB float64 // measured 2026-11-26, ±0.5%
	}{
		{model.FP16, 1, 0.2107, 0.1057, 0.1050},
		{model.INT8, 256, 20.46, 7.027, 13.44},
	} {
		ph := Phase{Kind: Prefill, Batch: tt.batch, Act: tt.d, Weights: tt.d, KV: tt.d}
		eager, err := m.Ops(ph)
		if err != nil {
			t.Fatal(err)
		}
		ph.FuseCNN = true
		fused, err := m.Ops(ph)
		if err != nil {
			t.Fatal(err)
		}
		em, eb, el := sumOps(eager)
		fm, fb, fl := sumOps(fused)
		t.Logf("%v batch %d: eager %d launches %.4g GB, fused %d launches %.4g GB (%.4g GB, %.0f%% fewer)",
			tt.d, tt.batch, el, float64(eb)/1e9, fl, float64(fb)/1e9, float64(eb-fb)/1e9, 100*float64(eb-fb)/float64(eb))
		if em != fm || em/float64(tt.batch) < 4.08e9 || em/float64(tt.batch) > 4.12e9 {
			t.Errorf("MACs per image: eager %.4g, fused %.4g, want both 4.09e9", em/float64(tt.batch), fm/float64(tt.batch))
		}
		if fl >= el {
			t.Errorf("fused launches %d, eager %d: want fewer", fl, el)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"eager GB", float64(eb) / 1e9, tt.eagerGB}, {"fused GB", float64(fb) / 1e9, tt.fusedGB}, {"saved GB", float64(eb-fb) / 1e9, tt.savedGB}} {
			if c.got < c.want*0.995 || c.got > c.want*1.005 {
				t.Errorf("%v batch %d: %s %.4g, want %.4g", tt.d, tt.batch, c.name, c.got, c.want)
			}
		}
	}
}

// TestCNN_autocast: autocast adds one weight cast per convolution and fc
// layer, and computes them in the activation type.
func TestCNN_autocast(t *testing.T) {
	m := mustResolve(t, "resnet50")
	ph := Phase{Kind: Prefill, Batch: 1, Act: model.FP16, Weights: model.FP32, KV: model.FP16}
	plain, _ := m.Ops(ph)
	ph.Autocast = true
	amp, _ := m.Ops(ph)
	_, _, pl := sumOps(plain)
	_, _, al := sumOps(amp)
	if al-pl != 54 { // 53 convolutions and the fc layer
		t.Errorf("autocast adds %d launches, want 54", al-pl)
	}
	var castElems float64
	for _, o := range amp {
		if g, ok := o.Kernel.(model.GEMM); ok && g.Compute() != model.FP16 {
			t.Errorf("%s computes in %v under autocast, want fp16", o.Name, g.Compute())
		}
		if e, ok := o.Kernel.(model.Elementwise); ok && e.Kind == "cast" {
			castElems += float64(o.Count) * e.Elements
		}
	}
	// Every weight but the batch norms' is cast: 25,557,032 parameters
	// less 53,120 batch-norm scales and shifts, less the fc bias (1,000).
	if want := 25557032.0 - 53120 - 1000; castElems != want {
		t.Errorf("cast elements %.0f, want %.0f", castElems, want)
	}
}

// TestCNN_implicitConv: a convolution's A operand in memory is its input
// tensor, scaled by the batch (ResNet-50's stem: 3 × 224² a sample, not
// the 112² × 147 unfolded matrix); a strided 1×1 convolution reads only
// what it samples (M·K); in the backward pass the data gradient writes
// the input gradient and the weight gradient reads the input, each of
// the forward's MACs.
func TestCNN_implicitConv(t *testing.T) {
	m := mustResolve(t, "resnet50")
	ph := Phase{Kind: TrainForward, Batch: 2, Act: model.BF16, Weights: model.BF16, KV: model.BF16}
	fwd := mustOps(t, m, ph)
	want := map[string]float64{
		"conv1":               2 * 3 * 224 * 224,
		"layer2.0.downsample": 2 * 784 * 256, // 1×1 stride 2: M·K
	}
	got := map[string]model.GEMM{}
	for _, o := range fwd {
		if g, ok := o.Kernel.(model.GEMM); ok {
			got[o.Name] = g
		}
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Fatalf("no GEMM %q", name)
		}
		if g.AElems != w || g.AElements() > float64(g.M)*float64(g.K) {
			t.Errorf("%s: AElems %g, want %g (M·K %d)", name, g.AElems, w, g.M*g.K)
		}
	}
	ph.Kind = TrainBackward
	seen := 0
	for _, o := range mustOps(t, m, ph) {
		g, ok := o.Kernel.(model.GEMM)
		if !ok {
			continue
		}
		switch o.Name {
		case "conv1.dgrad":
			seen++
			if g.CElems != want["conv1"] || g.AElems != 0 {
				t.Errorf("conv1.dgrad: A %g C %g elements, want C %g", g.AElems, g.CElems, want["conv1"])
			}
		case "conv1.wgrad":
			seen++
			if g.AElems != want["conv1"] || g.CElems != 0 {
				t.Errorf("conv1.wgrad: A %g C %g elements, want A %g", g.AElems, g.CElems, want["conv1"])
			}
		}
	}

	if seen != 2 {
		t.Errorf("found %d of conv1's two gradient GEMMs", seen)
	}
}
