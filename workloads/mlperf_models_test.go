package workloads

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestMLPerfModels checks the MLPerf workloads' parameter counts as exact
// integers, each against the published figure where there is one and
// otherwise against a count by hand from the reference implementation's
// definition (every term written out below), and their MACs.
func TestMLPerfModels(t *testing.T) {
	// ResNeXt-50 32x4d: torchvision lists 25,028,904 parameters and 4.23
	// GFLOPS (multiply-adds) at 224x224. Its batch norms have 2 parameters
	// per channel: 64 + stage widths (128, 256, 512, 1024) twice a block
	// plus the block's output, and one downsample per stage:
	// 64 + 3·512+256 + 4·1024+512 + 6·2048+1024 + 3·4096+2048 = 34,112
	// channels, 68,224 parameters.
	x := mustResolve(t, "resnext50-32x4d")
	if x.Params() != 25028904 || x.NormParams() != 68224 {
		t.Errorf("resnext50-32x4d: %.0f parameters (%.0f in norms), want 25,028,904 (68,224)", x.Params(), x.NormParams())
	}
	if got := gemmMACs(mustOps(t, x, Phase{Kind: Prefill, Batch: 1})); got < 4.225e9 || got >= 4.235e9 {
		t.Errorf("resnext50-32x4d: %.5g MACs, torchvision 4.23 G", got)
	}

	// RetinaNet (MLPerf, 264 classes): the reference's batch norms are
	// FrozenBatchNorm2d (buffers), so its parameters are ours less the
	// norms. The backbone is ResNeXt-50 less its fc (2048·1000 + 1000)
	// and norms: 25,028,904 − 2,049,000 − 68,224 = 22,911,680.
	// FPN: laterals 1x1 with bias (512, 1024, 2048 → 256) 918,272; three
	// 3x3 outputs and P6, P7, each 256·256·9 + 256 = 590,080: 2,950,400.
	// Heads: 4 shared 3x3 convs per branch (2,360,320) + the classifier
	// 2304·(9·264) + 2376 = 5,476,680 and the box regressor 2304·36 + 36
	// = 82,980.
	r := mustResolve(t, "retinanet")
	backbone := 25028904.0 - 2049000 - 68224
	fpn := 918272.0 + 5*590080
	heads := 2*2360320.0 + 5476680 + 82980
	if want := backbone + fpn + heads; r.Params()-r.NormParams() != want || want != 37060652 {
		t.Errorf("retinanet: %.0f parameters less %.0f in norms, want %.0f", r.Params(), r.NormParams(), want)
	}
	// Torchvision's retinanet_resnet50_fpn (91 COCO classes) has
	// 34,014,999 parameters: the same FPN and heads on ResNet-50 (the
	// check of the head arithmetic): 25,557,032 − 2,049,000 − 53,120 +
	// fpn + 2·2,360,320 + 2304·819 + 819 + 82,980.
	if got := 25557032.0 - 2049000 - 53120 + fpn + 2*2360320 + 2304*819 + 819 + 82980; got != 34014999 {
		t.Errorf("the head arithmetic on ResNet-50 gives %.0f, torchvision 34,014,999", got)
	}
	// The heads run on P3-P7 (100², 50², 25², 13², 7² positions) with
	// shared weights: MACs over all levels.
	if got := gemmMACs(mustOps(t, r, Phase{Kind: Prefill, Batch: 1})); got < 2.0115e11 || got > 2.0125e11 {
		t.Errorf("retinanet: %.5g MACs at 800x800, want 2.012e11", got)
	}

	// 3D U-Net (KiTS19): 3x3x3 convs without bias (27 weights per
	// input-output channel pair), InstanceNorm3d affine (2 per channel),
	// 2x2x2 transposed convs with bias, a 1x1x1 output conv with bias.
	u := mustResolve(t, "unet3d")
	k := 27.0
	convs := k * (1*32 + 32*32 + // input block
		32*64 + 64*64 + 64*128 + 128*128 + 128*256 + 256*256 + 256*320 + 320*320 + // downsample blocks
		320*320 + 320*320 + // bottleneck
		640*320 + 320*320 + 512*256 + 256*256 + 256*128 + 128*128 + 128*64 + 64*64 + 64*32 + 32*32) // upsample blocks
	transposed := 8*(320*320+320*256+256*128+128*64+64*32) + (320 + 256 + 128 + 64 + 32.0)
	norms := 2 * 2 * (32 + 64 + 128 + 256 + 320 + 320 + 320 + 256 + 128 + 64 + 32.0)
	out := 32*3 + 3.0
	if want := convs + transposed + norms + out; u.Params() != want || u.NormParams() != norms || want != 31190243 {
		t.Errorf("unet3d: %.0f parameters (%.0f in norms), want %.0f (%.0f)", u.Params(), u.NormParams(), want, norms)
	}
	if got := gemmMACs(mustOps(t, u, Phase{Kind: Prefill, Batch: 1})); got < 4.7725e11 || got > 4.7735e11 {
		t.Errorf("unet3d: %.5g MACs per 128³ patch, want 4.773e11", got)
	}

	// DLRM-DCNv2: the 26 tables of the reference's flags (embedding dim
	// 128), the dense arch 13-512-256-128, three cross layers of rank 512
	// on 27·128 = 3,456 features (2·3456·512 + 3456 each), and the over
	// arch 3456-1024-1024-512-256-1, all with biases.
	d := mustResolve(t, "dlrm-dcnv2")
	rows := []float64{40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956, 405282, 10, 2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36}
	var tables float64
	for _, n := range rows {
		tables += n * 128
	}
	dense := 13*512 + 512 + 512*256 + 256 + 256*128 + 128.0
	cross := 3 * (2*3456*512 + 3456.0)
	over := 3456*1024 + 1024 + 1024*1024 + 1024 + 1024*512 + 512 + 512*256 + 256 + 256 + 1.0
	if want := tables + dense + cross + over; d.Params() != want || want != 26151671809 || tables != 26135627264 {
		t.Errorf("dlrm-dcnv2: %.0f parameters, want %.0f (tables %.0f)", d.Params(), want, tables)
	}
	// A sample gathers the multi-hot sizes' 214 rows of 128: memory-bound
	// reads of the weight type.
	var gathered float64
	for _, op := range mustOps(t, d, Phase{Kind: Prefill, Batch: 1, Weights: model.INT8, Act: model.INT8}) {
		if e, ok := op.Kernel.(model.Elementwise); ok && e.Kind == "embedding_bag" {
			gathered += float64(op.Count) * float64(e.Read)
		}
	}
	if gathered != 214*128 {
		t.Errorf("dlrm-dcnv2: a sample gathers %.0f bytes of int8 rows, want 214·128", gathered)
	}
}

