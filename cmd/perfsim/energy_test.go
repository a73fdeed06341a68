package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestEnergyGolden pins simulate's and sweep's energy and cost output:
// every cost figure is printed with its inputs (price, its source and
// date, PUE, years).
func TestEnergyGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"energy_price.stdout", []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "8", "--price", "2.5/h", "--pue", "1.2"}},
		{"energy_table.stdout", []string{"simulate", "--hw", "h100", "--model", "llama3-70b", "--tp", "4", "--batch", "16", "--prices", "testdata/energy/prices.toml"}},
		{"energy_tco_training.stdout", []string{"simulate", "--hw", "h100", "--model", "gpt3-2.7b", "--mode", "training", "--global-batch", "8", "--tokens", "300e9",
			"--purchase", "25000 USD", "--years", "4", "--energy-price", "0.10/kWh", "--pue", "1.3"}},
		{"energy_power_cap.stdout", []string{"simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "8", "--power-cap", "500W"}},
		{"energy_sweep.stdout", []string{"sweep", "--hw", "h100,b200", "--model", "llama3-8b", "--batch", "1,64", "--price", "2.5/h"}},
		{"energy_serve.stdout", []string{"serve", "--hw", "h100", "--model", "llama3-8b", "--input", "512", "--output", "128", "--requests", "200", "--rate", "10", "--price", "2.5/h"}},
		{"energy_sweep_csv.stdout", []string{"sweep", "--hw", "h100", "--model", "llama3-8b", "--batch", "8", "--prices", "testdata/energy/prices.toml", "--format", "csv"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := perfsim(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, tt.name, out)
		})
	}
}

