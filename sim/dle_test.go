package sim_test

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/internal/csvtest"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// dleRow is one row of NVIDIA DeepLearningExamples' PyTorch ResNet-50
// v1.5 table (../shared/validation/e2e/dle_resnet50_pytorch.csv).
type dleRow struct {
	mode, system, precision string
	gpus, batch             int
	metric                  string
	value                   float64
}

func readDLE(t *testing.T) []dleRow {
	t.Helper()
	col, recs := csvtest.Read(t, filepath.Join("..", "..", "shared", "validation", "e2e", "dle_resnet50_pytorch.csv"), "system", "mode", "precision", "num_gpus", "batch_size", "metric", "value")
	var rows []dleRow
	for _, r := range recs {
		gpus, _ := strconv.Atoi(r[col["num_gpus"]])
		b, _ := strconv.Atoi(strings.Fields(r[col["batch_size"]])[0])
		v, err := strconv.ParseFloat(r[col["value"]], 64)
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		rows = append(rows, dleRow{mode: r[col["mode"]], system: r[col["system"]], precision: strings.ToLower(r[col["precision"]]), gpus: gpus, batch: b, metric: r[col["metric"]], value: v})
	}
	return rows
}

// dleDevice maps a DLE system to the catalog's device. The DGX-1's
// V100s are the 16 GB and 32 GB SXM2 parts; the catalog has the 32 GB
// one, whose peaks and bandwidth are the same.
func dleDevice(system string) string {
	switch {
	case strings.Contains(system, "A100"):
		return "a100"
	case strings.Contains(system, "V100"):
		return "v100"
	case strings.Contains(system, "T4"):
		return "t4"
	}
	return ""
}

// dleScenario is how DeepLearningExamples runs the row: eager PyTorch;
// FP32 and TF32 keep everything in that type; mixed precision is
// autocast with fp32 weights and fp16 compute (DLE's --amp).
func dleScenario(r dleRow) sim.Scenario {
	sc := sim.Default()
	sc.Exec = sim.ExecEager
	sc.Batch = r.batch
	switch r.precision {
	case "fp32":
		sc.Weights, sc.Act = model.FP32, model.FP32
	case "tf32":
		sc.Weights, sc.Act = model.FP32, model.TF32
	default: // mixed precision
		sc.Weights, sc.Act, sc.Autocast = model.FP32, model.FP16, true
	}
	sc.KV = sc.Act
	if r.mode == "training" {
		sc.Mode = sim.Training
		sc.DP = r.gpus
		sc.Optimizer = sim.SGD // DLE trains ResNet-50 with SGD and momentum
	}
	return sc
}

// TestDLE_resnet50 checks ResNet-50 v1.5 as eager PyTorch runs it
// against NVIDIA DeepLearningExamples' published throughput: training
// images/s on A100 and V100 (1 and 8 GPUs) and inference images/s per
// batch 1–256 on V100 and T4. The host overhead per kernel
// (sim.DefaultHostOverhead) was fitted to one row, V100 FP32 inference
// at batch 1; every other row is held out. Measured 2026-11-24 (the
// figures in the bounds' comments).
func TestDLE_resnet50(t *testing.T) {
	rows := readDLE(t)
	errs := map[string][]float64{}
	for _, r := range rows {
		if r.metric != "throughput" && r.metric != "throughput_avg" {
			continue
		}
		hw := dleDevice(r.system)
		sys, w := load(t, hw, "resnet50", max(r.gpus, 1))
		sc := dleScenario(r)
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatalf("%s %s %s b%d: %v", r.mode, r.system, r.precision, r.batch, err)
		}
		var got float64
		if rep.Training != nil {
			got = rep.Training.SamplesPerSecond
		} else {
			got = rep.Inference.ImagesPerSecond
		}
		e := got/r.value - 1
		errs[r.mode] = append(errs[r.mode], math.Abs(e))
		errs[r.mode+" "+hw+" "+r.precision] = append(errs[r.mode+" "+hw+" "+r.precision], e)
		t.Logf("%-9s %-5s %-15s gpus %d batch %3d: measured %7.0f perfsim %7.0f (%+.1f%%)", r.mode, hw, r.precision, r.gpus, r.batch, r.value, got, 100*e)
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		a := append([]float64(nil), errs[k]...)
		for i := range a {
			a[i] = math.Abs(a[i])
		}
		slices.Sort(a)
		t.Logf("%-28s n=%3d median |err| %5.1f%%  p90 %5.1f%%", k, len(a), 100*a[len(a)/2], 100*a[min(len(a)-1, int(math.Ceil(0.9*float64(len(a))))-1)])
	}
	med := func(k string) float64 {
		a := append([]float64(nil), errs[k]...)
		slices.Sort(a)
		return a[len(a)/2]
	}
	for _, tt := range []struct {
		mode  string
		bound float64
	}{{"training", 0.10}, {"inference", 0.15}} {
		if m := med(tt.mode); m > tt.bound {
			t.Errorf("%s: median |error| %.1f%%, want ≤ %.0f%%", tt.mode, 100*m, 100*tt.bound)
		}
	}
}

// TestLoaderRate: an input pipeline slower than the device bounds a
// CNN's images/s and a training step (GlobalBatch/LoaderRate), and one
// faster than the device changes nothing.
func TestLoaderRate(t *testing.T) {
	sys, w := load(t, "a100", "resnet50", 1)
	for _, tt := range []struct {
		name  string
		rate  float64
		bound bool
	}{{"slow loader", 100, true}, {"fast loader", 1e12, false}} {
		sc := sim.Default()
		sc.Batch = 64
		sc.LoaderRate = tt.rate
		rep, err := sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		if in := rep.Inference; in.LoaderBound != tt.bound || (tt.bound && in.ImagesPerSecond != tt.rate) {
			t.Errorf("%s: inference %.4g images/s, loader-bound %v", tt.name, in.ImagesPerSecond, in.LoaderBound)
		}
		sc.Mode, sc.GlobalBatch = sim.Training, 128
		rep, err = sim.Run(sys, w, sc)
		if err != nil {
			t.Fatal(err)
		}
		if tr := rep.Training; tr.LoaderBound != tt.bound || (tt.bound && math.Abs(float64(tr.StepTime)-128/tt.rate) > 1e-12) {
			t.Errorf("%s: step %v, loader-bound %v", tt.name, tr.StepTime, tr.LoaderBound)
		}
	}
	sc := sim.Default()
	sc.LoaderRate = math.NaN()
	if _, err := sim.Run(sys, w, sc); err == nil || !strings.Contains(err.Error(), "--loader-rate") {
		t.Errorf("NaN loader rate: %v", err)
	}
}
