package serve

import (
	"testing"

	"github.com/perfsim/perfsim/sim"
)

// TestCapturedSize: the batch a graph runs at, the smallest of 1, 2, 4
// and the multiples of 8 that holds it (vLLM's _get_graph_batch_size and
// pad_for_cudagraph, SGLang's bisect over capture_bs).
func TestCapturedSize(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 4, 4: 4, 5: 8, 8: 8, 9: 16, 13: 16, 161: 168, 255: 256, 256: 256, 257: 264, 511: 512} {
		if got := capturedSize(n); got != want {
			t.Errorf("capturedSize(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestLaunch: how each preset launches an iteration: vLLM v0.6.0 and
// SGLang v0.4.0 graph decode-only batches up to their limit, padded (the
// LM head on the padding in SGLang's only; vLLM's LM head always outside
// the graph), vLLM v0.6.0 only while every
// sequence is at most 8192 tokens; vLLM V1 runs any iteration up to its
// limit in tokens in piecewise graphs, padded, and a larger one eagerly;
// prefills elsewhere and every iteration of an engine without graphs are
// left as they are.
func TestLaunch(t *testing.T) {
	dec := func(n, ctx int) sim.Iteration {
		it := sim.Iteration{Decode: make([]int, n), Sampled: n}
		for i := range it.Decode {
			it.Decode[i] = ctx
		}
		return it
	}
	mixed := func(chunk, n int) sim.Iteration {
		it := dec(n, 100)
		it.Prefill = []sim.Chunk{{Tokens: chunk}}
		return it
	}
	type want struct {
		eager, piecewise bool
		pad              int
		head             sim.HeadLaunch
	}
	for _, c := range []struct {
		name    string
		capture GraphCapture
		graphs  bool
		most    int
		it      sim.Iteration
		want    want
	}{
		{"v0 decode 13", CaptureVLLM06, true, 256, dec(13, 500), want{pad: 3, head: sim.HeadEager}},
		{"v0 decode 256", CaptureVLLM06, true, 256, dec(256, 500), want{head: sim.HeadEager}},
		{"v0 decode 257 over 256", CaptureVLLM06, true, 256, dec(257, 500), want{eager: true, head: sim.HeadEager}},
		{"v0 seq len 8192", CaptureVLLM06, true, 256, dec(5, 8191), want{pad: 3, head: sim.HeadEager}},
		{"v0 seq len 8193", CaptureVLLM06, true, 256, dec(5, 8192), want{eager: true, head: sim.HeadEager}},
		{"v0 prefill", CaptureVLLM06, true, 256, mixed(300, 0), want{head: sim.HeadEager}},
		{"sglang decode 13", CaptureSGLang, true, 160, dec(13, 500), want{pad: 3, head: sim.HeadPadded}},
		{"sglang decode 161", CaptureSGLang, true, 160, dec(161, 500), want{eager: true}},
		{"sglang mixed", CaptureSGLang, true, 160, mixed(300, 5), want{}},
		{"v1 decode 3", CaptureVLLMV1, true, 512, dec(3, 500), want{piecewise: true, pad: 1, head: sim.HeadEager}},
		{"v1 mixed 300", CaptureVLLMV1, true, 512, mixed(290, 10), want{piecewise: true, pad: 4, head: sim.HeadEager}},
		{"v1 prefill 512", CaptureVLLMV1, true, 512, mixed(512, 0), want{piecewise: true, head: sim.HeadEager}},
		{"v1 prefill 513", CaptureVLLMV1, true, 512, mixed(513, 0), want{eager: true, head: sim.HeadEager}},
		{"v1 decode 600", CaptureVLLMV1, true, 512, dec(600, 500), want{eager: true, head: sim.HeadEager}},
		{"any decode 13", CaptureAny, true, 0, dec(13, 500), want{}},
		{"any decode 13 over 8", CaptureAny, true, 8, dec(13, 500), want{eager: true}},
		{"no graphs", CaptureVLLMV1, false, 0, dec(13, 500), want{}},
	} {
		e := Engine{Graphs: c.graphs, Capture: c.capture}
		it := c.it
		it.Eager, it.Piecewise, it.Pad, it.Head = true, true, 99, sim.HeadPadded // overwritten
		e.launch(&it, c.most)
		if got := (want{it.Eager, it.Piecewise, it.Pad, it.Head}); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
