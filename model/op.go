package model

import "math"

// The kernel IR. A workload is a list of Ops; each Op wraps one Kernel (a
// GEMM, a fused attention, an elementwise pass, an embedding gather, a
// collective) and says how many times it runs in the phase and what part
// of the model it belongs to. The cost model prices a Kernel once; the
// simulator multiplies by Count.

// A Kernel is one launch on one device.
type Kernel interface {
	// FLOPs is the arithmetic of one launch (a multiply-accumulate is 2).
	FLOPs() FLOPs
	// Bytes is the minimum traffic to and from device memory of one launch.
	Bytes() Bytes
}

// Class groups ops for breakdowns and plots.
type Class uint8

// The op classes, in the order breakdowns print them.
const (
	ClassOther       Class = iota
	ClassEmbedding         // token/position embedding, patch embedding
	ClassQKV               // Q, K, V projections
	ClassAttention         // Q·Kᵀ, softmax, scores·V (fused or not)
	ClassOutProj           // attention output projection
	ClassFFN               // dense MLP
	ClassExperts           // MoE experts and router
	ClassNorm              // layer/RMS/batch norms
	ClassElementwise       // activations, residual adds, rotary, ...
	ClassLogits            // LM head / classifier
	ClassConv              // CNN convolutions (as implicit GEMMs)
	ClassComm              // collectives and point-to-point transfers
	ClassOptimizer         // optimizer step
	numClasses
)

var classNames = [...]string{
	ClassOther: "other", ClassEmbedding: "embedding", ClassQKV: "qkv_proj",
	ClassAttention: "attention", ClassOutProj: "out_proj", ClassFFN: "ffn",
	ClassExperts: "experts", ClassNorm: "norm", ClassElementwise: "elementwise",
	ClassLogits: "logits", ClassConv: "conv", ClassComm: "communication",
	ClassOptimizer: "optimizer",
}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "other"
}

// Classes lists every class in print order.
func Classes() []Class {
	cs := make([]Class, numClasses)
	for i := range cs {
		cs[i] = Class(i)
	}
	return cs
}

// An Op is a kernel in the context of a workload.
type Op struct {
	Name   string // e.g. "attn.qkv", "ffn.up", "conv2_1.3x3"
	Stage  string // the part of the model, as the seed's table names it: "attention", "ffn", "embedding", ...
	Class  Class
	Count  int // times the kernel runs in the phase (e.g. layers)
	Kernel Kernel
}

// FLOPs returns the arithmetic of all Count runs.
func (o Op) FLOPs() FLOPs { return FLOPs(float64(o.Count)) * o.Kernel.FLOPs() }

// Bytes returns the traffic of all Count runs.
func (o Op) Bytes() Bytes { return Bytes(float64(o.Count)) * o.Kernel.Bytes() }

// MACs returns the multiply-accumulates of all Count runs of a GEMM or a
// grouped GEMM, and 0 for other kernels.
func (o Op) MACs() float64 {
	switch g := o.Kernel.(type) {
	case GEMM:
		return float64(o.Count) * g.MACs()
	case GroupedGEMM:
		return float64(o.Count) * float64(g.FLOPs()) / 2
	}
	return 0
}

// A GEMM is C[M×N] = A[M×K]·B[K×N], Batch independent times in one launch
// (a batched GEMM, e.g. one per attention head). A is the activation, B the
// weight (or the second activation in attention), C the output. A weight
// in a narrower type than A (int4 weight-only quantisation, say) is
// dequantised to A's type on the fly and computed at A's peak.
//
// AElems and CElems state the elements of A read from, and of C written
// to, device memory by one GEMM of the Batch when they differ from M·K and
// M·N; 0 means M·K and M·N. A GEMM that accumulates into C (beta 1, as a
// weight gradient into its fp32 main gradient) reads C as well: 2·M·N. A convolution runs as an implicit GEMM
// (cuDNN's IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM algorithms; CUTLASS,
// "Implicit GEMM Convolution", media/docs/implicit_gemm_convolution.md):
// the unfolded (im2col) matrix of M = output positions by K = C_in ×
// kernel volume is never formed in memory; each tile gathers its
// operand from the input tensor, C_in × D × H × W a sample, whose
// elements are read from DRAM about once (the overlap of neighbouring
// windows is served by L2 and shared memory). A conv's forward and
// weight-gradient GEMMs state A as the input tensor, its data-gradient
// GEMM states C as the input gradient. FLOPs stay 2·M·N·K.
type GEMM struct {
	M, K, N int
	Batch   int // independent GEMMs in the launch; 0 means 1
	A, B, C DType
	AElems  float64 // elements of A in memory, one GEMM; 0 means M·K
	CElems  float64 // elements of C in memory, one GEMM; 0 means M·N
}

