package mlperf

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// A FeatureStore is a workload that gathers its inputs from a store
// outside its weights: a graph network's node features (R-GAT's 547 M
// IGBH nodes of 1024 features). FeatureBytes is the whole store and
// GatheredBytes what a batch of samples reads from it, in the stored
// types (w where the workload gives none); 0 for other workloads.
type FeatureStore interface {
	FeatureBytes(w model.DType) model.Bytes
	GatheredBytes(batch int, w model.DType) model.Bytes
}

// store is where a part's feature store lives: split over shards
// devices (1: whole on each), the others' rows reached over link.
type store struct {
	shards int
	link   model.Link
}

// gather returns what a part's feature store costs a device running a
// batch of n samples: its share of the store, and the time the gather
// loses to the link. The store is split evenly over the shards, so
// (shards−1)/shards of the rows a batch reads are on peers: priced as an
// all-to-all of the gathered bytes over the scale-up link (the
// alpha-beta model of model.CollectiveTime). The peer reads overlap the
// local ones, which the simulator priced with every row in local memory
// (the embedding class of the report): the gather takes the longer of
// the two. 0, 0 for a workload without a store.
func (s store) gather(w sim.Workload, rep *sim.Report, n int, d model.DType) (share model.Bytes, extra model.Seconds) {
	fs, ok := w.(FeatureStore)
	if !ok || fs.FeatureBytes(d) == 0 {
		return 0, 0
	}
	shards := max(s.shards, 1)
	share = model.Bytes(float64(fs.FeatureBytes(d)) / float64(shards))
	remote := model.CollectiveTime(model.Collective{Kind: model.AllToAll, Size: fs.GatheredBytes(n, d), Ranks: shards, Tier: model.IntraNode}, s.link)
	var local model.Seconds
	if rep.Inference != nil {
		for _, c := range rep.Inference.Prefill.Classes {
			if c.Class == model.ClassEmbedding {
				local += c.Time
			}
		}
	}
	return share, max(remote-local, 0)
}

// storeNote says how a store is held, for a row's note and a fit error.
func storeNote(w sim.Workload, s store, d model.DType) string {
	fs, ok := w.(FeatureStore)
	if !ok || fs.FeatureBytes(d) == 0 {
		return ""
	}
	gb := float64(fs.FeatureBytes(d)) / 1e9
	if s.shards <= 1 {
		return fmt.Sprintf("the %.1f GB feature store whole on each device", gb)
	}
	return fmt.Sprintf("the %.1f GB feature store split over %d devices (%.1f GB each), peers' rows over the scale-up link", gb, s.shards, gb/float64(s.shards))
}
