package serve_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/serve"
)

// rowsReader returns a CSV trace of n requests without holding it whole.
func rowsReader(n int) io.Reader {
	return io.MultiReader(strings.NewReader("arrival_s,input_tokens,output_tokens\n"),
		io.LimitReader(repeat("0,1,1\n"), int64(n)*6))
}

type repeater struct {
	s []byte
	i int
}

func repeat(s string) io.Reader { return &repeater{s: []byte(s)} }

func (r *repeater) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.s[r.i]
		r.i = (r.i + 1) % len(r.s)
	}
	return len(p), nil
}

// TestReadTrace_limits: a trace is read up to MaxTraceSize bytes and
// MaxRequests requests, past either an error saying so; a lengths file
// past MaxTraceSize is an error, not cut short. ReadTrace had read its
// input whole: serve --trace /dev/zero grew to 15 GB in 20 s; a longer
// lengths file was silently truncated at 64 MiB.
func TestReadTrace_limits(t *testing.T) {
	if _, err := serve.ReadTrace(rowsReader(serve.MaxRequests+1), "t.csv", 0); err == nil || !strings.Contains(err.Error(), "t.csv") || !strings.Contains(err.Error(), "requests") {
		t.Errorf("%d requests: error %v", serve.MaxRequests+1, err)
	}
	if reqs, err := serve.ReadTrace(rowsReader(1000), "t.csv", 0); err != nil || len(reqs) != 1000 {
		t.Errorf("1000 requests: %d, %v", len(reqs), err)
	}
	// An endless stream stops at the limit.
	if _, err := serve.ReadTrace(io.MultiReader(strings.NewReader("arrival_s,input_tokens,output_tokens\n"), repeat("\n")), "z.csv", 0); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("endless trace: error %v", err)
	}
	big := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("7\n"), serve.MaxTraceSize/2)), strings.NewReader("8\n"))
	if _, err := serve.ReadLengths(big, "l.txt"); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("lengths file over the limit: error %v", err)
	}
}
