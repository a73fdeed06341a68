package main

// The output of perfsim plan serve: its JSON, CSV and table, and its
// charts (plan.go parses and runs it).

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perfsim/perfsim/cmd/perfsim/internal/chart"
	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/model"
	"github.com/perfsim/perfsim/plan"
	"github.com/perfsim/perfsim/serve"
	"github.com/perfsim/perfsim/sim"
)

type maxRateJSON struct {
	Schema string `json:"schema"`
	Layout string `json:"layout"`
	DP     int    `json:"dp"`
	// DPAttention is a data-parallel attention group's replicas (dp
	// being the groups); left out for other deployments.
	DPAttention     int     `json:"dp_attention,omitempty"`
	GPUs            int     `json:"gpus"`
	MaxRequestsPerS float64 `json:"max_requests_per_s"`
	// At that rate; null when no rate meets the objectives (no run
	// measured them), as mlperf's value is.
	TTFTP99S         *float64 `json:"ttft_p99_s"`
	TPOTP99S         *float64 `json:"tpot_p99_s"`
	OutputTokensPerS *float64 `json:"output_tokens_per_s"`
}

type candJSON struct {
	Deployment string `json:"deployment"`
	TP         int    `json:"tp"`
	PP         int    `json:"pp"`
	EP         int    `json:"ep"` // expert parallelism within TP (1: none); both pools' for a disaggregated candidate
	DP         int    `json:"dp"`
	// DPAttention is a data-parallel attention group's replicas (its ep
	// being DPAttention × tp; dp the groups, gpus dp × DPAttention ×
	// tp); left out for other candidates.
	DPAttention       int     `json:"dp_attention,omitempty"`
	DType             string  `json:"dtype"`
	MaxSeqs           int     `json:"max_seqs"`
	GPUs              int     `json:"gpus"`
	TTFTP99S          float64 `json:"ttft_p99_s"`
	TPOTP99S          float64 `json:"tpot_p99_s"`
	TokensPerS        float64 `json:"output_tokens_per_s"`
	TokensPerSPerGPU  float64 `json:"output_tokens_per_s_per_gpu"`
	TokensPerSPerUser float64 `json:"output_tokens_per_s_per_user"`
	Meets             bool    `json:"meets_slo"`
	Over              bool    `json:"overloaded"`
	Requests          int     `json:"requests"`
	// Disaggregated candidates only: TP and PP above are the prefill
	// instances'.
	PrefillInstances int `json:"prefill_instances,omitempty"`
	DecodeInstances  int `json:"decode_instances,omitempty"`
	DecodeTP         int `json:"decode_tp,omitempty"`
	DecodePP         int `json:"decode_pp,omitempty"`
	// With a price (plan_cost.go): the cost per hour at the load and per
	// million output tokens, in planOut's currency.
	CostPerHour    *float64 `json:"cost_per_hour,omitempty"`
	CostPerMOutput *float64 `json:"cost_per_million_output_tokens,omitempty"`
}

func candOf(c plan.Candidate, priced bool) candJSON {
	j := candJSON{Deployment: c.String(), TP: c.TP, PP: c.PP, EP: max(c.EP, 1), DP: c.DP, DPAttention: c.DPAttention, DType: c.DType.String(), MaxSeqs: c.MaxSeqs, GPUs: c.GPUs,
		TTFTP99S: c.TTFTP99, TPOTP99S: c.TPOTP99, TokensPerS: c.TokensPerSecond, TokensPerSPerGPU: c.TokensPerSecondPerGPU,
		TokensPerSPerUser: c.TokensPerSecondPerUser, Meets: c.Meets, Over: c.Overloaded, Requests: c.Requests,
		PrefillInstances: c.Disagg.Prefill, DecodeInstances: c.Disagg.Decode, DecodeTP: c.Disagg.DecodeTP, DecodePP: c.Disagg.DecodePP}
	if priced {
		j.CostPerHour, j.CostPerMOutput = fp(c.CostPerHour), fp(c.CostPerMillionTokens)
	}
	return j
}

