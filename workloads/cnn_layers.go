package workloads

import (
	"fmt"
	"github.com/perfsim/perfsim/model"
)

// The layer kinds beyond a 2-D CNN's: 3-D convolutions (a network with
// image_depth), transposed convolutions, nearest upsampling, channel
// concatenation, embedding-bag gathers and DCNv2 cross layers. Each is
// one or more kernels the simulator prices: a GEMM (implicit GEMM for
// every convolution) or a memory-bound pass.

// kernelVolume is the positions of a window: k² in 2-D, k³ in 3-D.
func (pl *planner) kernelVolume(k int) int {
	if pl.vol {
		return k * k * k
	}
	return k * k
}

// window returns the output shape (channels unchanged) of a convolution
// or pooling window along every spatial axis:
// ⌊(H + 2·padding − dilation·(kernel−1) − 1)/stride⌋ + 1.
func (pl *planner) window(in chw, kernel, stride, defStride, padding, dilation int, bad func(k, format string, args ...any)) (chw, bool) {
	if stride == 0 {
		stride = defStride
	}
	if dilation == 0 {
		dilation = 1
	}
	span := dilation*(kernel-1) + 1
	if in.h+2*padding < span || in.w+2*padding < span || (pl.vol && in.d+2*padding < span) {
		padded := fmt.Sprintf("%dx%d", in.h+2*padding, in.w+2*padding)
		if pl.vol {
			padded = fmt.Sprintf("%dx", in.d+2*padding) + padded
		}
		bad("kernel", "%d (dilation %d) is larger than the padded input %s", kernel, dilation, padded)
		return chw{}, false
	}
	if stride <= 0 {
		return chw{}, false
	}
	o := func(x int) int { return (x+2*padding-span)/stride + 1 }
	out := chw{in.c, 1, o(in.h), o(in.w)}
	if pl.vol {
		out.d = o(in.d)
	}
	return out, true
}

// conv is a convolution as an implicit GEMM: M = output positions, K =
// C_in/groups · kernel volume, N = C_out/groups, one GEMM per group. Its
// A operand in memory is the input tensor, C_in/groups × D × H × W (or
// M × K where that is less: a strided 1×1 conv reads only the positions
// it samples), not the unfolded matrix (see model.GEMM's AElems).
func (pl *planner) conv(l *Layer, in chw, stride int, stage string, bad func(k, format string, args ...any)) chw {
	n := len(pl.errs)
	if l.Out == 0 {
		bad("out", "missing: a conv needs its output channels")
	}
	if l.Kernel == 0 {
		bad("kernel", "missing: a conv needs its kernel size")
	}
	g := max(l.Groups, 1)
	if in.c%g != 0 {
		bad("groups", "%d does not divide the %d input channels", g, in.c)
	}
	if l.Out > 0 && l.Out%g != 0 {
		bad("groups", "%d does not divide out %d", g, l.Out)
	}
	kv := pl.kernelVolume(l.Kernel)
	if kk := float64(in.c/g) * float64(kv); kk > maxElems {
		bad("kernel", "%d over %d input channels is a GEMM K of %.4g, over the limit of %d: %w", l.Kernel, in.c/g, kk, int64(maxElems), ErrTooLarge)
	}
	if len(pl.errs) > n {
		return in
	}
	o, ok := pl.window(in, l.Kernel, stride, 1, l.Padding, l.Dilation, bad)
	if !ok {
		return in
	}
	out := chw{l.Out, o.d, o.h, o.w}
	m, k := o.d*o.h*o.w, in.c/g*kv
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassConv, gemm: true,
		m: m, k: k, n: l.Out / g, groups: g, aElems: min(float64(in.c/g)*in.positions(), float64(m)*float64(k))})
	bias := boolOr(l.Bias, false)
	w := float64(l.Out) * float64(in.c/g) * float64(kv)
	if bias {
		w += float64(l.Out)
	}
	pl.weightsOf(l, weightSig{op: "conv", k: in.c / g * kv, n: l.Out / g, g: g, bias: bias}, w, bad)
	return out
}

