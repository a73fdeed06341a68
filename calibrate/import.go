package calibrate

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/model"
)

// The formats ReadFile reads. Each third-party format is documented in
// ../shared/validation/SOURCES.md; the importer for it states how each
// row becomes a Measurement.
const (
	FormatAuto           = "auto"           // decided by the header line
	FormatPerfsim        = "perfsim"        // perfsim's own schema (ReadCSV)
	FormatAIConfigurator = "aiconfigurator" // NVIDIA aiconfigurator: GEMM, context/generation attention, NCCL
	FormatVidur          = "vidur"          // Microsoft Vidur: GEMMs and memory-bound ops
	FormatLLMCompass     = "llmcompass"     // LLMCompass A100 kernels
	FormatXLA            = "xla"            // XLA's sm_90 matmul performance table
	FormatInferSim       = "infersim"       // Alibaba InferSim: FlashMLA and DeepGEMM grouped-GEMM tables (import_moe.go)
)

// Formats lists the formats ReadFile accepts.
var Formats = []string{FormatAuto, FormatPerfsim, FormatAIConfigurator, FormatVidur, FormatLLMCompass, FormatXLA, FormatInferSim}

// Kernel names the importers use besides those of perfsim's suites.
const (
	KernelAttentionPrefill = "attention_prefill" // fused causal attention over a prompt (QLen = KVLen)
	KernelAttentionDecode  = "attention_decode"  // fused attention of one new token against a KV cache
	KernelReduceScatter    = "reduce_scatter"
	KernelAllReduceOneShot = "all_reduce_oneshot" // TensorRT-LLM's custom (one-shot) all-reduce
)

// aiconfiguratorDevices maps the file-name prefix of an aiconfigurator
// table to the device string its parquet files carried (SOURCES.md: the
// constant device column, dropped in the CSV).
var aiconfiguratorDevices = map[string]string{
	"a100_sxm": "NVIDIA A100-SXM4-80GB",
	"h100_sxm": "NVIDIA H100 80GB HBM3",
	"h200_sxm": "NVIDIA H200",
	"b200_sxm": "NVIDIA B200",
}

// aiconfiguratorConstants are, per table (by the end of its file name),
// the columns the conversion dropped where they held one value across the
// file (SOURCES.md: "constant columns dropped"), with that value; an
// importer reads them when the file lacks the column. The newer (B200)
// tables dropped these; the older ones keep them.
var aiconfiguratorConstants = map[string]map[string]string{
	"_custom_allreduce_perf.csv":     {"op_name": "all_reduce", "kernel_source": "TRTLLM", "allreduce_dtype": "bfloat16"},
	"_generation_attention_perf.csv": {"isl": "1", "attn_dtype": "bfloat16"},
	"_moe_perf.csv":                  {"moe_dtype": "bfloat16", "kernel_source": "moe_torch_flow"},
	"_generation_mla_perf.csv":       {"isl": "1"},
}

// constantsOf returns the dropped constant columns of an aiconfigurator
// table named file, or nil.
func constantsOf(file string) map[string]string {
	base := filepath.Base(dataName(file))
	for suffix, c := range aiconfiguratorConstants {
		if strings.HasSuffix(base, suffix) {
			return c
		}
	}
	return nil
}

// MaxFileSize bounds a measurements file: 16 times the largest table of
// ../shared/validation (aiconfigurator's B200 MoE table, 16 MB).
const MaxFileSize = 256 << 20

// ReadFile reads measurements from the file at path in format (FormatAuto
// decides by the header). Rows measured on a device other than device
// (when device is not empty; see SameDevice) are an error in a
// single-device file and skipped with a warning in a file that mixes
// devices by design (Vidur's). It returns the rows, warnings, and an
// error joining every problem found, each naming file:line.
//
// A path ending in .gz is read through gzip (the CUDA suite's CSVs
// compress tenfold); its name less the .gz is what names an
// aiconfigurator or InferSim table's device and shape, and what it holds
// uncompressed is bounded by MaxFileSize too.
func ReadFile(path, format, device string) ([]Measurement, []error, error) {
	f, err := fileio.Open(path, MaxFileSize, "measurements file")
	if err != nil {
		return nil, nil, fmt.Errorf("calibrate: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if dataName(path) != path {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, nil, fmt.Errorf("calibrate: %s: not gzip data, as its .gz name says (%v)", path, err)
		}
		defer z.Close()
		r = &gunzipped{r: z, left: MaxFileSize}
	}
	return Read(r, path, format, device)
}

