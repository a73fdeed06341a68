package main

// The table of perfsim simulate (simulate_output.go holds its JSON).

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

// span formats a time with its interval when there is one.
func span(t, lo, hi model.Seconds, interval string) string {
	if interval == "none" || lo == hi {
		return t.String()
	}
	return fmt.Sprintf("%v  (%s: %v – %v)", t, interval, lo, hi)
}

func writeSimulateTable(w io.Writer, r *sim.Report, cal string, lim limitsResult, breakdown bool, top int, nofit string) error {
	sc := r.Scenario
	if nofit != "" {
		// First, where no one can miss it: the times below describe a
		// run that cannot happen.
		fmt.Fprintf(w, "DOES NOT FIT: %s.\nThe times below are those of a run that cannot happen.\n\n", nofit)
	}
	fmt.Fprintf(w, "%s on %s", r.Model, r.Hardware)
	if r.Devices > 1 {
		fmt.Fprintf(w, " × %d (tp %d, pp %d, dp %d", r.Devices, sc.TP, sc.PP, sc.DP)
		if sc.CP > 1 {
			// The degrees multiply to the devices: a cp 2 run of 512
			// had read "(tp 8, pp 8, dp 4)", 256.
			fmt.Fprintf(w, ", cp %d", sc.CP)
		}
		fmt.Fprintf(w, ")")
	}
	fmt.Fprintf(w, ": %s, %s parameters\n", sc.Mode, paramCount(r.Params))
	fmt.Fprintf(w, "%s: %s\n", r.Hardware, cal)
	tw := newTable(w)
	if in := r.Inference; in != nil {
		if r.Arch == sim.Decoder {
			fmt.Fprintf(tw, "scenario\tbatch %d, %d tokens in, %d out; weights %s, activations %s, KV cache %s%s%s\n", sc.Batch, sc.Input, sc.Output, sc.Weights, sc.Act, sc.KV, commNote(sc), attentionNote(sc))
			fmt.Fprintf(tw, "TTFT\t%s\tprefill %s-bound\n", span(in.TTFT, in.TTFTLow, in.TTFTHigh, r.Interval), phaseBound(&in.Prefill))
			if in.Decode != nil {
				fmt.Fprintf(tw, "TPOT\t%s\tdecode %s-bound\n", span(in.TPOT, in.TPOTLow, in.TPOTHigh, r.Interval), in.Decode.Bound)
			} else {
				fmt.Fprintf(tw, "TPOT\t-\tone output token: no decode\n")
			}
			fmt.Fprintf(tw, "E2E\t%s\n", span(in.E2E, in.E2ELow, in.E2EHigh, r.Interval))
			fmt.Fprintf(tw, "output tokens/s\t%s\tsystem (%s per device)\n", fnum(in.OutputTokensPerSecond), fnum(in.OutputTokensPerSecondPerDevice))
		} else {
			tokens := ""
			if r.Arch == sim.Encoder {
				tokens = fmt.Sprintf(", %d tokens", sc.Input)
			}
			fmt.Fprintf(tw, "scenario\tbatch %d%s; weights %s, activations %s%s\n", sc.Batch, tokens, sc.Weights, sc.Act, execNote(sc))
			fmt.Fprintf(tw, "latency\t%s\t%s-bound\n", span(in.TTFT, in.TTFTLow, in.TTFTHigh, r.Interval), phaseBound(&in.Prefill))
			if in.SamplesPerSecond > 0 {
				fmt.Fprintf(tw, "%s/s\t%s\tsystem (%s per device)%s\n", r.Unit, fnum(in.SamplesPerSecond), fnum(in.SamplesPerSecond/float64(max(r.Devices, 1))), map[bool]string{true: ", input-pipeline-bound"}[in.LoaderBound])
			}
		}
	}
	if tr := r.Training; tr != nil {
		seq := fmt.Sprintf(", seq %d", sc.Seq)
		if r.Arch == sim.CNN || r.Arch == sim.Vision {
			seq = ""
		}
		fmt.Fprintf(tw, "scenario\tmicro-batch %d × %d micro-batches × dp %d%s; %s, recompute %s, ZeRO %d%s; weights %s, activations %s%s%s\n",
			sc.Batch, tr.MicroBatches, sc.DP, seq, sc.Optimizer, sc.Recompute, sc.ZeRO, attnNote(sc), sc.Weights, sc.Act, commNote(sc), execNote(sc))
		fmt.Fprintf(tw, "step time\t%s%s\n", span(tr.StepTime, tr.StepTimeLow, tr.StepTimeHigh, r.Interval), map[bool]string{true: "\tinput-pipeline-bound"}[tr.LoaderBound])
		if r.Arch == sim.CNN || r.Arch == sim.Vision {
			fmt.Fprintf(tw, "%s/s\t%s\tsystem\n", r.Unit, fnum(tr.SamplesPerSecond))
		} else {
			fmt.Fprintf(tw, "tokens/s\t%s\tsystem\n", fnum(tr.TokensPerSecond))
		}
		fmt.Fprintf(tw, "MFU\t%.1f%%\tHFU %.1f%%\n", 100*tr.MFU, 100*tr.HFU)
		writeLayoutTable(tw, sc, tr)
		if tr.TimeToTrain > 0 {
			// An image model's budget counts its images (sim divides it
			// by images/s).
			unit := "tokens"
			if r.Arch == sim.CNN || r.Arch == sim.Vision {
				unit = r.Unit
			}
			fmt.Fprintf(tw, "time to train\t%s days\t%s s for %s %s\n", fnum(float64(tr.TimeToTrain)/86400), fnum(float64(tr.TimeToTrain)), fnum(sc.Tokens), unit)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	m := r.Memory
	fmt.Fprintf(w, "\nmemory per device\n")
	tw = newTable(w)
	row := func(name string, b model.Bytes, note string) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, b.BinaryString(), note)
	}
	row("weights", m.Weights, "")
	if r.Inference != nil && m.KVPerToken > 0 {
		note := fmt.Sprintf("%s per token", m.KVPerToken.BinaryString())
		if m.KVState > 0 {
			// A state-space layer's state does not grow with the tokens:
			// mamba2-2.7b's 82 MiB had read "368.1 KiB per token" at 100
			// tokens and "10.33 KiB per token" at 8000.
			note = fmt.Sprintf("%s of state per sequence", m.KVState.BinaryString())
			sc := r.Scenario
			if t := sc.Input + sc.Output; t > 0 && sc.Batch > 0 {
				if grow := (float64(m.KVCache)/float64(sc.Batch) - float64(m.KVState)) / float64(t); grow >= 1 {
					note += fmt.Sprintf(" + %s per token", model.Bytes(grow).BinaryString())
				}
			}
		}
		row("KV cache", m.KVCache, note)
	}
	row("activations", m.Activations, "")
	if r.Training != nil {
		row("gradients", m.Gradients, "")
		row("optimizer", m.Optimizer, "")
	}
	row("reserve", m.Reserve, "")
	row("total", m.Total, "of "+usableText(m)+": "+verdictText(m))
	if err := tw.Flush(); err != nil {
		return err
	}
	if lim.MaxBatch > 0 || lim.MaxContext > 0 {
		// A search that reached its bound found no limit below it: say
		// "at least" (the CPUs' terabytes and a state-space model's
		// constant state had printed 'max context 16777344 by memory').
		fmt.Fprintf(w, "  limits: max batch %d", lim.MaxBatch)
		if lim.MaxBatch >= sim.SearchLimit {
			fmt.Fprintf(w, " or more (the search's bound)")
		}
		if lim.MaxContext > 0 {
			fmt.Fprintf(w, ", max context %d", lim.MaxContext)
			var notes []string
			if lim.MaxContext >= sim.SearchLimit+lim.Output {
				notes = append(notes, "or more: the search's bound")
			} else if lim.Trained > 0 && lim.MaxContext > lim.Trained {
				fmt.Fprintf(w, " by memory")
			}
			if lim.Trained > 0 && lim.MaxContext > lim.Trained {
				notes = append(notes, fmt.Sprintf("the model is trained to %d", lim.Trained))
			}
			if len(notes) > 0 {
				fmt.Fprintf(w, " (%s)", strings.Join(notes, "; "))
			}
		}
		fmt.Fprintln(w)
	}
	if breakdown {
		for _, p := range allPhases(r) {
			writePhaseTable(w, p, top)
		}
	}
	return nil
}

