package main

import (
	"io"
	"strconv"

	"github.com/perfsim/perfsim/sim"
)

// writeSimulateCSV writes the summary as metric,value rows (the JSON's
// keys, dotted), or with breakdown one row per op of every phase.
func writeSimulateCSV(w io.Writer, r *sim.Report, cal string, lim limitsResult, breakdown bool, extra [][]string) error {
	if breakdown {
		header := []string{"phase", "op", "class", "kind", "count", "time_s", "time_s_low", "time_s_high", "share", "bound", "dtype", "flops", "bytes", "intensity_flop_per_byte"}
		var rows [][]string
		for _, p := range allPhases(r) {
			for _, o := range p.Ops {
				rows = append(rows, []string{p.Name, o.Name.String(), o.Class.String(), o.Kind.String(), strconv.Itoa(o.Count),
					num(float64(o.Time)), num(float64(o.Low)), num(float64(o.High)), num(shareOf(o.Time, p.Time)),
					o.Bound.String(), dtypeName(o.DType), num(float64(o.FLOPs)), strconv.FormatInt(whole(float64(o.Bytes)), 10), num(intensity(o.FLOPs, o.Bytes))})
			}
		}
		return writeCSV(w, header, rows)
	}
	j := simulateJSON(r, cal, lim, false)
	var rows [][]string
	add := func(k string, v string) { rows = append(rows, []string{k, v}) }
	addf := func(k string, v *float64) {
		if v != nil {
			add(k, num(*v))
		}
	}
	add("model", j.Model)
	add("hardware", j.Hardware)
	add("calibration", j.Calibration)
	add("mode", j.Mode)
	add("devices", strconv.Itoa(j.Devices))
	add("params", strconv.FormatInt(j.Params, 10))
	add("active_params", strconv.FormatInt(j.ActiveParams, 10))
	for _, kv := range scenarioRows(j.Scenario) {
		add("scenario."+kv[0], kv[1])
	}
	add("interval", j.Interval)
	add("fits", strconv.FormatBool(j.Fits))
	addf("ttft_s", j.TTFT)
	addf("ttft_s_low", j.TTFTLow)
	addf("ttft_s_high", j.TTFTHigh)
	addf("tpot_s", j.TPOT)
	addf("tpot_s_low", j.TPOTLow)
	addf("tpot_s_high", j.TPOTHigh)
	addf("e2e_s", j.E2E)
	addf("e2e_s_low", j.E2ELow)
	addf("e2e_s_high", j.E2EHigh)
	addf("output_tokens_per_s", j.OutTok)
	addf("output_tokens_per_s_per_device", j.OutTokDevice)
	addf("images_per_s", j.Images)
	addf("samples_per_s", j.Samples)
	if j.PrefillBound != "" {
		add("prefill_bound", j.PrefillBound)
	}
	if j.DecodeBound != "" {
		add("decode_bound", j.DecodeBound)
	}
	if t := j.Training; t != nil {
		add("training.step_time_s", num(t.StepTime))
		add("training.step_time_s_low", num(t.StepTimeLow))
		add("training.step_time_s_high", num(t.StepTimeHigh))
		add("training.micro_batches", strconv.Itoa(t.MicroBatches))
		if t.TokensPerSecond != nil {
			add("training.tokens_per_s", num(*t.TokensPerSecond))
		}
		add("training.samples_per_s", num(t.SamplesPerSec))
		add("training.model_flops", num(t.ModelFLOPs))
		add("training.hardware_flops", num(t.HardwareFLOPs))
		add("training.mfu", num(t.MFU))
		add("training.hfu", num(t.HFU))
		add("training.time_to_train_s", num(t.TimeToTrain))
		if b := t.Breakdown; b != nil {
			for _, kv := range []struct {
				k string
				v float64
			}{{"compute_s", b.Compute}, {"tp_comm_s", b.TPComm}, {"cp_comm_s", b.CPComm}, {"ep_comm_s", b.EPComm}, {"pp_comm_s", b.PPComm},
				{"bubble_s", b.Bubble}, {"dp_comm_s", b.DPComm}, {"overlap_s", b.Overlap}, {"optimizer_s", b.Optimizer}} {
				add("training.breakdown."+kv.k, num(kv.v))
			}
			if b.Input > 0 {
				add("training.breakdown.input_s", num(b.Input))
			}
		}
	}
	m := j.Memory
	mem := []struct {
		k string
		v *int64
	}{{"weights_bytes", &m.Weights}, {"kv_cache_bytes", &m.KVCache}, {"kv_cache_per_token_bytes", &m.KVPerToken}, {"kv_state_per_sequence_bytes", m.KVState},
		{"activations_bytes", &m.Activations}, {"gradients_bytes", m.Gradients}, {"optimizer_bytes", m.Optimizer},
		{"reserve_bytes", &m.Reserve}, {"total_bytes", &m.Total}, {"capacity_bytes", &m.Capacity}, {"usable_bytes", &m.Usable}, {"headroom_bytes", &m.Headroom}}
	for _, kv := range mem {
		if kv.v != nil {
			add("memory."+kv.k, strconv.FormatInt(*kv.v, 10))
		}
	}
	add("memory.fits", strconv.FormatBool(m.Fits))
	if m.MaxBatch != nil {
		add("memory.max_batch", strconv.Itoa(*m.MaxBatch))
	}
	if m.MaxContext != nil {
		add("memory.max_context", strconv.Itoa(*m.MaxContext))
	}
	for _, p := range j.Phases {
		add("phases."+p.Name+".time_s", num(p.Time))
		add("phases."+p.Name+".bound", p.Bound)
	}
	rows = append(rows, extra...)
	return writeCSV(w, []string{"metric", "value"}, rows)
}

