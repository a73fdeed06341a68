package main

import (
	"math"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
)

// hostFlags are the engine's host-side settings that serve and plan
// serve share: the host time per request in each iteration
// (serve.Engine.SeqOverhead) and whether outputs are processed during
// the next iteration (serve.Engine.AsyncOutput). Unset, each keeps the
// preset's value.
type hostFlags struct {
	seqOverhead model.Seconds
	asyncOutput bool
}

func (h *hostFlags) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&h.seqOverhead, "seq-overhead", "host time per running request in each iteration that the GPU waits for (a Python engine's per-sequence scheduling, sampling and output work), e.g. 42us (default: the engine's; vllm-0.6 36.5 µs, the others 0)")
	fs.BoolVar(&h.asyncOutput, "async-output", false, "process an iteration's outputs during the next one, so first tokens and completions reach the client an iteration later (vLLM 0.6's asynchronous output processor, SGLang's overlap scheduler) (default: the engine's)")
}

// check returns the usage errors of the flags, each naming its flag.
func (h *hostFlags) check(fs *pflag.FlagSet) []error {
	if fs.Changed("seq-overhead") && (!(h.seqOverhead >= 0) || math.IsInf(float64(h.seqOverhead), 0)) {
		return []error{usagef("--seq-overhead: must be a non-negative time with a unit (e.g. 42us), got %v", h.seqOverhead)}
	}
	return nil
}

// apply sets the flags the user gave on e.
func (h *hostFlags) apply(fs *pflag.FlagSet, e *serve.Engine) {
	if fs.Changed("seq-overhead") {
		e.SeqOverhead = h.seqOverhead
	}
	if fs.Changed("async-output") {
		e.AsyncOutput = h.asyncOutput
	}
}
