package calibrate_test

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

// A pipelinePart is one model of a text-to-image pipeline: calls per
// generation, each over perPrompt sequences or images per prompt (2
// under classifier-free guidance), of seq tokens for a transformer. A
// part with a step order is instead the pipeline's and the scheduler's
// eager kernels around one call of that model, at perPrompt images a
// prompt (workloads.GuidedDPMSolverStep of that order).
type pipelinePart struct {
	model                 string
	calls, perPrompt, seq int
	step                  int
}

// pixartLatent and pixartOut are the elements per image of PixArt-Σ's
// latents at 1024² and of its transformer's output: in_channels 4 and
// out_channels 8 (noise and learned variance) over sample_size 128²
// (transformer/config.json of PixArt-alpha/PixArt-Sigma-XL-2-1024-MS).
const pixartLatent, pixartOut = 4 * 128 * 128, 8 * 128 * 128

// stepWorkload is the kernels around one transformer call as a
// sim.Workload: the transformer's shape, the guided DPM-Solver step's
// ops at the phase's batch (images). It delegates rather than embeds, so
// that it does not claim the transformer's PureOps.
type stepWorkload struct {
	base  adapter
	order int
}

func (w stepWorkload) Name() string          { return w.base.Name() + ".step" }
func (w stepWorkload) Params() float64       { return w.base.Params() }
func (w stepWorkload) ActiveParams() float64 { return w.base.ActiveParams() }
func (w stepWorkload) KVBytesPerToken(kv model.DType) model.Bytes {
	return w.base.KVBytesPerToken(kv)
}
func (w stepWorkload) WeightBytes(d model.DType) model.Bytes { return w.base.WeightBytes(d) }
func (w stepWorkload) ActivationBytes(b int, d model.DType) model.Bytes {
	return w.base.ActivationBytes(b, d)
}
func (w stepWorkload) Shape() sim.Shape { return w.base.Shape() }
func (w stepWorkload) Ops(ph sim.Phase) ([]model.Op, error) {
	return workloads.GuidedDPMSolverStep(ph.Batch, pixartLatent, pixartOut, w.order, ph.Act)
}

// pixartPipeline is PixArt-Σ's text-to-image pipeline as ML.ENERGY v3
// ran it (ml-energy/benchmark mlenergy/diffusion/benchmark.py: xDiT's
// xFuserPixArtSigmaPipeline in bf16 without torch.compile, the model's
// default guidance and max_sequence_length, output_type "pil";
// workloads.py: 20 inference steps at 1024x1024). diffusers'
// PixArtSigmaPipeline defaults guidance_scale to 4.5, so every step runs
// the transformer on the prompt and the empty negative prompt, and it
// pads both to max_sequence_length 300 before T5 encodes them; the
// latents (128x128) are decoded once by the SDXL VAE
// (PixArt-alpha/pixart_sigma_sdxlvae_T5_diffusers). The scheduler's
// update between steps and the guidance combine are each step's eager
// passes over the latents (workloads.GuidedDPMSolverStep): 20 steps of
// DPM-Solver++ 2M, whose first and last are first-order (solver_order 2
// needs one earlier output; the last step, with final_sigmas_type
// "zero", the scheduler's default, is lower_order_final). diffusers'
// PixArtSigmaPipeline.encode_prompt runs T5 twice, on the prompts and
// on the negative prompts, each at the batch. Its attention is FlashAttention-2: the benchmark's setup
// installs flash_attn 2.8.1 (ml-energy/benchmark docs/running-benchmarks.md
// @ dd02f57, "Extra dependencies for the diffusion benchmark"), and
// xfuser 0.4.5's xFuserAttnProcessor2_0 calls flash_attn_func whenever
// flash_attn is installed and the sequence is not split across GPUs
// (xfuser/model_executor/layers/attention_processor.py @ 39d2ee0). It
// wraps only the self-attention (attn1: models/base_model.py
// _wrap_layers with submodule_name_to_wrap ["attn1"]); the
// cross-attention keeps diffusers' AttnProcessor2_0, SDPA with the
// caption's mask, which PyTorch runs on its memory-efficient kernel, not
// flash: it is priced as FlashAttention-2 over all 300 tokens all the
// same, for want of a measured rate of that kernel. T5's own attention, which HF transformers runs as
// separate matrix products around its relative position bias, is priced
// as HF runs it (t5-v1.1-xxl-encoder's position "relative").
var pixartPipeline = []pipelinePart{
	{"t5-v1.1-xxl-encoder", 2, 1, 300, 0},
	{"pixart-sigma-xl2-transformer", 20, 2, 0, 0},
	{"pixart-sigma-xl2-transformer", 2, 1, 0, 1}, // steps 1 and 20
	{"pixart-sigma-xl2-transformer", 18, 1, 0, 2},
	{"sdxl-vae-decoder", 1, 1, 0, 0},
}

// A pipelineCost is a batch's generation priced part by part.
type pipelineCost struct {
	Time   model.Seconds
	Energy model.Joules // GPU boundary: kernels and the waits between them
	Parts  []model.Seconds
}

