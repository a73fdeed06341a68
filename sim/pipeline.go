package sim

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/model"
)

// Schedule is a pipeline-parallel schedule.
type Schedule uint8

// The schedules (Narayanan et al., "Efficient Large-Scale Language Model
// Training on GPU Clusters Using Megatron-LM", SC 2021, §2.2).
const (
	OneFOneB    Schedule = iota // one forward, one backward (PipeDream-Flush); holds at most p micro-batches
	GPipe                       // all forwards, then all backwards; holds all m micro-batches
	Interleaved                 // 1F1B over v model chunks per device: the bubble shrinks v times
)

func (s Schedule) String() string { return [...]string{"1f1b", "gpipe", "interleaved"}[s] }

// ParseSchedule parses 1f1b, gpipe or interleaved.
func ParseSchedule(s string) (Schedule, error) {
	for i, n := range [...]string{"1f1b", "gpipe", "interleaved"} {
		if strings.EqualFold(s, n) {
			return Schedule(i), nil
		}
	}
	return 0, fmt.Errorf("unknown pipeline schedule %q (want 1f1b, gpipe or interleaved)", s)
}

// PipelineTime returns the time m micro-batches take through a pipeline
// whose stage i needs t[i] per micro-batch (its forward, backward and
// recomputation, all of its v model chunks together), and the bubble:
// the part of it the slowest stage spends idle.
//
// With equal stages of time t, 1F1B and GPipe take (m + p − 1)·t and
// interleaved 1F1B over v chunks (m + (p − 1)/v)·t (Narayanan et al.
// 2021, §2.2.1–2.2.2): the bubble over the ideal compute m·t is (p−1)/m
// and (p−1)/(v·m), and as a share of the step (p−1)/(m+p−1) for v = 1.
// With unequal stages, the slowest sets the steady state and the others
// add their fill and drain: m·max(t) + (Σt − max(t))/v.
func PipelineTime(t []model.Seconds, m, v int, s Schedule) (total, bubble model.Seconds) {
	if len(t) == 0 || m <= 0 {
		return 0, 0
	}
	if s != Interleaved || v < 1 {
		v = 1
	}
	var sum, worst model.Seconds
	for _, x := range t {
		sum += x
		worst = max(worst, x)
	}
	bubble = (sum - worst) / model.Seconds(v)
	return model.Seconds(m)*worst + bubble, bubble
}

// InFlight returns the micro-batches whose activations the first stage
// holds at its peak, in units of one micro-batch through all of its
// layers: m for GPipe; min(p, m) for 1F1B; for interleaved 1F1B
// p·(1 + (p−1)/(p·v)) when m ≥ p (Korthikanti et al. 2022, §4.2.3:
// the first stage holds L·(1 + (p−1)/(p·v)) layers' worth at p stages).
func InFlight(p, m, v int, s Schedule) float64 {
	p, m = max(p, 1), max(m, 1)
	switch s {
	case GPipe:
		return float64(m)
	case Interleaved:
		if v > 1 && m >= p {
			return float64(p) * (1 + float64(p-1)/(float64(p)*float64(v)))
		}
	}
	return float64(min(p, m))
}

// ZeROStates returns the model states per rank of mixed-precision
// training (Rajbhandari et al., "ZeRO", SC 2020, §5 and Figure 1): params
// parameters on this rank before data-parallel sharding, 2-byte weights
// and gradients and k bytes of optimizer state per parameter, sharded
// over dp ranks as the stage says: 1 the optimizer state ((2+2)Ψ +
// KΨ/N), 2 also the gradients (2Ψ + (2+K)Ψ/N), 3 also the weights
// ((2+2+K)Ψ/N); 0 shards nothing ((2+2+K)Ψ).
func ZeROStates(params float64, dp, stage int, k float64) (weights, grads, opt model.Bytes) {
	n := float64(max(dp, 1))
	w, g, o := 2*params, 2*params, k*params
	if stage >= 1 {
		o /= n
	}
	if stage >= 2 {
		g /= n
	}
	if stage >= 3 {
		w /= n
	}
	return model.Bytes(w), model.Bytes(g), model.Bytes(o)
}

