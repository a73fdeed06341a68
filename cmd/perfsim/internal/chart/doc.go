// Package chart draws perfsim's charts with gonum/plot. It is the only
// package that imports gonum/plot.
//
// Every chart is a pure function from plain data to a *Chart:
//
//	Roofline     ceilings, the bandwidth diagonal, ridge points, ops as points (log-log)
//	StackedBars  stacked bars in one or more panels (time by op class, memory by kind),
//	             with reference lines (a capacity); a log axis for unstacked bars
//	Lines        one line per series with labelled points (throughput against latency)
//	Heatmap      a grid of values with a diverging colour scale (speedup of A over B)
//
// A Chart keeps, beside the gonum plots it draws, the numbers it drew
// (Chart.Data), so that tests check values rather than pixels.
//
// Save writes a chart in the format its file name's extension names (.svg,
// .png or .pdf) atomically, through a temporary file and a rename; Write
// writes to any io.Writer. The same chart gives the same bytes in every
// format: PDF creation and modification dates are fixed (see Write), and
// nothing depends on map order.
//
// Charts default to 8×5 inches with type sizes that read on a slide (a 14
// pt title, 12 pt axis labels, 11 pt ticks and legend). Log axes never see
// a value ≤ 0: builders leave such points out and name them in
// Chart.Skipped, because gonum/plot's LogScale panics on them.
package chart
