package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

// statsJSON is one metric's summary, in seconds.
type statsJSON struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func statsOf(s serve.Stats) statsJSON { return statsJSON(s) }

// serveSummary is perfsim serve's result: JSON keys in base units.
type serveSummary struct {
	Schema      string `json:"schema"`
	Model       string `json:"model"`
	Hardware    string `json:"hardware"`
	Calibration string `json:"calibration"`
	Engine      string `json:"engine"`
	TP          int    `json:"tp"`
	PP          int    `json:"pp"`
	DP          int    `json:"dp"`
	EP          int    `json:"ep"` // expert parallelism within each replica's TP group (1: none), or over every replica's GPUs with dp_attention
	DPAttention bool   `json:"dp_attention,omitempty"`
	// DPAttentionGroups: the data-parallel attention groups of dp
	// replicas each behind the round-robin router (gpus being groups ×
	// dp × tp); left out for one.
	DPAttentionGroups int `json:"dp_attention_groups,omitempty"`
	GPUs              int `json:"gpus"`
	Requests          int `json:"requests"`
	MaxSeqs           int `json:"max_seqs"`
	MaxTokens         int `json:"max_tokens"`
	KVCacheTokens     int `json:"kv_cache_tokens"`
	// GEMMAllReduce: the TP all-reduces fused with their row-parallel
	// GEMMs (--gemm-allreduce); absent when off.
	GEMMAllReduce bool `json:"gemm_allreduce,omitempty"`
	// KVStateTokens is what the fixed state of one sequence of a hybrid
	// model (state-space or DeltaNet layers) takes of kv_cache_tokens,
	// held once per running sequence beside its tokens' KV.
	KVStateTokens int `json:"kv_state_tokens_per_sequence,omitempty"`
	// RuntimeBuffersBytes is the engine's own runtime buffers on one
	// device, counted before the KV cache (trtllm only).
	RuntimeBuffersBytes int64     `json:"runtime_buffers_bytes,omitempty"`
	DurationS           float64   `json:"duration_s"`
	QueueS              statsJSON `json:"queue_s"`
	TTFTS               statsJSON `json:"ttft_s"`
	// TPOTS and ITLS are null when no request has a second token (no
	// gap to time; they had read 0 s).
	TPOTS               *statsJSON `json:"tpot_s"`
	ITLS                *statsJSON `json:"itl_s"`
	E2ES                statsJSON  `json:"e2e_s"`
	RequestsPerS        float64    `json:"requests_per_s"`
	OutputTokensPerS    float64    `json:"output_tokens_per_s"`
	OutputTokensPerSGPU float64    `json:"output_tokens_per_s_per_gpu"`
	// Goodput and the objectives it counts by, only those given (none
	// given: no goodput; it had read the throughput, under objectives
	// of 0 s).
	GoodputRequestsPerS  *float64   `json:"goodput_requests_per_s,omitempty"`
	TTFTSLOS             float64    `json:"ttft_slo_s,omitempty"`
	TPOTSLOS             float64    `json:"tpot_slo_s,omitempty"`
	Utilization          float64    `json:"utilization"`
	MeanRequestsInSystem float64    `json:"mean_requests_in_system"`
	Iterations           int        `json:"iterations"`
	Preemptions          int        `json:"preemptions"`
	Overloaded           bool       `json:"overloaded"`
	Verdict              string     `json:"verdict"`
	mem                  sim.Memory // one device as the KV cache was sized (the table's memory line)
	// Present only where they apply (serve_deploy.go).
	Router      string     `json:"router,omitempty"`
	Users       int        `json:"users,omitempty"`
	ThinkS      float64    `json:"think_s,omitempty"`
	PrefixHit   float64    `json:"prefix_hit,omitempty"`
	Pools       []poolJSON `json:"pools,omitempty"`
	KVTransferS *statsJSON `json:"kv_transfer_s,omitempty"`

	Energy *serveEnergyJSON `json:"energy,omitempty"` // serve_energy.go
}

