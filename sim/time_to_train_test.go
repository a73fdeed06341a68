package sim_test

import (
	"testing"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// TestTimeToTrain_wholeSteps: a budget trains in whole optimizer steps,
// the last one run in full however few of its tokens the budget still
// needs (as MLPerf counts CEIL(samples/GBS) steps). A budget of one token
// had been given 0.00008578 s beside a 1.405 s step (llama3-8b on one
// H100 at global batch 8).
func TestTimeToTrain_wholeSteps(t *testing.T) {
	for _, tc := range []struct {
		model   string
		seq     int
		perStep float64 // tokens (images) a step trains on
	}{{"gpt3-1.3b", 1024, 4 * 1024}, {"resnet50", 0, 4}} {
		sys, w := load(t, "h100", tc.model, 1)
		for _, c := range []struct {
			budget float64
			steps  float64
		}{{1, 1}, {tc.perStep, 1}, {1.5 * tc.perStep, 2}, {3 * tc.perStep, 3}, {1e6*tc.perStep + 1, 1e6 + 1}} {
			sc := sim.Default()
			sc.Mode, sc.Batch, sc.GlobalBatch, sc.Tokens = sim.Training, 1, 4, c.budget
			if tc.seq > 0 {
				sc.Seq = tc.seq
			}
			rep, err := sim.Run(sys, w, sc)
			if err != nil {
				t.Fatal(err)
			}
			tr := rep.Training
			if want := model.Seconds(c.steps) * tr.StepTime; tr.TimeToTrain != want {
				t.Errorf("%s, a budget of %g: %v to train, want %g steps of %v, %v", tc.model, c.budget, tr.TimeToTrain, c.steps, tr.StepTime, want)
			}
			if e := rep.Energy; e != nil && !close(float64(e.ToTrain), c.steps*float64(e.GPU)) {
				t.Errorf("%s, a budget of %g: %v to train, want %g steps of %v", tc.model, c.budget, e.ToTrain, c.steps, e.GPU)
			}
		}
	}
}