// TestSDXLModels: Stable Diffusion XL's four models, exact.
func TestSDXLModels(t *testing.T) {
	// The UNet: diffusers' count for stabilityai/stable-diffusion-xl-base-1.0
	// unet (Podell et al. 2023: "2.6B"). The text encoders: HF's
	// CLIPTextModel (123,060,480) and CLIPTextModelWithProjection
	// (694,659,840, of which the 1280×1280 projection, not modelled,
	// is 1,638,400).
	for _, tt := range []struct {
		name string
		want float64
	}{
		{"sdxl-unet", 2567463684},
		{"clip-vit-l-text", 123060480},
		{"openclip-vit-bigg-text", 694659840 - 1280*1280},
	} {
		if got := mustResolve(t, tt.name).Params(); got != tt.want {
			t.Errorf("%s: %.0f parameters, want %.0f", tt.name, got, tt.want)
		}
	}
	// The VAE decoder by hand: a ResnetBlock2D a → b has two group norms
	// (2a + 2b), two 3x3 convs with bias (9ab + b + 9b² + b) and, when
	// a ≠ b, a 1x1 shortcut with bias (ab + b); the mid attention a group
	// norm and four 512×512 linears with bias.
	res := func(a, b float64) float64 {
		p := 2*a + 2*b + 9*a*b + b + 9*b*b + b
		if a != b {
			p += a*b + b
		}
		return p
	}
	conv3 := func(a, b float64) float64 { return 9*a*b + b }
	want := 4*4 + 4 + conv3(4, 512) + // post_quant_conv, conv_in
		2*res(512, 512) + 2*512 + 4*(512*512+512) + // mid block
		3*res(512, 512) + conv3(512, 512) + 3*res(512, 512) + conv3(512, 512) + // up 0, 1
		res(512, 256) + 2*res(256, 256) + conv3(256, 256) + res(256, 128) + 2*res(128, 128) + // up 2, 3
		2*128 + conv3(128, 3) // norm out, conv_out
	if got := mustResolve(t, "sdxl-vae-decoder").Params(); got != want || want != 49490199 {
		t.Errorf("sdxl-vae-decoder: %.0f parameters, want %.0f", got, want)
	}
	// Cross-attention: 4096 latent positions (64²) attend to the 77 text
	// tokens, self-attention to each other, in heads of 64.
	var cross, self bool
	for _, op := range mustOps(t, mustResolve(t, "sdxl-unet"), Phase{Kind: Prefill, Batch: 2}) {
		if a, ok := op.Kernel.(model.Attention); ok && a.QLen == 4096 && a.HeadDim == 64 && a.Heads == 10 && a.Batch == 2 {
			cross = cross || a.KVLen == 77
			self = self || a.KVLen == 4096
		}
	}
	if !cross || !self {
		t.Errorf("sdxl-unet at 64²: cross-attention to 77 tokens %v, self-attention %v; want both", cross, self)
	}
}

