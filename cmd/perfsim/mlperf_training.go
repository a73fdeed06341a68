package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/mlperf"
)

// mlperfTrainingJSON is one row of perfsim mlperf --suite training.
type mlperfTrainingJSON struct {
	Benchmark   string   `json:"benchmark"`
	Round       string   `json:"round"`
	Model       string   `json:"model,omitempty"`
	GlobalBatch int      `json:"global_batch,omitempty"`
	Samples     float64  `json:"samples_to_converge,omitempty"`
	Epochs      float64  `json:"epochs_to_converge,omitempty"`
	Steps       int      `json:"steps,omitempty"`
	Evals       int      `json:"evaluations,omitempty"`
	StepTime    float64  `json:"step_time_s,omitempty"`
	Throughput  float64  `json:"samples_per_s,omitempty"`
	EvalTime    *float64 `json:"eval_time_s,omitempty"` // nil: counted, not priced (Benchmark.EvalLacks)
	TimeToTrain *float64 `json:"time_to_train_s"`
	RCPSource   string   `json:"rcp_source,omitempty"`
	EvalSource  string   `json:"eval_source,omitempty"`
	Layout      string   `json:"layout_source,omitempty"`
	Note        string   `json:"note,omitempty"`
}

type mlperfTrainingReport struct {
	Schema   string               `json:"schema"`
	System   string               `json:"system,omitempty"`
	Hardware string               `json:"hardware"`
	GPUs     int                  `json:"gpus"`
	Results  []mlperfTrainingJSON `json:"results"`
}

// runMLPerfTraining prints the MLPerf Training suite's times to train.
func runMLPerfTraining(stdout io.Writer, f format, sys *hardware.System, bench string, gbs int, resolve mlperf.Resolver) error {
	suite := mlperf.TrainingSuite()
	if bench != "" {
		b, err := mlperf.FindTraining(bench)
		if err != nil {
			return usagef("--benchmark: %v", err)
		}
		suite = []mlperf.TrainingBenchmark{b}
	}
	rep := mlperfTrainingReport{Schema: "perfsim.mlperf-training/v1", System: sys.Name, Hardware: sys.Device.Name, GPUs: sys.Devices()}
	var results []mlperf.TrainingResult
	for _, b := range suite {
		g := gbs
		if g == 0 {
			g = b.DefaultBatch
		}
		r := mlperf.TimeToTrain(sys, b, g, resolve)
		results = append(results, r)
		j := mlperfTrainingJSON{Benchmark: b.Name, Round: b.Round, Model: b.Model, Note: r.Note, RCPSource: b.RCPSource, EvalSource: b.EvalSource, Layout: b.LayoutSource}
		if r.Total > 0 {
			t := float64(r.Total)
			j.GlobalBatch, j.Samples, j.Steps, j.Evals = r.GlobalBatch, r.Samples, r.Steps, r.Evals
			j.StepTime, j.Throughput, j.TimeToTrain = float64(r.StepTime), r.Throughput, &t
			if b.EvalLacks == "" {
				e := float64(r.EvalTime)
				j.EvalTime = &e
			}
			if b.TrainSamples > 0 {
				j.Epochs = r.Samples / float64(b.TrainSamples)
			}
		}
		rep.Results = append(rep.Results, j)
	}
	switch f {
	case formatJSON:
		return writeJSON(stdout, rep)
	case formatCSV:
		header := []string{"benchmark", "round", "model", "global_batch", "samples_to_converge", "steps", "evaluations", "step_time_s", "samples_per_s", "eval_time_s", "time_to_train_s", "note"}
		var rows [][]string
		for _, j := range rep.Results {
			ttt, eval := "", ""
			if j.TimeToTrain != nil {
				ttt = num(*j.TimeToTrain)
			}
			if j.EvalTime != nil {
				eval = num(*j.EvalTime)
			}
			rows = append(rows, []string{j.Benchmark, j.Round, j.Model, strconv.Itoa(j.GlobalBatch), num(j.Samples), strconv.Itoa(j.Steps), strconv.Itoa(j.Evals),
				num(j.StepTime), num(j.Throughput), eval, ttt, j.Note})
		}
		return writeCSV(stdout, header, rows)
	}
	on := fmt.Sprintf("%d × %s", sys.Devices(), sys.Device.Name)
	if sys.Name != "" {
		on = sys.Name + ": " + on
	}
	fmt.Fprintf(stdout, "MLPerf Training time to train on %s\n\n", on)
	tw := newTable(stdout)
	fmt.Fprintln(tw, "BENCHMARK\tROUND\tGLOBAL BATCH\tTO CONVERGE (RCP)\tSTEP\tTHROUGHPUT\tEVAL\tTIME TO TRAIN\tNOTE")
	for i, r := range results {
		b := r.Benchmark
		if r.Total <= 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t%s\n", b.Name, b.Round, r.Note)
			continue
		}
		conv := sig4(r.Samples) + " samples"
		if e := rep.Results[i].Epochs; e > 0 {
			conv = sig4Trim(e) + " epochs"
		}
		eval := "-" // counted, not priced (the note says why)
		if b.EvalLacks == "" {
			eval = r.EvalTime.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%s samples/s\t%s\t%v\t%s\n", b.Name, b.Round, r.GlobalBatch, conv, r.StepTime, sig4(r.Throughput), eval, minutes(float64(r.Total)), r.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nTime to train = the reference's mean samples to converge at this global batch (RCP, interpolated) / throughput + evaluations.")
	fmt.Fprintln(stdout, "Convergence varies from run to run (MLPerf scores the mean of several runs): this is an expectation.")
	for _, b := range suite {
		if b.RCPSource != "" {
			layout := ""
			if b.LayoutSource != "" {
				layout = "; layout: " + b.LayoutSource
			}
			fmt.Fprintf(stdout, "%s: %s; %s%s.\n", b.Name, b.RCPSource, b.EvalSource, layout)
		}
	}
	return nil
}

// minutes writes a duration of seconds for people: seconds below a
// minute, minutes below two hours, hours beyond.
func minutes(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.3g s", s)
	case s < 7200:
		return fmt.Sprintf("%.3g min", s/60)
	}
	return fmt.Sprintf("%.3g h", s/3600)
}
