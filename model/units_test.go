package model

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) (float64, error)
		in    string
		want  float64
		err   string // substring of the error, "" for none
	}{
		{"flop rate", wrap(ParseFLOPRate), "989.5 TFLOP/s", 989.5e12, ""},
		{"tops", wrap(ParseFLOPRate), "1979 TOPS", 1979e12, ""},
		{"tflops", wrap(ParseFLOPRate), "312TFLOPS", 312e12, ""},
		{"bandwidth", wrap(ParseByteRate), "3.35 TB/s", 3.35e12, ""},
		{"gb/s", wrap(ParseByteRate), "450 GB/s", 450e9, ""},
		{"gib/s", wrap(ParseByteRate), "1 GiB/s", 1 << 30, ""},
		{"gib", wrap(ParseBytes), "80 GiB", 80 << 30, ""},
		{"gb", wrap(ParseBytes), "80 GB", 80e9, ""},
		{"mib", wrap(ParseBytes), "50 MiB", 50 << 20, ""},
		{"us", wrap(ParseSeconds), "4.5 us", 4.5e-6, ""},
		{"µs", wrap(ParseSeconds), "4.5µs", 4.5e-6, ""},
		{"ms", wrap(ParseSeconds), "1.2 ms", 1.2e-3, ""},
		{"ghz", wrap(ParseHertz), "1.98 GHz", 1.98e9, ""},
		{"watts", wrap(ParseWatts), "700 W", 700, ""},
		{"exponent", wrap(ParseFLOPs), "3.5e12 FLOP", 3.5e12, ""},
		{"bare", wrap(ParseByteRate), "3.35", 0, "missing unit"},
		{"bare names unit", wrap(ParseByteRate), "3.35", 0, `"3.35 TB/s"`},
		{"rate for bandwidth", wrap(ParseByteRate), "989 TFLOP/s", 0, "is a compute rate unit"},
		{"binary rate prefix", wrap(ParseFLOPRate), "1 GiFLOP/s", 0, "unknown unit"},
		{"empty", wrap(ParseBytes), "", 0, "no number"},
		{"words", wrap(ParseBytes), "lots", 0, "no number"},
		{"inf", wrap(ParseBytes), "1e400 B", 0, "bad number"},
		{"small prefix on bytes", wrap(ParseBytes), "3 mB", 0, "unknown unit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parse(%q) error = %v, want one containing %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.in, err)
			}
			if math.Abs(got-tt.want) > 1e-9*math.Abs(tt.want) {
				t.Errorf("parse(%q) = %g, want %g", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseNoUnitIs(t *testing.T) {
	_, err := ParseBytes("80")
	if !errors.Is(err, ErrNoUnit) {
		t.Errorf("ParseBytes(\"80\") error %v is not ErrNoUnit", err)
	}
}

func wrap[T ~float64](f func(string) (T, error)) func(string) (float64, error) {
	return func(s string) (float64, error) { v, err := f(s); return float64(v), err }
}

func TestString(t *testing.T) {
	tests := []struct {
		got  string
		want string
	}{
		{FLOPRate(989.5e12).String(), "989.5 TFLOP/s"},
		{ByteRate(3.35e12).String(), "3.35 TB/s"},
		{Bytes(80e9).String(), "80 GB"},
		{Bytes(80 << 30).BinaryString(), "80 GiB"},
		{Seconds(1.234e-3).String(), "1.234 ms"},
		{Seconds(4.5e-6).String(), "4.5 us"},
		{Seconds(0).String(), "0 s"},
		{Seconds(999.96e-6).String(), "1 ms"},
		// Long times read in minutes, hours, days and years: an SI
		// prefix wrote "12.17 Ms" (megaseconds) beside "12.17 ms".
		{Seconds(999.9).String(), "999.9 s"},
		{Seconds(999.96).String(), "16.67 min"},
		{Seconds(3599.9).String(), "1 h"},
		{Seconds(34.06e3).String(), "9.461 h"},
		{Seconds(-34.06e3).String(), "-9.461 h"},
		{Seconds(12.17e6).String(), "140.9 days"},
		{Seconds(1e9).String(), "31.69 years"},
		{Seconds(math.Inf(1)).String(), "+Inf s"},
		{Hertz(1.98e9).String(), "1.98 GHz"},
		{Intensity(295.4).String(), "295.4 FLOP/B"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, v := range []float64{989.5e12, 1.0 / 3, 3.35e12, 4.5e-6, 0, 123456789.123} {
		b, _ := FLOPRate(v).MarshalText()
		var back FLOPRate
		if err := back.UnmarshalText(b); err != nil || float64(back) != v {
			t.Errorf("round trip of %g via %q = %g, %v", v, b, float64(back), err)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"80 GB", "80 GiB", "1.5e3 KiB", "3", "-1 B", "1e308 PB", " 2 bytes"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseBytes(s)
		if err != nil {
			return
		}
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("ParseBytes(%q) = %v, want a finite value or an error", s, v)
		}
		b, _ := v.MarshalText()
		back, err := ParseBytes(string(b))
		if err != nil || back != v {
			t.Fatalf("round trip %q -> %q -> %v, %v", s, b, back, err)
		}
	})
}

func FuzzParseFLOPRate(f *testing.F) {
	for _, s := range []string{"989.5 TFLOP/s", "1979 TOPS", "1 GiB/s", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseFLOPRate(s)
		if err == nil && (math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)) {
			t.Fatalf("ParseFLOPRate(%q) = %v", s, v)
		}
	})
}

func TestDType(t *testing.T) {
	for _, d := range DTypes {
		got, err := ParseDType(d.String())
		if err != nil || got != d {
			t.Errorf("ParseDType(%q) = %v, %v", d, got, err)
		}
	}
	if BF16.Size() != 2 || INT4.Size() != 0.5 || TF32.Size() != 4 {
		t.Errorf("sizes: bf16 %g int4 %g tf32 %g", BF16.Size(), INT4.Size(), TF32.Size())
	}
	if _, err := ParseDType("fp12"); err == nil || !strings.Contains(err.Error(), "bf16") {
		t.Errorf("ParseDType(fp12) error %v should list the known types", err)
	}
}

func TestGEMMCounts(t *testing.T) {
	// A 4096³ GEMM: 2·4096³ = 1.374e11 FLOPs; fp16 traffic 3·4096²·2 bytes.
	g := GEMM{M: 4096, K: 4096, N: 4096, A: FP16, B: FP16, C: FP16}
	if g.FLOPs() != 2*4096*4096*4096 {
		t.Errorf("FLOPs = %v", g.FLOPs())
	}
	if g.Bytes() != 3*4096*4096*2 {
		t.Errorf("Bytes = %v", g.Bytes())
	}
}

func TestAttentionPairs(t *testing.T) {
	tests := []struct {
		a    Attention
		want float64
	}{
		{Attention{QLen: 4, KVLen: 4, Causal: true}, 10},
		{Attention{QLen: 4, KVLen: 4}, 16},
		{Attention{QLen: 1, KVLen: 100, Causal: true}, 100},
		{Attention{QLen: 2, KVLen: 5, Causal: true}, 9}, // 4 + 5
	}
	for _, tt := range tests {
		if got := tt.a.Pairs(); got != tt.want {
			t.Errorf("%+v.Pairs() = %g, want %g", tt.a, got, tt.want)
		}
	}
}

func ExampleParseByteRate() {
	bw, _ := ParseByteRate("3.35 TB/s")
	peak, _ := ParseFLOPRate("989.5 TFLOP/s")
	fmt.Println(bw, float64(bw), Ridge(peak, bw))
	_, err := ParseByteRate("3.35")
	fmt.Println(err)
	// Output:
	// 3.35 TB/s 3.35e+12 295.4 FLOP/B
	// "3.35" is not a bandwidth: missing unit (expected "3.35 TB/s")
}
