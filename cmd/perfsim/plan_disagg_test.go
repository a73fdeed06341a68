package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlanServe_disagg: --disagg adds disaggregated candidates, each
// named with its pools; --router and bad combinations are checked.
func TestPlanServe_disagg(t *testing.T) {
	out, errOut, code := perfsim(t, "plan", "serve", "--hw", "h100", "--model", "llama3-8b", "--rate", "30", "--ttft-p99", "500ms", "--tpot-p99", "20ms",
		"--input", "2000", "--output", "200", "--tp", "1,2", "--pp", "1", "--dtypes", "bf16", "--max-seqs", "0", "--requests", "300", "--disagg",
		"--router", "least-outstanding", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Seen       int `json:"layouts_seen"`
		Candidates []struct {
			Deployment string `json:"deployment"`
			Prefill    int    `json:"prefill_instances"`
			Decode     int    `json:"decode_instances"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	disagg := 0
	for _, c := range v.Candidates {
		if c.Prefill > 0 {
			disagg++
			if c.Decode < 1 || !strings.HasPrefix(c.Deployment, "prefill ") {
				t.Errorf("candidate %+v", c)
			}
		}
	}
	if v.Seen != 2+4 || disagg == 0 {
		t.Errorf("%d layouts seen (want 2 aggregated + 4 pairs), %d disaggregated candidates", v.Seen, disagg)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "10", "--ttft-p99", "1s", "--router", "random"}, "--router"},
		{[]string{"--max-rate", "--ttft-p99", "1s", "--disagg"}, "--disagg: not with --max-rate"},
	} {
		_, errOut, code := perfsim(t, append([]string{"plan", "serve", "--hw", "h100", "--model", "llama3-8b"}, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}
