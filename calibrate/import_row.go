package calibrate

// One row of a third-party table to a Measurement: which kernel each
// source's columns describe, and the rows skipped.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// A row is one CSV record with its line, read by column name.
type row struct {
	file   string
	line   int
	rec    []string
	idx    map[string]int
	consts map[string]string // columns the file dropped as constant, with their value
	errs   []error
}

func (r *row) fail(col string, err error) {
	r.errs = append(r.errs, &ParseError{File: r.file, Line: r.line, Column: col, Err: err})
}

func (r *row) str(col string) string {
	i, ok := r.idx[col]
	if !ok {
		return r.consts[col]
	}
	if i >= len(r.rec) {
		return ""
	}
	return strings.TrimSpace(r.rec[i])
}

// num parses a finite number ≥ 0 (> 0 when positive).
func (r *row) num(col string, positive bool) float64 {
	s := r.str(col)
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		r.fail(col, fmt.Errorf("not a number: %q", s))
		return 0
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (positive && v == 0):
		what := "a non-negative"
		if positive {
			what = "a positive"
		}
		r.fail(col, fmt.Errorf("want %s finite number, not %s", what, s))
		return 0
	}
	return v
}

// count parses a whole number ≥ 1 (≥ 0 when zero is allowed).
func (r *row) count(col string, zero bool) int {
	v := r.num(col, !zero)
	if v != math.Trunc(v) || v > 1<<40 {
		r.fail(col, fmt.Errorf("want a whole number, not %s", r.str(col)))
		return 0
	}
	return int(v)
}

func (r *row) dtype(col string) model.DType {
	s := r.str(col)
	switch s {
	case "bf16xbf16->bf16":
		return model.BF16
	case "f32xf32->f32":
		// XLA runs f32 dots on TF32 tensor cores by default: the table's
		// 4096³ f32 runs at 403 TFLOP/s, six times the H100's fp32 peak.
		return model.TF32
	}
	d, err := model.ParseDType(s)
	if err != nil {
		r.fail(col, err)
	}
	return d
}

// ms parses a time in milliseconds into seconds.
func (r *row) ms(col string) model.Seconds { return model.Seconds(r.num(col, true) * 1e-3) }

// vidurPasses is, per Vidur memory-bound op, the bytes moved per element
// (fp16) of its `elements` column: a norm, rotary or embedding gather
// reads and writes each element (2 passes); a residual add reads two and
// writes one (3); a gated activation's elements count both halves it
// reads, and it writes one half (1.5).
var vidurPasses = map[string]float64{
	"input_layernorm": 2, "post_attention_layernorm": 2, "attn_rope": 2, "emb": 2, "add": 3, "mlp_act": 1.5,
}

// vidurKernels names Vidur's memory-bound ops as kernels.
var vidurKernels = map[string]string{
	"input_layernorm": "layernorm", "post_attention_layernorm": "layernorm", "attn_rope": "rope",
	"emb": "embedding", "add": "add", "mlp_act": "activation",
}

// Why importRow skips a row.
const (
	skipNone    = iota
	skipWindow  // a sliding window shorter than the sequence
	skipKernel  // a kernel the cost model does not price
	skipVariant // another library's kernel beside the table's default one
)

// aiconfiguratorOtherKernels are the kernel_source values of rows the
// importer skips in an aiconfigurator GEMM or attention table. The B200
// tables time, beside the framework's default path (torch_flow), other
// libraries' kernels for some of the same shapes: DeepGEMM's fp8
// block-scaled GEMM (gemm_dtype fp8_block) and FlashInfer attention. One
// model per class is fitted to one library's kernels, as on the other
// devices, so those rows are left out, with a warning that counts them.
var aiconfiguratorOtherKernels = map[string]bool{"deepgemm": true, "torch_flow_flashinfer": true}

