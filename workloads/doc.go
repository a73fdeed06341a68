// Package workloads describes AI workloads (decoder and encoder
// transformers, mixtures of experts, vision transformers, CNNs) and
// decomposes each phase (training forward and backward, prefill, one
// decode step) at a shape into the kernels of package model.
package workloads