// PipelineChunks returns the time m micro-batches take through a pipeline
// whose stage i runs its model chunks in c[i] (c[i][j]: chunk j's forward,
// backward and recomputation of one micro-batch, in model order; every
// stage has the same number of chunks v), and the bubble: the part of
// it the slowest stage spends idle. It generalises PipelineTime to
// stages whose chunks differ, as when the embedding and the loss take a
// layer's slot (ChunkLayers).
//
// A stage w is busy m·T_w, T_w its chunks' sum, and waits on a chain of
// the others: the first micro-batch's forward reaches it through the
// first chunk of every earlier stage, and the last micro-batch's
// backward leaves through them again, so each earlier stage adds its
// first chunk; the last micro-batch turns around in the last chunk of
// every later stage, forward and backward, so each later stage adds its
// last chunk (Narayanan et al. 2021, §2.2.2: interleaved 1F1B starts each
// device on chunk 0 and ends it on chunk 0's backward). The step is the
// longest of these chains:
//
//	max over w of  m·T_w + Σ_{i<w} c[i][0] + Σ_{i>w} c[i][v−1]
//
// With one chunk a stage this is m·max(T) + Σ T − max(T), PipelineTime's
// 1F1B; with equal chunks c it is (m·v + p − 1)·c, PipelineTime's
// interleaved form, the bubble (p−1)/(v·m) of the ideal. Stages of
// different chunk counts take the same chain, each with its own first
// and last chunk (an empty stage adds nothing).
func PipelineChunks(c [][]model.Seconds, m int, s Schedule) (total, bubble model.Seconds) {
	if len(c) == 0 {
		return 0, 0
	}
	v := len(c[0])
	flat := make([]model.Seconds, 0, len(c)*v)
	for _, ch := range c {
		if len(ch) != v || v == 0 {
			return raggedChunks(c, m, s)
		}
		flat = append(flat, ch...)
	}
	return pipelineChunks(flat, len(c), v, m, s)
}

// raggedChunks is PipelineChunks over stages whose chunk counts differ.
func raggedChunks(c [][]model.Seconds, m int, s Schedule) (total, bubble model.Seconds) {
	if m <= 0 {
		return 0, 0
	}
	p := len(c)
	stage, after := make([]model.Seconds, p), make([]model.Seconds, p)
	var worst model.Seconds
	for i, ch := range c {
		for _, x := range ch {
			stage[i] += x
		}
		worst = max(worst, stage[i])
	}
	if s != Interleaved {
		return PipelineTime(stage, m, 1, s)
	}
	for i := p - 2; i >= 0; i-- {
		after[i] = after[i+1]
		if ch := c[i+1]; len(ch) > 0 {
			after[i] += ch[len(ch)-1]
		}
	}
	var before model.Seconds
	for w, ch := range c {
		total = max(total, model.Seconds(m)*stage[w]+before+after[w])
		if len(ch) > 0 {
			before += ch[0]
		}
	}
	return total, total - model.Seconds(m)*worst
}

// pipelineChunks is PipelineChunks over p stages of v chunks laid out
// stage by stage in c.
func pipelineChunks(c []model.Seconds, p, v, m int, s Schedule) (total, bubble model.Seconds) {
	if p <= 0 || v <= 0 || len(c) < p*v || m <= 0 {
		return 0, 0
	}
	var buf, sbuf [64]model.Seconds
	stage, after := buf[:0], sbuf[:0]
	if p > len(buf) {
		stage, after = make([]model.Seconds, 0, p), make([]model.Seconds, 0, p)
	}
	var worst model.Seconds
	for i := range p {
		var t model.Seconds
		for _, x := range c[i*v : (i+1)*v] {
			t += x
		}
		stage = append(stage, t)
		worst = max(worst, t)
	}
	if s != Interleaved || v == 1 {
		// One chunk a stage (or a schedule that runs a stage's layers
		// as one): PipelineTime's form, to the last bit.
		return PipelineTime(stage, m, 1, s)
	}
	// The chain through w: before = Σ_{i<w} c[i][0], after[w] =
	// Σ_{i>w} c[i][v−1].
	after = after[:p]
	after[p-1] = 0
	for i := p - 2; i >= 0; i-- {
		after[i] = after[i+1] + c[(i+1)*v+v-1]
	}
	var before model.Seconds
	for w := range p {
		total = max(total, model.Seconds(m)*stage[w]+before+after[w])
		before += c[w*v]
	}
	return total, total - model.Seconds(m)*worst
}

