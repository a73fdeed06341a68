package workloads

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// cnnOps ops of a CNN: the plan's per-image ops scaled to the batch.
//
// With ph.FuseCNN the graph is run as TensorRT builds it (NVIDIA,
// "TensorRT Developer Guide", section "Types of Fusions": convolution
// with batch norm, with a ReLU or other activation, and element-wise
// sums with their activation): a batch norm folds into the weights of
// the convolution before it and leaves no kernel, an activation runs in
// the epilogue of the kernel before it, and a residual add (with its
// ReLU) runs in the epilogue of the convolution before it. With ph.Autocast (and weights wider than the
// activations) every convolution and fc layer computes in the
// activation type and a cast kernel per layer copies its weights into
// that type first, as PyTorch's autocast does on every forward pass
// (torch.amp docs, "Autocasting": the weight cast is cached only within
// one autocast region).
func (m *Model) cnnOps(ph Phase) []model.Op {
	p := m.cnn
	b := ph.Batch
	act, w := ph.Act, ph.Weights
	autocast := ph.Autocast && w.Size() > act.Size()
	n := len(p.ops)
	if autocast {
		n += len(p.ops)
	}
	ops := make([]model.Op, 0, n)
	for _, o := range p.ops {
		if ph.FuseCNN && (o.kind == "batchnorm" || oneOf(o.kind, cnnActs)) {
			continue // folded into the weights, or in the epilogue of the kernel before
		}
		var k model.Kernel
		if o.attn != nil {
			a := o.attn
			k = model.Attention{Batch: b, Heads: a.heads, KVHeads: a.heads, QLen: a.q, KVLen: a.kv, HeadDim: a.hd, VDim: a.vd,
				Fused: true, DType: act, KVDType: act}
		} else if o.gemm {
			mm := o.m * b
			wk := w
			if autocast {
				wk = act
				elems := float64(o.k) * float64(o.n) * float64(max(o.groups, 1))
				ops = append(ops, model.Op{Name: o.name + ".cast", Stage: o.stage, Class: model.ClassElementwise, Count: o.count,
					Kernel: model.Elementwise{Kind: "cast", Elements: elems, Read: w.Bytes(elems), Written: act.Bytes(elems)}})
			}
			k = withBatch(model.GEMM{M: mm, K: o.k, N: o.n, A: act, B: wk, C: act, AElems: o.aElems * float64(b)}, o.groups)
		} else if o.table {
			// An embedding-bag gather: each sample reads `reads` rows of
			// the table (in the weight type: random rows, memory-bound)
			// and writes their sum.
			n := o.elems * float64(b)
			k = model.Elementwise{Kind: o.kind, Elements: n, Work: model.FLOPs(n * o.reads),
				Read: storeType(o.store, w).Bytes(n * o.reads), Written: act.Bytes(n)}
		} else if ph.FuseCNN && o.kind == "add" {
			// The residual add runs in the epilogue of the convolution
			// before it: the residual is read once more, and the sum is
			// the convolution's own output. It is priced as a streaming
			// read of the residual, so it pays a streaming kernel's fixed
			// cost that the fused kernel does not (a few µs per block).
			k = ew("add.epilogue", o.elems*float64(b), o.flopsPer, 1, 0, act)
		} else {
			n := o.elems * float64(b)
			if o.once {
				n = o.elems
			}
			e := ew(o.kind, n, o.flopsPer, o.reads, 1, act)
			e.Read += act.Bytes(o.onceReads)
			k = e
		}
		ops = append(ops, model.Op{Name: o.name, Stage: o.stage, Class: o.class, Count: o.count, Kernel: k})
	}
	return ops
}

// A cnnPlan is a layered network with its shapes inferred: per-sample
// ops, merged where layers run the same kernel, with the parameter count
// and the activations a training step keeps.
type cnnPlan struct {
	ops         []cnnOp
	params      float64
	normParams  float64
	activations float64 // elements of every layer's output, per sample
	maxRows     float64 // the largest GEMM M of one sample (output positions)
	stores      []featureStore
}

