package plan

import "slices"

// memoryWarnings returns what the engine's count of the memory outside
// torch rests on, for the layouts of q (and the instances of its pairs),
// that the hardware file does not say (serve.Engine.MemoryWarnings: a
// file without in_network_reduction under vllm-0.6 at TP > 2), each
// once, in search order. One layout of each TP is priced: the count
// reads the TP alone.
func memoryWarnings(q ServeQuery) []error {
	var out []error
	said := map[string]bool{}
	done := map[int]bool{}
	layouts := slices.Clone(q.Layouts)
	for _, p := range q.Pairs {
		layouts = append(layouts, p.Prefill, p.Decode)
	}
	for _, l := range layouts {
		if done[l.TP] {
			continue
		}
		p, e, err := q.Deploy(l)
		if err != nil {
			continue
		}
		done[l.TP] = true
		for _, w := range e.MemoryWarnings(p) {
			if !said[w.Error()] {
				said[w.Error()] = true
				out = append(out, w)
			}
		}
	}
	return out
}
