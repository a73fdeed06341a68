package mlperf

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/model"
)

// LoadGen's Offline scenario (mlcommons/inference loadgen at tag v5.0)
// issues one query of all its samples at once and measures
// samples/s = samples ÷ the query's latency (its issue to its last
// sample's completion; results.cc, "Samples per second: sample_count /
// pr.max_latency", and tokens/s the same over the tokens). The query
// holds max(min_query_count, ⌊1.1 × min_duration × offline_expected_qps⌋)
// samples (test_settings_internal.cc: kSlack = 1.1, "to make sure we
// generate enough samples for the SUT to take longer than the minimum
// test duration"), padded up to whole copies of the loaded samples where
// sample_concatenate_permutation is set, as for every LLM benchmark
// (loadgen.cc, GenerateQueries); the run is valid only if its latency
// reaches min_duration (results.cc, MinDurationMet: "Increase expected
// QPS so the loadgen pre-generates a larger (coalesced) query"). A
// submitter sets offline_expected_qps to what the system does; perfsim
// sets it to the rate its own run measured, and runs again with more
// samples until the run is valid (llmReplica.offline).
//
// The Server scenario's queries (GenerateQueries again) are whole copies
// of the loaded samples too (sample_concatenate_permutation pads
// min_query_count, 100 by default, up to one), and a copy more while the
// last query is scheduled before min_duration: serverQueries.
const (
	// loadgenMinDuration is "*.Offline.min_duration = 600000" and
	// "*.Server.min_duration = 600000" (ms), loadgen/mlperf.conf at v5.0.
	loadgenMinDuration = model.Seconds(600)
	// loadgenSlack is kSlack, loadgen/test_settings_internal.cc.
	loadgenSlack = 1.1
	// loadgenTries bounds the runs that look for a valid duration: each
	// sets the expected rate to the last run's (two suffice for every
	// system in the suite; see TestOffline_loadgen).
	loadgenTries = 4
	// llmMaxPerReplica bounds the requests of one replica's run: the run
	// holds every request (serve.Request, 56 bytes) and serve keeps 36
	// bytes of each once it has finished, so about 25 MB at most (serve
	// had kept some 400 bytes a request when the bound was set). A
	// LoadGen query that would hand a replica more is cut to it, and the
	// result says so.
	llmMaxPerReplica = 1 << 18
)

// serverQueries returns the queries of LoadGen's Server run of b at qps
// samples/s: whole copies of the loaded samples, at least one, and
// enough that the queries span min_duration (their count at 600 s taken
// at its expectation, 600 s × qps).
func serverQueries(b Benchmark, qps float64) int {
	s := float64(max(b.Samples, 1))
	n := max(1, math.Ceil(float64(loadgenMinDuration)*qps/s)) * s
	return int(min(n, math.MaxInt32))
}

// offlineSamples returns the samples of LoadGen's Offline query for b
// at qps expected samples/s (0: the least, min_query_count).
func offlineSamples(b Benchmark, qps float64) int {
	n := float64(b.OfflineMinQueries)
	// LoadGen truncates the product to an integer (uint64_t).
	n = max(n, math.Floor(loadgenSlack*float64(loadgenMinDuration)*qps))
	if s := float64(b.Samples); s > 0 {
		n = math.Ceil(n/s) * s
	}
	return int(min(n, math.MaxInt32))
}

// An offlineRun is one LoadGen Offline query on a system of identical
// replicas.
type offlineRun struct {
	// Samples is the query's samples; PerReplica the most one replica
	// is handed (the samples spread evenly, the rest one each).
	Samples, PerReplica int
	// Duration is the query's latency: the slowest replica's run.
	Duration model.Seconds
	// TokensPerSecond is the system's output tokens over Duration.
	TokensPerSecond float64
	// Cut, when not empty, says the query was cut to llmMaxPerReplica
	// a replica.
	Cut string
}

// offline runs LoadGen's Offline query of benchmark b on replicas
// replicas like r, in and out tokens a sample: the least query first,
// then, while the run is shorter than LoadGen's minimum duration, the
// query LoadGen would issue at the rate the last run measured. Every
// replica starts at once and serves its share; the one with the most
// samples (an even share rounded up) finishes last, so it alone is run,
// on at most maxPer requests (llmMaxPerReplica).
func (r *llmReplica) offline(b Benchmark, replicas, in, out int, seed uint64, maxPer int) (offlineRun, error) {
	var run offlineRun
	if b.OfflineMinQueries <= 0 {
		return run, fmt.Errorf("%s has no LoadGen Offline sample count (min_query_count)", b.Name)
	}
	qps := 0.0
	for range loadgenTries {
		n := offlineSamples(b, qps)
		if n <= run.Samples {
			break
		}
		per := ceilDiv(n, replicas)
		if per > maxPer {
			// The run holds no more: cut the query, and say what
			// LoadGen's would be at the rate the cut run measures.
			rr, err := r.serveRun(maxPer, in, out, 0, seed)
			if err != nil {
				return run, err
			}
			ran := maxPer * replicas
			run = offlineRun{Samples: ran, PerReplica: maxPer, Duration: rr.Duration,
				TokensPerSecond: float64(ran) * r.outTokens(out) / float64(rr.Duration)}
			full := max(n, offlineSamples(b, float64(ran)/float64(rr.Duration)))
			run.Cut = fmt.Sprintf("LoadGen's Offline query is %d samples at this rate; perfsim ran %d (%d a replica, the most one run holds)", full, ran, maxPer)
			if run.Duration < loadgenMinDuration {
				run.Cut += fmt.Sprintf(", which last %v, under LoadGen's minimum of %v", run.Duration, loadgenMinDuration)
			}
			return run, nil
		}
		rr, err := r.serveRun(per, in, out, 0, seed)
		if err != nil {
			return run, err
		}
		run = offlineRun{Samples: n, PerReplica: per, Duration: rr.Duration,
			TokensPerSecond: float64(n) * r.outTokens(out) / float64(rr.Duration)}
		if run.Duration >= loadgenMinDuration {
			return run, nil
		}
		qps = float64(n) / float64(rr.Duration)
	}
	return run, fmt.Errorf("LoadGen's Offline query of %d samples lasts %v, under its minimum duration of %v, after %d tries", run.Samples, run.Duration, loadgenMinDuration, loadgenTries)
}
