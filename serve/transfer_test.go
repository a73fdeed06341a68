package serve_test

import (
	"math"
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestDisagg_heldKV: a prefill instance holds a request's KV cache
// until it has been sent, and a request is sent only when the decode
// instance has blocks for it (transfer.go), so a slow link or a full
// decode pool fills the prefill pool's KV cache and delays the prompts
// behind it. Llama 3 8B, vLLM, 1P1D on H100s, a prefill instance of
// 8,192 KV tokens (four 2,048-token prompts), Poisson 6 req/s, 1,000
// requests of 2,048 tokens in. Before this model (prefill blocks freed
// at the first token, the decode side reserving nothing), TTFT did not
// see the link or the decode pool at all: mean 0.055 s and p99 0.136 s
// in every case below; the wait showed up in TPOT instead.
//
//   - A 2 GB/s link (134 ms a prompt; 128 tokens out): TTFT mean 0.055
//     -> 0.087 s, p99 0.136 -> 0.522 s against an infinitely fast link;
//     the prefill pool's KV cache is 38.9% held by prefilled requests
//     waiting for or in their transfer (0 before); TPOT p99 (which
//     includes the transfer) 14.5 ms before, 11.0 ms now, the link's
//     queue being shorter when prompts are held back.
//   - A decode instance of 32,768 KV tokens and an infinitely fast link
//     (256 tokens out): TTFT mean 0.055 -> 0.100 s, p99 0.136 -> 1.122 s
//     against a decode instance of the memory's size; 13.8% of the
//     prefill KV cache held; TPOT p99 14.4 -> 12.4 ms (the wait moved
//     from the decode queue to the prefill pool).
//
// In both, the held share is exactly each request's held blocks times
// its wait from first token to the KV cache's arrival, summed, over the
// run's duration and the pool's blocks.
func TestDisagg_heldKV(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 2)
	p := pricer(t, sys, w, sim.Default())
	e, err := serve.Preset("vllm", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	inf := model.Link{Bandwidth: model.ByteRate(math.Inf(1))}
	slow := model.Link{Bandwidth: 2e9, Latency: 10e-6, Efficiency: 1}
	run := func(link model.Link, decodeKV, output int) *serve.Result {
		pe, de := e, e
		pe.KVTokens, de.KVTokens = 8192, decodeKV
		d := serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: pe, Instances: 1}, Decode: serve.Pool{Pricer: p, Engine: de, Instances: 1},
			Link: &serve.KVLink{Intra: link, Inter: link, PerNode: 8}}
		reqs := mustRequests(t, serve.Workload{N: 1000, Arrival: serve.Poisson, Rate: 6, Seed: 7, Input: serve.Fixed(2048), Output: serve.Fixed(output)})
		res := mustDeploy(t, d, reqs, serve.Options{})
		little(t, res)
		// The held share, from the requests: 2,048 tokens hold 128 blocks
		// of 16 from their first token (vLLM V1 delivers outputs at once)
		// until their KV cache has arrived.
		var area float64
		for _, m := range res.Requests {
			area += 2048 / 16 * float64(m.Transfer)
		}
		pr := res.Pools[0]
		if want := area / float64(res.Duration) / float64(pr.KVTokens/16*pr.Schedulers); math.Abs(pr.KVHeld-want) > 1e-9 {
			t.Errorf("prefill KV held %.12g, want %.12g from the requests' transfers", pr.KVHeld, want)
		}
		return res
	}
	for _, c := range []struct {
		name            string
		base, held      *serve.Result
		minP99, minHeld float64
	}{
		{name: "slow link", base: run(inf, 0, 128), held: run(slow, 0, 128), minP99: 2, minHeld: 0.3},
		{name: "full decode pool", base: run(inf, 0, 256), held: run(inf, 32768, 256), minP99: 5, minHeld: 0.1},
	} {
		t.Logf("%s: TTFT mean %.3f -> %.3f s, p99 %.3f -> %.3f s; TPOT p99 %.4f -> %.4f s; prefill KV held %.1f%% -> %.1f%%; transfer mean %.3f -> %.3f s",
			c.name, c.base.TTFT.Mean, c.held.TTFT.Mean, c.base.TTFT.P99, c.held.TTFT.P99, c.base.TPOT.P99, c.held.TPOT.P99,
			100*c.base.Pools[0].KVHeld, 100*c.held.Pools[0].KVHeld, c.base.Transfer.Mean, c.held.Transfer.Mean)
		if c.base.Pools[0].KVHeld != 0 || c.base.Transfer.Max != 0 {
			t.Errorf("%s: with an infinitely fast link and room to decode, KV held %g, longest transfer %g s; want 0", c.name, c.base.Pools[0].KVHeld, c.base.Transfer.Max)
		}
		if c.held.TTFT.P99 < c.minP99*c.base.TTFT.P99 || c.held.Pools[0].KVHeld < c.minHeld {
			t.Errorf("%s: p99 TTFT %.3f s against %.3f s, prefill KV held %.3f: want the prompts held back (p99 at least %g×, held at least %g)",
				c.name, c.held.TTFT.P99, c.base.TTFT.P99, c.held.Pools[0].KVHeld, c.minP99, c.minHeld)
		}
	}
}

