package serve

import (
	"io"
	"math"

	"github.com/perfsim/perfsim/model"
)

// A Trace is a trace's requests as LoadTrace read and checked them,
// kept in 24 bytes a row (its arrival, line, lengths and prefix id)
// rather than as Requests: every problem of a trace is reported before
// anything runs, so the file is read whole first, but a run reads the
// rows as its event loop reaches them (RunDeploymentTrace), and a
// request's state is built from its row only then.
type Trace struct {
	rows []traceRow
	n    int       // the rows read (those past MaxRequests are counted, not kept)
	ids  prefixIDs // while reading
}

// traceRow is one request of a trace. Its lengths fit an int32 (at most
// 2^30, traceValue), and so do its line and prefix id (a trace is at
// most MaxTraceSize bytes).
type traceRow struct {
	arrival                     float64
	line, input, output, prefix int32
}

// Len returns the trace's requests.
func (t *Trace) Len() int { return len(t.rows) }

// add keeps q, a request read.
func (t *Trace) add(q Request) {
	if t.n++; t.n > MaxRequests+1 {
		return // too many: LoadTrace refuses the trace
	}
	t.rows = append(t.rows, traceRow{arrival: float64(q.Arrival), line: int32(min(q.ID, math.MaxInt32)), input: int32(q.Input), output: int32(q.Output), prefix: int32(min(q.Prefix, math.MaxInt32))})
}

// at returns request i; its ID is its line.
func (t *Trace) at(i int) Request {
	r := &t.rows[i]
	return Request{ID: int(r.line), Arrival: model.Seconds(r.arrival), Input: int(r.input), Output: int(r.output), Prefix: int(r.prefix)}
}

// Requests returns the trace's requests.
func (t *Trace) Requests() []Request {
	out := make([]Request, len(t.rows))
	for i := range out {
		out[i] = t.at(i)
	}
	return out
}

// source returns the trace's requests as a run's source.
func (t *Trace) source() source { return indexSource(len(t.rows), t.at) }

// traceReader reads a trace up to one byte past MaxTraceSize, counting
// the bytes, and ends it at the first error other than io.EOF, which it
// keeps (LoadTrace reports it as the trace's only problem, as it reports
// a trace over the limit).
type traceReader struct {
	r   io.Reader
	n   int64
	err error
}

func (t *traceReader) Read(p []byte) (int, error) {
	if t.err != nil || t.n > MaxTraceSize {
		return 0, io.EOF
	}
	if left := MaxTraceSize + 1 - t.n; int64(len(p)) > left {
		p = p[:left]
	}
	k, err := t.r.Read(p)
	t.n += int64(k)
	if err != nil && err != io.EOF {
		t.err = err
		err = io.EOF
	}
	return k, err
}

// RunDeploymentTrace serves a trace's requests on d as RunDeployment
// serves t.Requests(), with the same results, reading its rows as the
// run reaches them: on replicas alone (aggregated, round-robin, open
// loop) as RunReplicas reads its requests, and on any deployment run as
// one event loop (the least-outstanding router, a decode pool) as it
// draws a workload's requests (RunDeploymentWorkload).
func RunDeploymentTrace(d Deployment, t *Trace, o Options) (*Result, error) {
	if d.replicasOnly(o) && d.Serve.Instances >= 1 && d.Serve.Pricer != nil {
		return runReplicas(d.Serve.Pricer, d.Serve.Engine, t.source(), d.Serve.Instances, o, d.DPAttention)
	}
	if err := d.checkDPAttention(o); err != nil {
		return nil, err
	}
	return runDeployment(d, t.source(), o, nil)
}