// TestSD2UNet: Stable Diffusion v2's UNet, diffusers' count for
// stabilityai/stable-diffusion-2-base unet (865,910,724), with
// self-attention over the 64² latent positions in 5 heads of 64 and
// cross-attention to the 77 text tokens of 1,024 channels.
func TestSD2UNet(t *testing.T) {
	u := mustResolve(t, "sd2-unet")
	if u.Params() != 865910724 {
		t.Errorf("sd2-unet: %.0f parameters, want 865,910,724", u.Params())
	}
	var cross, self bool
	for _, op := range mustOps(t, u, Phase{Kind: Prefill, Batch: 2}) {
		if a, ok := op.Kernel.(model.Attention); ok && a.QLen == 4096 && a.HeadDim == 64 && a.Heads == 5 && a.Batch == 2 {
			cross = cross || a.KVLen == 77
			self = self || a.KVLen == 4096
		}
	}
	if !cross || !self {
		t.Errorf("sd2-unet at 64²: cross-attention to 77 tokens %v, self-attention %v; want both", cross, self)
	}
}

// TestLayers_badInput: the layer kinds beyond a 2-D CNN's report every
// problem at once, each with its line and key.
func TestLayers_badInput(t *testing.T) {
	_, err := Resolve(filepath.Join("testdata", "bad", "layers.toml"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		`layers.toml:21: layer[1].shares: "a" has weights of another shape`,
		`layer[3].inputs: "small" is 16x4x4, "a" is 8x8x8: the spatial shapes differ`,
		`layer[4].scale: missing`,
		`layer[5].rows: missing`,
		`layer[6].from: "a" is 8x8x8, the input is 16x1x1`,
		`layer[7].shares: only a conv, conv_transpose or fc layer shares weights`,
		`layer[8].norm: unknown norm "weightnorm" (want one of batchnorm, instancenorm, groupnorm, layernorm)`,
		`layer[9].out: missing: a conv_transpose needs its output channels`,
		`layer[10].heads: 3 does not divide the query (8) and value (8) channels`,
		`layer[11].out: missing: an input needs its features (out)`,
		`layer[12].from: missing: a mul needs the layer whose output it multiplies by`,
		`layer[13].from: "e" is 16x1x1, the input is 8x8x8`,
		`layer[14].affine: only a layer, group or instance norm has an affine scale and shift to leave out`,
		`layer[15].once: only an input is one tensor for the whole batch`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error\n%v\nlacks %q", err, w)
		}
	}
}

