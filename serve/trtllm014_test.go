package serve_test

import (
	"strings"
	"testing"

	"github.com/perfsim/perfsim/serve"
)

func TestTRTLLMBench014(t *testing.T) {
	for _, tt := range []struct {
		hf                 string
		tp, pp, seq        int
		maxBatch, maxToken int
		err                string
	}{
		{"meta-llama/Meta-Llama-3-70B", 4, 1, 2000, 2048, 1024, ""},
		{"meta-llama/Meta-Llama-3-70B", 8, 1, 4096, 8192, 16384, ""},
		{"meta-llama/Meta-Llama-3-70B", 2, 1, 2000, 256, 1024, ""},
		{"meta-llama/Meta-Llama-3-70B", 2, 1, 4096, 2048, 1024, ""}, // the entry for its length
		{"meta-llama/Llama-2-70b-hf", 4, 1, 4224, 256, 8192, ""},    // likewise
		{"meta-llama/Llama-2-70b-hf", 4, 1, 4225, 4096, 8192, ""},   // general
		{"meta-llama/Meta-Llama-3-70B", 3, 1, 2000, 0, 0, "TP 3 × PP 1"},
		{"meta-llama/Meta-Llama-3-70B", 4, 2, 2000, 0, 0, "TP 4 × PP 2"},
		{"meta-llama/Llama-3.1-70B", 4, 1, 2000, 0, 0, "not a model configured"},
	} {
		b, n, err := serve.TRTLLMBench014(tt.hf, tt.tp, tt.pp, tt.seq)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s tp%d pp%d: err %v, want one saying %q", tt.hf, tt.tp, tt.pp, err, tt.err)
			}
			continue
		}
		if err != nil || b != tt.maxBatch || n != tt.maxToken {
			t.Errorf("%s tp%d pp%d seq %d = %d, %d, %v; want %d, %d", tt.hf, tt.tp, tt.pp, tt.seq, b, n, err, tt.maxBatch, tt.maxToken)
		}
	}
}
