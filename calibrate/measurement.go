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
	// An MLA kernel (KernelMLAPrefill, KernelMLADecode) is an attention
	// whose values are VDim wide (the latent's width in decode, where
	// Latent says K and V are one cached latent).
	VDim   int
	Latent bool
	// A mixture-of-experts layer on one rank (KernelMoE, KernelGroupedGEMM):
	// M tokens enter, K is the hidden size, N the full expert width
	// (split MoETP ways); each token picks TopK of Experts experts, split
	// MoEEP ways; Routing names the token→expert distribution of the
	// measurement ("balanced", "power_law_1.2"; see routing.go), or, for
	// a bare grouped GEMM, is empty and Batch rows go to each of Experts
	// local experts.
	Experts, TopK, MoETP, MoEEP int
	Routing                     string
	// Ranks of a collective.
	Ranks int
	File  string // file it was read from, for messages; not written by WriteCSV
	Line  int    // line in the file it was read from; not written by WriteCSV
}

// FastestSample returns a copy of ms whose Time is each row's fastest
// sample (TimeMin), where the row has one. On a machine that other work
// shares, a slow spell lengthens some samples and never shortens one, so
// the fastest is the steadier estimate of the kernel's own time (a quiet
// machine's median and minimum differ by a few per cent). Third-party rows
// without a minimum keep their time.
func FastestSample(ms []Measurement) []Measurement {
	out := make([]Measurement, len(ms))
	for i, m := range ms {
		if m.TimeMin > 0 {
			m.Time = m.TimeMin
		}
		out[i] = m
	}
	return out
}
