package mlperf

import (
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// BenchmarkRunLLM prices Llama 2 70B on a DGX H100 in both scenarios:
// the tensor-parallel search, LoadGen's Offline query and the Server
// rate's bisection.
func BenchmarkRunLLM(b *testing.B) {
	sys, err := hardware.LookupSystem("dgx-h100", 8)
	if err != nil {
		b.Fatal(err)
	}
	bm, err := Find("llama2-70b")
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range []Scenario{Offline, Server} {
		b.Run(sc.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := Run(sys, bm, sc, resolveCatalog, Options{Seed: 1}); !r.OK() {
					b.Fatal(r.Note)
				}
			}
		})
	}
}
