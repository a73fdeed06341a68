package serve

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/sim"
)

// kvUnit returns the bytes of one token of KV cache on a device whose
// memory is m (as Footprint gives it): the attention layers' KV per token
// (m.KVGrowth). A model with a fixed state per sequence (Mamba-2, gated
// DeltaNet: m.KVState) holds that state once per sequence (StateBlocks),
// not averaged into every token as m.KVPerToken has it. A model with no
// state keeps m.KVPerToken exactly; one with no attention layers (no
// growth) keeps it too, the unit its state is counted in.
func (e *Engine) kvUnit(m sim.Memory) float64 {
	if m.KVState > 0 && m.KVGrowth > 0 {
		return float64(m.KVGrowth)
	}
	return float64(m.KVPerToken)
}

// kvGrows reports whether a sequence's KV cache grows with its tokens
// (it has attention layers): false for a model of state alone.
func (e *Engine) kvGrows(m sim.Memory) bool {
	return !(m.KVState > 0) || m.KVGrowth > 0
}

// StateBlocks returns the KV blocks (of BlockSize tokens of kvUnit
// bytes) that the fixed state of one sequence takes, rounded up: 0 for
// a model of attention alone. Engines hold it once per running request
// beside its attention blocks (vLLM V1's hybrid KV cache manager,
// vllm/v1/core/single_type_kv_cache_manager.py MambaManager: one state
// block per request, MambaSpec; SGLang's per-request Mamba state pool,
// srt/mem_cache/memory_pool.py HybridReqToTokenPool), which a cache
// sized per token averaged at MaxTokens (the state over 8,193 tokens)
// had charged a short request a sliver of, admitting more sequences
// than the memory holds.
func (e *Engine) StateBlocks(m sim.Memory) int {
	if !(m.KVState > 0) {
		return 0
	}
	unit := e.kvUnit(m)
	if !(unit > 0) {
		return 0
	}
	return int(math.Ceil(float64(m.KVState) / (unit * float64(e.BlockSize))))
}

// charge is what one running sequence holds of a replica's KV cache, in
// blocks: its fixed state once (a model with state-space or DeltaNet
// layers) plus its attention layers' blocks for its tokens.
type charge struct {
	block int  // tokens per block (Engine.BlockSize)
	state int  // blocks of fixed state per sequence (Engine.StateBlocks)
	grows bool // the attention layers hold blocks per token
}

// chargeOf returns the charge of a sequence under e on a device whose
// memory is m (as KVCapacity returns it).
func chargeOf(e Engine, m sim.Memory) charge {
	return charge{block: e.BlockSize, state: e.StateBlocks(m), grows: e.kvGrows(m)}
}

// blocks returns the blocks a sequence holding tokens tokens takes: none
// while it holds none.
func (c charge) blocks(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	n := c.state
	if c.grows {
		n += ceilDiv(tokens, c.block)
	}
	return n
}

// stateSaid names the state a request also holds, for an error: "" for
// a model of attention alone.
func (c charge) stateSaid() string {
	if c.state == 0 {
		return ""
	}
	return fmt.Sprintf(" and a state of %d tokens' KV", c.state*c.block)
}
