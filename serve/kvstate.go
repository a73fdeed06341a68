package serve

import (
	"fmt"
	"math"

	"github.com/perfsim/perfsim/sim"
)

// WindowKV says how an engine holds the KV cache of a model's
// sliding-window layers (sim.Memory.KVWindow: Mistral 7B v0.1's 4,096
// tokens in every layer, Gemma 2 and 3's local layers beside global ones,
// gpt-oss's alternating 128-token windows).
type WindowKV int

const (
	// WindowFull holds every token in every attention layer, as engines
	// do whose pool has one page size for all layers and no window:
	// SGLang v0.4.0 (python/sglang/srt/model_executor/model_runner.py
	// init_memory_pool: one MHATokenToKVPool of layer_num =
	// num_hidden_layers for every token; its SWAKVPool,
	// srt/mem_cache/swa_memory_pool.py, came in 2025) and TensorRT-LLM
	// v0.14 as trtllm-bench runs it (the cyclic KV cache caps a sequence
	// at max_attention_window, which KvCacheConfig leaves at max_seq_len
	// unless set; the model's sliding_window is not read for it:
	// examples/llama/README.md runs Mistral 7B with
	// --max_attention_window_size=4096 for its window; with a window per
	// layer, cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp of that
	// era sizes every layer by the largest). The zero value.
	WindowFull WindowKV = iota
	// WindowCyclic caps a sequence's blocks at its window's,
	// ⌈window/block⌉, reused cyclically, when every attention layer has
	// the one window (Mistral 7B v0.1), and holds every token otherwise:
	// vLLM V0 at v0.6.0 (vllm/core/block_manager_v1.py, the default
	// block manager then: block_sliding_window = ⌈sliding_window /
	// block_size⌉, can_allocate takes min(blocks, block_sliding_window)
	// and a sequence's block table wraps onto its first blocks; a model
	// of interleaved windows, Gemma 2, had its window disabled in
	// vllm/config.py, "has interleaved attention, which is currently not
	// supported", the cache holding every token).
	WindowCyclic
	// WindowGroups is vLLM V1's hybrid KV cache manager (v0.10:
	// vllm/v1/core/kv_cache_utils.py _get_kv_cache_config_uniform_page_size,
	// vllm/v1/core/kv_cache_coordinator.py HybridKVCacheCoordinator,
	// vllm/v1/core/single_type_kv_cache_manager.py): the layers are
	// split into KV-cache groups of one kind each, group_size the fewer
	// layers of the two kinds (Gemma 3 27B's 10 full and 52 sliding
	// layers: 1 full group and 6 sliding groups of 10, the last padded),
	// one page (a block of group_size layers) per block of tokens of
	// each group from one pool (num_blocks = memory / page / group_size).
	// A full group's request holds every block (FullAttentionManager);
	// a sliding group's frees the blocks wholly behind the window
	// (SlidingWindowManager.remove_skipped_blocks, called before each
	// allocation with the request's computed tokens: blocks before
	// ⌊(computed − window + 1)/block⌋ go back to the pool). A model of
	// windowed layers alone (Mistral 7B v0.1) is one sliding group of
	// every layer.
	WindowGroups
)

// kvLayout is how an engine lays out a model's KV cache on a device: a
// pool of pages of unit bytes per token, a sequence holding a page per
// block of tokens in each of full groups and, within the window, each
// of win groups.
type kvLayout struct {
	unit      float64 // one token of one page
	full, win int     // groups holding every token, and groups of windowed layers
	window    int     // tokens (0: no windowed groups)
	free      bool    // windowed blocks are freed behind the window (WindowGroups)
}

// layout returns how e holds the KV cache of a device whose memory is m
// (as Footprint gives it). A model without windowed layers is one group
// of every layer whose token is the attention layers' KV (m.KVGrowth) when
// it has a fixed state per sequence (Mamba-2, gated DeltaNet: m.KVState,
// held once per sequence, StateBlocks), not averaged into every token as
// m.KVPerToken has it; a model with no state keeps m.KVPerToken exactly,
// and so does one with no attention layers (no growth), the unit its
// state is counted in.
func (e *Engine) layout(m sim.Memory) kvLayout {
	nf, nw := m.KVFullLayers, m.KVWindowLayers
	if !(m.KVWindow > 0) || !(m.KVWindowed > 0) || nw <= 0 {
		if m.KVState > 0 && m.KVGrowth > 0 {
			return kvLayout{unit: float64(m.KVGrowth), full: 1}
		}
		return kvLayout{unit: float64(m.KVPerToken), full: 1}
	}
	all := float64(m.KVGrowth + m.KVWindowed) // a token in every attention layer
	switch {
	case e.Windows == WindowGroups && nf > 0:
		g := min(nf, nw)
		layer := float64(m.KVWindowed) / float64(nw)
		return kvLayout{unit: layer * float64(g), full: ceilDiv(nf, g), win: ceilDiv(nw, g), window: m.KVWindow, free: true}
	case e.Windows == WindowGroups:
		return kvLayout{unit: all, win: 1, window: m.KVWindow, free: true}
	case e.Windows == WindowCyclic && nf == 0:
		return kvLayout{unit: all, win: 1, window: m.KVWindow}
	}
	return kvLayout{unit: all, full: 1}
}

// kvUnit returns the bytes of one token of one page of KV cache on a
// device whose memory is m: the pool's token (layout).
func (e *Engine) kvUnit(m sim.Memory) float64 { return e.layout(m).unit }

