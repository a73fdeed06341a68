package serve_test

import (
	"testing"

	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// TestUtilization_perGPU: a deployment's utilisation is GPU-time busy
// over GPU-time available, so a disaggregated one whose pools have
// different GPUs per instance weights each pool's own figure by its GPUs,
// not by its instances. Llama 3 8B on H100s, 2P1D with prefill TP 1 and
// decode TP 4 (2 + 4 GPUs), decode-heavy requests: the decode pool is far
// busier than the prefill pool, so the two means differ by far more than
// the tolerance. Replicas of one pool (round-robin, least-outstanding)
// all have the same GPUs, and their utilisation is the pool's.
func TestUtilization_perGPU(t *testing.T) {
	sys, w := setup(t, "h100", "llama3-8b", 8)
	e, _ := serve.Preset("vllm", sys.Device.Memory.Limit())
	tp := func(n int) *sim.Pricer {
		sc := sim.Default()
		sc.TP = n
		return pricer(t, sys, w, sc)
	}
	reqs := mustRequests(t, serve.Workload{N: 400, Arrival: serve.Poisson, Rate: 8, Seed: 3,
		Input: serve.Fixed(512), Output: serve.Fixed(256)})

	d := serve.Deployment{Serve: serve.Pool{Pricer: tp(1), Engine: e, Instances: 2}, Decode: serve.Pool{Pricer: tp(4), Engine: e, Instances: 1}}
	res := mustDeploy(t, d, reqs, serve.Options{})
	if len(res.Pools) != 2 {
		t.Fatalf("%d pools, want 2", len(res.Pools))
	}
	var busy, gpus, byInstance, instances float64
	for _, p := range res.Pools {
		g := float64(p.Instances * p.GPUs)
		busy += p.Utilization * g
		gpus += g
		byInstance += p.Utilization * float64(p.Instances)
		instances += float64(p.Instances)
	}
	want, wrong := busy/gpus, byInstance/instances
	t.Logf("prefill %.4f (%d × %d GPUs), decode %.4f (%d × %d GPUs): per GPU %.4f, per instance %.4f, reported %.4f",
		res.Pools[0].Utilization, res.Pools[0].Instances, res.Pools[0].GPUs, res.Pools[1].Utilization, res.Pools[1].Instances, res.Pools[1].GPUs,
		want, wrong, res.Utilization)
	if relErr(want, wrong) < 0.05 {
		t.Fatalf("per-GPU %.4f and per-instance %.4f means differ by under 5%%: the test cannot tell them apart", want, wrong)
	}
	if relErr(res.Utilization, want) > 1e-12 {
		t.Errorf("utilisation %.6f, want the pools' mean weighted by GPUs %.6f (weighted by instances: %.6f)", res.Utilization, want, wrong)
	}

	// Round-robin replicas run apart (RunReplicas: no pools reported);
	// least-outstanding ones share an event loop, one pool.
	for _, r := range []serve.Router{serve.RoundRobin, serve.LeastOutstanding} {
		d := serve.Deployment{Serve: serve.Pool{Pricer: tp(2), Engine: e, Instances: 3}, Router: r}
		res := mustDeploy(t, d, reqs, serve.Options{})
		pool := float64(res.BusyTime) / float64(res.Duration) / float64(res.Replicas)
		if len(res.Pools) == 1 {
			pool = res.Pools[0].Utilization
		}
		if res.Replicas != 3 || res.Utilization != pool {
			t.Errorf("%v: utilisation %v over %d replicas, want the pool's %v", r, res.Utilization, res.Replicas, pool)
		}
	}
}