// AElements returns the elements of A one GEMM of the Batch reads from
// memory: AElems, or M·K.
func (g GEMM) AElements() float64 {
	if g.AElems > 0 {
		return g.AElems
	}
	return float64(g.M) * float64(g.K)
}

// CElements returns the elements of C one GEMM of the Batch writes to
// memory: CElems, or M·N.
func (g GEMM) CElements() float64 {
	if g.CElems > 0 {
		return g.CElems
	}
	return float64(g.M) * float64(g.N)
}

func (g GEMM) batch() float64 {
	if g.Batch <= 0 {
		return 1
	}
	return float64(g.Batch)
}

// MACs returns M·N·K·Batch.
func (g GEMM) MACs() float64 { return float64(g.M) * float64(g.N) * float64(g.K) * g.batch() }

// FLOPs returns 2·M·N·K·Batch.
func (g GEMM) FLOPs() FLOPs { return FLOPs(2 * g.MACs()) }

// Bytes returns the minimum traffic: A and B read once, C written once
// (A's and C's elements as AElements and CElements count them).
func (g GEMM) Bytes() Bytes {
	k, n := float64(g.K), float64(g.N)
	return Bytes(g.batch() * (g.AElements()*g.A.Size() + k*n*g.B.Size()*(1+g.B.ScaleOverhead()) + g.CElements()*g.C.Size()))
}

// Compute returns the type the GEMM's multiply runs in: the wider of A and
// B, so that a weight-only int4 GEMM with bf16 activations runs at the
// bf16 peak.
func (g GEMM) Compute() DType {
	if g.B.Size() > g.A.Size() {
		return g.B.Peak()
	}
	return g.A.Peak()
}

// Attention is scaled dot-product attention over Batch sequences of Heads
// query heads, KVHeads key/value heads (grouped-query when fewer), QLen
// queries attending to KVLen keys, of width HeadDim. Fused is
// FlashAttention-style: Q, K and V read once, O written once, the scores
// never reach memory. Unfused writes the scores and the probabilities and
// reads them back.
//
// Three fields describe today's variants, each zero for plain attention:
// VDim is the width of a value head when it differs from the query–key
// width HeadDim (DeepSeek's MLA prefill: 192 and 128); Latent says K and V
// are one cached vector per token and KV head, of width HeadDim, whose
// first VDim elements serve as the value (MLA decode with the
// up-projections absorbed, as FlashMLA runs it: 576 = 512 + 64, V 512),
// so the cache is read once; Window is a sliding window: each query
// attends to at most the Window keys ending at its own position (Mistral
// v0.1, Gemma 2/3 local layers, gpt-oss), and a decode step reads at most
// Window keys.
type Attention struct {
	Batch, Heads, KVHeads int
	QLen, KVLen, HeadDim  int
	Causal, Fused         bool
	DType, KVDType        DType // activations (Q, O) and the K/V cache
	VDim                  int   // value head width; 0 means HeadDim
	Window                int   // sliding window in keys; 0 means none
	Latent                bool  // K and V are one cached latent of width HeadDim (MLA, absorbed)
}

// ValueDim returns the width of a value head: VDim, or HeadDim when 0.
func (a Attention) ValueDim() int {
	if a.VDim > 0 {
		return a.VDim
	}
	return a.HeadDim
}

// KeysRead returns the keys one sequence's KV head streams: KVLen, capped
// at Window+QLen−1 under a sliding window (the keys some query of the
// QLen sees).
func (a Attention) KeysRead() int {
	if a.Window > 0 && a.KVLen > a.Window+a.QLen-1 {
		return a.Window + a.QLen - 1
	}
	return a.KVLen
}

// KVWidth returns the cached elements per token and KV head that
// attention reads: HeadDim for a latent cache, HeadDim + ValueDim
// otherwise.
func (a Attention) KVWidth() int {
	if a.Latent {
		return a.HeadDim
	}
	return a.HeadDim + a.ValueDim()
}

// Pairs returns the query–key pairs one head scores. Causal attention of
// QLen new queries at the end of KVLen keys scores, for query i, the
// KVLen−QLen+i+1 keys before it: QLen·KVLen − QLen·(QLen−1)/2 in all
// (half the square, plus the diagonal, when QLen = KVLen; KVLen when
// decoding one token).
//
// Under a sliding window of w keys, a query whose causal span is n keys
// scores min(n, w) of them. The spans of the QLen queries are KVLen−QLen+1
// ... KVLen (each at least 1), so the pairs are the causal count less, for
// every span above w, its excess.
func (a Attention) Pairs() float64 {
	q, kv := float64(a.QLen), float64(a.KVLen)
	if !a.Causal {
		if a.Window > 0 && float64(a.Window) < kv {
			kv = float64(a.Window)
		}
		return q * kv
	}
	if q > kv {
		q = kv
	}
	p := q*kv - q*(q-1)/2
	if w := float64(a.Window); w > 0 && kv > w {
		// Spans run from lo = kv−q+1 to kv; those above w lose span−w.
		lo := math.Max(kv-q+1, w+1)
		if n := kv - lo + 1; n > 0 {
			p -= n*(lo+kv)/2 - n*w
		}
	}
	return p
}