// pricePipeline prices one batch of prompts through parts on sys as
// eager PyTorch runs them (every kernel dispatched from the host, the
// attention FlashAttention-2's), each part's energy from the device's
// power model as sim applies it.
func pricePipeline(sys *hardware.System, parts []pipelinePart, batch int) (pipelineCost, error) {
	var c pipelineCost
	for _, p := range parts {
		m, err := workloads.Resolve(p.model)
		if err != nil {
			return c, err
		}
		sc := sim.Default()
		sc.Batch, sc.Exec, sc.Attention = batch*p.perPrompt, sim.ExecEager, sim.AttentionFA2
		if p.seq > 0 {
			sc.Input, sc.Output = p.seq, 1
		}
		var w sim.Workload = adapter{M: m}
		if p.step > 0 {
			w = stepWorkload{adapter{M: m}, p.step}
		}
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			return c, fmt.Errorf("%s: %w", p.model, err)
		}
		if rep.Energy == nil {
			return c, fmt.Errorf("%s: %s has no power model", p.model, sys.Device.Name)
		}
		// A one-token prompt is the whole forward pass: the prefill, the
		// run's whole wall time.
		if rep.Energy.Wall != rep.Inference.Prefill.Time {
			return c, fmt.Errorf("%s: the run lasts %v, its forward pass %v", p.model, rep.Energy.Wall, rep.Inference.Prefill.Time)
		}
		t := model.Seconds(p.calls) * rep.Inference.Prefill.Time
		c.Parts = append(c.Parts, t)
		c.Time += t
		c.Energy += model.Joules(float64(p.calls) * float64(rep.Energy.GPU))
	}
	return c, nil
}

// TestPower_mlenergyV3diffusion scores the power model, fitted on LLM
// serving alone, on compute-bound work it never saw: ML.ENERGY v3's
// text-to-image runs of PixArt-Σ XL/2 at 1024×1024 on one GPU (xDiT; GPU
// energy from NVML counters over the whole generation). The whole
// pipeline is priced (pixartPipeline): T5 once a prompt, the transformer
// 20 times at twice the batch, the VAE once an image. The power is the
// energy the model gives over the time it gives, against the measured
// mean power; the time and the energy per image are reported beside it.
// The other models of the file (SD3.5's and FLUX's joint attention,
// SANA's linear attention, the video models) are not in the catalog.
func TestPower_mlenergyV3diffusion(t *testing.T) {
	dir := powerDir(t)
	type errs struct{ power, time, energy []float64 }
	byGPU := map[string]*errs{}
	for _, row := range csvtest.Rows(t, filepath.Join(dir, "mlenergy_v3_diffusion_inference.csv"), "gpu_model", "model_id", "num_gpus", "height", "width", "inference_steps") {
		if row["model_id"] != "PixArt-alpha/PixArt-Sigma-XL-2-1024-MS" || row["num_gpus"] != "1" || row["height"] != "1024" || row["width"] != "1024" {
			continue
		}
		if row["inference_steps"] != "20" {
			t.Fatalf("%s: %s inference steps; the pipeline prices 20", row["gpu_model"], row["inference_steps"])
		}
		gpu := row["gpu_model"]
		dev, err := hardware.Resolve(mlenergyDevices[gpu])
		if err != nil {
			t.Fatal(err)
		}
		sys, err := hardware.NewSystem(dev, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		b := int(num(t, row, "batch_size"))
		c, err := pricePipeline(sys, pixartPipeline, b)
		if err != nil {
			t.Fatal(err)
		}
		pw := float64(c.Energy) / float64(c.Time)
		perImage := float64(c.Energy) / float64(b)
		mp, mt, me := num(t, row, "derived_avg_power_watts_per_gpu"), num(t, row, "batch_latency_s"), num(t, row, "energy_per_generation_joules")
		e := byGPU[gpu]
		if e == nil {
			e = &errs{}
			byGPU[gpu] = e
		}
		e.power = append(e.power, math.Abs(pw/mp-1))
		e.time = append(e.time, math.Abs(float64(c.Time)/mt-1))
		e.energy = append(e.energy, math.Abs(perImage/me-1))
		t.Logf("%s batch %2d: power %.0f W vs %.0f W (%+.1f%%); time %.2f s vs %.2f s (%+.1f%%; T5 %.2f, transformer %.2f, steps %.2f, VAE %.2f); energy %.0f J/image vs %.0f (%+.1f%%)",
			gpu, b, pw, mp, 100*(pw/mp-1), float64(c.Time), mt, 100*(float64(c.Time)/mt-1),
			float64(c.Parts[0]), float64(c.Parts[1]), float64(c.Parts[2]+c.Parts[3]), float64(c.Parts[4]), perImage, me, 100*(perImage/me-1))
	}
	if len(byGPU) != 2 {
		t.Fatalf("rows for %d devices, want the H100 and the B200", len(byGPU))
	}
	med := func(xs []float64) float64 {
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	for _, gpu := range []string{"H100", "B200"} {
		e := byGPU[gpu]
		p := med(e.power)
		t.Logf("%s: %d rows, median |error| power %.1f%%, time %.1f%%, energy per image %.1f%%", gpu, len(e.power), 100*p, 100*med(e.time), 100*med(e.energy))
		// Both devices are held to 15%. The B200 met it only once the whole
		// pipeline was priced as it runs (T5, guidance, the scheduler, the
		// VAE and the small eager kernels: 25.7% with the DiT blocks alone,
		// 14.4% with everything; docs/energy.md); nothing here was refitted.
		if p > 0.15 {
			t.Errorf("%s: median |error| of power %.1f%% > 15%% (a source measuring the GPU alone)", gpu, 100*p)
		}
	}
}
