// Package sim puts hardware and workloads together: it costs the ops of a
// workload's phases on a system and answers capacity-planning questions
// (prefill and decode latency, memory, fit, inverse queries, parallel
// layouts).
package sim
