package calibrate

import "github.com/perfsim/perfsim/model"

// A Measurement is one timed kernel, as the CUDA suite, the CPU suite and
// the third-party importers produce it. Its CSV schema is documented in
// kernels/README.md.
type Measurement struct {
	Device  string // device name as the source gives it
	Driver  string // driver / library version, if known
	Clocks  string // clock state, if known
	Source  string // where the row came from: "perfsim-cuda", "aiconfigurator", ...
	Kernel  string // gemm, copy, read, write, triad, launch, attention_prefill, attention_decode, all_reduce, ...
	DType   model.DType
	M, N, K int // GEMM shape; 0 where not a GEMM
	Batch   int // batched GEMMs, or the batch of an attention kernel
	Bytes   model.Bytes
	FLOPs   model.FLOPs
	Time    model.Seconds // median
	TimeMin model.Seconds
	TimeMax model.Seconds
	Reps    int
	// Attention shape, where Kernel is an attention kernel.
	Heads, KVHeads, HeadDim, QLen, KVLen int
	KVDType                              model.DType // the K/V cache's type; Invalid means DType
	// Ranks of a collective.
	Ranks int
	File  string // file it was read from, for messages; not written by WriteCSV
	Line  int    // line in the file it was read from; not written by WriteCSV
}
