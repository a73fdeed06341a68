package serve

import (
	"math"

	"github.com/perfsim/perfsim/model"
)

// records is what a run keeps of its requests once they have left:
// the four times every metric and summary is computed from, and the
// output length (TPOT), one column each, in arrival order; 36 bytes a
// request. The rest of a request's record (Metrics) lives only while it
// is in the system, unless Options.Records asks for Result.Requests.
// Each metric is computed from the columns exactly as Metrics computes
// it (the same float64 operations), so the summaries do not depend on
// which the run kept.
type records struct {
	arrival, start, first, finish []float64
	output                        []int32
	// Totals, of every request.
	inputs, outputs int
}

// newRecords returns room for n requests.
func newRecords(n int) records {
	return records{arrival: make([]float64, n), start: make([]float64, n), first: make([]float64, n), finish: make([]float64, n), output: make([]int32, n)}
}

// recordsOf returns the columns of ms.
func recordsOf(ms []Metrics) records {
	r := newRecords(len(ms))
	for i := range ms {
		r.put(i, &ms[i])
	}
	return r
}

func (r *records) len() int { return len(r.arrival) }

// put records m, finished, at slot i. The output length fits an int32:
// a request's tokens fit its KV cache (check).
func (r *records) put(i int, m *Metrics) {
	r.arrival[i], r.start[i], r.first[i], r.finish[i] = float64(m.Arrival), float64(m.Start), float64(m.FirstToken), float64(m.Finish)
	r.output[i] = int32(min(m.Output, math.MaxInt32))
	r.inputs += m.Input
	r.outputs += m.Output
}

// copyTo copies slot i to slot j of s.
func (r *records) copyTo(s *records, i, j int) {
	s.arrival[j], s.start[j], s.first[j], s.finish[j], s.output[j] = r.arrival[i], r.start[i], r.first[i], r.finish[i], r.output[i]
}

// The metrics of slot i, as Metrics computes them.
func (r *records) queue(i int) float64 {
	return float64(model.Seconds(r.start[i]) - model.Seconds(r.arrival[i]))
}
func (r *records) ttft(i int) float64 {
	return float64(model.Seconds(r.first[i]) - model.Seconds(r.arrival[i]))
}
func (r *records) e2e(i int) float64 {
	return float64(model.Seconds(r.finish[i]) - model.Seconds(r.arrival[i]))
}
func (r *records) tpot(i int) float64 {
	if r.output[i] <= 1 {
		return 0
	}
	return float64((model.Seconds(r.finish[i]) - model.Seconds(r.first[i])) / model.Seconds(r.output[i]-1))
}

// InService returns the requests' time in service, summed in arrival
// order: first scheduled to last token.
func (res *Result) InService() model.Seconds {
	var s float64
	r := &res.recs
	for i := range r.len() {
		s += float64(model.Seconds(r.finish[i]) - model.Seconds(r.start[i]))
	}
	return model.Seconds(s)
}
