package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"strconv"

	"github.com/perfsim/perfsim/internal/fileio"
	"github.com/perfsim/perfsim/serve"
)

// requestsHeader is --requests-out's header, in base units; a
// disaggregated run's adds kv_transfer_s.
func requestsHeader(disagg bool) []string {
	h := []string{"id", "arrival_s", "start_s", "first_token_s", "finish_s", "input_tokens", "output_tokens", "queue_s", "ttft_s", "tpot_s", "e2e_s", "preemptions"}
	if disagg {
		h = append(h, "kv_transfer_s")
	}
	return h
}

// requestRow is one request's row of --requests-out.
func requestRow(m *serve.Metrics, disagg bool) []string {
	r := []string{strconv.Itoa(m.ID), num(float64(m.Arrival)), num(float64(m.Start)), num(float64(m.FirstToken)),
		num(float64(m.Finish)), strconv.Itoa(m.Input), strconv.Itoa(m.Output), num(float64(m.Queue())), num(float64(m.TTFT())),
		num(float64(m.TPOT())), num(float64(m.E2E())), strconv.Itoa(m.Preemptions)}
	if disagg {
		r = append(r, num(float64(m.Transfer)))
	}
	return r
}

// requestsWriter streams --requests-out to its file as requests finish
// (serve.Options.OnFinish), in the requests' order: a request that
// finishes before one ahead of it waits in pend until that one has
// (about the requests in the system: data-parallel replicas are run
// side by side, in time order). The file appears whole at commit
// (fileio.Create), and not at all after abort.
type requestsWriter struct {
	f    *fileio.File
	bw   *bufio.Writer
	cw   *csv.Writer
	next int // the index of the next row
	pend map[int]serve.Metrics
	// disagg adds each request's kv_transfer_s.
	disagg bool
	err    error
}

func newRequestsWriter(path string, disagg bool) (*requestsWriter, error) {
	f, err := fileio.Create(path)
	if err != nil {
		return nil, err
	}
	w := &requestsWriter{f: f, bw: bufio.NewWriterSize(f, 64<<10), pend: map[int]serve.Metrics{}, disagg: disagg}
	w.cw = csv.NewWriter(w.bw)
	w.err = w.cw.Write(requestsHeader(disagg))
	return w, nil
}

// finish takes request i's record.
func (w *requestsWriter) finish(i int, m *serve.Metrics) {
	if i != w.next {
		w.pend[i] = *m
		return
	}
	w.row(m)
	for {
		p, ok := w.pend[w.next]
		if !ok {
			return
		}
		delete(w.pend, w.next)
		w.row(&p)
	}
}

func (w *requestsWriter) row(m *serve.Metrics) {
	w.next++
	if w.err == nil {
		w.err = w.cw.Write(requestRow(m, w.disagg))
	}
}

// commit makes the file whole, once every request's row is in it.
func (w *requestsWriter) commit(res *serve.Result) error {
	if w.err == nil && (len(w.pend) > 0 || w.next != res.Count) {
		w.err = fmt.Errorf("%d of %d requests' records written (a bug)", w.next, res.Count)
	}
	if w.err == nil {
		w.cw.Flush()
		w.err = w.cw.Error()
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err != nil {
		w.f.Abort()
		return w.err
	}
	return w.f.Commit()
}

// abort leaves the path as it was.
func (w *requestsWriter) abort() { w.f.Abort() }

// run serves the requests, a drawn workload's or a trace's, as the run
// reaches them where the deployment allows (serve.RunDeploymentWorkload,
// serve.RunDeploymentTrace).
func (s *serveSetup) run() (*serve.Result, error) {
	if s.trace == nil {
		return serve.RunDeploymentWorkload(s.dep, s.wl, s.opts)
	}
	return serve.RunDeploymentTrace(s.dep, s.trace, s.opts)
}