// importRow turns one record into a Measurement; skip says why a row is
// left out (a sliding window, an unknown op, another kernel), or skipNone.
func importRow(r *row, kind, device string) (m Measurement, skip int) {
	switch kind {
	case "aic-gemm", "aic-context", "aic-generation":
		if aiconfiguratorOtherKernels[r.str("kernel_source")] {
			return m, skipVariant
		}
	}
	switch kind {
	case "aic-moe", "aic-mla-context", "aic-mla-generation":
		return importMoEMLA(r, kind, device)
	case "aic-gemm":
		d := r.dtype("gemm_dtype")
		mm, n, k := r.count("m", false), r.count("n", false), r.count("k", false)
		m = gemmMeasurement(d, mm, n, k, 1)
		m.Time = r.ms("latency")
		m.Device = device
	case "aic-context", "aic-generation":
		m = Measurement{Device: device, DType: r.dtype("attn_dtype"), KVDType: r.dtype("kv_cache_dtype"),
			Batch: r.count("batch_size", false), Heads: r.count("num_heads", false), KVHeads: r.count("num_key_value_heads", false),
			HeadDim: r.count("head_dim", false), Time: r.ms("latency")}
		isl := r.count("isl", false)
		win := r.count("window_size", true)
		if kind == "aic-context" {
			m.Kernel, m.QLen, m.KVLen = KernelAttentionPrefill, isl, isl
		} else {
			// The KV cache holds the prompt and the tokens generated so
			// far: isl + step (an assumption; aiconfigurator's
			// collector names the cache length s = isl + step).
			m.Kernel, m.QLen, m.KVLen = KernelAttentionDecode, 1, isl+r.count("step", true)
		}
		if m.KVDType == m.DType {
			m.KVDType = model.Invalid
		}
		if win > 0 && win < m.KVLen {
			return m, skipWindow
		}
		a := AttentionOf(m)
		m.FLOPs, m.Bytes = a.FLOPs(), a.Bytes()
	case "aic-comm":
		op := r.str("op_name")
		switch op {
		case "alltoall", "all_to_all":
			op = KernelAllToAll
		case KernelAllReduce, KernelAllGather, KernelReduceScatter:
		default:
			r.fail("op_name", fmt.Errorf("unknown collective %q", op))
		}
		d := model.FP16
		for _, c := range []string{"nccl_dtype", "allreduce_dtype"} {
			if r.str(c) != "" {
				d = r.dtype(c)
			}
		}
		// message_size counts elements of the row's dtype: an
		// all-gather (no arithmetic, so blind to the type) of the same
		// message_size takes 1.92 times as long in half as in int8 at
		// 256 Mi (H100, NCCL 2.29.2: 1398 µs against 730 µs), the
		// ratio of their sizes; read as bytes, int8 would move the same
		// bytes twice as fast. The 8-GPU half all-reduce then reaches a
		// bus bandwidth of 650 GB/s on 450 GB/s NVLink 4, which NCCL's
		// in-switch reduction (NVLS) allows. TensorRT-LLM's own kernel
		// (kernel_source TRTLLM) is the one-shot custom all-reduce.
		if op == KernelAllReduce && r.str("kernel_source") == "TRTLLM" {
			op = KernelAllReduceOneShot
		}
		m = Measurement{Device: device, Kernel: op, DType: d, Ranks: r.count("num_gpus", false),
			Bytes: model.Bytes(r.num("message_size", true) * d.Size()), Time: r.ms("latency")}
		m.Driver = r.str("version")
	case "vidur-gemm":
		d := r.dtype("dtype")
		m = gemmMeasurement(d, r.count("M", false), r.count("N", false), r.count("K", false), 1)
		m.Device, m.Time, m.TimeMin, m.TimeMax = r.str("device"), r.ms("time_ms_median"), r.ms("time_ms_min"), r.ms("time_ms_max")
	case "vidur-memory":
		op := r.str("op")
		p, ok := vidurPasses[op]
		if !ok {
			return m, skipKernel
		}
		d := r.dtype("dtype")
		m = Measurement{Device: r.str("device"), Kernel: vidurKernels[op], DType: d,
			Bytes: model.Bytes(p * r.num("elements", true) * d.Size()), Time: r.ms("time_ms_median"),
			TimeMin: r.ms("time_ms_min"), TimeMax: r.ms("time_ms_max")}
	case "llmcompass":
		d := r.dtype("dtype")
		switch op := r.str("op"); op {
		case "matmul":
			m = gemmMeasurement(d, r.count("M", false), r.count("N", false), r.count("K", false), 1)
		case "softmax", "layernorm", "gelu":
			// Read and write each element once.
			m = Measurement{Kernel: op, DType: d, Bytes: model.Bytes(2 * r.num("elements", true) * d.Size())}
		default:
			return m, skipKernel
		}
		m.Device, m.Time = r.str("gpu"), r.ms("time_ms")
	case "xla":
		d := r.dtype("dtype_key")
		m = gemmMeasurement(d, r.count("m", false), r.count("n", false), r.count("k", false), r.count("b", false))
		m.Time = r.ms("time_ms_derived")
		m.Device = r.str("xla_device_key")
		if m.Device == "sm_90" {
			m.Device = "H100 (sm_90)" // SOURCES.md: upstream calls this table "GEMMS on H100"
		}
	}
	return m, skipNone
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
