package serve

import (
	"fmt"
	"math"
	"slices"
)

// Headroom is SGLang's reservation of KV-cache tokens for the decode
// tokens the running requests have still to produce, which a prefill
// must leave free before it admits a prompt (its scheduler's
// new_token_ratio). The zero value reserves nothing (every other preset).
//
// Read at SGLang v0.4.0 (sgl-project/sglang@f8b03269,
// python/sglang/srt/managers/schedule_policy.py PrefillAdder,
// scheduler.py get_new_batch_prefill and update_running_batch,
// schedule_batch.py retract_decode): a prefill's token budget is the free
// KV less, for each running request, min(max_new_tokens − tokens output,
// Clip) × the ratio; a prompt is admitted only while its uncached prompt
// plus min(max_new_tokens, Clip) is less than what is left, and then
// takes that much off it (a truncated chunk only its tokens). When a
// prompt does not fit, no prompt is tried again until the running batch
// shrinks (batch_is_full). Each decode step lowers the ratio by Decay to
// Min; an idle engine resets it to Init; a decode step that does not fit
// retracts the requests with the fewest tokens output (the longest prompt
// first among equals) until the free KV holds RetractSteps steps of the
// rest, and sets the ratio to (tokens output + RetractSteps × requests) /
// their max_new_tokens, at most 1. The engine's requests have
// max_new_tokens equal to their output length (benchmarks send it so,
// with EOS ignored).
type Headroom struct {
	// Enabled turns the reservation on.
	Enabled bool
	// Init is the ratio at start and whenever the engine falls idle,
	// Min its floor, Decay what each decode step takes off it.
	Init, Min, Decay float64
	// RetractSteps is retract_decode_steps: the decode steps of the
	// remaining requests a retraction frees KV for.
	RetractSteps int
	// Clip caps a request's max_new_tokens in the estimate
	// (CLIP_MAX_NEW_TOKENS_ESTIMATION).
	Clip int
}

// SGLang v0.4.0's constants (sgl-project/sglang@f8b03269):
// python/sglang/global_config.py default_init_new_token_ratio 0.7,
// default_min_new_token_ratio_factor 0.14,
// default_new_token_ratio_decay_steps 600, retract_decode_steps 20;
// python/sglang/srt/managers/schedule_policy.py
// CLIP_MAX_NEW_TOKENS_ESTIMATION 4096; python/sglang/srt/server_args.py
// schedule_conservativeness 1.0.
const (
	SGLangInitRatio        = 0.7
	SGLangMinRatioFactor   = 0.14
	SGLangRatioDecaySteps  = 600
	SGLangRetractSteps     = 20
	SGLangClipNewTokens    = 4096
	SGLangConservativeness = 1.0
)

// SGLangHeadroom returns SGLang v0.4.0's reservation under its
// --schedule-conservativeness c (1 by default): as its Scheduler derives
// it (scheduler.py __init__), Init = min(0.7 c, 1), Min = min(0.14 Init,
// 1), and Decay = (Init − Min)/600, so the ratio falls from 0.7 to its
// floor of 0.098 in 600 decode steps.
func SGLangHeadroom(c float64) Headroom {
	init := math.Min(SGLangInitRatio*c, 1)
	floor := math.Min(init*SGLangMinRatioFactor, 1)
	return Headroom{Enabled: true, Init: init, Min: floor, Decay: (init - floor) / SGLangRatioDecaySteps,
		RetractSteps: SGLangRetractSteps, Clip: SGLangClipNewTokens}
}

// validate reports the reservation's bad settings, naming its flags.
func (h Headroom) validate(e *Engine) []error {
	if !h.Enabled {
		return nil
	}
	var errs []error
	if !(h.Init >= 0 && h.Init <= 1) || !(h.Min >= 0 && h.Min <= h.Init) || !(h.Decay >= 0 && h.Decay <= 1) {
		errs = append(errs, fmt.Errorf("--schedule-conservativeness: the decode reserve's ratio must start in [0, 1] and fall (by 0 to 1 a step) to a floor no higher, got %g falling by %g to %g", h.Init, h.Decay, h.Min))
	}
	if h.RetractSteps < 1 || h.Clip < 1 {
		errs = append(errs, fmt.Errorf("--decode-reserve: retract_decode_steps and the max_new_tokens clip must be at least 1, got %d and %d", h.RetractSteps, h.Clip))
	}
	if e.Policy != PrefillFirst || e.Admission != OnDemand {
		errs = append(errs, fmt.Errorf("--decode-reserve, --schedule-conservativeness: only a prefill-first engine admitting on demand (sglang, vllm-0.6) reserves decode headroom; %s is %s, %s", e.Name, e.Policy, e.Admission))
	}
	return errs
}