// A cnnOp is one kernel of one sample: a GEMM (m rows per sample) or a
// memory-bound pass (elems per sample).
type cnnOp struct {
	name, stage string
	class       model.Class
	count       int
	gemm        bool
	m, k, n     int
	groups      int
	// aElems is a convolution's A operand in memory, one group of one
	// sample: the input tensor an implicit GEMM gathers from, not the
	// unfolded m×k matrix (0: m×k; see model.GEMM).
	aElems   float64
	kind     string
	elems    float64
	flopsPer float64
	reads    float64
	// table is true for an embedding or feature gather, whose reads are
	// rows of the weights or of a feature store, not activations: in
	// store's type, or the weights' when store is Invalid.
	table bool
	store model.DType
	// attention: heads, query and key positions, head and value widths.
	attn *cnnAttn
	// once is a kernel run once a forward, not once a sample (a pass over
	// a buffer shared by the batch); onceReads are elements read once a
	// forward beside the per-sample reads (that buffer, added to every
	// sample).
	once      bool
	onceReads float64
}

// cnnAttn is an attention layer's shape (per sample).
type cnnAttn struct{ heads, q, kv, hd, vd int }

// chw is a feature map's shape: channels, depth (1 for a 2-D map),
// height and width.
type chw struct{ c, d, h, w int }

func (s chw) elems() float64 { return float64(s.c) * s.positions() }

// positions is the spatial size: d·h·w.
func (s chw) positions() float64 { return float64(s.d) * float64(s.h) * float64(s.w) }

func (s chw) String() string {
	if s.d > 1 {
		return fmt.Sprintf("%dx%dx%dx%d", s.c, s.d, s.h, s.w)
	}
	return fmt.Sprintf("%dx%dx%d", s.c, s.h, s.w)
}

var cnnOps = []string{"conv", "conv_transpose", "fc", "maxpool", "avgpool", "global_avgpool", "batchnorm", "act", "add",
	"flatten", "upsample", "concat", "embedding", "cross", "input", "attention", "geglu", "norm", "mul", "gather", "gat", "scalar", "copy"}
var cnnActs = []string{"relu", "relu6", "leaky_relu", "silu", "gelu", "sigmoid", "hardswish"}
var cnnNorms = []string{"batchnorm", "instancenorm", "groupnorm", "layernorm"}

// A weightSig is the shape of a layer's weights, for `shares`.
type weightSig struct {
	op      string
	k, n, g int
	bias    bool
}

// planner holds the state of planCNN while it walks the layers.
type planner struct {
	p       *cnnPlan
	vol     bool // a 3-D network: kernels, strides and padding apply to depth too
	shapes  map[string]chw
	weights map[string]weightSig
	once    map[string]bool // layers of one tensor for the whole batch (an input with once, and passes over it)
	index   map[string]int
	errs    []*ConfigError
}

func (pl *planner) emit(o cnnOp) {
	key := o.stage + "\x00" + o.kind + fmt.Sprint(o.gemm, o.m, o.k, o.n, o.groups, o.aElems, o.elems, o.reads, o.once, o.onceReads)
	if o.attn != nil {
		key += fmt.Sprint(*o.attn)
	}
	if o.store != model.Invalid || o.kind == "gat" {
		key += fmt.Sprint(o.flopsPer, o.store)
	}
	if i, ok := pl.index[key]; ok {
		pl.p.ops[i].count++
		return
	}
	pl.index[key] = len(pl.p.ops)
	if o.gemm {
		pl.p.maxRows = max(pl.p.maxRows, float64(o.m))
	}
	o.count = 1
	pl.p.ops = append(pl.p.ops, o)
}

