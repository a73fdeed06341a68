package mlperf

import (
	"strings"
	"testing"
)

// TestSampleLengths: each lengths file holds LoadGen's samples, and its
// columns sum to the counts the suite takes its means from (suite.go,
// counted apart: the HBFSim protocol file agrees on OpenOrca's inputs).
func TestSampleLengths(t *testing.T) {
	for _, tt := range []struct {
		bench   string
		samples int
		in, out int // sums; out 0: no output column
	}{
		{"llama2-70b-99", openOrcaSamples, openOrcaInputTokens, 0},
		{"llama3.1-405b", llama405Samples, llama405InputTokens, llama405RefTokens},
		{"mixtral-8x7b", mixtralSamples, mixtralInputTokens, mixtralRefTokens},
	} {
		b, err := Find(tt.bench)
		if err != nil {
			t.Fatal(err)
		}
		s, err := benchmarkSamples(b)
		if err != nil {
			t.Fatal(err)
		}
		in, out := 0, 0
		for _, x := range s {
			in += x.In
			out += x.Out
		}
		if len(s) != tt.samples || in != tt.in || out != tt.out {
			t.Errorf("%s: %d samples, %d tokens in, %d out; want %d, %d and %d", tt.bench, len(s), in, out, tt.samples, tt.in, tt.out)
		}
		if tt.out > 0 {
			if m := meanOut(s); m < 0.999*b.Output || m > 1.001*b.Output {
				t.Errorf("%s: the samples' mean output %.3f is not the suite's %.2f", tt.bench, m, b.Output)
			}
		}
	}
	// GPT-J's are not published in its tokens.
	if b, _ := Find("gptj-99"); b.Lengths != "" {
		t.Errorf("gptj-99 has a lengths file %q; none is published", b.Lengths)
	}
}

func TestParseSampleLengths(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []sampleLen
		errs     []string
	}{
		{"two columns", "# a source\n\ninput_tokens,output_tokens\n3,4\n5,6\n", []sampleLen{{3, 4}, {5, 6}}, nil},
		{"inputs only", "input_tokens\n7\n8\n", []sampleLen{{7, 0}, {8, 0}}, nil},
		{"bad header", "in,out\n3,4\n", nil, []string{"f.csv:1: header"}},
		{"no header", "# nothing\n", nil, []string{"f.csv: no header"}},
		{"no samples", "input_tokens\n", nil, []string{"f.csv: no samples"}},
		{"every problem", "input_tokens,output_tokens\n3\n0,4\nx,-1\n9,9,9\n", nil,
			[]string{"f.csv:2: 1 fields, want 2", "f.csv:3: input_tokens \"0\"", "f.csv:4: input_tokens \"x\"", "f.csv:4: output_tokens \"-1\"", "f.csv:5: 3 fields"}},
		{"too long", "input_tokens\n99999999\n", nil, []string{"f.csv:2: input_tokens \"99999999\": want a whole number of tokens from 1 to 16777216"}},
	} {
		got, err := parseSampleLengths("f.csv", []byte(tt.in))
		if len(tt.errs) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			} else if len(got) != len(tt.want) || (len(got) > 0 && got[len(got)-1] != tt.want[len(tt.want)-1]) {
				t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.errs)
			continue
		}
		for _, e := range tt.errs {
			if !strings.Contains(err.Error(), e) {
				t.Errorf("%s: error %q does not say %q", tt.name, err, e)
			}
		}
	}
}

func FuzzParseSampleLengths(f *testing.F) {
	f.Add([]byte("input_tokens,output_tokens\n3,4\n"))
	f.Add([]byte("# c\ninput_tokens\n7\n"))
	f.Add([]byte("input_tokens\n0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSampleLengths("f.csv", data)
		if err != nil {
			if s != nil {
				t.Fatalf("samples %v with error %v", s, err)
			}
			return
		}
		if len(s) == 0 {
			t.Fatal("no samples and no error")
		}
		for _, x := range s {
			if x.In < 1 || x.In > maxSampleTokens || x.Out < 0 || x.Out > maxSampleTokens {
				t.Fatalf("sample %v out of range", x)
			}
		}
	})
}

// TestLoadgenOrder: the query is whole copies of the dataset, each a
// permutation of it; a replica is dealt every replicas-th sample; a
// sample without an output takes the mean; the order is the seed's.
func TestLoadgenOrder(t *testing.T) {
	s := []sampleLen{{1, 10}, {2, 20}, {3, 30}, {4, 40}, {5, 50}}
	all := loadgenOrder(s, 3*len(s), 1, 0, 7)
	for c := range 3 {
		seen := map[int]bool{}
		for _, x := range all[c*len(s) : (c+1)*len(s)] {
			if x.Out != 10*x.In || seen[x.In] {
				t.Fatalf("copy %d: %v is not a permutation of the samples", c, all[c*len(s):(c+1)*len(s)])
			}
			seen[x.In] = true
		}
	}
	for r := 1; r <= 4; r++ {
		got := loadgenOrder(s, 4, r, 0, 7)
		for i, x := range got {
			if x != all[i*r] {
				t.Errorf("%d replicas: sample %d of the first is %v, want the query's %d-th, %v", r, i, x, i*r, all[i*r])
			}
		}
	}
	if other := loadgenOrder(s, len(s), 1, 0, 8); equalSamples(other, all[:len(s)]) {
		t.Errorf("seeds 7 and 8 give the same order %v", other)
	}
	for _, x := range loadgenOrder([]sampleLen{{3, 0}, {4, 0}}, 4, 1, 99, 1) {
		if x.Out != 99 {
			t.Errorf("a sample without an output got %d tokens, want the mean's 99", x.Out)
		}
	}
}

func equalSamples(a, b []sampleLen) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