func writePhaseTable(w io.Writer, p *sim.PhaseReport, top int) {
	steps := ""
	if p.Steps > 1 {
		steps = fmt.Sprintf(", %d steps", p.Steps)
	}
	fmt.Fprintf(w, "\n%s: %v%s, %s-bound, %v, %v\n", p.Name, p.Time, steps, p.Bound, p.FLOPs, p.Bytes)
	tw := newTable(w)
	fmt.Fprintf(tw, "  class\ttime\tshare\tbound\tintensity\n")
	for _, c := range p.Classes {
		fmt.Fprintf(tw, "  %s\t%v\t%.1f%%\t%s\t%s\n", c.Class, c.Time, 100*c.Share, c.Bound, fnum(intensity(c.FLOPs, c.Bytes)))
	}
	tw.Flush()
	idx := make([]int, len(p.Ops))
	for i := range idx {
		idx[i] = i
	}
	// Largest time first; ties in op order, for deterministic output.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && p.Ops[idx[j]].Time > p.Ops[idx[j-1]].Time; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	if len(idx) > top {
		idx = idx[:top]
	}
	tw = newTable(w)
	fmt.Fprintf(tw, "  top ops\tcount\ttime\tshare\tbound\tintensity\tdtype\n")
	for _, i := range idx {
		o := &p.Ops[i]
		fmt.Fprintf(tw, "  %s\t%d\t%v\t%.1f%%\t%s\t%s\t%s\n", o.Name, o.Count, o.Time, 100*shareOf(o.Time, p.Time), o.Bound, fnum(intensity(o.FLOPs, o.Bytes)), dtypeName(o.DType))
	}
	tw.Flush()
}