// weightsOf counts a layer's weights, or, when it shares another layer's
// (l.Shares), checks that they have the same shape and counts nothing.
func (pl *planner) weightsOf(l *Layer, sig weightSig, n float64, bad func(k, format string, args ...any)) {
	pl.weights[l.Name] = sig
	if l.Shares == "" {
		pl.p.params += n
		return
	}
	s, ok := pl.weights[l.Shares]
	switch {
	case !ok:
		bad("shares", "no earlier layer with weights is named %q", l.Shares)
	case s != sig:
		bad("shares", "%q has weights of another shape (%s %dx%d, groups %d, bias %v; this layer %s %dx%d, groups %d, bias %v)",
			l.Shares, s.op, s.k, s.n, s.g, s.bias, sig.op, sig.k, sig.n, sig.g, sig.bias)
	}
}

// planCNN infers every layer's shape, checks it, and builds the plan.
func planCNN(c *Config) (*cnnPlan, []*ConfigError) {
	pl := &planner{p: &cnnPlan{}, vol: c.ImageDepth > 0, shapes: make(map[string]chw, len(c.Layer)),
		weights: map[string]weightSig{}, index: map[string]int{}, once: map[string]bool{}}
	p := pl.p
	cur := chw{c.Channels, max(c.ImageDepth, 1), c.ImageSize, c.ImageSize}
	if cur.elems() > maxElems {
		// Every feature map is bounded so that its size, flattened, and
		// the GEMM dimensions made of it fit an int exactly.
		return p, []*ConfigError{{Key: "image_size", Err: fmt.Errorf("a %s input is over the limit of %d elements: %w", cur, int64(maxElems), ErrTooLarge)}}
	}
	shapes := pl.shapes
	for i := range c.Layer {
		l := &c.Layer[i]
		key := func(k string) string { return fmt.Sprintf("layer[%d].%s", i, k) }
		bad := func(k, format string, args ...any) {
			pl.errs = append(pl.errs, &ConfigError{Key: key(k), Err: fmt.Errorf(format, args...)})
		}
		if l.Name == "" {
			l.Name = fmt.Sprintf("layer%d", i)
		}
		if _, dup := shapes[l.Name]; dup {
			bad("name", "%q names an earlier layer too", l.Name)
		}
		stage := l.Name
		if j := strings.IndexByte(stage, '.'); j > 0 {
			stage = stage[:j]
		}
		src := l.Input // the layer read: input, or the one before
		if src == "" && i > 0 {
			src = c.Layer[i-1].Name
		}
		in := cur
		if l.Input != "" {
			s, ok := shapes[l.Input]
			if !ok {
				bad("input", "no earlier layer is named %q", l.Input)
			} else {
				in = s
			}
		}
		for _, f := range []struct {
			k string
			v int
		}{{"out", l.Out}, {"kernel", l.Kernel}, {"padding", l.Padding}, {"dilation", l.Dilation}, {"groups", l.Groups},
			{"scale", l.Scale}, {"lookups", l.Lookups}, {"rank", l.Rank}, {"heads", l.Heads}, {"length", l.Length},
			{"edges", l.Edges}, {"nodes", l.Nodes}} {
			if f.v < 0 {
				bad(f.k, "must not be negative, got %d", f.v)
			} else if f.v > maxDim {
				bad(f.k, "%d is over the limit of %d: %w", f.v, maxDim, ErrTooLarge)
			}
		}
		if l.Activation != "" && !oneOf(l.Activation, cnnActs) {
			bad("activation", "unknown activation %q (want one of %s)", l.Activation, strings.Join(cnnActs, ", "))
		}
		if l.Norm != "" && !oneOf(l.Norm, cnnNorms) {
			bad("norm", "unknown norm %q (want one of %s)", l.Norm, strings.Join(cnnNorms, ", "))
		}
		if l.DType != "" && l.Op != "gather" {
			bad("dtype", "only a gather has a stored type")
		}
		for _, f := range []struct {
			k string
			v int
		}{{"edges", l.Edges}, {"nodes", l.Nodes}} {
			if f.v != 0 && l.Op != "gat" {
				bad(f.k, "only a gat has edges and nodes")
			}
		}
		if l.Affine != nil && !oneOf(l.Norm, []string{"instancenorm", "groupnorm", "layernorm"}) {
			bad("affine", "only a layer, group or instance norm has an affine scale and shift to leave out")
		}
		if l.Once && l.Op != "input" {
			bad("once", "only an input is one tensor for the whole batch")
		}
		if l.Shares != "" && !oneOf(l.Op, []string{"conv", "conv_transpose", "fc"}) {
			bad("shares", "only a conv, conv_transpose or fc layer shares weights")
		}
		stride := 0 // unset: 1 for a conv, the kernel for pooling
		if l.Stride != nil {
			stride = *l.Stride
			if stride <= 0 {
				bad("stride", "must be positive, got %d", stride)
			}
		}
		out := in
		n := len(pl.errs)
		switch l.Op {
		case "conv":
			out = pl.conv(l, in, stride, stage, bad)
		case "conv_transpose":
			out = pl.convTranspose(l, in, stride, stage, bad)
		case "fc":
			if l.Out == 0 {
				bad("out", "missing: an fc layer needs its output features")
				break
			}
			if in.elems() > maxDim*16 {
				bad("out", "%.0f input features: %w", in.elems(), ErrTooLarge)
				break
			}
			f := in.c * in.d * in.h * in.w // exact: in.elems() is bounded
			out = chw{l.Out, 1, 1, 1}
			pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassLogits, gemm: true, m: 1, k: f, n: l.Out, groups: 1})
			bias := boolOr(l.Bias, true)
			w := float64(f) * float64(l.Out)
			if bias {
				w += float64(l.Out)
			}
			pl.weightsOf(l, weightSig{op: "fc", k: f, n: l.Out, g: 1, bias: bias}, w, bad)
		case "maxpool", "avgpool":
			if l.Kernel == 0 {
				bad("kernel", "missing: %s needs its kernel size", l.Op)
				break
			}
			o, ok := pl.window(in, l.Kernel, stride, l.Kernel, l.Padding, l.Dilation, bad)
			if !ok {
				break
			}
			out = chw{in.c, o.d, o.h, o.w}
			pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op,
				elems: out.elems(), flopsPer: float64(pl.kernelVolume(l.Kernel)), reads: in.elems() / out.elems()})
		case "global_avgpool":
			out = chw{in.c, 1, 1, 1}
			pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op,
				elems: out.elems(), flopsPer: in.positions(), reads: in.positions()})
		case "batchnorm", "act", "norm":
			if l.Op == "act" && l.Activation == "" {
				bad("activation", "missing: an act layer needs its activation")
			}
			if l.Op == "norm" && l.Norm == "" {
				bad("norm", "missing: a norm layer needs its norm")
			}
			// emitted below, as a norm or activation after the layer
		case "add", "mul":
			s, ok := shapes[l.From]
			switch {
			case l.From == "" && l.Op == "add":
				bad("from", "missing: an add needs the layer whose output it adds")
			case l.From == "":
				bad("from", "missing: a mul needs the layer whose output it multiplies by")
			case !ok:
				bad("from", "no earlier layer is named %q", l.From)
			case s.c == in.c && s.positions() == 1 && in.positions() > 1 && pl.once[src]:
				// A sample's vector added to every position of a tensor
				// shared by the batch (PixArt's final scale_shift_table plus
				// the timestep embedding): the table read once, each
				// sample's vector once.
				pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op + ".broadcast",
					elems: out.elems(), flopsPer: flopsAdd, reads: s.elems() / out.elems(), onceReads: in.elems()})
			case s.c == in.c && s.positions() == 1 && in.positions() > 1:
				// A per-channel vector added or multiplied at every position
				// (a diffusion UNet's time embedding, a DiT's adaLN shift,
				// scale and gate): read once, broadcast.
				pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op + ".broadcast",
					elems: out.elems(), flopsPer: flopsAdd, reads: 1})
			case pl.once[l.From] && s.c == in.c && s.positions() == in.positions():
				// One tensor for the whole batch (a fixed position table), of
				// the input's channels and positions, added to every sample:
				// read once a forward.
				pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op,
					elems: out.elems(), flopsPer: flopsAdd, reads: 1, onceReads: s.elems()})
			case s != in:
				bad("from", "%q is %s, the input is %s", l.From, s, in)
			default:
				pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op,
					elems: out.elems(), flopsPer: flopsAdd, reads: 2})
			}
		case "scalar", "copy":
			// One memory pass over the input: with a number (x + 1), or a
			// copy into a new layout (a permuting reshape, a .contiguous(), a
			// torch.cat of one tensor). Over a once tensor it runs once.
			fl := 0.0
			if l.Op == "scalar" {
				fl = flopsAdd
			}
			pl.once[l.Name] = pl.once[src]
			pl.emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op,
				elems: out.elems(), flopsPer: fl, reads: 1, once: pl.once[src]})
		case "flatten":
			out = chw{in.c * in.d * in.h * in.w, 1, 1, 1}
		case "upsample":
			out = pl.upsample(l, in, stage, bad)
		case "concat":
			out = pl.concat(l, stage, bad)
		case "embedding":
			out = pl.embedding(l, stage, bad)
		case "gather":
			out = pl.gather(l, stage, bad)
		case "gat":
			out = pl.gat(l, in, stage, bad)
		case "cross":
			out = pl.cross(l, in, stage, bad)
		case "input":
			out = pl.input(l, bad)
			pl.once[l.Name] = l.Once
		case "attention":
			out = pl.attention(l, stage, bad)
		case "geglu":
			out = pl.geglu(l, in, stage, bad)
		case "":
			bad("op", "missing: want one of %s", strings.Join(cnnOps, ", "))
		default:
			bad("op", "unknown op %q (want one of %s)", l.Op, strings.Join(cnnOps, ", "))
		}
		if len(pl.errs) == n && out.elems() > maxElems {
			bad("out", "the output, %s, is over the limit of %d elements: %w", out, int64(maxElems), ErrTooLarge)
		}
		if len(pl.errs) > n {
			if out.elems() > maxElems {
				out = in // keep the checks of later layers bounded
			}
			shapes[l.Name] = out
			cur = out
			continue
		}
		switch {
		case l.Op == "batchnorm" || l.Norm == "batchnorm":
			pl.emit(cnnOp{name: l.Name + ".bn", stage: stage, class: model.ClassNorm, kind: "batchnorm",
				elems: out.elems(), flopsPer: 2, reads: 1})
			p.params += 2 * float64(out.c)
			p.normParams += 2 * float64(out.c)
		case l.Norm == "instancenorm" || l.Norm == "groupnorm" || l.Norm == "layernorm":
			// Statistics per sample and channel: a pass to reduce and a
			// pass to normalise (read twice, written once); the affine
			// scale and shift are parameters. Unlike a batch norm it
			// cannot be folded into the weights at inference.
			// A group norm (statistics per sample and group) and a layer
			// norm (per position, over the channels) cost the same passes.
			pl.emit(cnnOp{name: l.Name + "." + l.Norm, stage: stage, class: model.ClassNorm, kind: l.Norm,
				elems: out.elems(), flopsPer: flopsLayerNorm, reads: 2})
			if boolOr(l.Affine, true) {
				p.params += 2 * float64(out.c)
				p.normParams += 2 * float64(out.c)
			}
		}
		if l.Activation != "" {
			pl.emit(cnnOp{name: l.Name + "." + l.Activation, stage: stage, class: model.ClassElementwise, kind: l.Activation,
				elems: out.elems(), flopsPer: flopsReLU, reads: 1})
		}
		if l.Op != "flatten" {
			p.activations += out.elems()
			if l.Norm != "" && l.Op != "batchnorm" {
				p.activations += out.elems()
			}
		}
		shapes[l.Name] = out
		cur = out
	}
	return p, pl.errs
}
