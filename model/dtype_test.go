package model

import (
	"fmt"
	"testing"
)

// TestDTypeSizes: the storage of one element of every data type of issue
// 2. Sizes are the formats' bit widths / 8 (IEEE 754 binary64/32/16;
// bfloat16; TF32 is stored in a 32-bit register; OCP FP8 E4M3 and E5M2;
// int8; int4 and FP4 E2M1 are 4 bits, half a byte).
func TestDTypeSizes(t *testing.T) {
	tests := []struct {
		name string
		d    DType
		size float64
	}{
		{"fp64", FP64, 8}, {"fp32", FP32, 4}, {"tf32", TF32, 4}, {"bf16", BF16, 2}, {"fp16", FP16, 2},
		{"fp8", FP8, 1}, {"fp8e5m2", FP8E5M2, 1}, {"int8", INT8, 1}, {"int4", INT4, 0.5}, {"fp4", FP4, 0.5},
		// Other spellings.
		{"e4m3", FP8, 1}, {"fp8e4m3", FP8, 1}, {"e5m2", FP8E5M2, 1}, {"bfloat16", BF16, 2}, {"FP16", FP16, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDType(tt.name)
			if err != nil || d != tt.d {
				t.Fatalf("ParseDType(%q) = %v, %v, want %v", tt.name, d, err, tt.d)
			}
			if d.Size() != tt.size {
				t.Errorf("%v.Size() = %g, want %g", d, d.Size(), tt.size)
			}
			if got := d.Bytes(1000); got != Bytes(1000*tt.size) {
				t.Errorf("%v.Bytes(1000) = %v, want %g", d, got, 1000*tt.size)
			}
		})
	}
	if len(DTypes) != 10 {
		t.Errorf("DTypes lists %d types, want the 10 of issue 2", len(DTypes))
	}
	for _, d := range DTypes {
		b, err := d.MarshalText()
		var back DType
		if err != nil || back.UnmarshalText(b) != nil || back != d {
			t.Errorf("%v: text round trip gave %v (%v)", d, back, err)
		}
	}
	if _, err := Invalid.MarshalText(); err == nil {
		t.Error("Invalid.MarshalText() gave no error")
	}
	if Invalid.Size() != 0 || DType(200).Size() != 0 || DType(200).Valid() {
		t.Error("an invalid DType has a size or is valid")
	}
	if FP8E5M2.Peak() != FP8 || BF16.Peak() != BF16 {
		t.Errorf("Peak: e5m2 -> %v, bf16 -> %v", FP8E5M2.Peak(), BF16.Peak())
	}
}

func ExampleParseDType() {
	d, _ := ParseDType("float8_e4m3fn")
	fmt.Println(d, d.Size(), INT4.Bytes(7e9))
	_, err := ParseDType("fp12")
	fmt.Println(err)
	// Output:
	// fp8 1 3.5 GB
	// unknown data type "fp12" (want one of fp64, fp32, tf32, bf16, fp16, fp8, fp8e5m2, int8, int4, fp4, mxfp4)
}

func ExampleCommType() {
	for _, act := range []DType{BF16, FP32, FP8, FP4} {
		fmt.Println(act, "->", CommType(act))
	}
	// Output:
	// bf16 -> bf16
	// fp32 -> fp32
	// fp8 -> bf16
	// fp4 -> bf16
}

// TestVocabType: the embedding and LM head stay in bf16 under weights
// narrower than 16 bits, and take the weights' type otherwise.
func TestVocabType(t *testing.T) {
	for _, c := range []struct{ w, want DType }{
		{FP8, BF16}, {FP8E5M2, BF16}, {INT8, BF16}, {INT4, BF16}, {FP4, BF16},
		{BF16, BF16}, {FP16, FP16}, {FP32, FP32}, {TF32, TF32}, {Invalid, Invalid},
	} {
		if got := VocabType(c.w); got != c.want {
			t.Errorf("VocabType(%v) = %v, want %v", c.w, got, c.want)
		}
	}
}

// TestMXFP4: gpt-oss's MXFP4 is its own storage format (an E8M0 scale per
// 32 values, 1/16 of the packed bytes; NVFP4's fp8 scale per 16 is 1/8),
// computed at the fp4 peak, or at fp8 on a device without one.
func TestMXFP4(t *testing.T) {
	d, err := ParseDType("MXFP4")
	if err != nil || d != MXFP4 {
		t.Fatalf("ParseDType(MXFP4) = %v, %v", d, err)
	}
	if n, _ := ParseDType("nvfp4"); n != FP4 {
		t.Errorf("nvfp4 parsed as %v, want fp4", n)
	}
	if MXFP4.Size() != 0.5 || MXFP4.ScaleOverhead() != 1.0/16 || FP4.ScaleOverhead() != 1.0/8 {
		t.Errorf("mxfp4 size %g scales %g, fp4 scales %g: want 0.5, 1/16, 1/8", MXFP4.Size(), MXFP4.ScaleOverhead(), FP4.ScaleOverhead())
	}
	if MXFP4.Peak() != FP4 || MXFP4.String() != "mxfp4" {
		t.Errorf("mxfp4 computes at %v, prints as %q", MXFP4.Peak(), MXFP4.String())
	}
	b := Processor{Bandwidth: 1, Matrix: map[DType]FLOPRate{FP4: 9, FP8: 4}}
	h := Processor{Bandwidth: 1, Matrix: map[DType]FLOPRate{FP8: 4}}
	if got, ok := b.Supported(MXFP4); got != FP4 || !ok {
		t.Errorf("with an fp4 peak mxfp4 runs at %v (%v), want fp4", got, ok)
	}
	if got, ok := h.Supported(MXFP4); got != FP8 || ok {
		t.Errorf("without an fp4 peak mxfp4 runs at %v (%v), want fp8, emulated", got, ok)
	}
}
