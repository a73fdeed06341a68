package sim

import (
	"errors"
	"strings"
	"testing"
)

// TestScenario_pipelineDepth: how many pipeline stages a model's layers
// allow. In training, with the embedding and the loss counted as layer
// slots (Megatron-Core's --account-for-{embedding,loss}-in-pipeline-split),
// a stage may hold the embedding or the loss alone, so a pipeline may be
// deeper than the model has layers: 2 layers + 2 slots go over pp 4 as
// embedding | 1 | 1 | loss. Every chunk must hold one slot (a layer, the
// embedding or the loss): the layers plus the slots must divide over
// pp × virtual stages. Inference has no slots, so each stage needs a
// layer. Refusals name the flag.
func TestScenario_pipelineDepth(t *testing.T) {
	tests := []struct {
		name        string
		layers      int
		mode        Mode
		pp, v       int
		embed, loss bool
		err         string // "" accepts; else the whole message, flag first
	}{
		{name: "2 layers + 2 slots over pp 4", layers: 2, mode: Training, pp: 4, embed: true, loss: true},
		{name: "2 layers + embedding over pp 3", layers: 2, mode: Training, pp: 3, embed: true},
		{name: "2 layers + loss over pp 3", layers: 2, mode: Training, pp: 3, loss: true},
		{name: "1 layer + 2 slots over pp 3", layers: 1, mode: Training, pp: 3, embed: true, loss: true},
		{name: "6 layers + 2 slots over pp 8", layers: 6, mode: Training, pp: 8, embed: true, loss: true},
		{name: "6 layers + 2 slots over pp 4 × 2", layers: 6, mode: Training, pp: 4, v: 2, embed: true, loss: true},
		{name: "2 layers over pp 2", layers: 2, mode: Training, pp: 2},
		{name: "inference, 2 layers over pp 2", layers: 2, mode: Inference, pp: 2},

		{name: "2 layers over pp 4, no slots", layers: 2, mode: Training, pp: 4,
			err: "--pp: pipeline parallelism 4 does not divide the 2 layers (2 + 2 = 4 would: count the embedding and the loss as layer slots, --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split)"},
		{name: "2 layers + 1 slot over pp 4", layers: 2, mode: Training, pp: 4, embed: true,
			err: "--pp: pipeline parallelism 4 does not divide the 2 layers and 1 slot (3)"},
		{name: "2 layers + 2 slots over pp 5", layers: 2, mode: Training, pp: 5, embed: true, loss: true,
			err: "--pp: pipeline parallelism 5 does not divide the 2 layers and 2 slots (4)"},
		{name: "6 layers + 2 slots over pp 8 × 2", layers: 6, mode: Training, pp: 8, v: 2, embed: true, loss: true,
			err: "--virtual-stages: pipeline 8 × virtual stages 2 does not divide the 6 layers and 2 slots (8)"},
		{name: "inference, 2 layers over pp 3", layers: 2, mode: Inference, pp: 3,
			err: "--pp: 3 pipeline stages for 2 layers: every stage needs at least one layer (the layer slots that let a training stage hold only the embedding or the loss do not apply to inference)"},
	}
	for _, tt := range tests {
		w := tinyLlama()
		w.layers = tt.layers
		sc := Default()
		if tt.mode == Training {
			sc = layoutScenario(func(s *Scenario) {})
		}
		sc.PP, sc.VirtualStages, sc.EmbeddingSlot, sc.LossSlot = tt.pp, tt.v, tt.embed, tt.loss
		if tt.v > 1 {
			sc.Schedule = Interleaved
		}
		err := sc.Validate(w.Shape())
		if tt.err == "" {
			if err != nil {
				t.Errorf("%s: Validate = %v, want it accepted", tt.name, err)
				continue
			}
			r, err := Run(testSystem(tt.pp), w, sc)
			if err != nil {
				t.Errorf("%s: Run: %v", tt.name, err)
				continue
			}
			if tr := r.Training; tr != nil {
				bd := tr.Breakdown
				sum := bd.Compute + bd.TPComm + bd.CPComm + bd.EPComm + bd.PPComm + bd.Overlap + bd.Bubble + bd.DPComm + bd.Optimizer + bd.Input
				if !(tr.StepTime > 0) || !closeTo(float64(sum), float64(tr.StepTime)) || !(bd.Bubble > 0) {
					t.Errorf("%s: step %v, its parts add to %v, bubble %v", tt.name, tr.StepTime, sum, bd.Bubble)
				}
			}
			continue
		}
		var se *ScenarioError
		if !errors.As(err, &se) || err.Error() != tt.err {
			t.Errorf("%s: Validate = %v,\nwant %s", tt.name, err, tt.err)
		}
		if _, err := Run(testSystem(tt.pp), w, sc); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: Run = %v, want it refused", tt.name, err)
		}
	}
}

// TestTraining_pipelineDeeperThanLayers: a stage that holds only the
// output layer and the loss is priced as that alone. With a vocabulary
// large enough that the last stage is the slowest, 2 layers + 2 slots
// over pp 4 (embedding | 1 | 1 | loss) busy the last stage for the
// output layer and the loss, and over pp 2 (embedding + 1 | 1 + loss)
// for one layer more: the two compute shares differ by m layers, the
// difference of a 3- and a 2-layer model without pipelining. The deeper
// pipeline holds fewer weights a device.
func TestTraining_pipelineDeeperThanLayers(t *testing.T) {
	w := tinyLlama()
	w.layers, w.vocab = 2, 256000
	sc := layoutScenario(func(s *Scenario) {})
	m := sc.GlobalBatch / sc.Batch
	at := func(layers, pp int, slots bool) *Report {
		t.Helper()
		w := *w
		w.layers = layers
		sc := sc
		sc.PP, sc.EmbeddingSlot, sc.LossSlot = pp, slots, slots
		return mustRun(t, testSystem(pp), &w, sc)
	}
	deep, shallow := at(2, 4, true), at(2, 2, true)
	layer := at(3, 1, false).Training.Breakdown.Compute - at(2, 1, false).Training.Breakdown.Compute
	got := shallow.Training.Breakdown.Compute - deep.Training.Breakdown.Compute
	if !(layer > 0) || !near(float64(got), float64(layer), 1e-9) {
		t.Errorf("pp 2 − pp 4 compute = %v, want %d micro-batches of one layer, %v", got, m, layer)
	}
	if deep.Memory.Weights >= shallow.Memory.Weights {
		t.Errorf("weights a device: pp 4 %v, pp 2 %v; want fewer on the deeper pipeline", deep.Memory.Weights, shallow.Memory.Weights)
	}
}
