package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/workloads"
)

const gemmsSynopsis = "perfsim gemms --model NAME|FILE [--phase prefill|decode|train-fwd|train-bwd] [--batch B] [--seq S] [--context L] [--format table|csv|json] [--all]"

const gemmsExamples = `  # the GPT-3 175B GEMM table (96 layers, d_model 12288, 96 heads), with MAC counts
  perfsim gemms --model gpt3-175b --seq 2048 --batch 1 --phase prefill

  # one decode step of Llama 3 70B at batch 8 and context 4096, as CSV
  perfsim gemms --model llama3-70b --phase decode --batch 8 --context 4096 --format csv

  # a HuggingFace config, with the norms, activations and other non-GEMM ops
  perfsim gemms --model path/to/config.json --all
`

// gemmsOptions are the flags of perfsim gemms.
type gemmsOptions struct {
	model, phase, format    string
	batch, seq, context, tp int
	all, fusedQKV           bool
	embedding, logits       string
	seqChanged, ctxChanged  bool
	logitsChanged           bool
}

func (o *gemmsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.model, "model", "", "catalog name, or a model .toml, a HuggingFace config.json or a model directory holding one")
	fs.StringVar(&o.phase, "phase", "prefill", "prefill, decode, train-fwd or train-bwd")
	fs.IntVar(&o.batch, "batch", 1, "sequences (images) per batch")
	o.seq = 2048
	fs.Var(intCount{&o.seq}, "seq", "new tokens per sequence (capped at the model's context when not given)")
	fs.Var(intCount{&o.context}, "context", "tokens already in the KV cache (decode default: --seq)")
	fs.IntVar(&o.tp, "tp", 1, "tensor-parallel degree: the GEMMs of one device")
	addFormatFlag(fs, &o.format)
	fs.BoolVar(&o.all, "all", false, "also list the non-GEMM ops (norms, activations, gathers, collectives)")
	fs.StringVar(&o.embedding, "embedding", "auto", "token embedding: gather (a lookup, as it runs), onehot (a one-hot × table GEMM, as the reference GPT-3 GEMM table counts it; docs/models.md), or auto: onehot for the GPT-3 family, gather for the others")
	fs.StringVar(&o.logits, "logits", "all", "prefill logits for every position (all, as the reference GPT-3 GEMM table) or the last (last, as serving does)")
	fs.BoolVar(&o.fusedQKV, "fused-qkv", false, "one fused QKV GEMM instead of Q, K and V per head")
}

// A gemmRow is one distinct GEMM: its shape per instance, how many times
// it runs in the whole phase, and its MACs.
type gemmRow struct {
	Stage       string  `json:"stage"`
	Op          string  `json:"op"`
	M           int     `json:"m"`
	K           int     `json:"k"`
	N           int     `json:"n"`
	Count       float64 `json:"count"`
	MACs        float64 `json:"macs"`
	MACsEach    float64 `json:"macs_each"`
	Per         string  `json:"per"`
	Share       float64 `json:"share"`
	Description string  `json:"description"`
}

// An otherRow is a non-GEMM op (with --all).
type otherRow struct {
	Stage  string  `json:"stage"`
	Op     string  `json:"op"`
	Kind   string  `json:"kind"`
	Count  int     `json:"count"`
	FLOPs  float64 `json:"flops"`
	Bytes  float64 `json:"bytes"`
	Detail string  `json:"detail"`
}

// gemmsReport is the JSON output.
type gemmsReport struct {
	warnings   []string   // printed on stderr
	Schema     string     `json:"schema"`
	Model      string     `json:"model"`
	Source     string     `json:"source"`
	Phase      string     `json:"phase"`
	Batch      int        `json:"batch"`
	Seq        int        `json:"seq"`
	Context    int        `json:"context"`
	TP         int        `json:"tp"`
	Embedding  string     `json:"embedding"`
	Parameters float64    `json:"parameters"`
	NormParams float64    `json:"norm_parameters"`
	Active     float64    `json:"active_parameters"`
	TotalMACs  float64    `json:"total_macs"`
	TotalFLOPs float64    `json:"total_flops"`
	OtherFLOPs float64    `json:"other_flops,omitempty"`
	GEMMs      []gemmRow  `json:"gemms"`
	Other      []otherRow `json:"other_ops,omitempty"`
}