type planOut struct {
	Schema     string     `json:"schema"`
	Best       *candJSON  `json:"best"`
	Front      []candJSON `json:"pareto_front"`
	Candidates []candJSON `json:"candidates"`
	Seen       int        `json:"layouts_seen"`
	Pruned     int        `json:"pruned"`
	Simulated  int        `json:"simulated"`
	Objective  string     `json:"objective"`
	Currency   string     `json:"currency,omitempty"`
	CostInputs string     `json:"cost_inputs,omitempty"`
}

func planJSON(p *plan.ServePlan, o *planOptions) planOut {
	priced := o.currency != ""
	out := planOut{Schema: "perfsim.plan-serve/v1", Seen: p.Seen, Pruned: p.Pruned, Simulated: p.Simulated, Front: []candJSON{}, Candidates: []candJSON{},
		Objective: o.objective, Currency: o.currency, CostInputs: o.costInputs}
	if p.Best != nil {
		b := candOf(*p.Best, priced)
		out.Best = &b
	}
	for _, c := range p.Front {
		out.Front = append(out.Front, candOf(c, priced))
	}
	for _, c := range p.All {
		out.Candidates = append(out.Candidates, candOf(c, priced))
	}
	return out
}

func writePlanCSV(w io.Writer, p *plan.ServePlan, o *planOptions) error {
	header := []string{"tp", "pp", "ep", "dp", "dtype", "max_seqs", "gpus", "ttft_p99_s", "tpot_p99_s", "output_tokens_per_s", "output_tokens_per_s_per_gpu", "output_tokens_per_s_per_user", "meets_slo", "overloaded", "pareto", "best",
		"prefill_instances", "decode_instances", "decode_tp", "decode_pp", "requests"}
	if o.dpAttnShown {
		header = append(header, "dp_attention")
	}
	priced := o.currency != ""
	if priced {
		header = append(header, "cost_per_hour", "cost_per_million_output_tokens", "currency")
	}
	var rows [][]string
	onFront := map[plan.Candidate]bool{}
	for _, c := range p.Front {
		onFront[c] = true
	}
	for _, c := range p.All {
		rows = append(rows, []string{strconv.Itoa(c.TP), strconv.Itoa(c.PP), strconv.Itoa(max(c.EP, 1)), strconv.Itoa(c.DP), c.DType.String(), strconv.Itoa(c.MaxSeqs),
			strconv.Itoa(c.GPUs), num(c.TTFTP99), num(c.TPOTP99), num(c.TokensPerSecond), num(c.TokensPerSecondPerGPU), num(c.TokensPerSecondPerUser),
			strconv.FormatBool(c.Meets), strconv.FormatBool(c.Overloaded), strconv.FormatBool(onFront[c]), strconv.FormatBool(p.Best != nil && *p.Best == c),
			strconv.Itoa(c.Disagg.Prefill), strconv.Itoa(c.Disagg.Decode), strconv.Itoa(c.Disagg.DecodeTP), strconv.Itoa(c.Disagg.DecodePP), strconv.Itoa(c.Requests)})
		if o.dpAttnShown {
			rows[len(rows)-1] = append(rows[len(rows)-1], strconv.Itoa(c.DPAttention))
		}
		if priced {
			rows[len(rows)-1] = append(rows[len(rows)-1], num(c.CostPerHour), num(c.CostPerMillionTokens), o.currency)
		}
	}
	return writeCSV(w, header, rows)
}