// TestDisagg_reserveFirst: SGLang's decode instance sets a request's
// blocks aside before its prefill (Engine.ReserveFirst, the sglang
// preset), so a full decode pool holds requests back before they are
// prefilled: the wait is in their queue and TTFT, and the prefill pool
// holds KV caches only over their transfers, where reserving when the
// prefill ends (as vLLM does) fills the prefill pool with prefilled
// requests waiting for decode blocks. The full-decode-pool case of
// TestDisagg_heldKV with the sglang preset (1P1D, a decode instance of
// 32,768 KV tokens, 6 req/s of 2,048 in and 256 out, an instant link),
// reserved when the prefill ends -> before it starts: mean queue 0.107
// -> 0.299 s, TTFT p99 1.694 -> 2.580 s, TPOT p99 12.7 -> 10.1 ms,
// prefill KV held 16.5% -> 1.4% (an iteration's output processing),
// mean transfer 0.107 s -> 0.
func TestDisagg_reserveFirst(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 2)
	p := pricer(t, sys, w, sim.Default())
	e, err := serve.Preset("sglang", sys.Device.Memory.Limit())
	if err != nil {
		t.Fatal(err)
	}
	inf := model.Link{Bandwidth: model.ByteRate(math.Inf(1))}
	run := func(first bool) *serve.Result {
		pe, de := e, e
		pe.KVTokens, de.KVTokens = 8192, 32768
		de.ReserveFirst = first
		d := serve.Deployment{Serve: serve.Pool{Pricer: p, Engine: pe, Instances: 1}, Decode: serve.Pool{Pricer: p, Engine: de, Instances: 1},
			Link: &serve.KVLink{Intra: inf, Inter: inf, PerNode: 8}}
		reqs := mustRequests(t, serve.Workload{N: 1000, Arrival: serve.Poisson, Rate: 6, Seed: 7, Input: serve.Fixed(2048), Output: serve.Fixed(256)})
		res := mustDeploy(t, d, reqs, serve.Options{})
		little(t, res)
		return res
	}
	after, first := run(false), run(true)
	t.Logf("reserved when the prefill ends -> before it starts: queue mean %.3f -> %.3f s, TTFT p99 %.3f -> %.3f s, TPOT p99 %.4f -> %.4f s, prefill KV held %.1f%% -> %.1f%%, transfer mean %.3f -> %.3f s",
		after.Queue.Mean, first.Queue.Mean, after.TTFT.P99, first.TTFT.P99, after.TPOT.P99, first.TPOT.P99,
		100*after.Pools[0].KVHeld, 100*first.Pools[0].KVHeld, after.Transfer.Mean, first.Transfer.Mean)
	// Reserved first, a request's KV cache leaves as soon as its prefill
	// is delivered (one iteration after it ends: SGLang overlaps its
	// output processing with the next batch), over an instant link.
	if first.Transfer.Max != 0 || !(first.Pools[0].KVHeld < after.Pools[0].KVHeld/4) {
		t.Errorf("reserved first: longest transfer %g s (want 0), prefill KV held %.4f against %.4f (want under a quarter)", first.Transfer.Max, first.Pools[0].KVHeld, after.Pools[0].KVHeld)
	}
	if !(first.Queue.Mean > 2*after.Queue.Mean) {
		t.Errorf("reserved first: mean queue %.3f s against %.3f s; want the wait for decode blocks before the prefill", first.Queue.Mean, after.Queue.Mean)
	}
}
