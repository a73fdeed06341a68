// Package plan holds the searches over layouts and settings. Every answer
// is a full simulation by package sim: a search enumerates a declared
// space, runs sim on each point, drops what does not fit, and ranks the
// rest; it never prices a kernel itself.
//
//   - train.go: Train, the layout search for training at scale (perfsim
//     plan train): TP × PP × DP × CP × EP, micro-batch, pipeline
//     schedule and virtual stages, recomputation and ZeRO stage, each
//     layout's fastest configuration ranked by step time, with Why a
//     runner-up loses and the closest miss when nothing fits;
//     scaling.go: strong and weak scaling over GPU counts.
package plan
