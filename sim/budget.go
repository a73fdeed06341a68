package sim

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
)

// The token budget.
//
// A serving engine pushes at most a token budget through the model in one
// iteration, and prefills longer batches in chunks of it (chunked
// prefill): the activations it holds are those of one chunk, not of the
// whole batch's prompts. Run prices a decoder's prefill the same way, in
// time as well as in memory, so that the two describe the same run; the
// serving simulator (package serve) takes its budget from the same
// Scenario.MaxNumTokens.

// DefaultMaxNumTokens is the default token budget: 8192, the default of
// vLLM V1's OpenAI server on a device of at least 70 GiB
// (max_num_batched_tokens, vllm/engine/arg_utils.py
// EngineArgs._set_default_args_v1, v0.10), of SGLang v0.4
// (chunked_prefill_size, python/sglang/srt/server_args.py) and of
// TensorRT-LLM v0.14 (max_num_tokens, tensorrt_llm/builder.py
// BuildConfig).
const DefaultMaxNumTokens = 8192

// A PrefillChunk is one distinct iteration of a chunked prefill: Batch
// sequences of Tokens new tokens each after Context cached ones, run
// Repeat times. Partial says the chunk does not end its prompts: no
// token is sampled from it, so the LM head (and the gather of its
// logits) does not run, as an engine computes logits only for the
// sequences whose prompt an iteration completes.
type PrefillChunk struct {
	Batch, Tokens, Context, Repeat int
	Partial                        bool
}

// PrefillChunks splits the prefill of batch prompts of input tokens into
// iterations of at most budget tokens, as a chunked-prefill engine
// schedules a batch that arrives at once: whole prompts while they fit
// (budget/input of them per iteration), else each prompt in chunks of
// budget tokens at growing contexts. A batch within the budget is one
// chunk. A budget of 0 or less is no budget.
func PrefillChunks(batch, input, budget int) []PrefillChunk {
	return appendPrefillChunks(nil, batch, input, budget)
}

// appendPrefillChunks appends PrefillChunks(batch, input, budget) to dst.
func appendPrefillChunks(dst []PrefillChunk, batch, input, budget int) []PrefillChunk {
	if batch <= 0 || input <= 0 {
		return dst
	}
	if budget <= 0 || batch*input <= budget {
		return append(dst, PrefillChunk{Batch: batch, Tokens: input, Repeat: 1})
	}
	if input <= budget {
		per := budget / input
		dst = append(dst, PrefillChunk{Batch: per, Tokens: input, Repeat: batch / per})
		if rem := batch % per; rem > 0 {
			dst = append(dst, PrefillChunk{Batch: rem, Tokens: input, Repeat: 1})
		}
		return dst
	}
	for ctx := 0; ctx < input; ctx += budget {
		dst = append(dst, PrefillChunk{Batch: 1, Tokens: min(budget, input-ctx), Context: ctx, Repeat: batch, Partial: ctx+budget < input})
	}
	return dst
}

// prefillOps returns the ops of the whole prefill of r's scenario (each
// chunk's ops with their counts multiplied by its repeats, then extra)
// and the working set of its largest chunk. A decoder's prefill is
// chunked by the token budget; other architectures run in one pass.
// Without needOps (Footprint), only the working set is computed. The ops
// are in r's scratch, valid until the next call.
func (r *runner) prefillOps(extra []model.Op, needOps bool) ([]model.Op, model.Bytes, error) {
	sc := r.sc
	var buf [4]PrefillChunk
	chunks := append(buf[:0], PrefillChunk{Batch: sc.Batch, Tokens: sc.Input, Repeat: 1})
	if r.shape.Arch == Decoder {
		chunks = appendPrefillChunks(buf[:0], sc.Batch, sc.Input, sc.MaxNumTokens)
	}
	if len(chunks) == 1 && chunks[0].Repeat == 1 {
		ph := r.phase(Prefill)
		ph.Seq = sc.Input
		ops, err := r.ops(ph, extra)
		if err != nil {
			return nil, 0, err
		}
		return ops, r.decomps.workingSetOf(ops), nil
	}
	all := r.chunkBuf[:0]
	var working model.Bytes
	for _, c := range chunks {
		ph := r.phase(Prefill)
		ph.Batch, ph.Seq, ph.Context = c.Batch, c.Tokens, c.Context
		ops, ws, err := r.chunks.get(r.w, ph)
		if err != nil {
			return nil, 0, fmt.Errorf("sim: %s %s: %w", r.w.Name(), ph.Kind, err)
		}
		working = max(working, ws)
		if !needOps {
			continue
		}
		for _, o := range ops {
			if c.Partial && o.Class == model.ClassLogits {
				continue // nothing sampled
			}
			o.Count *= c.Repeat
			all = append(all, o)
		}
	}
	if !needOps {
		return nil, working, nil
	}
	all = append(all, extra...)
	r.chunkBuf = all
	return all, working, nil
}
