package model

import "math"

// A Scan is the sequence mixer of a Mamba-2 layer without its projections:
// the causal depthwise convolution over x, B and C, and the selective
// state-space scan, run by the chunked SSD algorithm over Tokens new
// tokens of each of Batch sequences (Dao and Gu, "Transformers are SSMs:
// Generalized Models and Efficient Algorithms Through Structured State
// Space Duality", 2024, §6), or, for one token, as the recurrent state
// update that decoding runs. A sequence carries a constant-size state in
// place of a KV cache: Heads·HeadDim·State elements of the SSM state and
// (Heads·HeadDim + 2·Groups·State)·(Conv−1) of the convolution's.
//
// With Delta set it is the mixer of a Gated DeltaNet layer instead (see
// delta.go): the same shapes name the value heads (Heads) of width
// HeadDim, the key width (State) and the key heads (Groups) whose
// queries and keys the value heads share, as B and C are shared in
// Mamba-2; the state of a head is State × HeadDim.
type Scan struct {
	Batch, Tokens     int // sequences, new tokens per sequence
	Heads, HeadDim    int // SSM heads and their width: d_inner = Heads·HeadDim
	State, Groups     int // d_state N, and the groups sharing B and C
	Conv, Chunk       int // convolution width (4) and SSD chunk length (256); Chunk 0 means Tokens
	DType, StateDType DType
	Delta             bool // the gated delta rule (Gated DeltaNet) in place of the SSD scan
	// Prompt marks a prompt's scan (a prefill or a training pass): run by
	// the chunked kernel from a zero state, even for a one-token prompt,
	// never as the recurrent update a decode step runs on its state.
	Prompt bool
}

func (s Scan) dims() (b, t, hp, n, g, w, q float64) {
	b, t = float64(max(s.Batch, 0)), float64(max(s.Tokens, 0))
	hp, n, g = float64(max(s.Heads, 0))*float64(max(s.HeadDim, 0)), float64(max(s.State, 0)), float64(max(s.Groups, 1))
	w, q = float64(max(s.Conv, 0)), float64(s.Chunk)
	if !(q > 0) || q > t {
		q = t
	}
	return
}

// Decode reports whether the scan is a one-token state update: one token
// that is not a prompt's.
func (s Scan) Decode() bool { return s.Tokens == 1 && !s.Prompt }

// FLOPs counts multiply-adds as 2. The convolution: (d_inner + 2·G·N)·Conv
// per token. The chunked scan per token (chunk length Q, d_inner = H·P):
// the intra-chunk scores C·Bᵀ, Q·N·G; the scores applied to x, Q·H·P; the
// chunk's state from B and x, N·H·P; the output from the carried state,
// N·H·P (the paper's SSD cost). The recurrent update of one token: the
// state decayed and added to B⊗x (3·N·H·P FLOPs) and read out by C (2·N·H·P).
func (s Scan) FLOPs() FLOPs {
	if s.Delta {
		return s.deltaFLOPs()
	}
	b, t, hp, n, g, w, q := s.dims()
	conv := 2 * b * t * (hp + 2*g*n) * w
	if s.Decode() {
		return FLOPs(conv + b*5*n*hp)
	}
	return FLOPs(conv + 2*b*t*(q*n*g+q*hp+2*n*hp))
}

// Bytes counts x, B, C and the step sizes read, y written (DType), and the
// final state written (StateDType; read and written when decoding, with
// the convolution's state).
func (s Scan) Bytes() Bytes {
	if s.Delta {
		return s.deltaBytes()
	}
	b, t, hp, n, g, w, _ := s.dims()
	h := float64(max(s.Heads, 0))
	act := b * t * (2*hp + 2*g*n + h) * s.DType.Size()
	state := b * (hp*n + (hp+2*g*n)*math.Max(w-1, 0)) * s.StateDType.Size()
	if s.Decode() {
		state *= 2
	}
	return Bytes(act + state)
}

// StateBytes returns the state one sequence keeps in st: the SSM state and
// the convolution's last Conv−1 inputs.
func (s Scan) StateBytes(st DType) Bytes {
	_, _, hp, n, g, w, _ := s.dims()
	return st.Bytes(hp*n + (hp+2*g*n)*math.Max(w-1, 0))
}

// ScanCost prices a scan: the chunked scan's products run on the matrix
// units at the attention kernels' compute efficiency, its traffic at the
// streaming bandwidth, combined as a roofline with the streaming launch
// cost; a decode step is a streaming pass over the state.
func (p *Processor) ScanCost(s Scan) Cost {
	p = p.For(s)
	if s.Delta {
		return p.deltaCost(s)
	}
	if s.Decode() {
		return p.StreamCost(s.FLOPs(), s.Bytes(), FP32)
	}
	d, _ := p.Supported(s.DType)
	peak, _ := p.Peak(d)
	launch := p.Eff.Memory.Launch
	if !(launch > 0) {
		launch = p.Launch
	}
	by := s.Bytes()
	bw := ByteRate(float64(p.Bandwidth) * p.memEff(by))
	return roofline(s.FLOPs(), by, FLOPRate(float64(peak)*clampEff(p.Eff.Attention.Compute)), bw, launch, d)
}
