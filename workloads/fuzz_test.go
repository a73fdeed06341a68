package workloads

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// seedFiles adds every catalog model and test file to a fuzz corpus.
func seedFiles(f *testing.F, pattern string) {
	paths, _ := filepath.Glob(pattern)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
}

// checkModel decomposes a loaded model in every phase it has, at a small
// shape and at one near the token limit: no panic, nothing non-finite, and
// no GEMM dimension wrapped to zero or below.
func checkModel(t *testing.T, m *Model) {
	if !finite(m.Params()) || m.Params() < 0 || m.Params() > MaxParams {
		t.Fatalf("%s: Params() = %v", m.Name(), m.Params())
	}
	for _, k := range []PhaseKind{Prefill, Decode, TrainForward, TrainBackward} {
		for _, ph := range []Phase{{Kind: k, Batch: 3, Seq: 7, Context: 5}, {Kind: k, Batch: 1 << 20, Seq: 1 << 19, Context: 1 << 19}} {
			ops, err := m.Ops(ph)
			if err != nil {
				continue
			}
			for _, o := range ExpandAttention(ops) {
				if f, b := float64(o.FLOPs()), float64(o.Bytes()); !finite(f) || !finite(b) || f < 0 || b < 0 {
					t.Fatalf("%s %s %s: FLOPs %v bytes %v", m.Name(), k, o.Name, f, b)
				}
				if g, ok := o.Kernel.(model.GEMM); ok && (g.M <= 0 || g.K <= 0 || g.N <= 0 || g.Batch < 0) {
					t.Fatalf("%s %s %s: GEMM %dx%dx%d batch %d", m.Name(), k, o.Name, g.M, g.K, g.N, g.Batch)
				}
			}
		}
	}
}

func FuzzLoad(f *testing.F) {
	seedFiles(f, filepath.Join("models", "*.toml"))
	seedFiles(f, filepath.Join("testdata", "bad", "*.toml"))
	f.Add([]byte("name = \"m\"\nkind = \"decoder\"\nlayers = 1\nd_model = 1\nheads = 1\nvocab = 2\nnorm = \"rmsnorm\"\nactivation = \"swiglu\"\nexperts = 16777216\ntop_k = 16777216\nexpert_ffn = 1\n"))
	f.Add([]byte("name = \"x\"\nkind = \"cnn\"\nimage_size = 4\nchannels = 1\n[[layer]]\nop = \"conv\"\nout = 2\nkernel = 3\npadding = 1\n"))
	// Small files of this session's keys, for the mutator to work on
	// beside the large catalog files that hold them: a shared input and
	// the passes over it (once, scalar, copy, mul, affine); a graph
	// network's gathers and graph attentions (dtype, edges, nodes, from);
	// T5's relative position bias.
	f.Add([]byte(`name = "once"
kind = "cnn"
image_size = 1
channels = 8
[[layer]]
name = "pos"
op = "input"
out = 8
length = 16
once = true
[[layer]]
name = "pos2"
op = "copy"
[[layer]]
name = "x"
op = "input"
out = 8
length = 16
[[layer]]
name = "x1"
op = "add"
from = "pos2"
[[layer]]
name = "x2"
op = "norm"
norm = "layernorm"
affine = false
[[layer]]
name = "x3"
op = "scalar"
[[layer]]
name = "x4"
op = "mul"
input = "x2"
from = "x3"
`))
	f.Add([]byte(`name = "graph"
kind = "cnn"
image_size = 1
channels = 1
[[layer]]
name = "paper"
op = "gather"
rows = 1000
out = 16
lookups = 10
dtype = "fp8"
[[layer]]
name = "author"
op = "gather"
rows = 500
out = 16
lookups = 6
[[layer]]
name = "cites"
op = "gat"
input = "paper"
out = 16
heads = 4
edges = 12
nodes = 3
[[layer]]
name = "writes"
op = "gat"
input = "author"
from = "paper"
out = 16
heads = 4
edges = 8
nodes = 3
`))
	f.Add([]byte("name = \"t5\"\nkind = \"encoder\"\nlayers = 2\nd_model = 64\nheads = 4\nffn = 128\nvocab = 100\nnorm = \"rmsnorm\"\nactivation = \"geglu\"\nbias = false\nposition = \"relative\"\nrelative_buckets = 32\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := Load(bytes.NewReader(src), "fuzz.toml")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		checkModel(t, m)
	})
}

func FuzzLoadHF(f *testing.F) {
	seedFiles(f, filepath.Join("testdata", "hf", "*.json"))
	seedFiles(f, filepath.Join("testdata", "hf", "today", "*.json"))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := LoadHF(bytes.NewReader(src), "fuzz/config.json")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		checkModel(t, m)
	})
}
