package model

import (
	"fmt"
	"strings"
)

// A DType is a number format that tensors are stored in and computed in.
type DType uint8

// The data types perfsim knows. FP8 is FP8 E4M3, the format used for
// inference weights and activations; FP8E5M2 is the wider-range variant
// used for gradients. Both run at the device's fp8 peak.
const (
	Invalid DType = iota
	FP64
	FP32
	TF32
	BF16
	FP16
	FP8
	FP8E5M2
	INT8
	INT4
	FP4
	// MXFP4 is the OCP microscaling 4-bit float (E2M1 with one E8M0
	// scale per 32 values), the format gpt-oss ships its experts in. It
	// computes at the fp4 peak (Peak) and differs from FP4 (NVFP4) only
	// in its block scales (ScaleOverhead). It is a storage format, not in
	// DTypes, whose entries each name a peak a device may list.
	MXFP4
)

var dtypeNames = [...]string{
	Invalid: "invalid",
	FP64:    "fp64",
	FP32:    "fp32",
	TF32:    "tf32",
	BF16:    "bf16",
	FP16:    "fp16",
	FP8:     "fp8",
	FP8E5M2: "fp8e5m2",
	INT8:    "int8",
	INT4:    "int4",
	FP4:     "fp4",
	MXFP4:   "mxfp4",
}

// Size in bytes of one element as stored. TF32 is stored in 32 bits. The
// 4-bit formats are half a byte; their block scales are added by whoever
// sizes the weights (see ScaleOverhead).
var dtypeSizes = [...]float64{
	FP64: 8, FP32: 4, TF32: 4, BF16: 2, FP16: 2,
	FP8: 1, FP8E5M2: 1, INT8: 1, INT4: 0.5, FP4: 0.5, MXFP4: 0.5,
}

// CommType is the type that the collectives of the residual stream (the
// tensor-parallel all-reduces, pipeline sends, MoE all-to-alls) move when
// the compute type is act and nothing else is said: act itself when it is
// 16 bits or wider, bf16 below that. Engines that run GEMMs in fp8, int8
// or fp4 quantise only the GEMM inputs; the GEMM writes its output, and so
// the residual stream and the all-reduce after a row-parallel layer, in
// the model's 16-bit type. Sources: vLLM vllm/model_executor/layers/
// linear.py (RowParallelLinear all-reduces the output of the quantised
// GEMM) and quantization/fp8.py (Fp8LinearMethod returns out_dtype =
// input.dtype, the model's bf16); TensorRT-LLM's fp8 recipes keep
// AllReduce in the network's fp16/bf16 and quantise after the fused
// residual+RMSNorm (AllReduceFusionOp.RESIDUAL_RMS_NORM_QUANT_FP8).
func CommType(act DType) DType {
	if act.Valid() && act.Size() < 2 {
		return BF16
	}
	return act
}

// VocabType is the type a decoder's token embedding and LM head are
// stored and computed in when its other weights are w: w itself when it
// is 16 bits or wider, bf16 below that. Quantisation tools and engines
// leave both in the model's 16-bit type: NVIDIA Model Optimizer, which
// builds TensorRT-LLM's fp8, int8, int4 and fp4 checkpoints, disables
// the "*lm_head*" quantizer in every preset (modelopt/torch/quantization/
// config.py, _default_disabled_quantizer_cfg, in FP8_DEFAULT_CFG,
// INT4_AWQ_CFG, NVFP4_DEFAULT_CFG, ...) and quantises only linear layers,
// so never the embedding table; vLLM's fp8 quantises "all Linear modules
// (except for the final lm_head)" (docs quantization/fp8, v0.6.3).
func VocabType(w DType) DType {
	if w.Valid() && w.Size() < 2 {
		return BF16
	}
	return w
}

// DTypes lists the valid data types in a fixed order, widest first.
var DTypes = []DType{FP64, FP32, TF32, BF16, FP16, FP8, FP8E5M2, INT8, INT4, FP4}

// aliases are other spellings accepted by ParseDType.
var dtypeAliases = map[string]DType{
	"float64": FP64, "double": FP64,
	"float32": FP32, "float": FP32,
	"bfloat16": BF16,
	"float16":  FP16, "half": FP16,
	"fp8e4m3": FP8, "e4m3": FP8, "float8_e4m3fn": FP8, "fp8_e4m3": FP8,
	"e5m2": FP8E5M2, "float8_e5m2": FP8E5M2, "fp8_e5m2": FP8E5M2,
	"nvfp4": FP4,
}

// ParseDType parses a data type name such as "bf16" or "fp8"; case is ignored.
func ParseDType(s string) (DType, error) {
	k := strings.ToLower(strings.TrimSpace(s))
	for d, n := range dtypeNames {
		if n == k && DType(d) != Invalid {
			return DType(d), nil
		}
	}
	if d, ok := dtypeAliases[k]; ok {
		return d, nil
	}
	return Invalid, fmt.Errorf("unknown data type %q (want one of %s)", s, strings.Join(dtypeNames[1:], ", "))
}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", d)
}

// Size returns the bytes one element occupies (0.5 for 4-bit types).
func (d DType) Size() float64 {
	if int(d) < len(dtypeSizes) {
		return dtypeSizes[d]
	}
	return 0
}

// Bytes returns the storage of n elements of d.
func (d DType) Bytes(n float64) Bytes { return Bytes(n * d.Size()) }

// Peak returns the data type whose peak rate d computes at: FP8E5M2
// computes at the fp8 peak, MXFP4 at the fp4 one; every other type is its
// own.
func (d DType) Peak() DType {
	switch d {
	case FP8E5M2:
		return FP8
	case MXFP4:
		return FP4
	}
	return d
}

// IsFloat reports whether d is a floating-point format.
func (d DType) IsFloat() bool { return d != INT8 && d != INT4 && d != Invalid }

// Valid reports whether d is a known data type.
func (d DType) Valid() bool { return d > Invalid && int(d) < len(dtypeNames) }

func (d DType) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("model: invalid data type %d", d)
	}
	return []byte(d.String()), nil
}

func (d *DType) UnmarshalText(b []byte) (err error) { *d, err = ParseDType(string(b)); return }

// Set and Type make a DType a pflag.Value.
func (d *DType) Set(s string) error { return d.UnmarshalText([]byte(s)) }
func (*DType) Type() string         { return "dtype" }

// ScaleOverhead is the extra storage of block-scaled 4-bit weights, as a
// fraction of the packed weights: one fp16 scale per 128 int4 weights
// (GPTQ/AWQ group size 128; source: Frantar et al., GPTQ, 2022) is
// 2 bytes per 64 bytes, 3.1%; one fp8 scale per 16 fp4 values (NVFP4;
// source: NVIDIA Blackwell architecture technical brief) is 1 byte per 8,
// 12.5%; one E8M0 scale per 32 fp4 values (MXFP4; source: OCP
// Microscaling Formats (MX) Specification v1.0, 2023) is 1 byte per 16,
// 6.25%.
func (d DType) ScaleOverhead() float64 {
	switch d {
	case INT4:
		return 2.0 / 64
	case FP4:
		return 1.0 / 8
	case MXFP4:
		return 1.0 / 16
	}
	return 0
}
