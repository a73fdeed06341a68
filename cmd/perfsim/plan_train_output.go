package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/sim"
)

type scalingRow = plan.ScalingPoint

// scaling runs strong and weak scaling over counts.
func scaling(system string, w sim.Workload, req plan.TrainRequest, counts []int) ([]scalingRow, error) {
	return plan.Scaling(system, w, req, counts)
}

// writeScalingTable prints strong and weak scaling.
func writeScalingTable(w io.Writer, rows []scalingRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nscaling (best layout at each count; strong: global batch fixed, weak: batch per GPU fixed)\n")
	tw := newTable(w)
	fmt.Fprintf(tw, "GPUs\tstrong step\tspeedup\tefficiency\tlayout\tweak batch\tweak step\tefficiency\tlayout\n")
	for _, r := range rows {
		strong, weak, wb := "no fit\t-\t-\t-", "no fit\t-\t-", strconv.Itoa(r.WeakBatch)
		if r.WeakBatch == 0 {
			// The first count's batch per GPU makes no whole batch here.
			wb, weak = "-", "not whole\t-\t-"
		}
		if r.StrongFits {
			strong = fmt.Sprintf("%v\t%.3g\t%.1f%%\t%s", r.Strong, r.Speedup, 100*r.StrongEff, r.StrongLayout)
		}
		if r.WeakFits {
			weak = fmt.Sprintf("%v\t%.1f%%\t%s", r.Weak, 100*r.WeakEff, r.WeakLayout)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", r.GPUs, strong, wb, weak)
	}
	return tw.Flush()
}

type planCandidateJSON struct {
	Rank       int     `json:"rank"`
	TP         int     `json:"tp"`
	PP         int     `json:"pp"`
	DP         int     `json:"dp"`
	CP         int     `json:"cp"`
	EP         int     `json:"ep"`
	MicroBatch int     `json:"micro_batch"`
	Schedule   string  `json:"schedule"`
	Virtual    int     `json:"virtual_stages"`
	Recompute  string  `json:"recompute"`
	ZeRO       int     `json:"zero"`
	TPOverlap  bool    `json:"tp_overlap"`
	LayerSlots bool    `json:"layer_slots,omitempty"`
	Step       float64 `json:"step_time_s"`
	MFU        float64 `json:"mfu"`
	// Tokens is a language model's tokens/s, Images a ViT's images/s;
	// one or the other.
	Tokens      *float64       `json:"tokens_per_s,omitempty"`
	Images      *float64       `json:"images_per_s,omitempty"`
	Memory      float64        `json:"memory_bytes"`
	TimeToTrain float64        `json:"time_to_train_s,omitempty"`
	GPUHours    float64        `json:"gpu_hours,omitempty"`
	Why         string         `json:"why_not_first,omitempty"`
	Breakdown   *breakdownJSON `json:"breakdown"`
}

type planScalingJSON struct {
	GPUs       int     `json:"gpus"`
	Strong     float64 `json:"strong_step_s"`
	Speedup    float64 `json:"strong_speedup"`
	StrongEff  float64 `json:"strong_efficiency"`
	WeakBatch  int     `json:"weak_global_batch,omitempty"`
	Weak       float64 `json:"weak_step_s"`
	WeakEff    float64 `json:"weak_efficiency"`
	StrongFits bool    `json:"strong_fits"`
	WeakFits   bool    `json:"weak_fits"`
}

type planTrainJSONOut struct {
	Schema      string              `json:"schema"`
	Model       string              `json:"model"`
	System      string              `json:"system"`
	GPUs        int                 `json:"gpus"`
	GlobalBatch int                 `json:"global_batch"`
	Seq         int                 `json:"seq"`
	DType       string              `json:"dtype"`
	GradDType   string              `json:"grad_dtype,omitempty"`
	NoOverlap   bool                `json:"no_overlap,omitempty"`
	Imbalance   float64             `json:"expert_imbalance,omitempty"`
	Dropout     float64             `json:"dropout,omitempty"`
	Unfused     bool                `json:"unfused_attention,omitempty"`
	Tokens      float64             `json:"tokens,omitempty"` // the budget, a language model's
	Images      float64             `json:"images,omitempty"` // the budget, an image model's (--tokens counts its images)
	Seen        int                 `json:"configurations"`
	Invalid     int                 `json:"refused"`
	Simulated   int                 `json:"simulated"`
	NoFit       int                 `json:"out_of_memory"`
	Best        []planCandidateJSON `json:"best"`
	ClosestMiss *planCandidateJSON  `json:"closest_miss,omitempty"`
	Scaling     []planScalingJSON   `json:"scaling,omitempty"`
}

func candidateJSON(rank int, c *plan.TrainCandidate, why string, images bool) planCandidateJSON {
	s := c.Scenario
	b := c.Break
	j := planCandidateJSON{Rank: rank, TP: s.TP, PP: s.PP, DP: s.DP, CP: s.CP, EP: s.EP, MicroBatch: s.Batch,
		Schedule: s.Schedule.String(), Virtual: s.VirtualStages, Recompute: s.Recompute.String(), ZeRO: s.ZeRO, TPOverlap: s.TPOverlap,
		LayerSlots: s.EmbeddingSlot && s.LossSlot,
		Step:       float64(c.Step), MFU: c.MFU, Tokens: fp(c.Tokens), Memory: float64(c.Memory.Total), TimeToTrain: float64(c.TimeToTrain),
		GPUHours: c.GPUHours(), Why: why, Breakdown: breakdownOf(&b)}
	if images {
		// plan's Tokens counts a ViT's images (sim's TokensPerSecond).
		j.Tokens, j.Images = nil, fp(c.Tokens)
	}
	return j
}

func planTrainJSON(name, system string, images bool, req plan.TrainRequest, p *plan.TrainPlan, sc []scalingRow) planTrainJSONOut {
	out := planTrainJSONOut{Schema: "perfsim.plan-train/v1", Model: name, System: system, GPUs: req.GPUs, GlobalBatch: req.GlobalBatch, Seq: req.Seq,
		Seen: p.Seen, Invalid: p.Invalid, Simulated: p.Simulated, NoFit: p.NoFit, Best: []planCandidateJSON{},
		DType: req.Base.Weights.String(), NoOverlap: req.Base.NoOverlap, Tokens: req.Tokens,
		Dropout: req.Base.Dropout, Unfused: req.Base.UnfusedAttention}
	if images {
		// sim divides an image model's budget by its images/s.
		out.Tokens, out.Images = 0, req.Tokens
	}
	if g := req.Base.GradType; g != model.Invalid {
		out.GradDType = g.String()
	}
	if req.Base.ExpertImbalance > 1 {
		out.Imbalance = req.Base.ExpertImbalance
	}
	for i := range p.Best {
		why := ""
		if i > 0 {
			why = plan.Why(&p.Best[i], &p.Best[0])
		}
		out.Best = append(out.Best, candidateJSON(i+1, &p.Best[i], why, images))
	}
	if p.ClosestMiss != nil {
		c := candidateJSON(0, p.ClosestMiss, "", images)
		out.ClosestMiss = &c
	}
	for _, r := range sc {
		out.Scaling = append(out.Scaling, planScalingJSON{GPUs: r.GPUs, Strong: float64(r.Strong), Speedup: r.Speedup, StrongEff: r.StrongEff,
			WeakBatch: r.WeakBatch, Weak: float64(r.Weak), WeakEff: r.WeakEff, StrongFits: r.StrongFits, WeakFits: r.WeakFits})
	}
	return out
}
