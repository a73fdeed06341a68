package serve

import "github.com/perfsim/perfsim/model"

// Options are a run's settings beyond the engine.
type Options struct {
	// SeriesPoints, when > 0, records the queue, the running batch and
	// the KV occupancy over time in at most about that many samples
	// (older samples thinned by half whenever the buffer fills).
	SeriesPoints int
	// MaxContext, when > 0, is the model's context: a request longer is
	// an error.
	MaxContext int
	// MaxSeqLen, when > 0, is the longest request, prompt and output,
	// the engine was built for (TensorRT-LLM's max_seq_len, perfsim
	// serve's --max-seq-len): a longer request is an error.
	MaxSeqLen int
	// PrefixHit is the fraction of a prompt the prefix cache holds
	// (whole blocks; see cachedTokens): those tokens skip the prefill's
	// compute but hold KV blocks. 0: no prefix caching.
	PrefixHit float64
	// ITL records every gap between a request's consecutive tokens
	// for Result.ITL (memory: one entry per distinct gap, gaps.go).
	ITL bool
	// Users, when > 0, runs a closed loop (RunDeployment): Users users
	// each send a request at t = 0 and the next one Think after their
	// last finished; the requests' arrival times are ignored.
	Users int
	Think model.Seconds
	// Records keeps every request's record (Result.Requests, 72 bytes a
	// request). Without it a run keeps only what the
	// summaries need; OnFinish sees each record as its request leaves.
	Records bool
	// OnFinish, when set, is called with each request's index in the
	// run's requests and its record when it has finished (end to end,
	// disaggregated), in about the order they finish (RunReplicas runs
	// its replicas a round at a time, the one furthest behind first); the
	// record is not kept.
	OnFinish func(i int, m *Metrics)
}

// A Sample is the engine's state at the end of an iteration.
type Sample struct {
	Time        model.Seconds
	Waiting     int     // requests queued, not running
	Running     int     // requests holding KV blocks
	KVUsed      float64 // fraction of the KV blocks in use (or reserved)
	BatchTokens int     // tokens in the iteration that just ended
}
