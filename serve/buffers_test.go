package serve_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestTRTLLMBuffers checks the buffer formula against hand computations.
func TestTRTLLMBuffers(t *testing.T) {
	for _, tt := range []struct {
		name                        string
		batch, seq, vocab, hid, tp  int
		want                        serve.TRTLLMBufferSet
		total, decoder, runtimeOnly model.Bytes
	}{
		// Llama 3 70B at TP 8 as trtllm-bench v0.14 built it for
		// 128/4096 (max_batch_size 8192, max_seq_len 4224): Vp = 128256
		// (a multiple of 8). L·B·Vp = 4·8192·128256 = 4,202,692,608 (a
		// multiple of 256); B·S = 34,603,008; top-k's candidates
		// 4·8192·8192 = 268,435,456 twice; the all-reduce 8·8e6 =
		// 64e6 rounded up to 31 × 2 MiB = 65,011,712, twice, and two 2
		// MiB flag buffers.
		{name: "70B tp8", batch: 8192, seq: 4224, vocab: 128256, hid: 8192, tp: 8,
			want: serve.TRTLLMBufferSet{
				RuntimeLogits: 4202692608, CacheIndirection: 12 * 34603008, SlotOutputs: 8 * 34603008,
				DecoderOutputs: 16 * 34603008, EmbeddingBias: 4202692608, SamplingLogits: 4202692608,
				SamplingWorkspace: 4202692608 + 2*268435456, Penalty: 4202692608,
				AllReduce: 2*65011712 + 2*2097152},
			total: 22930259968},
		// An independent check of the decoder's share: a TensorRT-LLM
		// log of the v0.14/v0.15 era (NVIDIA/TensorRT-LLM issue #1188,
		// 2024-11-21: Qwen2.5-Coder-0.5B, vocabulary 151936, built with
		// trtllm-build's defaults, max_batch_size 2048 and max_seq_len
		// its 32768 positions) reads "Allocated 5.76 GB GPU memory for
		// decoder". The decoder's buffers here (DecoderOutputs,
		// EmbeddingBias, SamplingLogits, SamplingWorkspace, Penalty):
		// 16·2048·32768 + 4·(4·2048·151936) + 2·(4·2048·8192) =
		// 6,186,598,400 bytes, 5.76 GiB.
		{name: "qwen 0.5B tp1", batch: 2048, seq: 32768, vocab: 151936, hid: 896, tp: 1,
			want: serve.TRTLLMBufferSet{
				RuntimeLogits: 1244659712, CacheIndirection: 12 * 67108864, SlotOutputs: 8 * 67108864,
				DecoderOutputs: 16 * 67108864, EmbeddingBias: 1244659712, SamplingLogits: 1244659712,
				SamplingWorkspace: 1244659712 + 2*67108864, Penalty: 1244659712},
			decoder: 6186598400},
	} {
		got := serve.TRTLLMBuffers(tt.batch, tt.seq, tt.vocab, tt.hid, tt.tp, 1)
		if got != tt.want {
			t.Errorf("%s: got %+v\nwant %+v", tt.name, got, tt.want)
		}
		if tt.total != 0 && got.Total() != tt.total {
			t.Errorf("%s: total %.0f, want %.0f", tt.name, float64(got.Total()), float64(tt.total))
		}
		if tt.decoder != 0 {
			dec := got.DecoderOutputs + got.EmbeddingBias + got.SamplingLogits + got.SamplingWorkspace + got.Penalty
			if dec != tt.decoder {
				t.Errorf("%s: decoder %.0f, want %.0f", tt.name, float64(dec), float64(tt.decoder))
			}
			if gib := float64(dec) / (1 << 30); math.Abs(gib-5.76) > 0.005 {
				t.Errorf("%s: decoder %.3f GiB, the log reads 5.76", tt.name, gib)
			}
		}
	}
	// The vocabulary is padded to a multiple of TP × PP for the logits;
	// the penalty workspace takes it unpadded.
	got := serve.TRTLLMBuffers(1, 0, 32001, 4096, 2, 2)
	if got.RuntimeLogits != 4*32004 || got.Penalty != 4*32001 {
		t.Errorf("padding: logits %v (want %d), penalty %v (want %d)", got.RuntimeLogits, 4*32004, got.Penalty, 4*32001)
	}
	if z := serve.TRTLLMBuffers(0, 0, 0, 0, 1, 1).Total(); z != 0 {
		t.Errorf("empty engine: %v, want 0", z)
	}
}

// TestKVCapacity_trtllmBuffers checks that the trtllm preset sizes its
// KV cache from the memory free after its runtime buffers: 0.9 of
// (usable − weights − activations − reserve − buffers), and that an
// engine without a buffer model is unchanged.
func TestKVCapacity_trtllmBuffers(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-70b", 8)
	sc := sim.Default()
	sc.TP = 8
	e, err := serve.Preset("trtllm", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	e.MaxSeqs, e.MaxTokens, e.MaxSeqLen = 8192, 16384, 4224
	p := pricer(t, sys, w, e.Scenario(sc))
	kv, m, err := e.KVCapacity(p)
	if err != nil {
		t.Fatal(err)
	}
	want := serve.TRTLLMBuffers(8192, 4224, 128256, 8192, 8, 1).Total()
	if m.Buffers != want {
		t.Fatalf("buffers %v, want %v", m.Buffers, want)
	}
	free := float64(m.Usable - m.Weights - m.Activations - m.Reserve - m.Buffers)
	if wantKV := int(math.Floor(0.9 * free / float64(m.KVPerToken))); kv != wantKV {
		t.Errorf("KV cache %d tokens, want %d", kv, wantKV)
	}
	none := e
	none.Buffers = serve.NoBuffers
	kv0, m0, err := none.KVCapacity(p)
	if err != nil {
		t.Fatal(err)
	}
	if m0.Buffers != 0 || kv0 <= kv {
		t.Errorf("without buffers: %v of buffers, %d tokens (with: %d)", m0.Buffers, kv0, kv)
	}
	if lost := float64(kv0-kv) * float64(m.KVPerToken); math.Abs(lost-0.9*float64(want)) > 2*float64(m.KVPerToken) {
		t.Errorf("the buffers cost %.0f bytes of KV cache, want 0.9 × %v", lost, want)
	}
	// Other presets carry no buffer model.
	for _, name := range []string{"vllm", "vllm-0.6", "sglang"} {
		o, err := serve.Preset(name, sys.Device.Memory.Limit())
		if err != nil {
			t.Fatal(err)
		}
		if b := o.RuntimeBuffers(p); b != 0 {
			t.Errorf("%s: %v of runtime buffers, want none", name, b)
		}
	}
}

func ExampleTRTLLMBuffers() {
	// Llama 3 70B at TP 8, max_batch_size 8192, max_seq_len 4224.
	b := serve.TRTLLMBuffers(8192, 4224, 128256, 8192, 8, 1)
	fmt.Printf("logits and sampling %.2f GiB, sequences %.2f GiB, all-reduce %.2f GiB, total %.2f GiB\n",
		float64(b.RuntimeLogits+b.EmbeddingBias+b.SamplingLogits+b.SamplingWorkspace+b.Penalty)/(1<<30),
		float64(b.CacheIndirection+b.SlotOutputs+b.DecoderOutputs)/(1<<30),
		float64(b.AllReduce)/(1<<30), float64(b.Total())/(1<<30))
	// Output:
	// logits and sampling 20.07 GiB, sequences 1.16 GiB, all-reduce 0.12 GiB, total 21.36 GiB
}
