package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestPlanTrain_dropoutAndUnfused: plan train's --dropout and
// --unfused-attention mean what simulate's do. The search's winner, run
// again by simulate with the same flags and its layout, gives the same
// step to the bit; the header and the JSON say the two settings; the
// flags make the step slower (masks' traffic, scores written to memory);
// and an unfused search tries no context parallelism, which sim refuses
// for an unfused core (none is counted as refused).
func TestPlanTrain_dropoutAndUnfused(t *testing.T) {
	base := []string{"plan", "train", "--model", "gpt3-2.7b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "32", "--seq", "2048", "--top", "1"}
	// cand is the winner: its layout and settings, and its step (s).
	type cand struct {
		TP, PP, DP, CP, MicroBatch, ZeRO, Virtual int
		Step                                      float64
		Recompute, Schedule                       string
		TPOverlap                                 bool
	}
	search := func(t *testing.T, extra ...string) (cand, map[string]any, string) {
		t.Helper()
		out, stderr, code := perfsim(t, append(append(append([]string{}, base...), extra...), "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var j struct {
			Best []struct {
				TP         int     `json:"tp"`
				PP         int     `json:"pp"`
				DP         int     `json:"dp"`
				CP         int     `json:"cp"`
				MicroBatch int     `json:"micro_batch"`
				Schedule   string  `json:"schedule"`
				Virtual    int     `json:"virtual_stages"`
				Recompute  string  `json:"recompute"`
				ZeRO       int     `json:"zero"`
				TPOverlap  bool    `json:"tp_overlap"`
				Step       float64 `json:"step_time_s"`
			} `json:"best"`
		}
		var all map[string]any
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &all); err != nil {
			t.Fatal(err)
		}
		if len(j.Best) == 0 {
			t.Fatalf("%v: no layout", extra)
		}
		b := j.Best[0]
		return cand{TP: b.TP, PP: b.PP, DP: b.DP, CP: b.CP, MicroBatch: b.MicroBatch, Step: b.Step, ZeRO: b.ZeRO,
			Recompute: b.Recompute, Schedule: b.Schedule, TPOverlap: b.TPOverlap, Virtual: b.Virtual}, all, stderr
	}
	plain, plainJSON, _ := search(t)
	for _, k := range []string{"dropout", "unfused_attention"} {
		if _, ok := plainJSON[k]; ok {
			t.Errorf("a search without the flags writes %q", k)
		}
	}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"dropout", []string{"--dropout", "0.1"}},
		{"unfused", []string{"--unfused-attention"}},
		{"both", []string{"--dropout", "0.1", "--unfused-attention"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, j, stderr := search(t, tc.flags...)
			if c.Step <= plain.Step {
				t.Errorf("best step %v s with %v, want more than %v s without", c.Step, tc.flags, plain.Step)
			}
			unfused := strings.Contains(strings.Join(tc.flags, " "), "unfused")
			dropout := strings.Contains(strings.Join(tc.flags, " "), "dropout")
			if got, _ := j["unfused_attention"].(bool); got != unfused {
				t.Errorf("json unfused_attention %v, want %v", got, unfused)
			}
			if got, _ := j["dropout"].(float64); dropout != (got == 0.1) {
				t.Errorf("json dropout %v", got)
			}
			if unfused && !strings.Contains(stderr, " 0 refused") {
				t.Errorf("an unfused search refused configurations (context parallelism?): %s", stderr)
			}
			// simulate, given the winner's layout and the same flags,
			// prices the same step.
			args := append([]string{"simulate", "--system", "dgx-h100", "--model", "gpt3-2.7b", "--mode", "training", "--seq", "2048", "--global-batch", "32",
				"--tp", strconv.Itoa(c.TP), "--pp", strconv.Itoa(c.PP), "--dp", strconv.Itoa(c.DP), "--cp", strconv.Itoa(c.CP),
				"--micro-batch", strconv.Itoa(c.MicroBatch), "--schedule", c.Schedule, "--virtual-stages", strconv.Itoa(c.Virtual),
				"--recompute", c.Recompute, "--zero", strconv.Itoa(c.ZeRO), "--format", "json"}, tc.flags...)
			if c.TP > 1 {
				args = append(args, "--sp")
			}
			if c.TPOverlap {
				args = append(args, "--tp-overlap")
			}
			var s struct {
				Training struct {
					Step float64 `json:"step_time_s"`
				} `json:"training"`
			}
			perfsimJSON(t, &s, args...)
			if s.Training.Step != c.Step {
				t.Errorf("simulate prices the winner's layout at %v s, plan train at %v s", s.Training.Step, c.Step)
			}
		})
	}
	out, stderr, code := perfsim(t, append(append([]string{}, base...), "--dropout", "0.1", "--unfused-attention")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if head, _, _ := strings.Cut(out, "\n"); !strings.Contains(head, "unfused attention, dropout 0.1") {
		t.Errorf("the header does not name the settings: %s", head)
	}
}
