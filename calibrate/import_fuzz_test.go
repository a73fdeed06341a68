package calibrate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// Seeds for the third-party readers: each format's header and a few rows
// as ../shared/validation/derived has them (SOURCES.md), and broken
// variants.
var (
	aicSeeds = []string{
		"kernel_source,gemm_dtype,m,n,k,latency\ntorch_flow,bfloat16,4353,65536,51200,39.301\ntorch_flow,fp8,8192,65536,51200,79.185\n",
		"kernel_source,batch_size,isl,num_heads,num_key_value_heads,head_dim,window_size,attn_dtype,kv_cache_dtype,latency\ntorch_flow,16,8192,96,1,128,0,bfloat16,bfloat16,53.4968\n",
		"kernel_source,batch_size,isl,num_heads,num_key_value_heads,head_dim,window_size,attn_dtype,kv_cache_dtype,step,latency\ntorch_flow,32,1,64,64,64,0,bfloat16,fp8,1,0.0248853\n",
		"version,op_name,kernel_source,nccl_dtype,num_gpus,message_size,latency\n2.29.2,all_gather,NCCL,half,2,256,0.00531\n2.29.2,all_reduce,NCCL,half,8,1e300,1e-300\n",
		"kernel_source,gemm_dtype,m,n,k,latency\ntorch_flow,bfloat16,-1,1e40,0,NaN\n",
	}
	vidurSeeds = []string{
		"device,model,tp,num_tokens,op,M,N,K,dtype,time_ms_median,time_ms_mean,time_ms_min,time_ms_max\na100,Qwen/Qwen-72B,1,4096,attn_pre_proj,4096,24576,8192,fp16,7.306,7.2277,6.548,7.536\n",
		"device,model,tp,num_tokens,op,elements,dtype,time_ms_median,time_ms_mean,time_ms_min,time_ms_max\na100,Qwen/Qwen-72B,1,4096,emb,33554432,fp16,0.447,0.441952,0.395,0.456\nh100,m,1,1,mlp_act,3,fp16,1,1,2,0.5\n",
	}
	llmcompassSeeds = []string{
		"gpu,op,dtype,M,N,K,elements,time_ms,throughput,throughput_unit,source_repo,source_path,source_commit\nA100-80GB,matmul,fp16,64,12288,12288,,0.1900,101.7124,TFLOP/s,r,p,c\nA100-80GB,softmax,fp16,,,,4096,0.01,1,GB/s,r,p,c\n",
	}
	xlaSeeds = []string{
		"xla_device_key,b,m,n,k,dtype_key,flops_per_s,tflops,time_ms_derived\nsm_90,1,256,256,256,bf16xbf16->bf16,6721641025641,6.7216,0.004992\nsm_90,1,256,256,256,f32xf32->f32,6026298850574,6.0263,0.005568\n",
	}
)

// checkImported is what every reader promises of the rows it accepts: a
// finite positive time, finite non-negative work, a valid type, a line.
func checkImported(t *testing.T, in string, ms []Measurement, err error) {
	t.Helper()
	if err != nil {
		if err.Error() == "" {
			t.Fatalf("an empty error message for %q", in)
		}
		return
	}
	if len(ms) == 0 {
		t.Fatalf("no rows and no error for %q", in)
	}
	for _, m := range ms {
		for _, v := range []float64{float64(m.Time), float64(m.FLOPs), float64(m.Bytes), float64(m.TimeMin), float64(m.TimeMax)} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("row %+v has %v in it (input %q)", m, v, in)
			}
		}
		// perfsim's own schema leaves dtype empty for kernels without
		// one (copy, launch); the third-party readers always set it.
		if m.Time <= 0 || (m.DType != model.Invalid || slices.Contains(Formats[2:], m.Source)) && !m.DType.Valid() || m.Line < 1 || m.Kernel == "" {
			t.Fatalf("row %+v: want a positive time, a valid type, a line and a kernel (input %q)", m, in)
		}
		if m.M < 0 || m.N < 0 || m.K < 0 || m.Batch < 0 || m.Ranks < 0 || m.Heads < 0 || m.KVLen < 0 || m.QLen < 0 {
			t.Fatalf("row %+v: a negative count (input %q)", m, in)
		}
	}
}

func fuzzFormat(f *testing.F, format, file string, seeds []string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ms, _, err := Read(strings.NewReader(in), file, format, "")
		checkImported(t, in, ms, err)
	})
}

