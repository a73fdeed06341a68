package serve

import (
	"testing"

	"github.com/perfsim/perfsim/model"
)

// TestOverload_resummarized: summarize judges the requests it is given,
// whatever verdict the result held (RunReplicas merges into its first
// replica's result, which carries that replica's own verdict).
func TestOverload_resummarized(t *testing.T) {
	res := &Result{Overloaded: true, Verdict: "overloaded: replica 0 alone"}
	for i := range 100 {
		a := float64(i) * 0.1
		res.Requests = append(res.Requests, Metrics{ID: i, Arrival: model.Seconds(a), Start: model.Seconds(a), FirstToken: model.Seconds(a + 0.01), Finish: model.Seconds(a + 0.05), Input: 10, Output: 5})
	}
	res.recs = recordsOf(res.Requests)
	res.summarize(0)
	if res.Overloaded || res.Verdict != "" {
		t.Errorf("a stable run (one request at a time, each 50 ms, 100 ms apart): overloaded %v, %q", res.Overloaded, res.Verdict)
	}
}
