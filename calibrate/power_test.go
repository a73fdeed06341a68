package calibrate_test

import (
	"flag"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/calibrate"
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/internal/simload"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
	"github.com/perfsim/perfsim/workloads"
)

var powerVerbose = flag.Bool("power.verbose", false, "print every power validation row")

// adapter is a model as the simulator takes it (internal/simload, as cmd has it).
type adapter = simload.Workload

// powerDir returns ../shared/validation/power, or skips.
func powerDir(t testing.TB) string {
	t.Helper()
	return csvtest.ValidationDir(t, "power")
}

func num(t testing.TB, row map[string]string, k string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[k], 64)
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return v
}

// The dense Llama models of ML.ENERGY v3 the catalog describes with the
// same architecture (Llama 3.1 and 3.3 share Llama 3's shapes; the 3.1
// 405B has its own file).
var mlenergyModels = map[string]string{
	"meta-llama/Llama-3.1-8B-Instruct":       "llama3-8b",
	"meta-llama/Llama-3.1-70B-Instruct":      "llama3-70b",
	"meta-llama/Llama-3.3-70B-Instruct":      "llama3-70b",
	"meta-llama/Llama-3.1-405B-Instruct":     "llama3.1-405b",
	"meta-llama/Llama-3.1-405B-Instruct-FP8": "llama3.1-405b",
}

var mlenergyDevices = map[string]string{"H100": "h100-sxm", "B200": "b200"}

// hostBound are the model-device pairs whose measured power the decode
// kernels cannot explain, left out of the fits and reported apart: on the
// B200, Llama-3.1-8B draws less as the batch grows (667 W at 16, 449 W at
// 64, 691 W at 768), which no GPU-side load does; at 2–3 ms per step the
// engine's CPU work between steps (scheduling, sampling, detokenisation)
// leaves the GPU waiting, and perfsim does not model the host.
var hostBound = map[string]string{
	"B200 meta-llama/Llama-3.1-8B-Instruct": "power falls with batch: the engine's host work, not the GPU, sets it",
}

// lmArenaInput is the prompt length we assume for lm-arena-chat, whose
// input lengths the leaderboard files do not carry (README: "short chat
// prompts"): an assumption, and the largest one in this validation.
const lmArenaInput = 512

// mlenergyPoints turns the ML.ENERGY v3 rows of one device into power
// points: one decode step at the measured mean batch and the mean context
// (prompt plus half the mean output), priced by sim on the catalog device;
// the measured figure is the per-GPU mean power of the steady state.
func mlenergyPoints(t testing.TB, dir, gpu string) (*hardware.Device, []calibrate.PowerPoint) {
	dev, err := hardware.Resolve(mlenergyDevices[gpu])
	if err != nil {
		t.Fatal(err)
	}
	var pts []calibrate.PowerPoint
	for _, row := range csvtest.Rows(t, filepath.Join(dir, "mlenergy_v3_llm_inference.csv"), "gpu_model", "model_id", "task", "weight_precision") {
		name, ok := mlenergyModels[row["model_id"]]
		if !ok || row["gpu_model"] != gpu || row["task"] != "lm-arena-chat" {
			continue
		}
		m, err := workloads.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		tp := int(num(t, row, "tensor_parallel"))
		b := max(1, int(math.Round(num(t, row, "avg_batch_size"))))
		loads, _, err := steadyStep(dev, m, tp, b, lmArenaInput, num(t, row, "avg_output_len_tokens"), row["weight_precision"] == "fp8")
		if err != nil {
			t.Fatalf("%s %s tp %d batch %d: %v", gpu, name, tp, b, err)
		}
		pts = append(pts, calibrate.PowerPoint{
			Group:    row["model_id"],
			Measured: model.Watts(num(t, row, "derived_avg_power_watts_per_gpu")),
			Loads:    loads,
		})
	}
	return dev, pts
}