// descriptions say what each GEMM is, in the words of the seed's table.
var descriptions = map[string]string{
	"embed.onehot": "one-hot x embedding weights", "embed.patch": "patches x patch-embedding weights",
	"attn.q": "X*WQ=Q (per head)", "attn.k": "X*WK=K (per kv head)", "attn.v": "X*WV=V (per kv head)",
	"attn.qkv": "X*[WQ WK WV] (all heads)", "attn.qk": "Q*KT=QK (per head)", "attn.pv": "QK*V (per head)",
	"attn.out": "linear transformation (output projection)", "ffn.up": "linear (up)",
	"ffn.gate": "gate projection", "ffn.down": "linear (down)",
	"moe.router": "router (token x experts)", "expert.gate_up": "experts' gate and up (grouped: all routed tokens)",
	"expert.up": "experts' up (grouped: all routed tokens)", "expert.down": "experts' down (grouped: all routed tokens)",
	"mla.q_a": "MLA query down-projection", "mla.q_b": "MLA query up-projection", "mla.q": "MLA query projection",
	"mla.kv_a": "MLA key/value down-projection to the latent", "mla.kv_b": "MLA latent up-projection to keys and values",
	"mla.absorb_q": "MLA query absorbed into the latent (per head)", "mla.absorb_o": "MLA latent output to values (per head)",
	"ssm.in_proj": "Mamba input projection", "ssm.out_proj": "Mamba output projection",
	"gdn.in_proj_qkvz": "Gated DeltaNet q, k, v and output gate", "gdn.in_proj_ba": "Gated DeltaNet write strength and decay",
	"gdn.out_proj": "Gated DeltaNet output projection", "shared.expert_gate": "shared-expert sigmoid gate",
	"shared.gate": "shared-expert gate", "shared.up": "shared-expert up", "shared.down": "shared-expert down",
	"lm_head": "hidden x vocabulary (logits)", "pooler": "pooler (CLS token)", "classifier": "classifier",
	"mlm.transform": "masked-LM transform", "mlm.logits": "masked-LM hidden x vocabulary",
}

// describe says what the GEMM called name is; bias says whether the
// model's linear layers have biases (GPT-3's and BERT's do, Llama's do
// not), which the seed's table names for the FFN.
func describe(name string, bias bool) string {
	base, suffix := name, ""
	for _, s := range []string{".dgrad", ".wgrad", ".bwd"} {
		if n := len(base) - len(s); n > 0 && base[n:] == s {
			base, suffix = base[:n], " ("+s[1:]+")"
		}
	}
	if b, ok := strings.CutSuffix(base, ".sliding"); ok {
		base, suffix = b, " (sliding window)"+suffix
	}
	if d, ok := descriptions[base]; ok {
		if bias && (base == "ffn.up" || base == "ffn.down") {
			d = strings.Replace(d, "linear", "linear + bias", 1)
		}
		return d + suffix
	}
	return "" // CNN layers: the op is the layer's name
}

func runGemmsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o gemmsOptions
	fs := newFlagSet("gemms", gemmsSynopsis, gemmsExamples, stderr)
	o.AddFlags(fs)
	if err := parseFlagsNoArgs(fs, args, "gemms"); err != nil {
		return err
	}
	o.seqChanged, o.ctxChanged = fs.Changed("seq"), fs.Changed("context")
	o.logitsChanged = fs.Changed("logits")
	f, err := parseFormat(o.format)
	if err != nil {
		return err
	}
	rep, err := gemms(o)
	if err != nil {
		return err
	}
	for _, w := range rep.warnings {
		fmt.Fprintf(stderr, "perfsim: warning: %s\n", w)
	}
	switch f {
	case formatJSON:
		return writeJSON(stdout, rep)
	case formatCSV:
		return writeGemmsCSV(stdout, rep, o.all)
	}
	return writeGemmsTable(stdout, rep, o.all)
}