// FLOPs counts Q·Kᵀ and P·V (2·HeadDim and 2·ValueDim per pair, as
// multiply-adds) plus
// about 5 FLOPs per score for the scale, max, exp, sum and divide of the
// softmax.
func (a Attention) FLOPs() FLOPs {
	p := a.Pairs() * float64(a.Batch) * float64(a.Heads)
	return FLOPs(p * (2*float64(a.HeadDim) + 2*float64(a.ValueDim()) + 5))
}

// Bytes is the traffic: Q read and O written in DType, K and V (or the
// latent) of the keys read (KeysRead) in KVDType, and, unfused, the scores written, read, the probabilities
// written and read again (4 passes over B·H·pairs elements in DType).
func (a Attention) Bytes() Bytes {
	b := float64(a.Batch)
	qo := b * float64(a.Heads) * float64(a.QLen) * float64(a.HeadDim+a.ValueDim()) * a.DType.Size()
	kv := b * float64(a.KVHeads) * float64(a.KeysRead()) * float64(a.KVWidth()) * a.KVDType.Size()
	t := qo + kv
	if !a.Fused {
		t += 4 * b * float64(a.Heads) * a.Pairs() * a.DType.Size()
	}
	return Bytes(t)
}

// An Elementwise op streams its inputs once and writes its outputs once:
// norms, activations, residual adds, softmax, rotary embeddings, ...
type Elementwise struct {
	Kind          string // "rmsnorm", "gelu", "residual", ...
	Elements      float64
	Work          FLOPs // arithmetic of the whole pass
	Read, Written Bytes
}

func (e Elementwise) FLOPs() FLOPs { return e.Work }
func (e Elementwise) Bytes() Bytes { return e.Read + e.Written }

// A Gather reads Rows rows of Width elements from a table (an embedding
// lookup) and writes them out.
type Gather struct {
	Rows, Width int
	DType       DType
}

func (g Gather) FLOPs() FLOPs { return 0 }
func (g Gather) Bytes() Bytes {
	return Bytes(2 * float64(g.Rows) * float64(g.Width) * g.DType.Size())
}

// CollectiveKind names a communication pattern.
type CollectiveKind uint8

const (
	AllReduce CollectiveKind = iota
	AllGather
	ReduceScatter
	AllToAll
	SendRecv // point to point, as between pipeline stages
)

var collectiveNames = [...]string{"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}

func (k CollectiveKind) String() string {
	if int(k) < len(collectiveNames) {
		return collectiveNames[k]
	}
	return "collective"
}

// Tier says which network a collective crosses.
type Tier uint8

const (
	IntraNode Tier = iota // NVLink, Infinity Fabric, ICI: within a node
	InterNode             // InfiniBand, Ethernet: between nodes
)

// A Collective moves Size bytes (the full buffer, as NCCL counts it) among
// Ranks devices over one network tier. It does no arithmetic worth costing
// (a reduction's adds are hidden under the transfer).
type Collective struct {
	Kind  CollectiveKind
	Size  Bytes
	Ranks int
	Tier  Tier
	// Beside, when its M is not 0, is the GEMM whose output this
	// all-reduce reduces in the same kernel, tile by tile as the GEMM
	// writes them (TensorRT-LLM's gemm_allreduce_plugin): the
	// collective then costs only what the fused kernel takes beyond the
	// GEMM (package sim prices it). The zero value: a kernel of its own.
	Beside GEMM
}

func (c Collective) FLOPs() FLOPs { return 0 }

// Bytes returns what one rank sends over the link; see Traffic.
func (c Collective) Bytes() Bytes { return c.Traffic() }

// Traffic returns the bytes each rank sends in a ring (or direct)
// implementation: all-reduce 2(p−1)/p·S, all-gather and reduce-scatter
// (p−1)/p·S, all-to-all (p−1)/p·S, send/recv S.
func (c Collective) Traffic() Bytes {
	p := float64(c.Ranks)
	if c.Kind == SendRecv {
		return c.Size
	}
	if p <= 1 {
		return 0
	}
	f := (p - 1) / p
	if c.Kind == AllReduce {
		f *= 2
	}
	return Bytes(f * float64(c.Size))
}

// Steps returns the latency terms of the ring algorithm: 2(p−1) for an
// all-reduce, p−1 for the others, 1 for a send.
func (c Collective) Steps() int {
	switch {
	case c.Kind == SendRecv:
		return 1
	case c.Ranks <= 1:
		return 0
	case c.Kind == AllReduce:
		return 2 * (c.Ranks - 1)
	}
	return c.Ranks - 1
}
