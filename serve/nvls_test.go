package serve_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// userH100 returns a user's hardware file: the catalog's H100 SXM file
// with its scale-up link renamed to name and its in_network_reduction
// line replaced by reduction ("" drops the key and its source), loaded as
// a user's file is (hardware.Load) and made a node of tp devices.
func userH100(t *testing.T, name, reduction string) *hardware.System {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "hardware", "devices", "h100-sxm.toml"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for _, r := range []struct{ old, new string }{
		{`name = "H100 SXM"`, `name = "Our H100 board"`},
		{`aliases = ["h100", "h100-sxm5", "h100-80gb"]`, ``},
		{`name = "NVLink 4"`, `name = ` + quote(name)},
		{`in_network_reduction = "nvlink-sharp"` + "\n", keyLine(reduction)},
	} {
		if !strings.Contains(src, r.old) {
			t.Fatalf("h100-sxm.toml has no %q to replace", r.old)
		}
		src = strings.Replace(src, r.old, r.new, 1)
	}
	if reduction == "" {
		// The key's source goes with the key.
		i := strings.Index(src, `, in_network_reduction = "N21`)
		j := strings.Index(src[i:], `" }`)
		if i < 0 || j < 0 {
			t.Fatal("h100-sxm.toml: no source of in_network_reduction to drop")
		}
		src = src[:i] + src[i+j+1:]
	}
	d, err := hardware.Load(strings.NewReader(src), "our-h100.toml")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := hardware.NewSystem(d, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

func quote(s string) string { return `"` + s + `"` }

func keyLine(reduction string) string {
	if reduction == "" {
		return ""
	}
	return "in_network_reduction = " + quote(reduction) + "\n"
}

// TestNVLinkSHARP_key: whether NCCL 2.20.5's NVLink SHARP buffers are
// counted (vllm-0.6) follows the hardware file's in_network_reduction, not
// the link's name: a user's file whose link is not called NVLink but says
// "nvlink-sharp" gets them, as the catalog's H100 does (2.25 GiB at TP 4,
// the same KV cache, 445,936 tokens of Llama 3 70B); one whose link is
// called "NVLink 4" but says "none" does not (1.79 + 0.16 GiB, as an
// A100). A file that does not say is read as none, and a run says so.
func TestNVLinkSHARP_key(t *testing.T) {
	const gib = 1 << 30
	m, err := workloads.Resolve("llama3-70b")
	if err != nil {
		t.Fatal(err)
	}
	w := adapter{M: m}
	catalog, _ := setup(t, "h100", "llama3-70b", 8)
	for _, c := range []struct {
		what, name, reduction string
		nvls                  bool
		nonTorch              float64 // GiB at TP 4
		warn                  bool
	}{
		{"catalog H100", "", "", true, 0.16 + 1.79 + 2.25, false},
		{"not named NVLink, says nvlink-sharp", "Acme scale-up fabric", "nvlink-sharp", true, 0.16 + 1.79 + 2.25, false},
		{"named NVLink 4, says none", "NVLink 4", "none", false, 0.16 + 1.79, false},
		{"named NVLink 4, does not say", "NVLink 4", "", false, 0.16 + 1.79, true},
	} {
		sys := catalog
		if c.what != "catalog H100" {
			sys = userH100(t, c.name, c.reduction)
		}
		if got := serve.NVLinkSHARP(sys, 4); got != c.nvls {
			t.Errorf("%s: NVLinkSHARP at TP 4 = %v, want %v", c.what, got, c.nvls)
		}
		got := float64(serve.VLLM06NonTorch(sys, 4, 1)) / gib
		if d := got - c.nonTorch; d < -1e-9 || d > 1e-9 {
			t.Errorf("%s: %.4f GiB outside torch at TP 4, want %.4f", c.what, got, c.nonTorch)
		}
		if w := serve.NVLinkSHARPUnstated(sys, 4); (w != nil) != c.warn {
			t.Errorf("%s: NVLinkSHARPUnstated = %v, want a warning: %v", c.what, w, c.warn)
		}
		// At two GPUs NCCL sets no NVLS up, so nothing rests on the key.
		if w := serve.NVLinkSHARPUnstated(sys, 2); w != nil {
			t.Errorf("%s: NVLinkSHARPUnstated at TP 2 = %v, want nil", c.what, w)
		}

		e, err := serve.PresetFor("vllm-0.6", sys.Device.Memory.Limit(), 4)
		if err != nil {
			t.Fatal(err)
		}
		sc := sim.Default()
		sc.TP = 4
		p := pricer(t, sys, w, e.Scenario(sc))
		kv, _, err := e.KVCapacity(p)
		if err != nil {
			t.Fatal(err)
		}
		if c.nvls && kv != 445936 {
			t.Errorf("%s: %d KV tokens at TP 4, want the catalog H100's 445,936", c.what, kv)
		}
		if !c.nvls && kv <= 445936 {
			t.Errorf("%s: %d KV tokens at TP 4, want more than the 445,936 left beside NVLS's buffers", c.what, kv)
		}
		res, err := serve.Run(p, e, []serve.Request{{Input: 512, Output: 8}}, serve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		said := false
		for _, w := range res.Warnings {
			if strings.Contains(w.Error(), "in_network_reduction") {
				said = true
				if !strings.Contains(w.Error(), "Our H100 board") || !strings.Contains(w.Error(), "2.25 GiB") {
					t.Errorf("%s: the warning %q does not name the device and the 2.25 GiB at stake", c.what, w)
				}
			}
		}
		if said != c.warn {
			t.Errorf("%s: serve.Run warned of in_network_reduction: %v, want %v (warnings %v)", c.what, said, c.warn, res.Warnings)
		}
	}
}

// TestNVLinkSHARP_unstatedWarnsOnEveryPath: a file that does not say
// whether its switch reduces in the network is warned of by every way a
// vllm-0.6 run sizes its cache (a pipeline, whose engine is then given
// its KV cache; data-parallel replicas; a deployment of pools, aggregated
// behind the least-outstanding router and disaggregated), once; and not
// where the cache is given (--kv-tokens), so that nothing rests on it.
func TestNVLinkSHARP_unstatedWarnsOnEveryPath(t *testing.T) {
	m, err := workloads.Resolve("llama3-70b")
	if err != nil {
		t.Fatal(err)
	}
	w := adapter{M: m}
	sys := userH100(t, "NVLink 4", "")
	e, err := serve.PresetFor("vllm-0.6", sys.Device.Memory.Limit(), 4)
	if err != nil {
		t.Fatal(err)
	}
	at := func(pp int) *sim.Pricer {
		sc := sim.Default()
		sc.TP, sc.PP = 4, pp
		return pricer(t, sys, w, e.Scenario(sc))
	}
	reqs := []serve.Request{{Input: 512, Output: 8}, {Arrival: 0.01, Input: 256, Output: 4}}
	count := func(res *serve.Result) int {
		n := 0
		for _, w := range res.Warnings {
			if strings.Contains(w.Error(), "in_network_reduction") {
				n++
			}
		}
		return n
	}
	given := e
	given.KVTokens = 100000
	for _, c := range []struct {
		what string
		run  func() (*serve.Result, error)
		want int
	}{
		{"TP 4 × PP 2", func() (*serve.Result, error) { return serve.RunReplicas(at(2), e, reqs, 1, serve.Options{}) }, 1},
		{"TP 4 × PP 2, one request", func() (*serve.Result, error) { return serve.RunReplicas(at(2), e, reqs[:1], 1, serve.Options{}) }, 1},
		{"TP 4 × DP 2", func() (*serve.Result, error) { return serve.RunReplicas(at(1), e, reqs, 2, serve.Options{}) }, 1},
		{"least-outstanding", func() (*serve.Result, error) {
			return serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: at(1), Engine: e, Instances: 2}, Router: serve.LeastOutstanding}, reqs, serve.Options{})
		}, 1},
		{"disaggregated", func() (*serve.Result, error) {
			return serve.RunDeployment(serve.Deployment{Serve: serve.Pool{Pricer: at(1), Engine: e, Instances: 1}, Decode: serve.Pool{Pricer: at(1), Engine: e, Instances: 1}}, reqs, serve.Options{})
		}, 1},
		{"KV cache given", func() (*serve.Result, error) { return serve.Run(at(1), given, reqs, serve.Options{}) }, 0},
	} {
		res, err := c.run()
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if got := count(res); got != c.want {
			t.Errorf("%s: %d warnings of in_network_reduction, want %d (%v)", c.what, got, c.want, res.Warnings)
		}
	}
}
