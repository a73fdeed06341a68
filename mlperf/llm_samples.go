package mlperf

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The LLM datasets' lengths sample by sample. LoadGen issues every
// sample of the dataset (whole copies of it, each in a random order:
// sample_concatenate_permutation), and the samples' lengths differ
// widely: Mixtral's 15,000 mix OpenOrca (665.6 tokens in, 130.0 out on
// average), GSM8K (415.4 and 205.9, with prompts of 35 to 1,948 tokens)
// and MBXP (201.2 and 98.7). Priced at the means, fixed, every sequence
// of a batch would finish at once; in the dataset a request's output is
// 2 to 1,024 tokens (mean 144.8, standard deviation 112.7), so a batch's
// slots free up one by one and are refilled with prefills, a long
// request holds its KV blocks for longer (the output-weighted mean
// output is 232.5 tokens), and a prefill's attention grows with the
// square of each prompt. lengths/*.csv hold the published counts
// (each file says its source); a file without an output column
// (Llama 2 70B: the per-sample outputs published are GPT-4's, not
// Llama 2's) gives the inputs alone, the output staying the mean.
//
//go:embed lengths/*.csv
var lengthFiles embed.FS

// maxSampleTokens bounds a length in a lengths file: 2^24 tokens is
// beyond any model's context.
const maxSampleTokens = 1 << 24

// A sampleLen is one dataset sample's prompt and output tokens (Out 0:
// not published).
type sampleLen struct{ In, Out int }

// parseSampleLengths reads a lengths file: lines starting with # and
// blank lines are comments; the first other line is the header,
// "input_tokens" or "input_tokens,output_tokens"; each later line one
// sample's counts, positive integers. Every problem is reported, each
// as name:line.
func parseSampleLengths(name string, data []byte) ([]sampleLen, error) {
	var out []sampleLen
	var errs []error
	cols := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		at := fmt.Sprintf("%s:%d", name, i+1)
		if cols == 0 {
			switch s {
			case "input_tokens":
				cols = 1
			case "input_tokens,output_tokens":
				cols = 2
			default:
				return nil, fmt.Errorf("%s: header %q: want input_tokens or input_tokens,output_tokens", at, s)
			}
			continue
		}
		f := strings.Split(s, ",")
		if len(f) != cols {
			errs = append(errs, fmt.Errorf("%s: %d fields, want %d", at, len(f), cols))
			continue
		}
		var v [2]int
		ok := true
		for j, x := range f {
			n, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || n < 1 || n > maxSampleTokens {
				errs = append(errs, fmt.Errorf("%s: %s %q: want a whole number of tokens from 1 to %d", at, [...]string{"input_tokens", "output_tokens"}[j], x, maxSampleTokens))
				ok = false
				continue
			}
			v[j] = n
		}
		if ok {
			out = append(out, sampleLen{In: v[0], Out: v[1]})
		}
	}
	switch {
	case cols == 0:
		errs = append(errs, fmt.Errorf("%s: no header (input_tokens or input_tokens,output_tokens)", name))
	case len(out) == 0 && len(errs) == 0:
		errs = append(errs, fmt.Errorf("%s: no samples", name))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// benchmarkSamples returns b's samples from its lengths file, checked
// against its LoadGen sample count; nil when it has none.
func benchmarkSamples(b Benchmark) ([]sampleLen, error) {
	if b.Lengths == "" {
		return nil, nil
	}
	data, err := lengthFiles.ReadFile("lengths/" + b.Lengths)
	if err != nil {
		return nil, err
	}
	s, err := parseSampleLengths(b.Lengths, data)
	if err != nil {
		return nil, err
	}
	if b.Samples > 0 && len(s) != b.Samples {
		return nil, fmt.Errorf("%s: %d samples, want LoadGen's performance_sample_count of %d", b.Lengths, len(s), b.Samples)
	}
	return s, nil
}

// llmSamples returns the samples a run of b draws its requests from:
// the dataset's, unless the options give b's lengths (which are then
// fixed at those means) or the dataset's are not published (nil).
func llmSamples(b Benchmark, o Options) ([]sampleLen, error) {
	if _, ok := o.Input[b.Name]; ok {
		return nil, nil
	}
	if _, ok := o.Output[b.Name]; ok {
		return nil, nil
	}
	return benchmarkSamples(b)
}

// meanOut returns the samples' mean output tokens, or 0 where their
// outputs are not published.
func meanOut(s []sampleLen) float64 {
	if len(s) == 0 || s[0].Out == 0 {
		return 0
	}
	sum := 0
	for _, x := range s {
		sum += x.Out
	}
	return float64(sum) / float64(len(s))
}

// loadgenOrder returns the lengths of the first n samples the first of
// replicas replicas is handed: LoadGen's query is whole copies of the
// dataset, each in its own random order (sample_concatenate_permutation;
// copy c shuffled by a generator seeded with seed and c), and the samples
// are dealt to the replicas in turn, the first taking samples 0,
// replicas, 2·replicas, ... of the query. A sample without a published
// output gets out tokens.
func loadgenOrder(s []sampleLen, n, replicas, out int, seed uint64) []sampleLen {
	replicas = max(replicas, 1)
	got := make([]sampleLen, 0, n)
	copyOf, perm := -1, []int(nil)
	for i := range n {
		g := i * replicas
		c := g / len(s)
		if c != copyOf {
			copyOf = c
			perm = rand.New(rand.NewPCG(seed, uint64(c))).Perm(len(s))
		}
		x := s[perm[g%len(s)]]
		if x.Out == 0 {
			x.Out = out
		}
		got = append(got, x)
	}
	return got
}