func writePlanTable(w io.Writer, p *plan.ServePlan, q *plan.ServeQuery, o *planOptions) error {
	priced := o.currency != ""
	money := func(v float64) string { return fmt.Sprintf("%.4g %s", v, o.currency) }
	tw := newTable(w)
	fmt.Fprintf(tw, "target\t%s req/s, %s\n", fnum(q.Workload.Rate), objectives("p99 ", q.SLO.TTFTP99, q.SLO.TPOTP99))
	if p.Best == nil {
		fmt.Fprintf(tw, "best\tno layout within %s meets the objectives\n", gpuCount(q.MaxGPUs))
	} else {
		b := p.Best
		fmt.Fprintf(tw, "best\t%v = %s: TTFT p99 %v, TPOT p99 %v, %s tokens/s per GPU\n", b, gpuCount(b.GPUs),
			model.Seconds(b.TTFTP99), model.Seconds(b.TPOTP99), fnum(b.TokensPerSecondPerGPU))
		if b.Requests > q.Workload.N {
			fmt.Fprintf(tw, "\tjudged over %d requests: its run of %d had not settled (its running batch still filling when the arrivals stopped)\n", b.Requests, q.Workload.N)
		}
		if b.DPAttention > 1 {
			// The serve command that reruns it (several groups included).
			n := ""
			if b.Requests > q.Workload.N {
				n = fmt.Sprintf(" --requests %d", b.Requests)
			}
			fmt.Fprintf(tw, "serve\tperfsim serve %s%s, with this plan's --hw, --model, --engine, engine and request flags\n", dpAttnServeFlags(b), n)
		}
		if priced {
			fmt.Fprintf(tw, "cost\t%s per hour, %s per million output tokens (by %s; %s)\n", money(b.CostPerHour), money(b.CostPerMillionTokens), o.objective, o.costInputs)
		}
	}
	cost := ""
	if priced {
		cost = "\tper hour\tper M output tokens"
	}
	if len(p.Front) == 0 {
		// The header alone had followed, over no rows.
		fmt.Fprintf(tw, "\nPareto front\tnone: every candidate was overloaded (the queue grew without bound)\n")
		return tw.Flush()
	}
	fmt.Fprintf(tw, "\nPareto front\ttokens/s per user\ttokens/s per GPU\tGPUs\tTTFT p99\tTPOT p99\tmeets%s\n", cost)
	for _, c := range p.Front {
		if priced {
			cost = "\t" + money(c.CostPerHour) + "\t" + money(c.CostPerMillionTokens)
		}
		fmt.Fprintf(tw, "%v\t%s\t%s\t%d\t%v\t%v\t%v%s\n", c, fnum(c.TokensPerSecondPerUser), fnum(c.TokensPerSecondPerGPU),
			c.GPUs, model.Seconds(c.TTFTP99), model.Seconds(c.TPOTP99), c.Meets, cost)
	}
	return tw.Flush()
}

// savePlanFront draws every candidate that kept up, and the front, under
// the subtitle what (chartTitle).
func savePlanFront(path string, p *plan.ServePlan, what string, dev *hardware.Device) error {
	l, err := planFrontLines(p)
	if err != nil {
		return err
	}
	l.Title += "\n" + what
	return saveChart(path, l, dev)
}

// chartTitle is the second line of plan serve's charts: the model on the
// device, the load and the objectives.
func (o *planOptions) chartTitle(q *plan.ServeQuery, dev *hardware.Device) string {
	s := fmt.Sprintf("%s on %s, %s req/s", o.model, dev.Name, fnum(q.Workload.Rate))
	if v := q.SLO.TTFTP99; v > 0 {
		s += ", p99 TTFT ≤ " + v.String()
	}
	if v := q.SLO.TPOTP99; v > 0 {
		s += ", p99 TPOT ≤ " + v.String()
	}
	return s
}

