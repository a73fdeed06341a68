package sim

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/model"
)

// pipelineRows cuts stage-by-stage chunk times into p rows.
func pipelineRows(flat []model.Seconds, p int) [][]model.Seconds {
	v := len(flat) / p
	out := make([][]model.Seconds, p)
	for i := range out {
		out[i] = flat[i*v : (i+1)*v]
	}
	return out
}

// chunksOf splits each stage time into v equal chunks.
func chunksOf(stages []model.Seconds, v int) [][]model.Seconds {
	out := make([][]model.Seconds, len(stages))
	for i, t := range stages {
		out[i] = make([]model.Seconds, v)
		for j := range out[i] {
			out[i][j] = t / model.Seconds(v)
		}
	}
	return out
}

// TestPipelineChunks_evenIsPipelineTime: one chunk a stage gives
// PipelineTime's numbers to the last bit, for any stage times and every
// schedule; equal chunks give PipelineTime's interleaved form,
// (m·v + p − 1)·c, to rounding.
func TestPipelineChunks_evenIsPipelineTime(t *testing.T) {
	uneven := []model.Seconds{1.3e-3, 1e-3, 1.1e-3, 1.7e-3, 0.9e-3}
	for _, s := range []Schedule{OneFOneB, GPipe, Interleaved} {
		for _, m := range []int{1, 5, 40} {
			gotT, gotB := PipelineChunks(chunksOf(uneven, 1), m, s)
			wantT, wantB := PipelineTime(uneven, m, 1, s)
			if gotT != wantT || gotB != wantB {
				t.Errorf("%s m %d: PipelineChunks = %v, %v; PipelineTime %v, %v", s, m, gotT, gotB, wantT, wantB)
			}
		}
	}
	for _, c := range []struct{ p, m, v int }{{4, 16, 2}, {8, 32, 4}, {8, 288, 8}, {16, 64, 7}, {2, 8, 3}} {
		st := equalStages(c.p, 2e-3)
		gotT, gotB := PipelineChunks(chunksOf(st, c.v), c.m, Interleaved)
		wantT, wantB := PipelineTime(st, c.m, c.v, Interleaved)
		if !closeTo(float64(gotT), float64(wantT)) || !closeTo(float64(gotB), float64(wantB)) {
			t.Errorf("p %d m %d v %d: PipelineChunks = %v, %v; PipelineTime %v, %v", c.p, c.m, c.v, gotT, gotB, wantT, wantB)
		}
		chunk := 2e-3 / float64(c.v)
		if want := float64(c.m*c.v+c.p-1) * chunk; !closeTo(float64(gotT), want) {
			t.Errorf("p %d m %d v %d: total %v, want (m·v + p − 1)·c = %v", c.p, c.m, c.v, gotT, want)
		}
	}
}

// TestPipelineChunks_bottleneck: uneven stages are governed by the
// slowest one, busy m·T_w, plus the first chunks of the stages before it
// and the last chunks of the stages after it.
func TestPipelineChunks_bottleneck(t *testing.T) {
	// T = 5, 8, 6. Chains: w 0: 4·5 + (4 + 5) = 29; w 1: 4·8 + 3 + 5
	// = 40; w 2: 4·6 + (3 + 4) = 31.
	c := [][]model.Seconds{{3, 2}, {4, 4}, {1, 5}}
	tot, bub := PipelineChunks(c, 4, Interleaved)
	if tot != 40 || bub != 8 {
		t.Errorf("total %v, bubble %v; want 40 and 8 (the middle stage's 32 and its chain 3 + 5)", tot, bub)
	}
	// A slow first stage: its chain is its own work and the later
	// stages' last chunks.
	c = [][]model.Seconds{{6, 6}, {1, 2}, {1, 3}}
	if tot, bub := PipelineChunks(c, 10, Interleaved); tot != 125 || bub != 5 {
		t.Errorf("slow first stage: total %v, bubble %v; want 125 and 5", tot, bub)
	}
	// Chunks that differ within a stage but not across: the chain takes
	// the real first and last chunks, not their mean (PipelineTime's
	// 6·4 + 2·2 = 28): stage 0 waits on the later stages' last chunks,
	// 6·4 + 3 + 3 = 30.
	c = [][]model.Seconds{{1, 3}, {1, 3}, {1, 3}}
	if tot, _ := PipelineChunks(c, 6, Interleaved); tot != 30 {
		t.Errorf("first chunks 1, last 3: total %v, want 30 (stage 0's chain: 3 + 3)", tot)
	}
}