// scenarioRows are the scenario's keys and values for the metric,value
// CSV, as the JSON has them (the keys of its mode only).
func scenarioRows(sc scenarioJSON) [][2]string {
	itoa := strconv.Itoa
	rows := [][2]string{{"batch", itoa(sc.Batch)}}
	if in := sc.InferenceScenario; in != nil {
		if in.InputTokens != nil {
			rows = append(rows, [2]string{"input_tokens", itoa(*in.InputTokens)})
		}
		if in.OutputTokens != nil {
			rows = append(rows, [2]string{"output_tokens", itoa(*in.OutputTokens)})
		}
	}
	if tr := sc.TrainingScenario; tr != nil {
		rows = append(rows, [2]string{"seq", itoa(tr.Seq)}, [2]string{"global_batch", itoa(tr.GlobalBatch)})
	}
	rows = append(rows, [2]string{"tp", itoa(sc.TP)}, [2]string{"pp", itoa(sc.PP)}, [2]string{"dp", itoa(sc.DP)},
		[2]string{"weights", sc.Weights}, [2]string{"act", sc.Act}, [2]string{"kv", sc.KV}, [2]string{"comm", sc.Comm})
	if ts := sc.TrainingSettings; ts != nil {
		rows = append(rows, [2]string{"recompute", ts.Recompute}, [2]string{"optimizer", ts.Optimizer},
			[2]string{"zero", itoa(ts.ZeRO)})
		if ts.Tokens != nil {
			rows = append(rows, [2]string{"tokens", strconv.FormatInt(*ts.Tokens, 10)})
		}
		if ts.Images != nil {
			rows = append(rows, [2]string{"images", strconv.FormatInt(*ts.Images, 10)})
		}
		if ts.Dropout > 0 {
			rows = append(rows, [2]string{"dropout", strconv.FormatFloat(ts.Dropout, 'g', -1, 64)})
		}
		if ts.UnfusedAttention {
			rows = append(rows, [2]string{"unfused_attention", "true"})
		}
	}
	rows = append(rows, [2]string{"exec", sc.Exec})
	if sc.HostOverhead > 0 {
		rows = append(rows, [2]string{"host_overhead_s", num(sc.HostOverhead)})
	}
	if sc.Autocast {
		rows = append(rows, [2]string{"autocast", "true"})
	}
	if sc.Attention != "" {
		rows = append(rows, [2]string{"attention", sc.Attention})
	}
	if sc.LoaderRate > 0 {
		rows = append(rows, [2]string{"loader_samples_per_s", num(sc.LoaderRate)})
	}
	if p := sc.Parallel; p != nil {
		b := strconv.FormatBool
		rows = append(rows, [2]string{"parallel.sp", b(p.SP)}, [2]string{"parallel.cp", itoa(p.CP)}, [2]string{"parallel.ep", itoa(p.EP)},
			[2]string{"parallel.schedule", p.Schedule}, [2]string{"parallel.virtual_stages", itoa(p.VirtualStages)},
			[2]string{"parallel.tp_overlap", b(p.TPOverlap)}, [2]string{"parallel.no_overlap", b(p.NoOverlap)})
		if p.GradDType != "" {
			rows = append(rows, [2]string{"parallel.grad_dtype", p.GradDType})
		}
		if p.EmbeddingSlot {
			rows = append(rows, [2]string{"parallel.embedding_slot", "true"})
		}
		if p.LossSlot {
			rows = append(rows, [2]string{"parallel.loss_slot", "true"})
		}
	}
	return rows
}