// planFrontLines is the front chart's data: the Pareto front, joined in
// order of tokens/s per user, and the other candidates that kept up.
func planFrontLines(p *plan.ServePlan) (chart.Lines, error) {
	l := chart.Lines{Title: "Serving: throughput per GPU against speed per user", XLabel: "output tokens/s per user (1/mean TPOT)", YLabel: "output tokens/s per GPU"}
	var others, fr []chart.LinePoint
	onFront := make(map[chart.LinePoint]bool, len(p.Front))
	for _, c := range p.Front {
		pt := chart.LinePoint{X: c.TokensPerSecondPerUser, Y: c.TokensPerSecondPerGPU}
		onFront[pt] = true
		pt.Label = c.String()
		fr = append(fr, pt)
	}
	if len(fr) == 0 {
		return l, errors.New("no candidate kept up with the load")
	}
	for _, c := range p.All {
		pt := chart.LinePoint{X: c.TokensPerSecondPerUser, Y: c.TokensPerSecondPerGPU}
		if !c.Overloaded && !onFront[pt] {
			others = append(others, pt)
		}
	}
	// The other candidates first, so that the front is drawn over them.
	if len(others) > 0 {
		l.Lines = append(l.Lines, chart.Line{Name: "other candidates", Points: others, Scatter: true})
	}
	l.Lines = append(l.Lines, chart.Line{Name: "Pareto front", Points: fr})
	return l, nil
}

// saveLoadPlot simulates the deployment at fractions of its max rate and
// draws p50 and p99 TTFT and TPOT against the rate, with the SLOs as
// lines and the knee (the max rate) marked.
func saveLoadPlot(path string, p *sim.Pricer, e serve.Engine, dp int, q *plan.ServeQuery, knee float64, what string, dev *hardware.Device) error {
	if knee <= 0 {
		return errors.New("the deployment meets the objectives at no rate")
	}
	names := []string{"TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99"}
	lines := make([]chart.Line, 4)
	for i := range lines {
		lines[i].Name = names[i]
	}
	w := q.Workload
	for _, f := range []float64{0.2, 0.4, 0.6, 0.8, 0.9, 1, 1.1, 1.2} {
		w.Rate = f * knee
		reqs, err := plan.Requests(w)
		if err != nil {
			return err
		}
		res, err := plan.ServeReplicas(p, e, reqs, dp)
		if err != nil {
			return err
		}
		lbl := ""
		if f == 1 {
			lbl = "knee"
		}
		for i, v := range []float64{res.TTFT.P50, res.TTFT.P99, res.TPOT.P50, res.TPOT.P99} {
			lines[i].Points = append(lines[i].Points, chart.LinePoint{X: w.Rate, Y: 1e3 * v, Label: lbl})
		}
	}
	for _, s := range []struct {
		name string
		v    model.Seconds
	}{{"TTFT SLO", q.SLO.TTFTP99}, {"TPOT SLO", q.SLO.TPOTP99}} {
		if s.v > 0 {
			lines = append(lines, chart.Line{Name: s.name, Points: []chart.LinePoint{{X: 0.2 * knee, Y: 1e3 * float64(s.v)}, {X: 1.2 * knee, Y: 1e3 * float64(s.v)}}, Reference: true})
		}
	}
	return saveChart(path, chart.Lines{Title: "Latency against load\n" + what, XLabel: "arrival rate (requests/s)", YLabel: "latency (ms)", LogY: true, Lines: lines}, dev)
}

// saveChart draws l to path; devs, the devices the chart prices, add
// their calibration to its title (noteCalibration).
func saveChart(path string, l chart.Lines, devs ...*hardware.Device) error {
	c, err := l.Chart()
	if err != nil {
		return err
	}
	noteCalibration(c, devs)
	if _, err := chart.FormatOf(path); err != nil {
		return usagef("%v", err)
	}
	return chart.Save(path, c, 8*72, 5*72)
}

// objectives says the latency objectives given ("p99 TTFT ≤ 1 s and p99
// TPOT ≤ 50 ms"), leaving out one not given (0): the table had said
// "p99 TPOT ≤ 0 s (0: none)".
func objectives(pct string, ttft, tpot model.Seconds) string {
	var s []string
	if ttft > 0 {
		s = append(s, pct+"TTFT ≤ "+ttft.String())
	}
	if tpot > 0 {
		s = append(s, pct+"TPOT ≤ "+tpot.String())
	}
	if len(s) == 0 {
		return "no latency objective"
	}
	return strings.Join(s, " and ")
}
