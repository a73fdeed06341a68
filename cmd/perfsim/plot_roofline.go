package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/sim"
)

const plotRooflineSynopsis = "perfsim plot roofline --hw NAME|FILE --model NAME|FILE [--batch 1,64] [--input S] [--output G] [--tp N] [--dtype T] [-o FILE]"

const plotRooflineExamples = `  # Llama 3 70B's op classes on an H100, at batch 1 and 64
  perfsim plot roofline --hw h100 --model llama3-70b --tp 8 --batch 1,64 -o roofline.svg

  # the same as a PNG for a slide
  perfsim plot roofline --hw h100 --model llama3-8b -o roofline.png
`

func runPlotRoofline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out plotOutput
	var sc plotScenario
	fs := newFlagSet("plot roofline", plotRooflineSynopsis, plotRooflineExamples, stderr)
	sc.AddFlags(fs, false, true, false)
	out.AddFlags(fs, "roofline")
	if err := parseFlagsNoArgs(fs, args, "plot roofline"); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	s, err := sc.spec()
	if err != nil {
		return err
	}
	if len(s.HW) != 1 || len(s.Input) != 1 {
		return usagef("plot roofline: one --hw and one --input (a roofline is one device's)")
	}
	res, err := simulateAll(ctx, s)
	if err != nil {
		return err
	}
	warnPoints(stderr, res)
	c, err := rooflineData(s.HW[0], res).Chart()
	if err != nil {
		return err
	}
	noteCalibration(c, s.HW)
	return out.write(c, stdout, stderr)
}

// rooflineData places each op class of each phase of each result on the
// device's roofline: its intensity ΣFLOPs/Σbytes, its attained rate
// ΣFLOPs/Σtime, sized by its share of the phase's time. The ceilings are
// the peaks of the data types the ops computed in — the matrix peak for
// GEMMs and attention, the vector peak where the device gives one for
// elementwise passes — and, where the hardware file sets efficiencies,
// the attainable ceilings (peak × GEMM compute efficiency, bandwidth ×
// memory efficiency).
func rooflineData(dev *hardware.Device, res []sweepResult) chart.Roofline {
	rep := res[0].Report
	r := chart.Roofline{Bandwidth: float64(dev.Memory.Bandwidth)}
	batches := make([]string, 0, len(res))
	for _, x := range res {
		batches = append(batches, fmt.Sprint(x.Report.Scenario.Batch))
	}
	title := fmt.Sprintf("Roofline — %s, %s", dev.Name, rep.Model)
	r.Title = title + "\n" + fmt.Sprintf("batch %s, ", joinList(batches)) + scenarioText(rep, false)

	type ceil struct {
		name string
		rate model.FLOPRate
		d    model.DType
		vec  bool
	}
	ceils := map[string]ceil{}
	proc := dev.Processor()
	for _, x := range res {
		in := x.Report.Inference
		if in == nil {
			continue
		}
		phases := []*sim.PhaseReport{&in.Prefill, in.Decode}
		for _, ph := range phases {
			if ph == nil {
				continue
			}
			group := ph.Name
			if group == "" {
				group = "prefill"
				if ph == in.Decode {
					group = "decode"
				}
			}
			if x.Report.Arch != sim.Decoder {
				// An encoder, a ViT or a CNN runs one forward pass: no
				// prefill to speak of.
				group = "forward"
			}
			if len(res) > 1 {
				group += fmt.Sprintf(" b=%d", x.Report.Scenario.Batch)
			}
			for _, c := range ph.Classes {
				p := chart.RoofPoint{Label: c.Class.String(), Group: group, Share: c.Share,
					Intensity: intensity(c.FLOPs, c.Bytes)}
				if c.Time > 0 {
					p.Rate = float64(c.FLOPs) / float64(c.Time)
				}
				r.Points = append(r.Points, p)
			}
			for _, op := range ph.Ops {
				if op.FLOPs <= 0 || !op.DType.Valid() {
					continue
				}
				kind := op.Kind.String()
				vec := kind != "gemm" && kind != "attention"
				if v, ok := dev.Vector[op.DType]; ok && vec {
					ceils[op.DType.String()+" vector"] = ceil{op.DType.String() + " vector", v, op.DType, true}
					continue
				}
				if pk, ok := proc.Peak(op.DType); ok {
					ceils[op.DType.String()] = ceil{op.DType.String(), pk, op.DType, false}
				}
			}
		}
	}
	list := make([]ceil, 0, len(ceils))
	for _, c := range ceils {
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].rate != list[j].rate {
			return list[i].rate > list[j].rate
		}
		return list[i].name < list[j].name
	})
	for _, c := range list {
		r.Peaks = append(r.Peaks, chart.Ceiling{Name: c.name, Rate: float64(c.rate)})
		if c.vec {
			if e := dev.Eff.Vector; e > 0 && e < 1 {
				r.Attainable = append(r.Attainable, chart.Ceiling{Name: c.name, Rate: float64(c.rate) * e})
			}
			continue
		}
		if g, ok := dev.Eff.GEMM[c.d]; ok && g.Compute > 0 && g.Compute < 1 {
			r.Attainable = append(r.Attainable, chart.Ceiling{Name: c.name, Rate: float64(c.rate) * g.Compute})
		}
	}
	if e := dev.Eff.Memory.Efficiency; len(r.Attainable) > 0 {
		if e <= 0 || e > 1 {
			e = 1
		}
		r.AttainableBandwidth = float64(dev.Memory.Bandwidth) * e
	}
	return r
}

// joinList joins values with commas and "and": "1", "1 and 64", "1, 8 and 64".
func joinList(v []string) string {
	switch len(v) {
	case 0:
		return ""
	case 1:
		return v[0]
	}
	s := v[0]
	for _, x := range v[1 : len(v)-1] {
		s += ", " + x
	}
	return s + " and " + v[len(v)-1]
}
