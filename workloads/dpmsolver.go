package workloads

import (
	"fmt"

	"github.com/perfsim/perfsim/model"
)

// GuidedDPMSolverStep returns the eager kernels a diffusers
// text-to-image pipeline runs around one transformer call of images
// images under classifier-free guidance, with a DPM-Solver++ multistep
// scheduler of the given order (1 or 2) predicting the noise: latent
// elements per image (4×128×128 for PixArt-Σ at 1024²) and out elements
// per image of the transformer's output (8×128×128: noise and learned
// variance). Each is its own memory pass in PyTorch; the scheduler's
// scalars (sigmas, alphas, h) are 0-d tensors on the host
// (set_timesteps moves sigmas to the CPU), so only the passes over the
// latents run on the device. In act, except where the scheduler upcasts
// to fp32.
//
// The pipeline (xDiT 0.4.5 xfuser/model_executor/pipelines/
// pipeline_pixart_sigma.py, xFuserPixArtSigmaPipeline._backbone_forward,
// as diffusers' PixArtSigmaPipeline.__call__):
//
//	torch.cat([latents] * 2)                                  copy, N → 2N
//	noise_pred_uncond + guidance_scale * (text − uncond)      sub, mul, add over M
//	latents.chunk(2, dim=1)[0]                                a view
//
// The scheduler (diffusers schedulers/scheduling_dpmsolver_multistep.py,
// DPMSolverMultistepScheduler.step; PixArt's scheduler_config.json:
// algorithm_type dpmsolver++, solver_order 2, solver_type midpoint,
// prediction_type epsilon, thresholding false):
//
//	convert_model_output: (sample − sigma_t·eps) / alpha_t    mul, sub, div (act)
//	sample.to(torch.float32)                                  cast
//	order 1, dpm_solver_first_order_update:
//	  (sigma_t/sigma_s)·sample − (alpha_t·(e^−h − 1))·x0      mul (fp32), mul (act), sub (→ fp32)
//	order 2, multistep_dpm_solver_second_order_update (midpoint):
//	  D1 = (1/r0)·(m0 − m1)                                   sub, mul (act)
//	  (sigma_t/sigma_s0)·sample − (…)·D0 − 0.5·(…)·D1        mul (fp32), mul, mul (act), sub, sub (→ fp32)
//	prev_sample.to(model_output.dtype)                        cast
//
// N = images × latent, M = images × out. Each pass counts one FLOP per
// element written.
func GuidedDPMSolverStep(images, latent, out, order int, act model.DType) ([]model.Op, error) {
	if images <= 0 || latent <= 0 || out <= 0 {
		return nil, fmt.Errorf("guided DPM-Solver step: images %d, latent %d and out %d elements must be positive", images, latent, out)
	}
	if order != 1 && order != 2 {
		return nil, fmt.Errorf("guided DPM-Solver step: order %d (want 1 or 2)", order)
	}
	n, m := float64(images)*float64(latent), float64(images)*float64(out)
	const f32 = model.FP32
	pass := func(kind string, elems float64, read, written model.Bytes) model.Kernel {
		return model.Elementwise{Kind: kind, Elements: elems, Work: model.FLOPs(elems), Read: read, Written: written}
	}
	a := func(x float64) model.Bytes { return act.Bytes(x) }
	w := func(x float64) model.Bytes { return f32.Bytes(x) }
	ops := []model.Op{
		{Name: "guidance.cat", Stage: "guidance", Class: model.ClassElementwise, Count: 1, Kernel: pass("copy", 2*n, a(n), a(2*n))},
		{Name: "guidance.sub", Stage: "guidance", Class: model.ClassElementwise, Count: 1, Kernel: pass("sub", m, a(2*m), a(m))},
		{Name: "guidance.scale", Stage: "guidance", Class: model.ClassElementwise, Count: 1, Kernel: pass("mul", m, a(m), a(m))},
		{Name: "guidance.add", Stage: "guidance", Class: model.ClassElementwise, Count: 1, Kernel: pass("add", m, a(2*m), a(m))},
		// x0 = (sample − sigma_t·eps)/alpha_t.
		{Name: "scheduler.x0_mul", Stage: "scheduler", Class: model.ClassElementwise, Count: 1, Kernel: pass("mul", n, a(n), a(n))},
		{Name: "scheduler.x0_sub", Stage: "scheduler", Class: model.ClassElementwise, Count: 1, Kernel: pass("sub", n, a(2*n), a(n))},
		{Name: "scheduler.x0_div", Stage: "scheduler", Class: model.ClassElementwise, Count: 1, Kernel: pass("div", n, a(n), a(n))},
		{Name: "scheduler.upcast", Stage: "scheduler", Class: model.ClassElementwise, Count: 1, Kernel: pass("cast", n, a(n), w(n))},
		{Name: "scheduler.sample", Stage: "scheduler", Class: model.ClassElementwise, Count: 1, Kernel: pass("mul", n, w(n), w(n))},
	}
	// The data terms in act: x0 scaled (order 1); m0 − m1, its 1/r0, the
	// D0 and D1 terms (order 2). The fp32 sample less each term.
	terms, acts := 1, 1
	if order == 2 {
		terms, acts = 2, 3
		ops = append(ops, model.Op{Name: "scheduler.d1_sub", Stage: "scheduler", Class: model.ClassElementwise, Count: 1, Kernel: pass("sub", n, a(2*n), a(n))})
	}
	ops = append(ops,
		model.Op{Name: "scheduler.terms", Stage: "scheduler", Class: model.ClassElementwise, Count: acts, Kernel: pass("mul", n, a(n), a(n))},
		model.Op{Name: "scheduler.update", Stage: "scheduler", Class: model.ClassElementwise, Count: terms, Kernel: pass("sub", n, w(n)+a(n), w(n))},
		model.Op{Name: "scheduler.downcast", Stage: "scheduler", Class: model.ClassElementwise, Count: 1, Kernel: pass("cast", n, w(n), a(n))},
	)
	return ops, nil
}
