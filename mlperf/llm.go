package mlperf

// llmNote says why an LLM benchmark has no figure yet.
func llmNote(b Benchmark) string {
	if b.Input == 0 {
		return "needs the dataset's mean input length, which the reference implementation does not publish"
	}
	return "needs the serving simulator"
}
