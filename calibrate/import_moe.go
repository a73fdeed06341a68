package calibrate

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Kernel names of the MoE and MLA measurements.
const (
	KernelMoE         = "moe"          // one MoE module forward on one rank (aiconfigurator: routing, grouped GEMMs, activation)
	KernelGroupedGEMM = "grouped_gemm" // one grouped GEMM over local experts (InferSim: DeepGEMM)
	KernelMLAPrefill  = "mla_prefill"  // MLA context attention (q/k width 192, v 128)
	KernelMLADecode   = "mla_decode"   // absorbed MLA decode over the latent (width 512 + 64)
)

// DeepSeek-V3's MLA geometry, fixed in aiconfigurator's MLA collector and
// in InferSim's FlashMLA tables (SOURCES.md): kv_lora_rank 512,
// qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128.
const (
	mlaLatent = 512
	mlaRope   = 64
	mlaNope   = 128
	mlaV      = 128
)

// moeKernels are the kernel_source values of the MoE rows fitted: the
// CUTLASS grouped GEMMs of TensorRT-LLM's gated MoE (and the A100 table's
// single default path). The others (DeepGEMM fp8-block, the TRT-LLM-gen
// min-latency and MXFP4 paths, the non-gated ReLU² MoE) are other kernels
// and are skipped with a count, as in the GEMM and attention tables.
var moeKernels = map[string]bool{"moe_torch_flow_cutlass": true, "moe_torch_flow": true}

// importMoEMLA turns a row of an aiconfigurator MoE or MLA table into a
// Measurement.
func importMoEMLA(r *row, kind, device string) (m Measurement, skip int) {
	switch kind {
	case "aic-moe":
		d := r.str("moe_dtype")
		if !moeKernels[r.str("kernel_source")] || (d != "bfloat16" && d != "fp8" && d != "nvfp4") ||
			(r.str("kernel_source") == "moe_torch_flow" && d != "bfloat16") {
			return m, skipVariant
		}
		m = Measurement{Device: device, Kernel: KernelMoE, DType: r.dtype("moe_dtype"),
			M: r.count("num_tokens", false), K: r.count("hidden_size", false), N: r.count("inter_size", false),
			TopK: r.count("topk", false), Experts: r.count("num_experts", false),
			MoETP: r.count("moe_tp_size", false), MoEEP: r.count("moe_ep_size", false),
			Routing: r.str("distribution"), Time: r.ms("latency")}
		if len(r.errs) > 0 {
			return m, skipNone
		}
		if m.TopK > m.Experts || m.Experts%m.MoEEP != 0 || m.N%m.MoETP != 0 {
			r.fail("num_experts", fmt.Errorf("top-k %d of %d experts over %d EP ranks and width %d over %d TP ranks do not divide", m.TopK, m.Experts, m.MoEEP, m.N, m.MoETP))
			return m, skipNone
		}
		if rankLoads(m.M, m.Experts, m.TopK, m.MoEEP, m.Routing, 0) == nil {
			r.fail("distribution", fmt.Errorf("unknown routing %q (want balanced or power_law_<alpha>)", m.Routing))
		}
	case "aic-mla-context":
		isl := r.count("isl", false)
		m = Measurement{Device: device, Kernel: KernelMLAPrefill, DType: model.BF16, Batch: r.count("batch_size", false),
			Heads: r.count("num_heads", false), QLen: isl, KVLen: isl, HeadDim: mlaNope + mlaRope, VDim: mlaV,
			Time: r.ms("latency")}
		m.KVHeads = m.Heads
		m.KVDType = r.dtype("kv_cache_dtype")
	case "aic-mla-generation":
		// step is the tokens already cached (2^n − 1): attention spans
		// step + 1 keys (SOURCES.md).
		m = Measurement{Device: device, Kernel: KernelMLADecode, DType: model.BF16, Batch: r.count("batch_size", false),
			Heads: r.count("num_heads", false), KVHeads: 1, QLen: 1, KVLen: r.count("step", true) + 1,
			HeadDim: mlaLatent + mlaRope, VDim: mlaLatent, Latent: true, Time: r.ms("latency")}
		m.KVDType = r.dtype("kv_cache_dtype")
	}
	if m.KVDType == m.DType {
		m.KVDType = model.Invalid
	}
	if kind != "aic-moe" {
		a := AttentionOf(m)
		m.FLOPs, m.Bytes = a.FLOPs(), a.Bytes()
	}
	return m, skipNone
}