// poolJSON is one pool of a deployment run through RunDeployment.
type poolJSON struct {
	Name          string  `json:"name"`
	Instances     int     `json:"instances"`
	TP            int     `json:"tp"`
	PP            int     `json:"pp"`
	EP            int     `json:"ep"`
	KVCacheTokens int     `json:"kv_cache_tokens"`
	Iterations    int     `json:"iterations"`
	Preemptions   int     `json:"preemptions"`
	Utilization   float64 `json:"utilization"`
	// KVHeld: a disaggregated prefill pool's mean share of its KV cache
	// held by prefilled requests until their KV cache has reached the
	// decode pool (serve.PoolResult.KVHeld).
	KVHeld *float64 `json:"kv_held_fraction,omitempty"`
}

func serveSummaryOf(res *serve.Result, s *serveSetup, ttft, tpot model.Seconds) serveSummary {
	sum := serveSummaryBase(res, s, ttft, tpot)
	d := &s.dep
	if d.Serve.Instances > 1 || d.Disaggregated() {
		sum.Router = d.Router.String()
	}
	sum.Users, sum.ThinkS, sum.PrefixHit = s.opts.Users, float64(s.opts.Think), s.opts.PrefixHit
	for i, p := range res.Pools {
		pl := &d.Serve
		if i == 1 {
			pl = &d.Decode
		}
		sc := pl.Pricer.Scenario()
		pj := poolJSON{Name: p.Name, Instances: p.Instances, TP: sc.TP, PP: sc.PP, EP: max(sc.EP, 1), KVCacheTokens: p.KVTokens,
			Iterations: p.Iterations, Preemptions: p.Preemptions, Utilization: p.Utilization}
		if i == 0 && d.Disaggregated() {
			pj.KVHeld = &p.KVHeld
		}
		sum.Pools = append(sum.Pools, pj)
	}
	if d.Disaggregated() {
		x := statsOf(res.Transfer)
		sum.KVTransferS = &x
	}
	return sum
}

func serveSummaryBase(res *serve.Result, s *serveSetup, ttft, tpot model.Seconds) serveSummary {
	sc := s.pricer.Scenario()
	out := serveSummary{
		Schema: "perfsim.serve/v1", Model: s.w.Name(), Hardware: s.hw, Calibration: s.dev.CalibrationLabel(), Engine: res.Engine.Name,
		TP: sc.TP, PP: sc.PP, DP: s.dp, EP: max(sc.EP, 1), DPAttention: s.dep.DPAttention, GPUs: s.gpus, Requests: res.Count,
		MaxSeqs: res.Engine.MaxSeqs, MaxTokens: res.Engine.MaxTokens, KVCacheTokens: res.KVTokens, GEMMAllReduce: res.Engine.GEMMAllReduce,
		KVStateTokens:       res.Engine.StateBlocks(res.Memory) * res.Engine.BlockSize,
		RuntimeBuffersBytes: int64(res.Memory.Buffers), mem: res.Memory,
		DurationS: float64(res.Duration),
		QueueS:    statsOf(res.Queue), TTFTS: statsOf(res.TTFT), E2ES: statsOf(res.E2E),
		RequestsPerS: res.RequestsPerSecond, OutputTokensPerS: res.OutputTokensPerSecond,
		OutputTokensPerSGPU: res.OutputTokensPerSecond / float64(s.gpus),
		TTFTSLOS:            float64(ttft), TPOTSLOS: float64(tpot),
		Utilization: res.Utilization, MeanRequestsInSystem: res.MeanInSystem,
		Iterations: res.Iterations, Preemptions: res.Preemptions, Overloaded: res.Overloaded, Verdict: res.Verdict,
	}
	if s.groups > 1 {
		out.DPAttentionGroups = s.groups
	}
	if ttft > 0 || tpot > 0 {
		out.GoodputRequestsPerS = fp(res.Goodput(ttft, tpot))
	}
	if res.OutputTokens > res.Count { // some request has a second token
		tp, it := statsOf(res.TPOT), statsOf(res.ITL)
		out.TPOTS, out.ITLS = &tp, &it
	}
	return out
}