// ChunkLayers returns the transformer layers of each model chunk, stage
// by stage (out[i][j]: stage i's chunk j), of layers spread over pp
// stages of v chunks as Megatron-Core spreads them: with embed and loss
// (--account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split) the embedding and the loss each
// take one layer's slot, so layers + 2 slots split evenly over the pp·v
// chunks, and the first chunk builds one layer fewer (beside the
// embedding) and the last one fewer (beside the output layer and the
// loss) (megatron/core/transformer/transformer_block.py,
// get_num_layers_to_build; transformer_config.py checks the slots
// divide). It says so when the slots do not divide evenly.
func ChunkLayers(layers, pp, v int, embed, loss bool) ([][]int, error) {
	sp, err := newSplit(layers, pp, v, embed, loss)
	if err != nil {
		return nil, err
	}
	flat := make([]int, sp.pp*sp.v)
	out := make([][]int, sp.pp)
	for i := range out {
		out[i] = flat[i*sp.v : (i+1)*sp.v]
		for j := range out[i] {
			out[i][j] = sp.chunk(i, j)
		}
	}
	return out, nil
}

// split is how layers spread over pp stages of v chunks (ChunkLayers),
// without allocating: per layer slots a chunk, less the embedding's in
// the first and the loss's in the last.
type split struct {
	per, pp, v  int
	embed, loss bool
}

// newSplit checks and returns the split of ChunkLayers.
func newSplit(layers, pp, v int, embed, loss bool) (split, error) {
	pp, v = max(pp, 1), max(v, 1)
	slots := layers
	if embed {
		slots++
	}
	if loss {
		slots++
	}
	if slots%(pp*v) != 0 {
		return split{}, slotError(layers, pp, v, embed, loss)
	}
	sp := split{per: slots / (pp * v), pp: pp, v: v, embed: embed, loss: loss}
	if sp.chunk(0, 0) < 0 || sp.chunk(pp-1, v-1) < 0 {
		return split{}, fmt.Errorf("%d layers over %d chunks leave no room for the embedding and the loss", layers, pp*v)
	}
	return sp, nil
}

// chunk returns the layers of stage i's chunk j.
func (sp split) chunk(i, j int) int {
	n := sp.per
	if sp.embed && i == 0 && j == 0 {
		n--
	}
	if sp.loss && i == sp.pp-1 && j == sp.v-1 {
		n--
	}
	return n
}

// stage returns the layers of stage i, all of its chunks.
func (sp split) stage(i int) int {
	n := sp.per * sp.v
	if sp.embed && i == 0 {
		n--
	}
	if sp.loss && i == sp.pp-1 {
		n--
	}
	return n
}

// slotError says why layers do not spread over pp × v chunks.
func slotError(layers, pp, v int, embed, loss bool) error {
	what := fmt.Sprintf("pipeline parallelism %d", pp)
	if v > 1 {
		what = fmt.Sprintf("pipeline %d × virtual stages %d", pp, v)
	}
	n := 0
	if embed {
		n++
	}
	if loss {
		n++
	}
	if n == 0 {
		hint := ""
		for k := 1; k <= 2; k++ {
			if (layers+k)%(pp*v) == 0 {
				hint = fmt.Sprintf(" (%d + %d = %d would: count the embedding and the loss as layer slots, --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split)",
					layers, k, layers+k)
				if k == 1 {
					hint = fmt.Sprintf(" (%d + 1 = %d would: count the embedding or the loss as a layer slot, --account-for-embedding-in-pipeline-split or --account-for-loss-in-pipeline-split)", layers, layers+1)
				}
				break
			}
		}
		return fmt.Errorf("%s does not divide the %d layers%s", what, layers, hint)
	}
	slot := "slots"
	if n == 1 {
		slot = "slot"
	}
	return fmt.Errorf("%s does not divide the %d layers and %d %s (%d)", what, layers, n, slot, layers+n)
}