// dataName is file without a trailing .gz: the name of the data inside.
func dataName(file string) string { return strings.TrimSuffix(file, ".gz") }

// gunzipped reads at most left bytes of decompressed data, and says in
// its errors that they are the compression's (a truncated or corrupt
// stream, or one that decompresses past MaxFileSize); Read names the file.
type gunzipped struct {
	r    io.Reader
	left int64
}

func (g *gunzipped) Read(p []byte) (int, error) {
	if g.left <= 0 {
		var one [1]byte
		if n, _ := g.r.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("gzip: decompresses to more than %d MiB, the limit of a measurements file", MaxFileSize>>20)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n, err := g.r.Read(p)
	g.left -= int64(n)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("gzip: %w", err)
	}
	return n, err
}

// Read is ReadFile on a reader; file names it in messages and, for
// aiconfigurator tables, gives the device by its name.
func Read(r io.Reader, file, format, device string) ([]Measurement, []error, error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		br.Discard(3)
	}
	if format == "" || format == FormatAuto {
		head, _ := br.Peek(4096)
		line, lineNo := string(head), 1
		for strings.HasPrefix(line, "#") {
			lineNo++
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line = line[i+1:]
			} else {
				line = ""
			}
		}
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			return nil, nil, &ParseError{File: file, Err: errors.New("empty file: want a header line")}
		}
		format = detect(strings.Split(strings.TrimSpace(line), ","))
		if format == "" && constantsOf(file) != nil {
			format = FormatAIConfigurator // a table whose constant columns were dropped
		}
		if format == "" {
			return nil, nil, &ParseError{File: file, Line: lineNo, Err: fmt.Errorf("unknown measurements format: header %q is none of %s (give --input-format)", line, strings.Join(Formats[1:], ", "))}
		}
	}
	var (
		ms    []Measurement
		warns []error
		err   error
		multi bool
	)
	switch format {
	case FormatPerfsim:
		ms, warns, err = ReadCSV(br, file)
	case FormatAIConfigurator, FormatVidur, FormatLLMCompass, FormatXLA:
		ms, warns, err = readThirdParty(br, file, format)
		multi = format == FormatVidur
	case FormatInferSim:
		ms, warns, err = readInferSim(br, file)
	default:
		return nil, nil, fmt.Errorf("calibrate: unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return nil, nil, err
	}
	if device == "" {
		return ms, warns, nil
	}
	kept := ms[:0:0]
	skipped := map[string]int{}
	var errs []error
	for _, m := range ms {
		if SameDevice(m.Device, device) {
			kept = append(kept, m)
			continue
		}
		if multi {
			skipped[m.Device]++
			continue
		}
		if skipped[m.Device] == 0 {
			errs = append(errs, &ParseError{File: file, Line: m.Line, Column: "device", Err: fmt.Errorf("rows measured on %q, not %s", m.Device, device)})
		}
		skipped[m.Device]++
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	for _, d := range sortedKeys(skipped) {
		warns = append(warns, &ParseError{File: file, Err: fmt.Errorf("%d rows of device %q skipped (not %s)", skipped[d], d, device)})
	}
	if len(kept) == 0 {
		return nil, warns, &ParseError{File: file, Err: fmt.Errorf("%w of device %s", ErrNoRows, device)}
	}
	return kept, warns, nil
}

// detect names the format a header line belongs to, or "".
func detect(h []string) string {
	has := func(cols ...string) bool {
		for _, c := range cols {
			found := false
			for _, x := range h {
				if strings.TrimSpace(x) == c {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	switch {
	case has("kernel", "device", "dtype"), has("time_s", "kernel"):
		return FormatPerfsim
	case has("gemm_dtype", "latency"), has("attn_dtype", "latency"), has("op_name", "message_size", "latency"),
		has("num_experts", "distribution", "latency"), has("kv_cache_dtype", "num_heads", "tp_size", "latency"):
		return FormatAIConfigurator
	case has("latency_us"), has("up_proj_us", "down_proj_us"):
		return FormatInferSim
	case has("device", "model", "tp", "num_tokens", "op", "time_ms_median"):
		return FormatVidur
	case has("gpu", "op", "time_ms", "throughput_unit"):
		return FormatLLMCompass
	case has("xla_device_key", "dtype_key", "time_ms_derived"):
		return FormatXLA
	}
	// A header that is most of perfsim's required columns is perfsim's
	// with a few misspelt or missing ("kernal", "time_ms"): ReadCSV names
	// each of them, where "no known format" would name none.
	n, required := 0, 0
	for _, c := range csvColumns {
		if c.required {
			required++
			if has(c.name) {
				n++
			}
		}
	}
	if 2*n > required {
		return FormatPerfsim
	}
	return ""
}

// deviceModel returns the model word of a device name: the first word
// made of letters then digits that is not a memory size or type ("h100"
// in "NVIDIA H100 80GB HBM3", "a100" in "A100-SXM4-80GB"), or "".
func deviceModel(s string) string {
	for _, w := range wordList(s) {
		i := strings.IndexAny(w, "0123456789")
		if i <= 0 || strings.HasPrefix(w, "hbm") || strings.HasPrefix(w, "gddr") || strings.HasPrefix(w, "sxm") || strings.HasPrefix(w, "pcie") {
			continue
		}
		if strings.HasSuffix(w, "gb") && i == 0 {
			continue
		}
		return w
	}
	return ""
}

// SameDevice reports whether a measurement's device names the device
// want: their model words ("h100", "a100", "mi300x") agree, or, when
// either has none, their words do. want may list several names (a
// device's name and aliases) separated by '|'.
func SameDevice(measured, want string) bool {
	mm := deviceModel(measured)
	for _, w := range strings.Split(want, "|") {
		wm := deviceModel(w)
		if mm != "" && wm != "" {
			if mm == wm {
				return true
			}
			continue
		}
		if strings.Join(wordList(measured), " ") == strings.Join(wordList(w), " ") {
			return true
		}
	}
	return false
}

// requiredColumns lists, per format and table kind, the columns an
// importer reads.
var requiredColumns = map[string][]string{
	"aic-gemm":           {"gemm_dtype", "m", "n", "k", "latency"},
	"aic-context":        {"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "window_size", "attn_dtype", "kv_cache_dtype", "latency"},
	"aic-generation":     {"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "window_size", "attn_dtype", "kv_cache_dtype", "step", "latency"},
	"aic-comm":           {"op_name", "num_gpus", "message_size", "latency"},
	"aic-moe":            {"kernel_source", "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size", "distribution", "latency"},
	"aic-mla-context":    {"kv_cache_dtype", "num_heads", "batch_size", "isl", "latency"},
	"aic-mla-generation": {"kv_cache_dtype", "num_heads", "batch_size", "isl", "step", "latency"},
	"vidur-gemm":         {"device", "op", "M", "N", "K", "dtype", "time_ms_median", "time_ms_min", "time_ms_max"},
	"vidur-memory":       {"device", "op", "elements", "dtype", "time_ms_median", "time_ms_min", "time_ms_max"},
	"llmcompass":         {"gpu", "op", "dtype", "M", "N", "K", "elements", "time_ms"},
	"xla":                {"xla_device_key", "b", "m", "n", "k", "dtype_key", "time_ms_derived"},
}

// tableKind names the table a third-party header describes.
func tableKind(format string, idx map[string]int, consts map[string]string) string {
	has := func(c string) bool {
		_, ok := idx[c]
		_, constant := consts[c]
		return ok || constant
	}
	switch format {
	case FormatAIConfigurator:
		switch {
		case has("gemm_dtype"):
			return "aic-gemm"
		case has("num_experts") && has("distribution"):
			return "aic-moe"
		case has("tp_size") && has("kv_cache_dtype") && !has("num_key_value_heads") && has("step"):
			return "aic-mla-generation"
		case has("tp_size") && has("kv_cache_dtype") && !has("num_key_value_heads"):
			return "aic-mla-context"
		case has("attn_dtype") && has("step"):
			return "aic-generation"
		case has("attn_dtype"):
			return "aic-context"
		}
		return "aic-comm"
	case FormatVidur:
		if has("elements") {
			return "vidur-memory"
		}
		return "vidur-gemm"
	}
	return format
}

// readThirdParty reads one of the third-party CSV formats.
func readThirdParty(r io.Reader, file, format string) ([]Measurement, []error, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, &ParseError{File: file, Err: errors.New("empty file: want a header line")}
	}
	if err != nil {
		return nil, nil, csvError(file, err)
	}
	hline, _ := cr.FieldPos(0)
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(h)] = i
	}
	var consts map[string]string
	if format == FormatAIConfigurator {
		consts = constantsOf(file)
	}
	kind := tableKind(format, idx, consts)
	var errs []error
	for _, c := range requiredColumns[kind] {
		_, constant := consts[c]
		if _, ok := idx[c]; !ok && !constant {
			errs = append(errs, &ParseError{File: file, Line: hline, Column: c, Err: ErrMissingColumn})
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	device := ""
	if format == FormatAIConfigurator {
		base := filepath.Base(dataName(file))
		for p, d := range aiconfiguratorDevices {
			if strings.HasPrefix(base, p+"_") {
				device = d
			}
		}
		if device == "" {
			device = strings.SplitN(strings.TrimSuffix(base, ".csv"), "_", 2)[0]
		}
	}
	var (
		ms                []Measurement
		warns             []error
		nerr              int
		seen              = map[Measurement]int{}
		ndup, nwin, nskip int
		dupAt, dupOf      int
		variants          = map[string]int{}
	)
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
		rw := &row{file: file, line: line, rec: rec, idx: idx, consts: consts}
		if len(rec) != len(header) {
			rw.fail("", fmt.Errorf("%d cells, the header has %d", len(rec), len(header)))
		}
		var m Measurement
		skip := skipNone
		if len(rw.errs) == 0 {
			m, skip = importRow(rw, kind, device)
		}
		if len(rw.errs) > 0 {
			nerr += len(rw.errs)
			if len(errs) < maxReported {
				errs = append(errs, rw.errs...)
			}
			continue
		}
		switch skip {
		case skipWindow:
			nwin++
			continue
		case skipKernel:
			nskip++
			continue
		case skipVariant:
			variants[rw.str("kernel_source")+" "+rw.str("gemm_dtype")+rw.str("moe_dtype")]++
			continue
		}
		m.Source = format
		if first, ok := seen[m]; ok {
			ndup++
			if ndup == 1 {
				dupAt, dupOf = line, first
			}
			continue
		}
		seen[m] = line
		m.File, m.Line = file, line
		ms = append(ms, m)
	}
	if nerr > len(errs) {
		errs = append(errs, &ParseError{File: file, Err: fmt.Errorf("%d more errors not shown", nerr-len(errs))})
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if ndup > 0 {
		warns = append(warns, &ParseError{File: file, Line: dupAt, Err: fmt.Errorf("%d rows identical to an earlier row dropped (the first here, a copy of line %d)", ndup, dupOf)})
	}
	if nwin > 0 {
		warns = append(warns, &ParseError{File: file, Err: fmt.Errorf("%d rows with a sliding window shorter than the sequence skipped (the cost model has no sliding window)", nwin)})
	}
	if nskip > 0 {
		warns = append(warns, &ParseError{File: file, Err: fmt.Errorf("%d rows of kernels the cost model does not price skipped", nskip)})
	}
	for _, v := range sortedKeys(variants) {
		warns = append(warns, &ParseError{File: file, Err: fmt.Errorf("%d rows of kernel %q skipped (another library's kernel for shapes the table times with its default kernel; one kernel per class is fitted)", variants[v], strings.TrimSpace(v))})
	}
	if len(ms) == 0 {
		return nil, warns, &ParseError{File: file, Err: ErrNoRows}
	}
	return ms, warns, nil
}

// gemmMeasurement fills a GEMM row's FLOPs and bytes: A and B in d, C in
// d, or bf16 for 8-bit inputs (aiconfigurator's fp8 GEMMs write bf16).
func gemmMeasurement(d model.DType, m, n, k, batch int) Measurement {
	g := GEMMOf(Measurement{DType: d, M: m, N: n, K: k, Batch: batch})
	return Measurement{Kernel: KernelGEMM, DType: d, M: m, N: n, K: k, Batch: batch, FLOPs: g.FLOPs(), Bytes: g.Bytes()}
}

// GEMMOf returns the GEMM a gemm measurement timed.
func GEMMOf(m Measurement) model.GEMM {
	c := m.DType
	if c.Size() < 2 {
		c = model.BF16
	}
	return model.GEMM{M: m.M, N: m.N, K: m.K, Batch: m.Batch, A: m.DType, B: m.DType, C: c}
}

// AttentionOf returns the attention kernel an attention measurement timed:
// fused and causal, as aiconfigurator's TensorRT-LLM kernels are.
func AttentionOf(m Measurement) model.Attention {
	kv := m.KVDType
	if kv == model.Invalid {
		kv = m.DType
	}
	return model.Attention{Batch: max(m.Batch, 1), Heads: m.Heads, KVHeads: m.KVHeads, QLen: m.QLen, KVLen: m.KVLen,
		HeadDim: m.HeadDim, VDim: m.VDim, Latent: m.Latent, Causal: true, Fused: true, DType: m.DType, KVDType: kv}
}
