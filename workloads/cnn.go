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
		if o.gemm {
			mm := o.m * b
			wk := w
			if autocast {
				wk = act
				elems := float64(o.k) * float64(o.n) * float64(max(o.groups, 1))
				ops = append(ops, model.Op{Name: o.name + ".cast", Stage: o.stage, Class: model.ClassElementwise, Count: o.count,
					Kernel: model.Elementwise{Kind: "cast", Elements: elems, Read: w.Bytes(elems), Written: act.Bytes(elems)}})
			}
			k = withBatch(model.GEMM{M: mm, K: o.k, N: o.n, A: act, B: wk, C: act}, o.groups)
		} else if ph.FuseCNN && o.kind == "add" {
			// The residual add runs in the epilogue of the convolution
			// before it: the residual is read once more, and the sum is
			// the convolution's own output. It is priced as a streaming
			// read of the residual, so it pays a streaming kernel's fixed
			// cost that the fused kernel does not (a few µs per block).
			k = ew("add.epilogue", o.elems*float64(b), o.flopsPer, 1, 0, act)
		} else {
			k = ew(o.kind, o.elems*float64(b), o.flopsPer, o.reads, 1, act)
		}
		ops = append(ops, model.Op{Name: o.name, Stage: o.stage, Class: o.class, Count: o.count, Kernel: k})
	}
	return ops
}

// A cnnPlan is a CNN with its shapes inferred: per-image ops, merged
// where layers run the same kernel, with the parameter count and the
// activations a training step keeps.
type cnnPlan struct {
	ops         []cnnOp
	params      float64
	normParams  float64
	activations float64 // elements of every layer's output, per image
	maxRows     float64 // the largest GEMM M of one image (H_out·W_out)
}

// A cnnOp is one kernel of one image: a GEMM (m rows per image) or an
// elementwise pass (elems per image).
type cnnOp struct {
	name, stage string
	class       model.Class
	count       int
	gemm        bool
	m, k, n     int
	groups      int
	kind        string
	elems       float64
	flopsPer    float64
	reads       float64
}

// chw is a feature map's shape.
type chw struct{ c, h, w int }

func (s chw) elems() float64 { return float64(s.c) * float64(s.h) * float64(s.w) }

var cnnOps = []string{"conv", "fc", "maxpool", "avgpool", "global_avgpool", "batchnorm", "act", "add", "flatten"}
var cnnActs = []string{"relu", "relu6", "silu", "gelu", "sigmoid", "hardswish"}