// convTranspose is a transposed convolution (a U-Net's learned
// upsampling): every input position multiplies the C_in × (C_out ·
// kernel volume) weights, one GEMM with M = input positions, K =
// C_in/groups, N = C_out/groups · kernel volume; the output is
// (H−1)·stride − 2·padding + kernel per axis. With stride = kernel
// (3D U-Net's 2×2×2, stride 2) the scattered products do not overlap
// and the GEMM writes the output directly; with overlapping windows the
// overlap-add (col2im) pass is not priced.
func (pl *planner) convTranspose(l *Layer, in chw, stride int, stage string, bad func(k, format string, args ...any)) chw {
	n := len(pl.errs)
	if l.Out == 0 {
		bad("out", "missing: a conv_transpose needs its output channels")
	}
	if l.Kernel == 0 {
		bad("kernel", "missing: a conv_transpose needs its kernel size")
	}
	if l.Dilation > 1 {
		bad("dilation", "a dilated conv_transpose is not modelled")
	}
	g := max(l.Groups, 1)
	if in.c%g != 0 {
		bad("groups", "%d does not divide the %d input channels", g, in.c)
	}
	if l.Out > 0 && l.Out%g != 0 {
		bad("groups", "%d does not divide out %d", g, l.Out)
	}
	if stride == 0 {
		stride = 1
	}
	if len(pl.errs) > n {
		return in
	}
	o := func(x int) int { return (x-1)*stride - 2*l.Padding + l.Kernel }
	out := chw{l.Out, 1, o(in.h), o(in.w)}
	if pl.vol {
		out.d = o(in.d)
	}
	if out.d <= 0 || out.h <= 0 || out.w <= 0 {
		bad("padding", "%d leaves no output from a %s input", l.Padding, in)
		return in
	}
	kv := pl.kernelVolume(l.Kernel)
	if nn := float64(l.Out/g) * float64(kv); nn > maxElems || out.elems() > maxElems {
		bad("out", "a %s output is over the limit of %d elements: %w", out, int64(maxElems), ErrTooLarge)
		return in
	}
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassConv, gemm: true,
		m: in.d * in.h * in.w, k: in.c / g, n: l.Out / g * kv, groups: g})
	bias := boolOr(l.Bias, false)
	w := float64(in.c/g) * float64(l.Out) * float64(kv)
	if bias {
		w += float64(l.Out)
	}
	pl.weightsOf(l, weightSig{op: "conv_transpose", k: in.c / g, n: l.Out / g * kv, g: g, bias: bias}, w, bad)
	return out
}

// upsample is nearest-neighbour upsampling by an integer scale on every
// spatial axis (a feature pyramid's top-down path): one streaming pass
// that reads the input and writes scale² (or scale³) times as much.
func (pl *planner) upsample(l *Layer, in chw, stage string, bad func(k, format string, args ...any)) chw {
	if l.Scale < 2 {
		bad("scale", "missing: an upsample needs an integer scale of 2 or more")
		return in
	}
	out := chw{in.c, in.d, in.h * l.Scale, in.w * l.Scale}
	if pl.vol {
		out.d = in.d * l.Scale
	}
	if out.elems() > maxElems {
		return out // reported by the caller
	}
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: "upsample",
		elems: out.elems(), flopsPer: 0, reads: in.elems() / out.elems()})
	return out
}

// concat joins the outputs of the layers named in inputs along the
// channels; their spatial shapes must match. It is priced as a copy of
// every input into the output.
func (pl *planner) concat(l *Layer, stage string, bad func(k, format string, args ...any)) chw {
	if len(l.Inputs) < 2 {
		bad("inputs", "missing: a concat needs the names of two or more earlier layers")
		return chw{}
	}
	if l.Input != "" {
		bad("input", "a concat reads the layers in inputs, not input")
	}
	var out chw
	for j, name := range l.Inputs {
		s, ok := pl.shapes[name]
		switch {
		case !ok:
			bad("inputs", "no earlier layer is named %q", name)
			return chw{}
		case j == 0:
			out = s
		case s.d != out.d || s.h != out.h || s.w != out.w:
			bad("inputs", "%q is %s, %q is %s: the spatial shapes differ", name, s, l.Inputs[0], pl.shapes[l.Inputs[0]])
			return chw{}
		default:
			out.c += s.c
		}
	}
	if out.elems() <= maxElems {
		pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: "concat",
			elems: out.elems(), reads: 1})
	}
	return out
}

// embedding is an embedding-bag lookup (a recommender's sparse feature):
// a table of rows × out, of which each sample reads `lookups` rows
// (multi-hot) and sums them. It reads no earlier layer. The gather is
// memory-bound: lookups · out elements of the weight type read at
// random rows, out written.
func (pl *planner) embedding(l *Layer, stage string, bad func(k, format string, args ...any)) chw {
	n := len(pl.errs)
	if l.Rows <= 0 {
		bad("rows", "missing: an embedding needs its table's rows")
	}
	if l.Out == 0 {
		bad("out", "missing: an embedding needs its row size (out)")
	}
	if l.Input != "" {
		bad("input", "an embedding reads its table, not an earlier layer")
	}
	if l.Out > 0 && float64(l.Rows)*float64(l.Out) > maxElems {
		bad("rows", "%d rows of %d is over the limit of %d elements: %w", l.Rows, l.Out, int64(maxElems), ErrTooLarge)
	}
	if len(pl.errs) > n {
		return chw{max(l.Out, 1), 1, 1, 1}
	}
	lookups := max(l.Lookups, 1)
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassEmbedding, kind: "embedding_bag", table: true,
		elems: float64(l.Out), reads: float64(lookups)})
	pl.p.params += float64(l.Rows) * float64(l.Out)
	return chw{l.Out, 1, 1, 1}
}