func writeServeTable(w io.Writer, s serveSummary) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "model\t%s\n", s.Model)
	fmt.Fprintf(tw, "hardware\t%s (%s)\n", s.Hardware, s.Calibration)
	kv := fmt.Sprintf("KV cache %d tokens per replica", s.KVCacheTokens)
	if s.PP > 1 && s.KVTransferS == nil {
		// kv_cache_tokens is one of the replica's PP schedulers' (each
		// holds 1/PP): tp 4 × pp 2 had printed half its cache as the
		// replica's.
		kv = fmt.Sprintf("KV cache %d tokens per replica, %d in each of its %d pipeline schedulers", s.KVCacheTokens*s.PP, s.KVCacheTokens, s.PP)
	}
	if s.KVStateTokens > 0 {
		kv += fmt.Sprintf(", of which each running sequence's state takes %d", s.KVStateTokens)
	}
	if s.KVTransferS != nil {
		// Disaggregated: each pool's scheduler has its own cache, on its
		// pool line below (kv_cache_tokens is the decode pool's).
		kv = "KV cache by pool below"
	}
	if s.GEMMAllReduce {
		kv += ", TP all-reduces fused with their GEMMs"
	}
	fmt.Fprintf(tw, "engine\t%s (max %d running, %d tokens per iteration, %s)\n", s.Engine, s.MaxSeqs, s.MaxTokens, kv)
	if m := s.mem; m.Buffers > 0 {
		fmt.Fprintf(tw, "memory\tper device before the KV cache: %s weights, %s activations, %s runtime buffers, %s reserve\n",
			m.Weights.BinaryString(), m.Activations.BinaryString(), m.Buffers.BinaryString(), m.Reserve.BinaryString())
	}
	// ep N: the TP group's GPUs share each MoE layer's experts (no
	// GPUs of its own, so outside the product).
	ep := ""
	switch {
	case s.DPAttentionGroups > 1:
		ep = fmt.Sprintf(", data-parallel attention with ep %d over each group", s.EP)
	case s.DPAttention:
		ep = fmt.Sprintf(", data-parallel attention with ep %d over them", s.EP)
	case s.EP > 1:
		ep = fmt.Sprintf(", ep %d within tp", s.EP)
	}
	switch {
	case s.KVTransferS != nil:
		p, d := s.Pools[0], s.Pools[1]
		fmt.Fprintf(tw, "layout\tprefill %d × (tp %d × pp %d) + decode %d × (tp %d × pp %d) = %s%s, %s router\n", p.Instances, p.TP, p.PP, d.Instances, d.TP, d.PP, gpuCount(s.GPUs), ep, s.Router)
	case s.DPAttentionGroups > 1:
		fmt.Fprintf(tw, "layout\t%d groups of tp %d × pp %d × dp %d = %s%s, %s router\n", s.DPAttentionGroups, s.TP, s.PP, s.DP, gpuCount(s.GPUs), ep, s.Router)
	case s.Router != "":
		fmt.Fprintf(tw, "layout\ttp %d × pp %d × dp %d = %s%s, %s router\n", s.TP, s.PP, s.DP, gpuCount(s.GPUs), ep, s.Router)
	default:
		fmt.Fprintf(tw, "layout\ttp %d × pp %d × dp %d = %s%s\n", s.TP, s.PP, s.DP, gpuCount(s.GPUs), ep)
	}
	if s.Users > 0 {
		fmt.Fprintf(tw, "closed loop\t%s, %v think time\n", plural(s.Users, "user"), model.Seconds(s.ThinkS))
	}
	if s.PrefixHit > 0 {
		fmt.Fprintf(tw, "prefix cache\t%.0f%% of each prompt cached (from the second request of a shared prefix id)\n", 100*s.PrefixHit)
	}
	fmt.Fprintf(tw, "requests\t%d over %v\n", s.Requests, model.Seconds(s.DurationS))
	fmt.Fprintf(tw, "\nmetric\tmean\tp50\tp90\tp95\tp99\tmax\n")
	for _, m := range []struct {
		name string
		s    *statsJSON
	}{{"queue", &s.QueueS}, {"TTFT", &s.TTFTS}, {"TPOT", s.TPOTS}, {"ITL", s.ITLS}, {"E2E", &s.E2ES}} {
		if m.s == nil {
			fmt.Fprintf(tw, "%s\tnone: no request has a second token\n", m.name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%v\t%v\t%v\t%v\t%v\t%v\n", m.name, model.Seconds(m.s.Mean), model.Seconds(m.s.P50),
			model.Seconds(m.s.P90), model.Seconds(m.s.P95), model.Seconds(m.s.P99), model.Seconds(m.s.Max))
	}
	fmt.Fprintf(tw, "\nthroughput\t%s req/s, %s output tokens/s (%s per GPU)\n", fnum(s.RequestsPerS), fnum(s.OutputTokensPerS), fnum(s.OutputTokensPerSGPU))
	if s.GoodputRequestsPerS != nil {
		fmt.Fprintf(tw, "goodput\t%s req/s within %s\n", fnum(*s.GoodputRequestsPerS), objectives("", model.Seconds(s.TTFTSLOS), model.Seconds(s.TPOTSLOS)))
	}
	fmt.Fprintf(tw, "utilization\t%.1f%% busy, %d iterations, %d preemptions, %s requests in the system on average\n", 100*s.Utilization, s.Iterations, s.Preemptions, fnum(s.MeanRequestsInSystem))
	for _, p := range s.Pools {
		if len(s.Pools) > 1 {
			held := ""
			if p.KVHeld != nil {
				held = fmt.Sprintf(" (%.1f%% of it held for KV transfers on average)", 100**p.KVHeld)
			}
			fmt.Fprintf(tw, "%s pool\t%.1f%% busy, %d iterations, %d preemptions, KV cache %d tokens per scheduler%s\n", p.Name, 100*p.Utilization, p.Iterations, p.Preemptions, p.KVCacheTokens, held)
		}
	}
	if x := s.KVTransferS; x != nil {
		fmt.Fprintf(tw, "KV transfer\tmean %v, p50 %v, p99 %v, max %v (first token to KV cache at the decode instance: waiting for its blocks and the link, and the transfer)\n", model.Seconds(x.Mean), model.Seconds(x.P50), model.Seconds(x.P99), model.Seconds(x.Max))
	}
	if s.Overloaded {
		fmt.Fprintf(tw, "verdict\t%s\n", s.Verdict)
	}
	return tw.Flush()
}