// gemms decomposes the model and builds the report.
func gemms(o gemmsOptions) (*gemmsReport, error) {
	// Every flag problem at once, before the model is read.
	var errs []error
	kind, err := workloads.ParsePhaseKind(o.phase)
	if err != nil {
		errs = append(errs, usagef("--phase: %v", err))
	}
	if o.batch <= 0 {
		errs = append(errs, usagef("--batch %d: must be positive", o.batch))
	}
	if o.seq <= 0 {
		errs = append(errs, usagef("--seq %d: must be positive", o.seq))
	}
	if o.context < 0 {
		errs = append(errs, usagef("--context %d: must not be negative", o.context))
	}
	if o.tp <= 0 {
		errs = append(errs, usagef("--tp %d: must be positive", o.tp))
	}
	ph := workloads.Phase{Kind: kind, Batch: o.batch, Seq: o.seq, Context: o.context, TP: o.tp,
		PerHead: !o.fusedQKV, AllLogits: true, Embedding: workloads.EmbedGather}
	switch o.embedding {
	case "auto", "onehot", "one-hot", "gather":
	default:
		errs = append(errs, usagef("--embedding: unknown %q (want auto, gather or onehot)", o.embedding))
	}
	switch o.logits {
	case "all":
	case "last":
		ph.AllLogits = false
	default:
		errs = append(errs, usagef("--logits: unknown %q (want all or last)", o.logits))
	}
	if o.logitsChanged && kind == workloads.Decode {
		// A decode step computes its one new token's logits: --logits
		// had been taken and ignored.
		errs = append(errs, usagef("--logits: only for a prefill (a decode step computes the logits of its one new token)"))
	}
	if o.ctxChanged && (kind == workloads.TrainForward || kind == workloads.TrainBackward) {
		// A training pass attends within its sequence: the context had
		// been zeroed while the title said "context 100".
		errs = append(errs, usagef("--context: a training pass (--phase %s) attends within its sequence, with no KV cache to set", kind))
	}
	// The model too, beside the flags: every problem at once.
	m, err := resolveModel(o.model)
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	sh := m.Shape()
	if sh.Kind != workloads.Decoder && sh.Kind != workloads.Encoder {
		// A CNN or a ViT has no sequence to set: the flags would be ignored.
		for _, f := range []struct {
			name    string
			changed bool
		}{{"seq", o.seqChanged}, {"context", o.ctxChanged}} {
			if f.changed {
				errs = append(errs, usagef("--%s: %s is a %s, without a token sequence to set", f.name, m.Name(), sh.Kind))
			}
		}
	} else if sh.Kind == workloads.Encoder && o.ctxChanged && kind != workloads.TrainForward && kind != workloads.TrainBackward {
		// An encoder keeps no KV cache: the context had been zeroed
		// while the title said "context 100".
		errs = append(errs, usagef("--context: %s is an encoder, with no KV cache to set", m.Name()))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if kind == workloads.Decode && sh.Kind != workloads.Decoder {
		// It had read "workloads: bert-large decode: bert-large is an
		// encoder: it has no decode phase", exit 1, naming no flag.
		return nil, usagef("--phase: %s is a%s %s: it has no decode phase (want prefill, train-fwd or train-bwd)", m.Name(), article(string(sh.Kind)), sh.Kind)
	}
	// The seed's table is GPT-3's, with the embedding as a one-hot GEMM:
	// auto shows GPT-3 so and every other model as it runs, a lookup.
	if o.embedding == "onehot" || o.embedding == "one-hot" || (o.embedding == "auto" && strings.HasPrefix(m.Name(), "gpt3")) {
		ph.Embedding = workloads.EmbedOneHot
	}
	cfg := m.Config()
	bias := cfg.Bias != nil && *cfg.Bias
	if !o.seqChanged && sh.MaxContext > 0 && ph.Seq > sh.MaxContext {
		ph.Seq = sh.MaxContext
	}
	if kind == workloads.Decode && !o.ctxChanged {
		ph.Context = ph.Seq
	}
	ops, err := m.Ops(ph)
	if err != nil {
		// A --tp the model's heads or FFN do not split: a usage error
		// naming the flag (it had read "workloads: llama3-8b prefill: 3
		// does not divide heads", exit 1).
		if se := (*workloads.SplitError)(nil); errors.As(err, &se) {
			return nil, usagef("--tp: %v", err)
		}
		return nil, err
	}
	ops = workloads.ExpandAttention(ops)
	rep := &gemmsReport{Schema: "perfsim.gemms/v1", Model: m.Name(), Source: m.Source(), Phase: kind.String(), Batch: ph.Batch,
		Seq: ph.Seq, Context: ph.Context, TP: ph.TP, Embedding: ph.Embedding.String(),
		Parameters: m.Params(), NormParams: m.NormParams(), Active: m.ActiveParams(), GEMMs: []gemmRow{}}
	if kind == workloads.Decode {
		rep.Seq = 1
	}
	if sh.Kind != workloads.Decoder && sh.Kind != workloads.Encoder {
		rep.Embedding, rep.Seq, rep.Context = "none", sh.Tokens, 0
	} else if !o.seqChanged && !o.ctxChanged {
		// The defaults stay within the context (the prompt is capped).
	} else if kind == workloads.Decode && sh.MaxContext > 0 && ph.Context+1 > sh.MaxContext {
		// As simulate warns: a context past the trained one had been
		// decomposed without a word (llama3-8b at --context 100000).
		rep.warnings = append(rep.warnings, fmt.Sprintf("a context of %d tokens exceeds %s's trained context of %d", ph.Context+1, m.Name(), sh.MaxContext))
	} else if kind != workloads.Decode && sh.MaxContext > 0 && ph.Seq > sh.MaxContext {
		rep.warnings = append(rep.warnings, fmt.Sprintf("%d tokens exceed %s's trained context of %d", ph.Seq, m.Name(), sh.MaxContext))
	}
	for _, op := range ops {
		g, ok := op.Kernel.(model.GEMM)
		if gg, grouped := op.Kernel.(model.GroupedGEMM); grouped {
			// One row for the layer's grouped GEMM: every routed token.
			g, ok = model.GEMM{M: gg.Rows, K: gg.K, N: gg.N, A: gg.A, B: gg.B, C: gg.C}, true
		}
		if !ok {
			if o.all {
				rep.Other = append(rep.Other, other(op))
				rep.OtherFLOPs += float64(op.FLOPs())
			}
			continue
		}
		count := float64(op.Count) * math.Max(1, float64(g.Batch))
		macs := op.MACs()
		rep.GEMMs = append(rep.GEMMs, gemmRow{Stage: op.Stage, Op: op.Name, M: g.M, K: g.K, N: g.N,
			Count: count, MACs: macs, MACsEach: float64(g.M) * float64(g.K) * float64(g.N),
			Per: per(op, g, sh), Description: describe(op.Name, bias)})
		rep.TotalMACs += macs
	}
	rep.TotalFLOPs = 2 * rep.TotalMACs
	for i := range rep.GEMMs {
		if rep.TotalMACs > 0 {
			rep.GEMMs[i].Share = rep.GEMMs[i].MACs / rep.TotalMACs
		}
	}
	return rep, nil
}

// per says what one instance of a GEMM row is, as the seed's "per"
// column does: a head, an expert or a group of one layer, a layer, or the
// whole model.
func per(op model.Op, g model.GEMM, sh workloads.Shape) string {
	switch {
	case g.Batch > 1 && op.Stage == workloads.StageAttention:
		return "head"
	case g.Batch > 1 && op.Class == model.ClassExperts:
		return "expert"
	case g.Batch > 1:
		return "group"
	case sh.Kind != workloads.CNN && op.Count > 1 && (op.Count%max(sh.Layers, 1) == 0 || op.Count < sh.Layers):
		// Every layer, or some of them: DeepSeek-V3's 3 dense and 58
		// MoE layers of 61 had been said per "model".
		return "layer"
	case sh.Kind == workloads.CNN && op.Count > 1:
		return "layer"
	}
	return "model"
}

func other(op model.Op) otherRow {
	r := otherRow{Stage: op.Stage, Op: op.Name, Count: op.Count, FLOPs: float64(op.FLOPs()), Bytes: float64(op.Bytes())}
	switch k := op.Kernel.(type) {
	case model.Elementwise:
		r.Kind = k.Kind
		r.Detail = fmt.Sprintf("%.0f elements", k.Elements)
	case model.Gather:
		r.Kind = "gather"
		r.Detail = fmt.Sprintf("%d rows x %d", k.Rows, k.Width)
	case model.Collective:
		r.Kind = k.Kind.String()
		r.Detail = fmt.Sprintf("%.0f bytes over %d ranks", float64(k.Size), k.Ranks)
	case model.Attention:
		r.Kind = "attention"
		r.Detail = fmt.Sprintf("%d heads, %d x %d", k.Heads, k.QLen, k.KVLen)
	case model.Scan:
		r.Kind = "ssd-scan"
		if k.Delta {
			r.Kind = "delta-rule"
		}
		r.Detail = fmt.Sprintf("%d heads of %d x %d state, %d x %d tokens", k.Heads, k.State, k.HeadDim, k.Batch, k.Tokens)
	default:
		r.Kind = "other"
	}
	return r
}

// intText writes a whole number exactly (MACs are integers well below 2^53
// for any model perfsim accepts at a sane shape).
func intText(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		panic("perfsim: non-finite value in output")
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return num(v)
}

func writeGemmsCSV(w io.Writer, rep *gemmsReport, all bool) error {
	header := []string{"stage", "op", "m", "k", "n", "count", "macs", "macs_each", "per", "share", "description"}
	rows := make([][]string, 0, len(rep.GEMMs)+len(rep.Other))
	for _, g := range rep.GEMMs {
		rows = append(rows, []string{g.Stage, g.Op, strconv.Itoa(g.M), strconv.Itoa(g.K), strconv.Itoa(g.N),
			intText(g.Count), intText(g.MACs), intText(g.MACsEach), g.Per, strconv.FormatFloat(g.Share, 'f', 6, 64), g.Description})
	}
	if all {
		header = append(header, "kind", "flops", "bytes")
		for i := range rows {
			rows[i] = append(rows[i], "gemm", intText(2*rep.GEMMs[i].MACs), "")
		}
		for _, r := range rep.Other {
			rows = append(rows, []string{r.Stage, r.Op, "", "", "", strconv.Itoa(r.Count), "0", "", "", "", r.Detail,
				r.Kind, intText(r.FLOPs), intText(r.Bytes)})
		}
	}
	return writeCSV(w, header, rows)
}

func writeGemmsTable(w io.Writer, rep *gemmsReport, all bool) error {
	fmt.Fprintf(w, "%s, %s, batch %d", rep.Model, rep.Phase, rep.Batch)
	switch {
	case rep.Phase == "decode":
		fmt.Fprintf(w, ", context %d", rep.Context)
	case rep.Seq > 0:
		fmt.Fprintf(w, ", seq %d", rep.Seq)
		if rep.Context > 0 {
			fmt.Fprintf(w, ", context %d", rep.Context)
		}
	}
	if rep.TP > 1 {
		fmt.Fprintf(w, ", tp %d (one device)", rep.TP)
	}
	fmt.Fprintf(w, "; embedding: %s\n\n", rep.Embedding)
	tw := newTable(w)
	fmt.Fprintln(tw, "STAGE\tOP\tM\tK\tN\tMACS EACH\tPER\tCOUNT\tMACS\tSHARE\tDESCRIPTION")
	for _, g := range rep.GEMMs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.2f%%\t%s\n", g.Stage, g.Op, g.M, g.K, g.N,
			sci(g.MACsEach), g.Per, intText(g.Count), sci(g.MACs), 100*g.Share, g.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if all && len(rep.Other) > 0 {
		fmt.Fprintln(w)
		tw = newTable(w)
		fmt.Fprintln(tw, "STAGE\tOP\tKIND\tCOUNT\tFLOPS\tBYTES\tDETAIL")
		for _, r := range rep.Other {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Stage, r.Op, r.Kind, r.Count,
				model.FLOPs(r.FLOPs), model.Bytes(r.Bytes), r.Detail)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\ntotal MACs  %s\ntotal FLOPs %s (2 per MAC, GEMMs only)\n", sci(rep.TotalMACs), sci(rep.TotalFLOPs))
	if all {
		fmt.Fprintf(w, "other FLOPs %s (norms, activations, softmax)\n", sci(rep.OtherFLOPs))
	}
	fmt.Fprintf(w, "parameters  %s (%s; %s without the %s norm parameters)", sci(rep.Parameters), intText(rep.Parameters),
		sci(rep.Parameters-rep.NormParams), intText(rep.NormParams))
	if rep.Active != rep.Parameters {
		fmt.Fprintf(w, ", %s active per token", sci(rep.Active))
	}
	fmt.Fprintln(w)
	return nil
}

// sci writes v as the seed's table does: 1.28849E+12 (six digits).
func sci(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		panic("perfsim: non-finite value in output")
	}
	return strconv.FormatFloat(v, 'G', 6, 64)
}

// article returns "n" before a word that starts with a vowel, else "".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "n"
	}
	return ""
}