// cross is a DCNv2 cross layer of low rank r (Wang et al. 2021, "DCN
// V2", eq. 1 with W = U·V): x_{l+1} = x_0 ⊙ (U·(V·x_l) + b) + x_l, where
// x_l is the input and x_0 the layer named in from. Two GEMMs (d → r,
// r → d) and one pass reading x_0, the product and x_l; 2·d·r + d
// parameters.
func (pl *planner) cross(l *Layer, in chw, stage string, bad func(k, format string, args ...any)) chw {
	s, ok := pl.shapes[l.From]
	switch {
	case l.Rank == 0:
		bad("rank", "missing: a cross layer needs its rank")
		return in
	case l.From == "":
		bad("from", "missing: a cross layer needs x_0, the layer whose output it multiplies")
		return in
	case !ok:
		bad("from", "no earlier layer is named %q", l.From)
		return in
	case s != in || in.d*in.h*in.w != 1:
		bad("from", "%q is %s, the input is %s: a cross layer needs two equal feature vectors", l.From, s, in)
		return in
	}
	d := in.c
	pl.emit(cnnOp{name: l.Name + ".v", stage: stage, class: model.ClassFFN, gemm: true, m: 1, k: d, n: l.Rank, groups: 1})
	pl.emit(cnnOp{name: l.Name + ".u", stage: stage, class: model.ClassFFN, gemm: true, m: 1, k: l.Rank, n: d, groups: 1})
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: "cross",
		elems: float64(d), flopsPer: 2, reads: 3})
	pl.p.params += 2*float64(d)*float64(l.Rank) + float64(d)
	return in
}

// input is a further input of the network: a sequence of length
// positions of out features (a diffusion UNet's text encodings, its
// time embedding). It reads no earlier layer and costs nothing.
func (pl *planner) input(l *Layer, bad func(k, format string, args ...any)) chw {
	if l.Out == 0 {
		bad("out", "missing: an input needs its features (out)")
	}
	if l.Input != "" {
		bad("input", "an input reads no earlier layer")
	}
	return chw{max(l.Out, 1), 1, 1, max(l.Length, 1)}
}

// attention is multi-head scaled dot-product attention, fused
// (FlashAttention-style), of the layers named in inputs: queries, keys
// and values, each a map of positions × channels (a diffusion UNet's
// self-attention over its feature map, or cross-attention to the text).
// Every query position attends to every key position; the output has
// the values' channels at the queries' positions.
func (pl *planner) attention(l *Layer, stage string, bad func(k, format string, args ...any)) chw {
	if len(l.Inputs) != 3 {
		bad("inputs", "an attention needs three earlier layers: queries, keys, values")
		return chw{}
	}
	var s [3]chw
	for j, name := range l.Inputs {
		v, ok := pl.shapes[name]
		if !ok {
			bad("inputs", "no earlier layer is named %q", name)
			return chw{}
		}
		s[j] = v
	}
	q, k, v := s[0], s[1], s[2]
	switch {
	case l.Heads == 0:
		bad("heads", "missing: an attention needs its heads")
		return q
	case q.c%l.Heads != 0 || v.c%l.Heads != 0:
		bad("heads", "%d does not divide the query (%d) and value (%d) channels", l.Heads, q.c, v.c)
		return q
	case q.c != k.c:
		bad("inputs", "queries have %d channels, keys %d", q.c, k.c)
		return q
	case k.positions() != v.positions():
		bad("inputs", "keys have %.0f positions, values %.0f", k.positions(), v.positions())
		return q
	case q.positions() > maxDim || k.positions() > maxDim:
		bad("inputs", "over %d positions: %w", maxDim, ErrTooLarge)
		return q
	}
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassAttention, kind: "attention",
		attn: &cnnAttn{heads: l.Heads, q: int(q.positions()), kv: int(k.positions()), hd: q.c / l.Heads, vd: v.c / l.Heads}})
	return chw{v.c, q.d, q.h, q.w}
}

// geglu is a gated GELU (Shazeer 2020): the input's channels are two
// halves, x and a gate, and the output GELU(gate) ⊙ x has half the
// channels. One pass reading both halves.
func (pl *planner) geglu(l *Layer, in chw, stage string, bad func(k, format string, args ...any)) chw {
	if in.c%2 != 0 {
		bad("op", "geglu halves the channels; the input has %d", in.c)
		return in
	}
	out := chw{in.c / 2, in.d, in.h, in.w}
	pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: "geglu",
		elems: out.elems(), flopsPer: flopsGELU + 1, reads: 2})
	return out
}