// FuzzReadAIConfigurator, FuzzReadVidur, FuzzReadLLMCompass and
// FuzzReadXLA check each third-party reader: no panic, and what it
// accepts is finite and non-negative (checkImported).
//
//	go test -fuzz=FuzzReadAIConfigurator ./calibrate
func FuzzReadAIConfigurator(f *testing.F) {
	fuzzFormat(f, FormatAIConfigurator, "h100_sxm_fuzz.csv", aicSeeds)
}

func FuzzReadVidur(f *testing.F) { fuzzFormat(f, FormatVidur, "vidur.csv", vidurSeeds) }

func FuzzReadLLMCompass(f *testing.F) {
	fuzzFormat(f, FormatLLMCompass, "llmcompass.csv", llmcompassSeeds)
}

func FuzzReadXLA(f *testing.F) { fuzzFormat(f, FormatXLA, "xla.csv", xlaSeeds) }

// FuzzDetectFormat checks the measurement-format detection: Read with
// FormatAuto never panics, names one of Formats or refuses, and when it
// accepts, reading with the format detect chose gives the same rows.
//
//	go test -fuzz=FuzzDetectFormat ./calibrate
func FuzzDetectFormat(f *testing.F) {
	for _, s := range slices.Concat(aicSeeds, vidurSeeds, llmcompassSeeds, xlaSeeds) {
		f.Add(s)
		f.Add("\uFEFF# a comment\n" + s)
	}
	f.Add(header + gemmRow)
	f.Add("a,b,c\n1,2,3\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		ms, _, err := Read(strings.NewReader(in), "h100_sxm_fuzz.csv", FormatAuto, "")
		checkImported(t, in, ms, err)
		if err != nil {
			return
		}
		src := ms[0].Source
		format := FormatPerfsim
		if slices.Contains(Formats, src) {
			format = src
		}
		again, _, err := Read(strings.NewReader(in), "h100_sxm_fuzz.csv", format, "")
		if err != nil || len(again) != len(ms) {
			t.Fatalf("auto read %d rows as %s; reading as %s gives %d rows, %v", len(ms), src, format, len(again), err)
		}
	})
}

// inferSimSeeds pair an InferSim table's path, which carries its kind and
// shape, with its columns (SOURCES.md: alibaba/InferSim bench_data; the
// values are made up) and broken variants.
var inferSimSeeds = []struct{ path, text string }{
	{"mla/decode/h800/128-512-64.csv", "dtype,kv_dtype,batch_size,kv_len,latency_us,mfu\nbf16,bf16,1,1024,20,0.01\nbf16,fp8,64,8192,90,0.3\n"},
	{"mla/prefill/h800/128-128-64.csv", "dtype,seq_len,latency_us,mfu\nbf16,1024,100,0.4\n"},
	{"grouped_gemm/decode/h800/data.csv", "num_experts,num_gpus,num_local_experts,topk,hidden_size,intermediate_size,batch_size_per_gpu,tokens_per_expert,up_proj_us,up_mfu,down_proj_us,down_mfu\n256,1,256,8,7168,2048,32,1,1000,0.003,700,0.003\n"},
	{"grouped_gemm/prefill/h20/data.csv", "num_experts,num_gpus,num_local_experts,topk,hidden_size,intermediate_size,batch_size_per_gpu,tokens_per_expert,up_proj_us,up_mfu,down_proj_us,down_mfu\n256,8,32,8,7168,2048,4096,1024,-1,0,NaN,0\n"},
	{"mla/decode/h800/0-0-0.csv", "dtype,kv_dtype,batch_size,kv_len,latency_us\nbf16,bf16,0,1e40,0\n"},
	{"gemm/h800/data.csv", "m,n,k,latency_us\n1,2,3,4\n"},
}

// FuzzReadInferSim checks the InferSim reader, whose tables' kind and
// shape are in their path: no panic, and what it accepts is finite and
// non-negative (checkImported), for each of the seeds' paths.
//
//	go test -fuzz=FuzzReadInferSim ./calibrate
func FuzzReadInferSim(f *testing.F) {
	for i, s := range inferSimSeeds {
		f.Add(uint8(i), s.text)
	}
	f.Fuzz(func(t *testing.T, which uint8, in string) {
		path := inferSimSeeds[int(which)%len(inferSimSeeds)].path
		ms, _, err := Read(strings.NewReader(in), path, FormatInferSim, "")
		checkImported(t, in, ms, err)
	})
}