// estimate is min(n, Clip): a request's max_new_tokens as the
// reservation counts it.
func (h *Headroom) estimate(n int) float64 { return float64(min(n, h.Clip)) }

// decodeReserve returns the tokens the running requests that are
// decoding reserve for their remaining output at the current ratio.
func (l *loop) decodeReserve() float64 {
	h := &l.e.Headroom
	s := 0.0
	for _, r := range l.running {
		if r.need()-r.computed > 1 || r.generated == 0 {
			continue // in its prompt: a chunked prefill, not yet in the running batch
		}
		s += h.estimate(r.output-r.generated) * l.ratio
	}
	return s
}

// roomLeft returns the KV tokens a prefill may still take: the free
// blocks less the reservations.
func (l *loop) roomLeft() float64 {
	return float64(l.free*l.e.BlockSize) - l.reserved
}

// fits says whether the first waiting request may be admitted: its
// uncached prompt (and fixed state) plus its estimated output is less
// than the room left (PrefillAdder.add_one_req's NO_TOKEN).
func (l *loop) fits() bool {
	r := l.peek()
	if r.blocks > 0 && r.blocks >= l.blocksFor(r.need()) {
		// Its KV cache arrived into blocks set aside for it
		// (disaggregated, hold.go): SGLang's decode scheduler takes such
		// requests into its batch as they come, up to the batch's size
		// (disaggregation/decode.py, get_new_prebuilt_batch), having
		// checked memory when it set the blocks aside.
		return true
	}
	total := float64((l.blocksFor(r.need())-r.blocks)*l.e.BlockSize) + l.e.Headroom.estimate(r.output)
	return total < l.roomLeft()
}

// reserveFor takes a prompt's estimated output off the room left when the
// k tokens scheduled for r complete its prompt (a truncated chunk
// reserves nothing beyond its blocks, as _prefill_one_req is told 0).
func (l *loop) reserveFor(r *live, k int) {
	if l.e.Headroom.Enabled && r.computed+k == r.need() {
		l.reserved += l.e.Headroom.estimate(r.output)
	}
}

// stepFits says whether the running requests' next decode tokens fit
// in the free blocks (ScheduleBatch.check_decode_mem).
func (l *loop) stepFits() bool {
	need := 0
	for _, r := range l.running {
		need += max(l.blocksFor(r.need())-r.blocks, 0)
	}
	return need <= l.free
}

// retract is SGLang's answer to a decode step that does not fit: it
// retracts requests (fewest tokens output first, then the longest
// prompt) until the free KV holds RetractSteps decode steps of those
// left, at least one and never the last, and sets the ratio from what
// is left. It returns whether it ran.
func (l *loop) retract() bool {
	if len(l.running) == 0 || l.stepFits() {
		return false
	}
	h := &l.e.Headroom
	order := slices.Clone(l.running)
	// Descending by (tokens output, −prompt), as retract_decode sorts;
	// victims come off the end.
	slices.SortStableFunc(order, func(a, b *live) int {
		if a.generated != b.generated {
			return b.generated - a.generated
		}
		return a.input - b.input
	})
	var victims []*live
	for first := true; first || l.free*l.e.BlockSize < len(order)*h.RetractSteps; first = false {
		if len(order) == 1 {
			break
		}
		v := order[len(order)-1]
		order = order[:len(order)-1]
		l.evict(v)
		victims = append(victims, v)
	}
	l.requeue(victims...)
	out, maxNew := 0, 0
	for _, r := range l.running {
		out += r.generated
		maxNew += r.output
	}
	l.ratio = math.Min(1, float64(out+h.RetractSteps*len(l.running))/float64(maxNew))
	l.full = false
	return true
}

// decayRatio lowers the ratio by a decode step's decay, to its floor.
func (l *loop) decayRatio() {
	h := &l.e.Headroom
	l.ratio = math.Max(l.ratio-h.Decay, h.Min)
}