// TestPipelineChunks_llama405B: 126 layers over 8 stages of 8 chunks with
// the embedding (e) and the loss (l) in a slot each, at one unit a
// layer: stages of 15 + e, 16 (six of them) and 15 + l; for e, l below
// a layer a middle stage is slowest, and the step is 16·m plus its chain
// of six full chunks and the two end chunks: 16·m + 12 + e + l.
func TestPipelineChunks_llama405B(t *testing.T) {
	chunks, err := ChunkLayers(126, 8, 8, true, true)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, st := range chunks {
		n := 0
		for _, k := range st {
			n += k
		}
		total += n
		want := 16
		if i == 0 || i == 7 {
			want = 15
		}
		if n != want {
			t.Errorf("stage %d holds %d layers, want %d (%v)", i, n, want, st)
		}
	}
	if total != 126 || chunks[0][0] != 1 || chunks[7][7] != 1 || chunks[3][4] != 2 {
		t.Errorf("layers %d, first chunk %d, last %d, a middle one %d; want 126, 1, 1, 2", total, chunks[0][0], chunks[7][7], chunks[3][4])
	}
	const e, l = 0.25, 0.75
	sp, err := newSplit(126, 8, 8, true, true)
	if err != nil {
		t.Fatal(err)
	}
	times := pipelineRows(chunkTimes(nil, sp, 1, 0, 0, e, l), 8)
	for _, m := range []int{8, 288} {
		tot, bub := PipelineChunks(times, m, Interleaved)
		if want := model.Seconds(16*m) + 12 + e + l; !closeTo(float64(tot), float64(want)) {
			t.Errorf("m %d: total %v, want 16·m + 12 + e + l = %v", m, tot, want)
		}
		if want := model.Seconds(12 + e + l); !closeTo(float64(bub), float64(want)) {
			t.Errorf("m %d: bubble %v, want %v", m, bub, want)
		}
	}
}

// TestChunkLayers: Megatron-Core's split, and what it refuses.
func TestChunkLayers(t *testing.T) {
	tests := []struct {
		layers, pp, v int
		embed, loss   bool
		want          [][]int
		err           string
	}{
		{layers: 16, pp: 4, v: 2, want: [][]int{{2, 2}, {2, 2}, {2, 2}, {2, 2}}},
		{layers: 16, pp: 2, v: 1, embed: true, loss: true, want: [][]int{{8}, {8}}},
		{layers: 6, pp: 2, v: 2, embed: true, loss: true, want: [][]int{{1, 2}, {2, 1}}},
		{layers: 7, pp: 2, v: 2, embed: true, want: [][]int{{1, 2}, {2, 2}}},
		{layers: 7, pp: 2, v: 2, loss: true, want: [][]int{{2, 2}, {2, 1}}},
		{layers: 2, pp: 2, v: 2, embed: true, loss: true, want: [][]int{{0, 1}, {1, 0}}},
		{layers: 126, pp: 8, v: 8, err: "pipeline 8 × virtual stages 8 does not divide the 126 layers (126 + 2 = 128 would"},
		{layers: 126, pp: 8, v: 8, embed: true, err: "does not divide the 126 layers and 1 slot (127)"},
		{layers: 126, pp: 4, err: "pipeline parallelism 4 does not divide the 126 layers (126 + 2 = 128 would"},
		{layers: 127, pp: 8, v: 8, err: "(127 + 1 = 128 would: count the embedding or the loss"},
		{layers: 125, pp: 8, v: 8, embed: true, loss: true, err: "does not divide the 125 layers and 2 slots (127)"},
		{layers: 10, pp: 3, err: "pipeline parallelism 3 does not divide the 10 layers"},
	}
	for _, tt := range tests {
		got, err := ChunkLayers(tt.layers, tt.pp, tt.v, tt.embed, tt.loss)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ChunkLayers(%d, %d, %d, %v, %v): error %v, want one containing %q", tt.layers, tt.pp, tt.v, tt.embed, tt.loss, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ChunkLayers(%d, %d, %d, %v, %v): %v", tt.layers, tt.pp, tt.v, tt.embed, tt.loss, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("ChunkLayers(%d, %d, %d): %v, want %v", tt.layers, tt.pp, tt.v, got, tt.want)
			continue
		}
		for i := range got {
			for j := range got[i] {
				if got[i][j] != tt.want[i][j] {
					t.Errorf("ChunkLayers(%d, %d, %d, %v, %v) = %v, want %v", tt.layers, tt.pp, tt.v, tt.embed, tt.loss, got, tt.want)
					break
				}
			}
		}
	}
}

