package sim

import (
	"fmt"
)

// validateLayout checks a training scenario's parallel layout against the
// workload: every degree divides what it splits, as Megatron-LM requires
// (megatron/training/arguments.py and megatron/core/parallel_state.py).
// sc is normalised.
func (sc Scenario) validateLayout(s Shape) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ScenarioError{field, fmt.Errorf(format, args...)})
	}
	// The layer slots move layers off the first and last stages; with one
	// stage they change nothing.
	if sc.PP <= 1 {
		if sc.EmbeddingSlot {
			bad("account-for-embedding-in-pipeline-split", "counts the embedding as a layer slot of the pipeline's first stage; needs pp above 1 (got %d)", sc.PP)
		}
		if sc.LossSlot {
			bad("account-for-loss-in-pipeline-split", "counts the loss as a layer slot of the pipeline's last stage; needs pp above 1 (got %d)", sc.PP)
		}
	}
	if s.Arch == CNN {
		for _, f := range []struct {
			name string
			v    int
		}{{"pp", sc.PP}, {"cp", sc.CP}, {"ep", sc.EP}} {
			if f.v > 1 {
				bad(f.name, "is not modelled for CNNs")
			}
		}
		if sc.SP {
			bad("sp", "sequence parallelism is not modelled for CNNs")
		}
		return errs
	}
	v := sc.VirtualStages
	if v > 1 && sc.Schedule != Interleaved {
		bad("virtual-stages", "%d virtual stages need --schedule interleaved (got %s)", v, sc.Schedule)
	}
	if s.Layers > 0 {
		if _, err := newSplit(s.Layers, sc.PP, v, sc.EmbeddingSlot, sc.LossSlot); err != nil {
			field := "pp"
			if v > 1 {
				field = "virtual-stages"
			}
			errs = append(errs, &ScenarioError{field, err})
		}
	}
	if sc.Schedule == Interleaved && v > 1 && sc.Batch > 0 && sc.DP > 0 {
		if m := sc.GlobalBatch / max(sc.Batch*sc.DP, 1); m%sc.PP != 0 {
			bad("global-batch", "the interleaved schedule needs micro-batches (%d) to be a multiple of the pipeline stages (%d)", m, sc.PP)
		}
	}
	if sc.CP > 1 && sc.Seq > 0 && sc.Seq%(2*sc.CP) != 0 {
		bad("cp", "context parallelism %d needs the sequence (%d) to split into 2 × %d equal chunks (load-balanced causal attention)", sc.CP, sc.Seq, sc.CP)
	}
	if sc.EP > 1 {
		switch {
		case s.Experts == 0:
			bad("ep", "expert parallelism %d, but the model has no experts", sc.EP)
		case s.Experts%sc.EP != 0:
			bad("ep", "expert parallelism %d does not divide the %d experts", sc.EP, s.Experts)
		case (sc.DP*sc.CP)%sc.EP != 0:
			bad("ep", "expert parallelism %d does not divide data × context parallelism %d (experts are split over data-parallel ranks)", sc.EP, sc.DP*sc.CP)
		}
	}
	if sc.SP && sc.TP == 1 {
		bad("sp", "sequence parallelism needs tensor parallelism above 1")
	}
	if sc.TPOverlap && !sc.SP {
		// Megatron-LM refuses it too (megatron/training/arguments.py:
		// "Tensor parallel communication/GEMM overlap can happen only
		// when sequence parallelism is enabled").
		bad("tp-overlap", "tensor-parallel communication overlap needs sequence parallelism (--sp)")
	}
	return errs
}