// TestPower_mlenergyV3 fits the power shares of the H100 and the B200 to
// ML.ENERGY v3 (GPU-only energy from NVML counters, steady-state serving
// of Llama models on lm-arena-chat) and scores each model left out: the
// held-out median |error| must stay within 15% (a source measuring the
// GPU alone), and the hardware files' shares must be the fit's.
func TestPower_mlenergyV3(t *testing.T) {
	dir := powerDir(t)
	for _, gpu := range []string{"H100", "B200"} {
		t.Run(gpu, func(t *testing.T) {
			dev, all := mlenergyPoints(t, dir, gpu)
			var pts, apart []calibrate.PowerPoint
			for _, pt := range all {
				if hostBound[gpu+" "+pt.Group] != "" {
					apart = append(apart, pt)
				} else {
					pts = append(pts, pt)
				}
			}
			if len(pts) < 20 {
				t.Fatalf("only %d points", len(pts))
			}
			pm, sc, err := calibrate.ScorePower(dev.Power.Idle, dev.Power.Cap, pts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d points, %d models; fit static %.3f compute %.3f memory %.3f; in-sample median |err| %.1f%% max %.1f%%; held out (a model at a time) median %.1f%% max %.1f%% bias %+.1f%%",
				gpu, sc.Points, sc.HeldOutGroups, pm.Static, pm.Compute, pm.Memory, 100*sc.Median, 100*sc.Max, 100*sc.HeldOutMedian, 100*sc.HeldOutMax, 100*sc.HeldOutSigned)
			groups := make([]string, 0, len(sc.HeldOutByGroup))
			for g := range sc.HeldOutByGroup {
				groups = append(groups, g)
			}
			sort.Strings(groups)
			for _, g := range groups {
				t.Logf("  held out %s: median |err| %.1f%%", g, 100*sc.HeldOutByGroup[g])
			}
			if len(apart) > 0 {
				var errs []float64
				for _, pt := range apart {
					errs = append(errs, math.Abs(float64(calibrate.PredictPower(pm, pt)/pt.Measured)-1))
				}
				sort.Float64s(errs)
				t.Logf("  left out of the fit (%s): %d points, median |err| %.1f%%", hostBound[gpu+" "+apart[0].Group], len(apart), 100*errs[len(errs)/2])
			}
			if *powerVerbose {
				for _, pt := range all {
					t.Logf("  %s measured %.0f W predicted %.0f W", strings.TrimPrefix(pt.Group, "meta-llama/"), float64(pt.Measured), float64(calibrate.PredictPower(pm, pt)))
				}
			}
			if sc.HeldOutMedian > 0.15 {
				t.Errorf("held-out median |error| %.1f%% > 15%%", 100*sc.HeldOutMedian)
			}
			for _, s := range []struct {
				key       string
				file, fit float64
			}{{"static", dev.Power.Static, pm.Static}, {"compute", dev.Power.Compute, pm.Compute}, {"memory", dev.Power.Memory, pm.Memory}} {
				if math.Abs(s.file-s.fit) > 0.03 {
					t.Errorf("%s power.%s is %.3f; the fit gives %.3f (update hardware/devices)", dev.Name, s.key, s.file, s.fit)
				}
			}
		})
	}
}

// steadyStep returns the kernel loads of one step of a serving engine's
// steady state on dev: a decode step of batch b at the mean context (the
// prompt plus half the mean output), plus the share of a prefill that
// b/out requests finishing per step bring in (as many start). fits is
// whether perfsim finds the batch fits in memory.
func steadyStep(dev *hardware.Device, m *workloads.Model, tp, b, prompt int, out float64, fp8 bool) (loads []calibrate.KernelLoad, fits bool, err error) {
	sc := sim.Default()
	sc.Batch, sc.TP = b, tp
	sc.Input, sc.Output = prompt+int(out/2), 2
	if fp8 {
		sc.Weights, sc.Act = model.FP8, model.FP8
	}
	per := min(tp, max(1, dev.Intra.DevicesPerNode))
	sys, err := hardware.NewSystem(dev, per, (tp+per-1)/per)
	if err != nil {
		return nil, false, err
	}
	rep, err := sim.Run(sys, adapter{M: m}, sc)
	if err != nil {
		return nil, false, err
	}
	pre := sc
	pre.Batch, pre.Input = 1, prompt
	prep, err := sim.Run(sys, adapter{M: m}, pre)
	if err != nil {
		return nil, false, err
	}
	p := dev.Processor()
	loads = calibrate.Loads(&p, rep.Inference.Decode)
	for _, l := range calibrate.Loads(&p, &prep.Inference.Prefill) {
		l.Time = model.Seconds(float64(l.Time) * float64(b) / out)
		loads = append(loads, l)
	}
	return loads, rep.Memory.Fits, nil
}