// TestTraining_layerSlots: counting the embedding and the loss as layer
// slots changes nothing where Megatron-Core's split matches the even one
// (16 layers + 2 slots over 2 stages: 8 layers each either way); where
// it does not, the step is the slowest stage's, its parts adding up to
// the step; and layers that do not spread are refused, naming the flags.
func TestTraining_layerSlots(t *testing.T) {
	w := tinyLlama()
	sys := testSystem(16)
	even := layoutScenario(func(s *Scenario) { s.TP, s.PP, s.DP = 2, 2, 4 })
	slots := even
	slots.EmbeddingSlot, slots.LossSlot = true, true
	a, b := mustRun(t, sys, w, even).Training, mustRun(t, sys, w, slots).Training
	if a.StepTime != b.StepTime || *a.Breakdown != *b.Breakdown {
		t.Errorf("pp 2, 16 layers: slots move the step %v → %v", a.StepTime, b.StepTime)
	}

	// 16 layers + 2 slots over 3 × 2 chunks: stages of 5, 6 and 5 layers.
	sc := layoutScenario(func(s *Scenario) {
		s.PP, s.DP, s.Schedule, s.VirtualStages, s.GlobalBatch = 3, 4, Interleaved, 2, 48
		s.EmbeddingSlot, s.LossSlot = true, true
	})
	tr := mustRun(t, testSystem(12), w, sc).Training
	bd := tr.Breakdown
	sum := bd.Compute + bd.TPComm + bd.CPComm + bd.EPComm + bd.PPComm + bd.Overlap + bd.Bubble + bd.DPComm + bd.Optimizer + bd.Input
	if !closeTo(float64(sum), float64(tr.StepTime)) {
		t.Errorf("pp 3 × 2 with slots: the parts add to %v, the step is %v", sum, tr.StepTime)
	}
	if bd.Bubble <= 0 {
		t.Errorf("pp 3 × 2 with slots: bubble %v", bd.Bubble)
	}

	sc.EmbeddingSlot, sc.LossSlot = false, false
	_, err := Run(testSystem(12), w, sc)
	if err == nil || !strings.Contains(err.Error(), "pipeline 3 × virtual stages 2 does not divide the 16 layers (16 + 2 = 18 would") {
		t.Errorf("16 layers over 3 × 2 chunks without slots: %v", err)
	}
}

// TestTraining_layerSlotsNeedPipeline: without pipeline parallelism the
// layer slots change nothing, so asking for them is an error naming each
// flag, as virtual stages without the interleaved schedule are.
func TestTraining_layerSlotsNeedPipeline(t *testing.T) {
	sc := layoutScenario(func(s *Scenario) {
		s.TP, s.PP, s.DP = 2, 1, 8
		s.EmbeddingSlot, s.LossSlot = true, true
	})
	_, err := Run(testSystem(16), tinyLlama(), sc)
	for _, want := range []string{
		"account-for-embedding-in-pipeline-split: counts the embedding as a layer slot of the pipeline's first stage; needs pp above 1 (got 1)",
		"account-for-loss-in-pipeline-split: counts the loss as a layer slot of the pipeline's last stage; needs pp above 1 (got 1)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("pp 1 with layer slots: error %v, want %q", err, want)
		}
	}
}

// TestPipelineChunks_ragged: stages of different chunk counts are priced
// by the same chain (each stage's own first and last chunk, all of its
// chunks' sum), not cut to the first stage's count or dropped to zero.
func TestPipelineChunks_ragged(t *testing.T) {
	for _, c := range []struct {
		name     string
		c        [][]model.Seconds
		s        Schedule
		tot, bub model.Seconds
	}{
		// T = 5, 9. Chains: w 0: 4·5 + 1 = 21; w 1: 4·9 + 3 = 39.
		{"more chunks later", [][]model.Seconds{{3, 2}, {4, 4, 1}}, Interleaved, 39, 3},
		// T = 3, 8. Chains: w 0: 4·3 + 4 = 16; w 1: 4·8 + 3 = 35.
		{"fewer chunks first", [][]model.Seconds{{3}, {4, 4}}, Interleaved, 35, 3},
		// An empty stage adds nothing. T = 5, 0, 6: w 0: 20 + 0 + 1 =
		// 21; w 2: 24 + 3 + 0 = 27.
		{"empty stage", [][]model.Seconds{{3, 2}, {}, {5, 1}}, Interleaved, 27, 3},
		// 1F1B runs a stage's chunks as one: PipelineTime over the
		// stage sums 5 and 9: 4·9 + 5.
		{"1f1b", [][]model.Seconds{{3, 2}, {4, 4, 1}}, OneFOneB, 41, 5},
	} {
		tot, bub := PipelineChunks(c.c, 4, c.s)
		if tot != c.tot || bub != c.bub {
			t.Errorf("%s: PipelineChunks = %v, %v; want %v, %v", c.name, tot, bub, c.tot, c.bub)
		}
	}
}