// usableText names the memory a fit is sized against, and the physical
// capacity beside it when they differ: "79.11 GiB usable (80 GiB physical)".
func usableText(m sim.Memory) string {
	if m.Usable == m.Capacity || m.Capacity == 0 {
		return m.Usable.BinaryString() + " usable"
	}
	return m.Usable.BinaryString() + " usable (" + m.Capacity.BinaryString() + " physical)"
}

// verdictText says whether m fits, and by how much.
func verdictText(m sim.Memory) string {
	if !m.Fits {
		return "DOES NOT FIT: " + (-m.Headroom).BinaryString() + " short"
	}
	return "fits, " + m.Headroom.BinaryString() + " headroom"
}

// phaseBound names what bounds a phase: "host" when an eager pass waits
// on the host issuing kernels (sim.ExecEager), else the device's bound.
func phaseBound(p *sim.PhaseReport) string {
	if p.HostBound {
		return "host"
	}
	return p.Bound.String()
}

// paramCount writes a parameter count in billions, or in millions below
// one billion (resnet50's had read "0.02556 B").
func paramCount(n float64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.4g M", n/1e6)
	}
	return fmt.Sprintf("%.4g B", n/1e9)
}

// attnNote says how a training step's attention core and dropout run,
// when not as by default (a fused kernel, no dropout).
func attnNote(sc sim.Scenario) string {
	var s string
	if sc.UnfusedAttention {
		s += ", unfused attention"
	}
	if sc.Dropout > 0 {
		s += ", dropout " + strconv.FormatFloat(sc.Dropout, 'g', -1, 64)
	}
	return s
}