// readInferSim reads one of InferSim's kernel tables (SOURCES.md:
// alibaba/InferSim bench_data). The table's kind and shape are in its
// path, as InferSim lays them out:
//
//   - mla/decode/<dev>/<heads>-<latent>-<rope>.csv: FlashMLA decode,
//     columns dtype, kv_dtype, batch_size, kv_len, latency_us;
//   - mla/prefill/<dev>/<heads>-<nope>-<rope>.csv: MLA prefill of one
//     sequence, dtype, seq_len, latency_us (value width 128);
//   - grouped_gemm/{decode,prefill}/<dev>/data.csv: DeepGEMM's fp8 grouped
//     GEMMs, num_local_experts, hidden_size, intermediate_size,
//     tokens_per_expert, up_proj_us (gate and up, N = 2·intermediate),
//     down_proj_us: two measurements a row.
//
// The device is the path's <dev> ("h800", "h20"). Other InferSim tables
// (MHA, DSA, GDN, dense GEMM) are refused.
func readInferSim(r io.Reader, file string) ([]Measurement, []error, error) {
	parts := strings.Split(filepath.ToSlash(dataName(file)), "/")
	n := len(parts)
	if n < 4 {
		return nil, nil, &ParseError{File: file, Err: errors.New("an InferSim table is named by its path: <kind>/<phase>/<device>/<shape>.csv")}
	}
	kind, phase, dev, base := parts[n-4], parts[n-3], parts[n-2], strings.TrimSuffix(parts[n-1], ".csv")
	var dims [3]int
	if kind == "mla" {
		if _, err := fmt.Sscanf(base, "%d-%d-%d", &dims[0], &dims[1], &dims[2]); err != nil || dims[0] <= 0 {
			return nil, nil, &ParseError{File: file, Err: fmt.Errorf("MLA table name %q is not <heads>-<dim>-<rope>", base)}
		}
	} else if kind != "grouped_gemm" {
		return nil, nil, &ParseError{File: file, Err: fmt.Errorf("InferSim %s tables are not read (MLA and grouped GEMM are)", kind)}
	}
	cr := csv.NewReader(bufio.NewReader(r))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, nil, csvError(file, err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(h)] = i
	}
	var need []string
	switch {
	case kind == "grouped_gemm":
		need = []string{"num_local_experts", "hidden_size", "intermediate_size", "tokens_per_expert", "up_proj_us", "down_proj_us"}
	case phase == "decode":
		need = []string{"dtype", "kv_dtype", "batch_size", "kv_len", "latency_us"}
	default:
		need = []string{"dtype", "seq_len", "latency_us"}
	}
	var errs []error
	for _, c := range need {
		if _, ok := idx[c]; !ok {
			errs = append(errs, &ParseError{File: file, Line: 1, Column: c, Err: ErrMissingColumn})
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	var ms []Measurement
	us := func(rw *row, c string) model.Seconds { return model.Seconds(rw.num(c, true) * 1e-6) }
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, csvError(file, err))
			break
		}
		line, _ := cr.FieldPos(0)
		rw := &row{file: file, line: line, rec: rec, idx: idx}
		var add []Measurement
		switch {
		case kind == "grouped_gemm":
			e, per := rw.count("num_local_experts", false), rw.count("tokens_per_expert", false)
			h, in := rw.count("hidden_size", false), rw.count("intermediate_size", false)
			for _, g := range []struct {
				k, n int
				col  string
			}{{h, 2 * in, "up_proj_us"}, {in, h, "down_proj_us"}} {
				add = append(add, Measurement{Device: dev, Source: FormatInferSim, Kernel: KernelGroupedGEMM, DType: model.FP8,
					M: e * per, K: g.k, N: g.n, Batch: per, Experts: e, Time: us(rw, g.col)})
			}
		case phase == "decode":
			m := Measurement{Device: dev, Source: FormatInferSim, Kernel: KernelMLADecode, DType: rw.dtype("dtype"), KVDType: rw.dtype("kv_dtype"),
				Batch: rw.count("batch_size", false), Heads: dims[0], KVHeads: 1, QLen: 1, KVLen: rw.count("kv_len", false),
				HeadDim: dims[1] + dims[2], VDim: dims[1], Latent: true, Time: us(rw, "latency_us")}
			add = append(add, m)
		default:
			l := rw.count("seq_len", false)
			add = append(add, Measurement{Device: dev, Source: FormatInferSim, Kernel: KernelMLAPrefill, DType: rw.dtype("dtype"),
				Batch: 1, Heads: dims[0], KVHeads: dims[0], QLen: l, KVLen: l, HeadDim: dims[1] + dims[2], VDim: mlaV, Time: us(rw, "latency_us")})
		}
		if len(rw.errs) > 0 {
			errs = append(errs, rw.errs...)
			continue
		}
		for _, m := range add {
			if m.KVDType == m.DType {
				m.KVDType = model.Invalid
			}
			if m.Kernel == KernelGroupedGEMM {
				g := GroupedGEMMOf(m)
				m.FLOPs, m.Bytes = g.FLOPs(), g.Bytes()
			} else {
				a := AttentionOf(m)
				m.FLOPs, m.Bytes = a.FLOPs(), a.Bytes()
			}
			m.File, m.Line = file, line
			ms = append(ms, m)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if len(ms) == 0 {
		return nil, nil, &ParseError{File: file, Err: ErrNoRows}
	}
	return ms, nil, nil
}

// GroupedGEMMOf returns the grouped GEMM a grouped_gemm measurement timed:
// M rows over Experts experts, fp8 in (DeepGEMM), bf16 out.
func GroupedGEMMOf(m Measurement) model.GroupedGEMM {
	c := m.DType
	if c.Size() < 2 {
		c = model.BF16
	}
	return model.GroupedGEMM{Rows: m.M, Experts: float64(m.Experts), K: m.K, N: m.N, A: m.DType, B: m.DType, C: c}
}