// writeServeCSV writes one row per metric: the summaries (seconds) and
// then the scalars, the unit in the metric's name (overloaded: 1 or 0);
// every metric the JSON gives, the run's settings aside.
func writeServeCSV(w io.Writer, s serveSummary) error {
	header := []string{"metric", "mean", "p50", "p90", "p95", "p99", "max"}
	var rows [][]string
	for _, m := range []struct {
		name string
		s    *statsJSON
	}{{"queue_s", &s.QueueS}, {"ttft_s", &s.TTFTS}, {"tpot_s", s.TPOTS}, {"itl_s", s.ITLS}, {"e2e_s", &s.E2ES}} {
		if m.s == nil { // no request has a second token: empty cells, as JSON's null
			rows = append(rows, []string{m.name, "", "", "", "", "", ""})
			continue
		}
		rows = append(rows, []string{m.name, num(m.s.Mean), num(m.s.P50), num(m.s.P90), num(m.s.P95), num(m.s.P99), num(m.s.Max)})
	}
	if x := s.KVTransferS; x != nil {
		// The disaggregated run's KV transfers, as its JSON gives them
		// (the CSV had dropped them).
		rows = append(rows, []string{"kv_transfer_s", num(x.Mean), num(x.P50), num(x.P90), num(x.P95), num(x.P99), num(x.Max)})
	}
	overloaded := 0.0
	if s.Overloaded {
		overloaded = 1
	}
	var goodput float64 // no objective: no row
	if s.GoodputRequestsPerS != nil {
		goodput = *s.GoodputRequestsPerS
	}
	for _, m := range []struct {
		name string
		v    float64
		omit bool
	}{
		{"requests_per_s", s.RequestsPerS, false}, {"output_tokens_per_s", s.OutputTokensPerS, false},
		{"output_tokens_per_s_per_gpu", s.OutputTokensPerSGPU, false}, {"goodput_requests_per_s", goodput, s.GoodputRequestsPerS == nil},
		{"utilization", s.Utilization, false}, {"duration_s", s.DurationS, false}, {"preemptions", float64(s.Preemptions), false},
		{"mean_requests_in_system", s.MeanRequestsInSystem, false}, {"iterations", float64(s.Iterations), false},
		{"kv_cache_tokens", float64(s.KVCacheTokens), false}, {"overloaded", overloaded, false},
	} {
		if !m.omit {
			rows = append(rows, []string{m.name, num(m.v), "", "", "", "", ""})
		}
	}
	scalar := func(name string, v float64) {
		rows = append(rows, []string{name, num(v), "", "", "", "", ""})
	}
	// Where they apply, as in the JSON: data-parallel attention's groups
	// (the per-GPU figures are over all of them), a hybrid model's state
	// per sequence, trtllm's runtime buffers.
	if s.DPAttentionGroups > 1 {
		scalar("dp_attention_groups", float64(s.DPAttentionGroups))
	}
	if s.KVStateTokens > 0 {
		scalar("kv_state_tokens_per_sequence", float64(s.KVStateTokens))
	}
	if s.RuntimeBuffersBytes > 0 {
		scalar("runtime_buffers_bytes", float64(s.RuntimeBuffersBytes))
	}
	if s.TTFTSLOS > 0 {
		scalar("ttft_slo_s", s.TTFTSLOS)
	}
	if s.TPOTSLOS > 0 {
		scalar("tpot_slo_s", s.TPOTSLOS)
	}
	// The energy and cost the table and JSON give (a --price had been
	// dropped from the CSV without a word); money carries its currency
	// in the name, as every other row its unit.
	if e := s.Energy; e != nil {
		scalar("average_w_per_gpu", e.AverageW)
		scalar("gpu_j", e.GPUJ)
		scalar("node_j", e.NodeJ)
		scalar("facility_j", e.FacilityJ)
		scalar("j_per_output_token", e.JPerOutTok)
		cur := "_" + strings.ToLower(e.Currency)
		for _, c := range []struct {
			name string
			v    *float64
		}{{"cost", e.Cost}, {"cost_per_request", e.PerRequest}, {"cost_per_million_input_tokens", e.PerMInput}, {"cost_per_million_output_tokens", e.PerMOutput}} {
			if c.v != nil {
				scalar(c.name+cur, *c.v)
			}
		}
	}
	return writeCSV(w, header, rows)
}

// writeSeriesCSV writes a run's time series (replica 0, or the first
// decode scheduler): at the end of each sampled iteration, the requests
// waiting and running, the fraction of KV blocks in use and the
// iteration's tokens.
func writeSeriesCSV(w io.Writer, res *serve.Result) error {
	header := []string{"time_s", "waiting_requests", "running_requests", "kv_cache_used_fraction", "batch_tokens"}
	rows := make([][]string, 0, len(res.Series))
	for _, s := range res.Series {
		rows = append(rows, []string{num(float64(s.Time)), strconv.Itoa(s.Waiting), strconv.Itoa(s.Running), num(s.KVUsed), strconv.Itoa(s.BatchTokens)})
	}
	return writeCSV(w, header, rows)
}