// kvGroups returns the pages a block of tokens takes in a sequence that
// holds every token in every group: 1 but under WindowGroups with both
// kinds of layer. The pool's tokens are reported in such blocks (vLLM
// V1's "GPU KV cache size": num_blocks // len(kv_cache_groups) ×
// block_size), and --kv-tokens is read in them.
func (e *Engine) kvGroups(m sim.Memory) int {
	l := e.layout(m)
	return max(l.full+l.win, 1)
}

// seqTokens returns a pool of pool tokens of pages (KVCapacity) in
// tokens of every group, as --kv-tokens is read (Engine.KVTokens).
func (e *Engine) seqTokens(pool int, m sim.Memory) int {
	g := e.kvGroups(m)
	if g == 1 {
		return pool
	}
	return max(pool/g, e.BlockSize)
}

// kvGrows reports whether a sequence's KV cache grows with its tokens
// (it has attention layers): false for a model of state alone.
func (e *Engine) kvGrows(m sim.Memory) bool {
	return !(m.KVState > 0) || m.KVGrowth > 0 || m.KVWindowed > 0
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
// pages: its fixed state once (a model with state-space or DeltaNet
// layers) plus, per block of its tokens, a page in each of full groups
// and, for the blocks within the window, in each of win groups.
type charge struct {
	block  int  // tokens per block (Engine.BlockSize)
	state  int  // blocks of fixed state per sequence (Engine.StateBlocks)
	grows  bool // the attention layers hold blocks per token
	full   int  // groups holding every token (1 for a model without windows)
	win    int  // groups of windowed layers (0: none)
	window int  // their window, in tokens
	// free: the windowed groups' blocks wholly behind the window go back
	// to the pool as the sequence's computed tokens pass them
	// (WindowGroups); otherwise a windowed group holds at most cap
	// blocks, reused (WindowCyclic, and WindowGroups under Reserve
	// admission or static batching, which set a request's blocks aside
	// once: cap is then the most blocks any window spans).
	free bool
	cap  int
	// chunk is the most prompt tokens one iteration computes: a windowed
	// group holds the window behind a chunk and the chunk (free).
	chunk int
}

// chargeOf returns the charge of a sequence under e on a device whose
// memory is m (as KVCapacity returns it).
func chargeOf(e Engine, m sim.Memory) charge {
	l := e.layout(m)
	c := charge{block: e.BlockSize, state: e.StateBlocks(m), grows: e.kvGrows(m), full: l.full, win: l.win, window: l.window, free: l.free}
	if c.win == 0 {
		return c
	}
	c.chunk = e.MaxTokens
	if !e.Chunked {
		c.chunk = 1 << 30 // a prompt longer than the budget is prefilled whole
	}
	switch {
	case !c.free:
		c.cap = ceilDiv(c.window, c.block)
	case e.Admission == Reserve || e.Static:
		// Set aside once, never freed: the most blocks window
		// consecutive tokens span.
		c.free, c.cap = false, ceilDiv(c.window-1, c.block)+1
	}
	return c
}

// span returns the blocks that tokens [lo, hi) span.
func (c charge) span(lo, hi int) int {
	if hi <= lo {
		return 0
	}
	return ceilDiv(hi, c.block) - lo/c.block
}

// blocks returns the pages a sequence holding tokens tokens takes once
// they are computed and before its next token (a decode step's
// holding): none while it holds none.
func (c charge) blocks(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	n := c.state
	if c.grows {
		n += c.full * ceilDiv(tokens, c.block)
	}
	switch {
	case c.win == 0:
	case c.free:
		n += c.win * c.span(max(tokens-c.window, 0), tokens)
	default:
		n += c.win * min(ceilDiv(tokens, c.block), c.cap)
	}
	return n
}

// need returns the pages a sequence whose first computed tokens have
// their KV cached holds while it computes up to tokens tokens: blocks,
// but for freed windows (WindowGroups) the windowed groups hold every
// block from the one that holds the first token a query among the new
// ones sees, computed − window + 1, so that a prompt computed in one
// iteration holds all of its blocks in those groups until its next.
func (c charge) need(computed, tokens int) int {
	if !c.free || tokens <= 0 {
		return c.blocks(tokens)
	}
	n := c.state + c.full*ceilDiv(tokens, c.block)
	return n + c.win*c.span(max(computed-c.window+1, 0), tokens)
}

// most returns the most pages a sequence of tokens tokens holds at
// once: blocks, but for freed windows the window behind a chunk of
// prompt and the chunk.
func (c charge) most(tokens int) int {
	if !c.free || tokens <= 0 {
		return c.blocks(tokens)
	}
	n := c.state + c.full*ceilDiv(tokens, c.block)
	return n + c.win*min(ceilDiv(tokens, c.block), ceilDiv(c.window-1+max(c.chunk, 1), c.block)+1)
}

// tokens returns the tokens blocks pages hold when every group holds
// each token (the pool's size in tokens, as vLLM V1 reports it).
func (c charge) tokens(blocks int) int {
	return blocks / max(c.full+c.win, 1) * c.block
}

// stateSaid names the state a request also holds, for an error: "" for
// a model of attention alone.
func (c charge) stateSaid() string {
	if c.state == 0 {
		return ""
	}
	return fmt.Sprintf(" and a state of %d tokens' KV", c.state*c.block)
}