// TestLayers_3D: a 3-D convolution is an implicit GEMM over the output
// voxels with K = C_in·k³, and a 2x2x2 stride-2 transposed convolution
// one over the input voxels with N = C_out·8.
func TestLayers_3D(t *testing.T) {
	m, err := New(Config{Name: "v", Kind: CNN, ImageSize: 16, ImageDepth: 8, Channels: 4, Layer: []Layer{
		{Name: "c", Op: "conv", Out: 8, Kernel: 3, Padding: 1, Stride: ptr(2)},
		{Name: "t", Op: "conv_transpose", Out: 4, Kernel: 2, Stride: ptr(2)},
		{Name: "j", Op: "concat", Inputs: []string{"t", "t"}},
		{Name: "u", Op: "upsample", Scale: 2},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var gemms []model.GEMM
	var up model.Elementwise
	for _, op := range mustOps(t, m, Phase{Kind: Prefill, Batch: 2}) {
		switch k := op.Kernel.(type) {
		case model.GEMM:
			gemms = append(gemms, k)
		case model.Elementwise:
			if k.Kind == "upsample" {
				up = k
			}
		}
	}
	want := [][3]int{{2 * 4 * 8 * 8, 4 * 27, 8}, {2 * 4 * 8 * 8, 8, 4 * 8}}
	if len(gemms) != 2 {
		t.Fatalf("%d GEMMs, want 2", len(gemms))
	}
	for i, g := range gemms {
		if [3]int{g.M, g.K, g.N} != want[i] {
			t.Errorf("GEMM %d: %dx%dx%d, want %v", i, g.M, g.K, g.N, want[i])
		}
	}
	// The concat is 8 channels of 8x16x16; upsampled ×2 on three axes.
	if up.Elements != 2*8*16*32*32 {
		t.Errorf("upsample writes %.0f elements, want %d", up.Elements, 2*8*16*32*32)
	}
	if p := 8*4*27 + 8*4*8; m.Params() != float64(p) {
		t.Errorf("%.0f parameters, want %d", m.Params(), p)
	}
}

func ptr(v int) *int { return &v }

// TestGraphLayers_badInput: a graph network's gathers and graph
// attentions report every problem at once, each with its line and key.
func TestGraphLayers_badInput(t *testing.T) {
	_, err := Resolve(filepath.Join("testdata", "bad", "graph.toml"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		`graph.toml:12: layer[0].lookups: 200 rows a sample from a store of 100 rows`,
		`layer[0].dtype: `,
		`layer[1].rows: missing: a gather needs its store's rows`,
		`layer[1].input: a gather reads its store, not an earlier layer`,
		`layer[3].heads: 64 output features do not split into 3 heads`,
		`layer[4].nodes: missing: 20 edges need their destination nodes`,
		`layer[5].out: missing: a gat needs its output features`,
		`layer[5].edges: missing: 5 destination nodes need the edges into them`,
		`layer[6].dtype: only a gather has a stored type`,
		`layer[6].edges: only a gat has edges and nodes`,
		`layer[8].from: no earlier layer is named "nowhere"`,
		`layer[9].from: "small" has 32 features a node, the input 64: a gat projects both with one weight`,
		`layer[11].nodes: 3 destination nodes, but "same" (64x2x1) has 2 (the destinations are among their own type's nodes)`,
		// A negative count is not "missing", and a store's rows do not
		// hide its lookups' problem.
		`graph.toml:108: layer[12].rows: must be positive, got -5`,
		`layer[12].lookups: missing: a gather needs the rows a sample reads`,
		// The key written is the key named.
		`graph.toml:117: layer[13].nodes: only a gat has edges and nodes`,
		`graph.toml:124: layer[14].heads: must not be negative, got -2`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error\n%v\nlacks %q", err, w)
		}
	}
	// A negative count is reported once, as negative, not also as missing.
	if w := "layer[14].heads: missing"; strings.Contains(err.Error(), w) {
		t.Errorf("error\n%v\nhas %q", err, w)
	}
}
