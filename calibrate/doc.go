// Package calibrate reads measured kernel timings, fits the efficiency
// parameters of the cost model to them, and reports the fit's error on
// points it did not see.
//
// # Reading guide
//
//   - measurement.go: Measurement, one timed kernel.
//   - csv.go: perfsim's own CSV schema (ReadCSV, WriteCSV), written by the
//     CUDA suite (kernels/) and the CPU suite (cpu.go, MeasureCPU).
//   - import.go: ReadFile and the third-party importers (aiconfigurator,
//     Vidur, LLMCompass, XLA; ../shared/validation/SOURCES.md), format
//     detection by header, the device check (SameDevice); import_row.go
//     turns one row into a Measurement; import_moe.go the MoE module and
//     MLA rows, routing.go the token-to-expert draws of aiconfigurator's
//     MoE tables, rebuilt so a measured module is priced with its rank's
//     loads; plausible.go drops attention rows faster than DRAM allows.
//   - fit.go: Fit, per kernel class: GEMMs per compute type (fitgemm.go, its residual tables in residual.go,
//     with the fast evaluator of gemmfit.go), attention prefill and decode
//     and streaming kernels (fitother.go). Parameters are searched with
//     gonum/optimize's Nelder–Mead in unconstrained coordinates (logistic
//     for fractions, log for times), minimising a soft-L1 loss of
//     log(predicted/measured) on a seeded subsample of at most 2,000
//     points (1,000 for GEMMs, from a start read off the clearly compute-
//     and memory-bound points); then a residual table over log-shape space
//     (model.Residual) is fitted to the remaining log error of every point
//     by regularised least squares (for GEMMs: nodes at the measured sizes
//     of a benchmark grid, robust smoothing between neighbours, strongest
//     along k). k-fold cross-validation (seeded folds, default 5) refits
//     both on each training fold, from that fold's own start, and scores
//     the held-out fold; the GEMM folds and the full fit run in parallel.
//     fitattn.go, fitcomm.go and fitmoe.go fit the attention variants,
//     the collectives and the MoE module; additive.go the additive
//     residual table (a curve per axis); fitcheck.go the range of kernel
//     times Fit accepts (a time below 1 ns or above an hour is a unit
//     mistake).
//   - power.go: the power model fitted to measured mean power (FitPower,
//     ScorePower, FitWait; docs/energy.md).
//   - host.go: HostTOML, a hardware file describing this machine's CPU,
//     for the CPU suite's measurements.
//   - score.go: Score, the scorecard of a device against measurements,
//     with worst rows and extrapolation warnings.
//   - write.go: WriteDevice, a hardware TOML file hardware.Load reads back,
//     written atomically by WriteDeviceFile.
//
// fitted/ holds the fits of the catalog's A100, H100 and H200 to
// aiconfigurator's measurements (see fitted/README.md).
package calibrate