// planCNN infers every layer's shape, checks it, and builds the plan.
func planCNN(c *Config) (*cnnPlan, []*ConfigError) {
	var errs []*ConfigError
	p := &cnnPlan{}
	shapes := make(map[string]chw, len(c.Layer))
	cur := chw{c.Channels, c.ImageSize, c.ImageSize}
	if cur.elems() > maxElems {
		// Every feature map is bounded so that its size, flattened, and
		// the GEMM dimensions made of it fit an int exactly.
		return p, []*ConfigError{{Key: "image_size", Err: fmt.Errorf("a %dx%dx%d input is over the limit of %d elements: %w", cur.c, cur.h, cur.w, int64(maxElems), ErrTooLarge)}}
	}
	index := make(map[string]int, len(p.ops))
	emit := func(o cnnOp) {
		key := o.stage + "\x00" + o.kind + fmt.Sprint(o.gemm, o.m, o.k, o.n, o.groups, o.elems, o.reads)
		if i, ok := index[key]; ok {
			p.ops[i].count++
			return
		}
		index[key] = len(p.ops)
		if o.gemm {
			p.maxRows = max(p.maxRows, float64(o.m))
		}
		o.count = 1
		p.ops = append(p.ops, o)
	}
	for i := range c.Layer {
		l := &c.Layer[i]
		key := func(k string) string { return fmt.Sprintf("layer[%d].%s", i, k) }
		bad := func(k, format string, args ...any) {
			errs = append(errs, &ConfigError{Key: key(k), Err: fmt.Errorf(format, args...)})
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
		}{{"out", l.Out}, {"kernel", l.Kernel}, {"padding", l.Padding}, {"dilation", l.Dilation}, {"groups", l.Groups}} {
			if f.v < 0 {
				bad(f.k, "must not be negative, got %d", f.v)
			} else if f.v > maxDim {
				bad(f.k, "%d is over the limit of %d: %w", f.v, maxDim, ErrTooLarge)
			}
		}
		if l.Activation != "" && !oneOf(l.Activation, cnnActs) {
			bad("activation", "unknown activation %q (want one of %s)", l.Activation, strings.Join(cnnActs, ", "))
		}
		if l.Norm != "" && l.Norm != "batchnorm" {
			bad("norm", "unknown norm %q (want batchnorm)", l.Norm)
		}
		stride := 0 // unset: 1 for a conv, the kernel for pooling
		if l.Stride != nil {
			stride = *l.Stride
			if stride <= 0 {
				bad("stride", "must be positive, got %d", stride)
			}
		}
		out := in
		n := len(errs)
		switch l.Op {
		case "conv":
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
			if kk := float64(in.c/g) * float64(l.Kernel) * float64(l.Kernel); kk > maxElems {
				bad("kernel", "%d over %d input channels is a GEMM K of %.4g, over the limit of %d: %w", l.Kernel, in.c/g, kk, int64(maxElems), ErrTooLarge)
			}
			if len(errs) > n {
				break
			}
			oh, ow, ok := window(in, l.Kernel, stride, 1, l.Padding, l.Dilation, bad)
			if !ok {
				break
			}
			out = chw{l.Out, oh, ow}
			emit(cnnOp{name: l.Name, stage: stage, class: model.ClassConv, gemm: true,
				m: oh * ow, k: in.c / g * l.Kernel * l.Kernel, n: l.Out / g, groups: g})
			p.params += float64(l.Out) * float64(in.c/g) * float64(l.Kernel) * float64(l.Kernel)
			if boolOr(l.Bias, false) {
				p.params += float64(l.Out)
			}
		case "fc":
			if l.Out == 0 {
				bad("out", "missing: an fc layer needs its output features")
				break
			}
			if in.elems() > maxDim*16 {
				bad("out", "%.0f input features: %w", in.elems(), ErrTooLarge)
				break
			}
			f := in.c * in.h * in.w // exact: in.elems() is bounded
			out = chw{l.Out, 1, 1}
			emit(cnnOp{name: l.Name, stage: stage, class: model.ClassLogits, gemm: true, m: 1, k: f, n: l.Out, groups: 1})
			p.params += float64(f) * float64(l.Out)
			if boolOr(l.Bias, true) {
				p.params += float64(l.Out)
			}
		case "maxpool", "avgpool":
			if l.Kernel == 0 {
				bad("kernel", "missing: %s needs its kernel size", l.Op)
				break
			}
			oh, ow, ok := window(in, l.Kernel, stride, l.Kernel, l.Padding, l.Dilation, bad)
			if !ok {
				break
			}
			out = chw{in.c, oh, ow}
			emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op,
				elems: out.elems(), flopsPer: float64(l.Kernel * l.Kernel), reads: in.elems() / out.elems()})
		case "global_avgpool":
			out = chw{in.c, 1, 1}
			emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: l.Op,
				elems: out.elems(), flopsPer: float64(in.h * in.w), reads: float64(in.h * in.w)})
		case "batchnorm", "act":
			if l.Op == "act" && l.Activation == "" {
				bad("activation", "missing: an act layer needs its activation")
			}
			// emitted below, as a norm or activation after the layer
		case "add":
			s, ok := shapes[l.From]
			switch {
			case l.From == "":
				bad("from", "missing: an add needs the layer whose output it adds")
			case !ok:
				bad("from", "no earlier layer is named %q", l.From)
			case s != in:
				bad("from", "%q is %dx%dx%d, the input is %dx%dx%d", l.From, s.c, s.h, s.w, in.c, in.h, in.w)
			default:
				emit(cnnOp{name: l.Name, stage: stage, class: model.ClassElementwise, kind: "add",
					elems: out.elems(), flopsPer: flopsAdd, reads: 2})
			}
		case "flatten":
			out = chw{in.c * in.h * in.w, 1, 1}
		case "":
			bad("op", "missing: want one of %s", strings.Join(cnnOps, ", "))
		default:
			bad("op", "unknown op %q (want one of %s)", l.Op, strings.Join(cnnOps, ", "))
		}
		if len(errs) == n && out.elems() > maxElems {
			bad("out", "the output, %dx%dx%d, is over the limit of %d elements: %w", out.c, out.h, out.w, int64(maxElems), ErrTooLarge)
		}
		if len(errs) > n {
			if out.elems() > maxElems {
				out = in // keep the checks of later layers bounded
			}
			shapes[l.Name] = out
			cur = out
			continue
		}
		if l.Op == "batchnorm" || l.Norm == "batchnorm" {
			emit(cnnOp{name: l.Name + ".bn", stage: stage, class: model.ClassNorm, kind: "batchnorm",
				elems: out.elems(), flopsPer: 2, reads: 1})
			p.params += 2 * float64(out.c)
			p.normParams += 2 * float64(out.c)
		}
		if l.Activation != "" {
			emit(cnnOp{name: l.Name + "." + l.Activation, stage: stage, class: model.ClassElementwise, kind: l.Activation,
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
	return p, errs
}

// window returns the output size of a convolution or pooling window:
// ⌊(H + 2·padding − dilation·(kernel−1) − 1)/stride⌋ + 1.
func window(in chw, kernel, stride, defStride, padding, dilation int, bad func(k, format string, args ...any)) (int, int, bool) {
	if stride == 0 {
		stride = defStride
	}
	if dilation == 0 {
		dilation = 1
	}
	span := dilation*(kernel-1) + 1
	ok := true
	if in.h+2*padding < span || in.w+2*padding < span {
		bad("kernel", "%d (dilation %d) is larger than the padded input %dx%d", kernel, dilation, in.h+2*padding, in.w+2*padding)
		ok = false
	}
	if !ok || stride <= 0 {
		return 0, 0, false
	}
	return (in.h+2*padding-span)/stride + 1, (in.w+2*padding-span)/stride + 1, true
}