// TestEnergy_inputsPrinted: a cost figure never comes without what it
// assumed.
func TestEnergy_inputsPrinted(t *testing.T) {
	out, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--prices", "testdata/energy/prices.toml", "--price-name", "own")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"25000 USD per device over 4 years", "0.1 USD/kWh × PUE 1.3", "assumed: an owner's figures, for the example", "2026-01", "testdata/energy/prices.toml:10", "per million output tokens"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestEnergy_json checks the energy and cost objects: the run's energy
// is its kernels' plus its gaps', the facility's the node's times PUE,
// and the cost per request times the batch is the run's.
func TestEnergy_json(t *testing.T) {
	out, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--batch", "4", "--pp", "2", "--format", "json", "--price", "3 EUR/h", "--pue", "1.5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var j struct {
		Energy energyJSON `json:"energy"`
		Cost   struct {
			Currency   string  `json:"currency"`
			Run        float64 `json:"run"`
			PerRequest float64 `json:"per_request"`
			PUE        float64 `json:"pue"`
			Hourly     float64 `json:"price_per_device_hour"`
		} `json:"cost"`
		E2E float64 `json:"e2e_s"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	e := j.Energy
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	if !near(e.GPUJ, e.KernelsJ+e.GapsJ) || e.GapsJ <= 0 {
		t.Errorf("gpu %v ≠ kernels %v + gaps %v (pp 2 has gaps)", e.GPUJ, e.KernelsJ, e.GapsJ)
	}
	if !near(e.FacilityJ, 1.5*e.NodeJ) || e.PUE != 1.5 {
		t.Errorf("facility %v, node %v, pue %v", e.FacilityJ, e.NodeJ, e.PUE)
	}
	if !near(j.Cost.Run, 2*3*j.E2E/3600) || !near(4*j.Cost.PerRequest, j.Cost.Run) || j.Cost.Currency != "EUR" || j.Cost.Hourly != 3 {
		t.Errorf("cost %+v for 2 devices × %v s at 3 EUR/h", j.Cost, j.E2E)
	}
}

// TestEnergy_badInput: each bad value is a usage error naming its flag
// (or the file:line:key of a price table).
func TestEnergy_badInput(t *testing.T) {
	base := []string{"simulate", "--hw", "h100", "--model", "llama3-8b"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--price", "-2.5/h"}, `--price: "-2.5/h" is not a price per hour or per kWh (e.g. "2.5/h", "2.1 EUR/h", "0.12 USD/kWh"): a price must not be negative`},
		{[]string{"--price", "2.5"}, `--price: "2.5" is not a price per hour or per kWh (e.g. "2.5/h", "2.1 EUR/h", "0.12 USD/kWh"): no currency or unit`},
		{[]string{"--price", "2.5 USD"}, `no currency or unit`},
		{[]string{"--price", "0.1/kWh"}, `--price: 0.1 USD/kWh is not a price per device-hour`},
		{[]string{"--price", "2/h", "--pue", "0.9"}, `--pue: must be at least 1 (facility power over IT power), got 0.9`},
		{[]string{"--power-cap", "50W"}, `--power-cap: 50 W is at or below H100 SXM's idle power, 70 W`},
		{[]string{"--power-cap", "800W"}, `--power-cap: 800 W is above H100 SXM's cap, 700 W`},
		{[]string{"--power-cap", "500"}, `"500" is not a power: missing unit`},
		// An explicit 0 W had silently meant no limit.
		{[]string{"--power-cap", "0W"}, `--power-cap: 0 W is no limit (leave the flag out for none)`},
		{[]string{"--purchase", "25000"}, `--purchase: "25000" is not an amount of money with its currency`},
		{[]string{"--purchase", "25000 USD"}, `--years: a TCO needs an amortisation period from 0.00274 to 100 years, got 0`},
		{[]string{"--purchase", "25000 USD", "--years", "4", "--energy-price", "0.1 EUR/kWh"}, `--energy-price: is in EUR, the purchase in USD`},
		{[]string{"--prices", "testdata/energy/prices.toml", "--hw", "b200"}, `--prices: testdata/energy/prices.toml has no price for B200`},
		{[]string{"--price-name", "own"}, `--price-name: needs --prices`},
		// A price of energy outside a TCO had been dropped without a word.
		{[]string{"--energy-price", "0.1/kWh"}, `--energy-price: prices a TCO's energy only (give --purchase and --years with it)`},
		{[]string{"--price", "2.5/h", "--energy-price", "0.5/kWh"}, `--energy-price: prices a TCO's energy only (a price per device-hour includes the energy)`},
		// A PUE of 1e308 printed a facility energy of "+Inf J" (and the
		// JSON failed); --years -1 or NaN without a purchase was dropped.
		{[]string{"--pue", "1e308"}, `--pue: must be at most 4 (facility power over IT power), got 1e+308`},
		{[]string{"--price", "2/h", "--pue", "5"}, `--pue: must be at most 4`},
		{[]string{"--years", "NaN"}, `--years: a TCO needs an amortisation period from 0.00274 to 100 years, got NaN`},
		{[]string{"--years", "-1"}, `--years: a TCO needs an amortisation period from 0.00274 to 100 years, got -1`},
	} {
		out, stderr, code := perfsim(t, append(append([]string(nil), base...), tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q (stdout %d bytes)", tt.args, code, stderr, tt.want, len(out))
		}
	}
}

// TestEnergy_serveLoad: at a light load the GPUs idle between requests,
// so they draw less on average and spend more energy per token than at a
// heavy one; the run's energy over its output tokens is the J per token.
func TestEnergy_serveLoad(t *testing.T) {
	type res struct {
		Energy struct {
			BusyW      float64 `json:"busy_w_per_gpu"`
			IdleW      float64 `json:"idle_w_per_gpu"`
			AverageW   float64 `json:"average_w_per_gpu"`
			GPUJ       float64 `json:"gpu_j"`
			JPerOutTok float64 `json:"j_per_output_token"`
			PerMOutput float64 `json:"cost_per_million_output_tokens"`
		} `json:"energy"`
		Utilization float64 `json:"utilization"`
		DurationS   float64 `json:"duration_s"`
		GPUs        int     `json:"gpus"`
	}
	run := func(rate string) res {
		out, stderr, code := perfsim(t, "serve", "--hw", "h100", "--model", "llama3-8b", "--input", "512", "--output", "128", "--requests", "200", "--rate", rate, "--price", "2.5/h", "--format", "json")
		if code != 0 {
			t.Fatalf("rate %s: exit %d: %s", rate, code, stderr)
		}
		var r res
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	light, heavy := run("0.5"), run("50")
	if !(light.Utilization < heavy.Utilization && light.Energy.AverageW < heavy.Energy.AverageW && light.Energy.JPerOutTok > heavy.Energy.JPerOutTok) {
		t.Errorf("light load %+v, heavy %+v: want less power and more J per token at the light load", light, heavy)
	}
	for _, r := range []res{light, heavy} {
		e := r.Energy
		if want := r.Utilization*e.BusyW + (1-r.Utilization)*e.IdleW; math.Abs(e.AverageW-want) > 1e-9*want {
			t.Errorf("average %v W, want %v", e.AverageW, want)
		}
		if want := e.AverageW * r.DurationS * float64(r.GPUs); math.Abs(e.GPUJ-want) > 1e-9*want {
			t.Errorf("gpu %v J, want %v", e.GPUJ, want)
		}
		if math.Abs(e.JPerOutTok*200*128-e.GPUJ) > 1e-6*e.GPUJ || e.PerMOutput <= 0 {
			t.Errorf("J per output token %v × %d tokens ≠ %v J, or no cost", e.JPerOutTok, 200*128, e.GPUJ)
		}
	}
}

// TestEnergy_tcoPricesTheFacilityEnergy: a TCO's run costs the amortised
// purchase over the run plus the facility energy the table and JSON
// print, at the kWh price, whatever the model. An image model's had
// priced only the rest of the node: resnet50 at batch 256 on an H100
// cost 3.212e-6 USD at 0.10 USD/kWh where its 11.55 J facility energy
// and 15.76 ms at 25,000 USD over 4 years make 3.44e-6 (at 10 USD/kWh
// 1.21e-5 against 3.52e-5), the 8.3 J its GPU drew left out; and it
// priced "per million input tokens" that a CNN does not read.
func TestEnergy_tcoPricesTheFacilityEnergy(t *testing.T) {
	for _, args := range [][]string{
		{"--model", "resnet50", "--batch", "256"},
		{"--model", "vit-b16", "--batch", "32"},
		{"--model", "bert-large", "--batch", "8", "--input", "384"},
		{"--model", "llama3-8b", "--batch", "8"},
		{"--model", "llama3-8b", "--batch", "4", "--pp", "2", "--exec", "eager"},
		{"--model", "gpt3-1.3b", "--mode", "training", "--global-batch", "4", "--tokens", "1e9"},
	} {
		out, stderr, code := perfsim(t, append([]string{"simulate", "--hw", "h100", "--format", "json", "--purchase", "25000 USD", "--years", "4", "--energy-price", "10/kWh", "--pue", "1.3"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var j struct {
			Devices int      `json:"devices"`
			E2E     *float64 `json:"e2e_s"`
			TTFT    *float64 `json:"ttft_s"`
			Train   *struct {
				Step float64 `json:"step_time_s"`
			} `json:"training"`
			Energy energyJSON `json:"energy"`
			Cost   costJSON   `json:"cost"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		var wall float64
		switch {
		case j.Train != nil:
			wall = j.Train.Step
		case j.E2E != nil:
			wall = *j.E2E
		case j.TTFT != nil:
			wall = *j.TTFT
		}
		want := float64(j.Devices)*25000*wall/(4*365.25*86400) + j.Energy.FacilityJ/3.6e6*10
		if math.Abs(j.Cost.Run-want) > 1e-9*want || wall == 0 {
			t.Errorf("%v: run %.6g USD, want %.6g (the purchase over %.6g s and %.6g J of facility energy at 10 USD/kWh)", args, j.Cost.Run, want, wall, j.Energy.FacilityJ)
		}
		if reads := args[1] == "bert-large" || args[1] == "llama3-8b"; (j.Cost.PerMInput != nil) != reads {
			t.Errorf("%v: per million input tokens %v, want it only where the model reads tokens", args, j.Cost.PerMInput)
		}
	}
}

// TestEnergy_trainingPerToken: a training run says its energy per token
// trained and its cost per million tokens (what a capacity planner
// compares across layouts and chips), each the step's over the step's
// tokens, in the table, the JSON and the CSV; an image model's energy
// per image trained.
func TestEnergy_trainingPerToken(t *testing.T) {
	args := []string{"simulate", "--hw", "h100", "--model", "gpt3-1.3b", "--mode", "training", "--global-batch", "8", "--seq", "2048", "--price", "2.5/h"}
	out, stderr, code := perfsim(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var j struct {
		Training struct {
			Step   float64 `json:"step_time_s"`
			Tokens float64 `json:"tokens_per_s"`
		} `json:"training"`
		Energy struct {
			GPUJ      float64 `json:"gpu_j"`
			JPerToken float64 `json:"j_per_token"`
		} `json:"energy"`
		Cost struct {
			Run     float64  `json:"run"`
			PerMTok *float64 `json:"per_million_tokens"`
		} `json:"cost"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	toks := 8 * 2048.0
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	if !near(j.Energy.JPerToken*toks, j.Energy.GPUJ) || j.Energy.JPerToken <= 0 {
		t.Errorf("j_per_token %v × %v tokens, want the step's %v J", j.Energy.JPerToken, toks, j.Energy.GPUJ)
	}
	if j.Cost.PerMTok == nil || !near(*j.Cost.PerMTok*toks/1e6, j.Cost.Run) {
		t.Errorf("per_million_tokens %v, want the step's %v USD over %v tokens", j.Cost.PerMTok, j.Cost.Run, toks)
	}
	out, _, _ = perfsim(t, args...)
	for _, want := range []string{"per token", "per million tokens"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the table:\n%s", want, out)
		}
	}
	out, _, _ = perfsim(t, append(args, "--format", "csv")...)
	for _, want := range []string{"energy.j_per_token,", "cost.per_million_tokens,"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the CSV:\n%s", want, out)
		}
	}
	out, stderr, code = perfsim(t, "simulate", "--hw", "h100", "--model", "resnet50", "--mode", "training", "--batch", "64", "--format", "json")
	var ji struct {
		Energy struct {
			GPUJ      float64 `json:"gpu_j"`
			JPerImage float64 `json:"j_per_image"`
		} `json:"energy"`
	}
	if err := json.Unmarshal([]byte(out), &ji); code != 0 || err != nil {
		t.Fatalf("resnet50: exit %d, %v: %s", code, err, stderr)
	}
	if !near(ji.Energy.JPerImage*64, ji.Energy.GPUJ) {
		t.Errorf("resnet50: j_per_image %v × 64, want the step's %v J", ji.Energy.JPerImage, ji.Energy.GPUJ)
	}
}

// TestSimulateCSV_trainingKeys: simulate's CSV has the JSON's keys,
// dotted (docs/simulate.md), for a training run too: the step's breakdown,
// its model and hardware FLOPs, the kernels' and the waits' energy, the
// node's energy to train and the cost per step had been left out of it
// (to_train_gpu_mwh and to_train_facility_mwh were there, the node's
// between them not).
func TestSimulateCSV_trainingKeys(t *testing.T) {
	args := []string{"simulate", "--hw", "h100", "--model", "gpt3-1.3b", "--mode", "training", "--global-batch", "8", "--pp", "2", "--dp", "2", "--tokens", "1e9", "--price", "2/h"}
	js, stderr, code := perfsim(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	csv, stderr, code := perfsim(t, append(args, "--format", "csv")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(js), &j); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(csv), "\n")[1:] {
		k, v, _ := strings.Cut(line, ",")
		rows[k] = v
	}
	want := map[string]float64{}
	var flat func(prefix string, v any)
	flat = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				flat(prefix+"."+k, e)
			}
		case float64:
			want[prefix] = x
		}
	}
	flat("training", j["training"])
	e, c := j["energy"].(map[string]any), j["cost"].(map[string]any)
	for _, k := range []string{"gpu_j", "kernels_j", "gaps_j", "node_j", "facility_j", "to_train_gpu_mwh", "to_train_node_mwh", "to_train_facility_mwh", "j_per_token"} {
		want["energy."+k] = e[k].(float64)
	}
	for _, k := range []string{"run", "per_step", "per_million_tokens", "to_train"} {
		want["cost."+k] = c[k].(float64)
	}
	for k, v := range want {
		got, ok := rows[k]
		if !ok {
			t.Errorf("CSV has no %s (JSON %v)", k, v)
			continue
		}
		if f, err := strconv.ParseFloat(got, 64); err != nil || math.Abs(f-v) > 1e-12*math.Abs(v) {
			t.Errorf("CSV %s = %s, JSON %v", k, got, v)
		}
	}
}

// TestEnergy_tableOverridesSaid: a flag that overrides a price table's
// entry (--years, --energy-price, --pue) is said beside the figures: "PUE
// 2" had been printed with only the table's file:line and source, which
// gives 1.3.
func TestEnergy_tableOverridesSaid(t *testing.T) {
	out, stderr, code := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--prices", "testdata/energy/prices.toml", "--price-name", "own",
		"--pue", "2", "--years", "10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"over 10 years", "PUE 2", "--years", "--pue", "testdata/energy/prices.toml:10"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if out, _, _ := perfsim(t, "simulate", "--hw", "h100", "--model", "llama3-8b", "--prices", "testdata/energy/prices.toml", "--price-name", "own"); strings.Contains(out, "command line") {
		t.Errorf("the table alone said the command line:\n%s", out)
	}
}
