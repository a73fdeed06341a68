package plan

import (
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// RateVerdict runs dp replicas of p and e at rate r over w's requests
// (its Rate ignored) exactly as MaxRate judges each rate it tries: the
// same draws, made at rate 1 and scaled, run again over twice as many
// while a run has not settled (SettleFactor). The tests judge the rate
// above MaxRate's answer by it, so that a run still filling when its
// arrivals stop (serve.Result.Unsettled) is not taken for a missed
// objective. It returns the last run's result and its requests.
func RateVerdict(p *sim.Pricer, e serve.Engine, dp int, w serve.Workload, r float64) (*serve.Result, int, error) {
	w.Rate = 1
	ds, err := newDraws(w)
	if err != nil {
		return nil, 0, err
	}
	return ds.replicasAt(p, e, dp, r)
}
