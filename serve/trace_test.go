package serve_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/perfsim/perfsim/serve"
)

func TestReadTrace(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		n          int
		errs       []string // substrings of the error, each expected
	}{
		{"csv", "arrival_s,input_tokens,output_tokens,prefix_id\n0,10,5,a\n0.5,20,7,\n1.5,3,1,b\n", 3, nil},
		{"jsonl", `{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}` + "\n\n" + `{"arrival_s": 2.5, "input_tokens": 1, "output_tokens": 1, "prefix_id": 3}` + "\n", 2, nil},
		// A byte-order mark (a Windows editor's UTF-8) had been read as
		// the JSON lines' first byte: "t.csv:1: want a JSON object".
		{"jsonl bom", "\ufeff" + `{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}` + "\n", 1, nil},
		{"csv bom", "\ufeffarrival_s,input_tokens,output_tokens\n0,10,5\n", 1, nil},
		{"backwards", "arrival_s,input_tokens,output_tokens\n1,10,5\n0.5,10,5\n", 0, []string{"t.csv:3: arrival_s: 0.5 s goes back"}},
		{"context", "arrival_s,input_tokens,output_tokens\n0,9000,500\n", 0, []string{"t.csv:2: input_tokens: 9000 + 500"}},
		{"empty", "arrival_s,input_tokens,output_tokens\n", 0, []string{"no requests"}},
		{"header", "time,in,out\n0,1,1\n", 0, []string{"t.csv:1: the header lacks arrival_s, input_tokens, output_tokens"}},
		{"bad values", "arrival_s,input_tokens,output_tokens\nx,1,1\n0,0,1\n0,1,y\n-1,1,1\n", 0, []string{"t.csv:2: arrival_s", "t.csv:3: input_tokens", "t.csv:4: output_tokens", "t.csv:5: arrival_s"}},
		// encoding/json keeps the last of a key given twice; the trace
		// had replayed the request at 0 s, silently.
		{"json duplicate", `{"arrival_s": 1, "input_tokens": 10, "output_tokens": 5, "arrival_s": 0}` + "\n", 0, []string{"t.csv:1: arrival_s: given twice"}},
		{"csv duplicate column", "arrival_s,input_tokens,output_tokens,arrival_s\n0,10,5,3\n", 0, []string{"t.csv:1: arrival_s: the header names it twice"}},
		// A column or a cell the header does not name had been ignored
		// (a misspelt prefix_id dropped the prefixes without a word),
		// and a short row read its missing cell as "".
		{"csv unknown column", "arrival_s,input_tokens,output_tokens,prefix\n0,10,5,a\n", 0, []string{"t.csv:1: column 4: unknown column \"prefix\""}},
		// A row's every bad cell is said, not only the first: "-1,abc,0"
		// had said input_tokens alone.
		{"csv row, every cell", "arrival_s,input_tokens,output_tokens\n-1,abc,0\nx,5,y\n", 0, []string{"t.csv:2: arrival_s: want a time from 0", "t.csv:2: input_tokens: want an integer", "t.csv:2: output_tokens: want a token count", "t.csv:3: arrival_s: want seconds", "t.csv:3: output_tokens: want an integer"}},
		{"csv cell count", "arrival_s,input_tokens,output_tokens\n0,10,5,7\n1,10\n", 0, []string{"t.csv:2: 4 cells, the header has 3", "t.csv:3: 2 cells, the header has 3"}},
		// A value of the wrong type had been said in Go's words ("cannot
		// unmarshal string into Go struct field .input_tokens of type int64").
		{"json type", `{"arrival_s": 0, "input_tokens": "10", "output_tokens": 5}` + "\n" + `{"arrival_s": 0, "input_tokens": 10, "output_tokens": 2.5}`, 0, []string{"t.csv:1: input_tokens: want an integer, got a JSON string", "t.csv:2: output_tokens: want an integer, got a JSON number 2.5"}},
		{"json missing", `{"arrival_s": 0, "input_tokens": 10}` + "\n" + `{"arrival_s": 0, "input_tokens": 10, "output_tokens": 1, "x": 1}`, 0, []string{"t.csv:1: output_tokens: missing", "t.csv:2: want a JSON object"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reqs, err := serve.ReadTrace(strings.NewReader(tt.text), "t.csv", 8192)
			if len(tt.errs) == 0 {
				if err != nil || len(reqs) != tt.n {
					t.Fatalf("ReadTrace = %d requests, %v; want %d", len(reqs), err, tt.n)
				}
				return
			}
			if err == nil {
				t.Fatalf("ReadTrace = %d requests, no error", len(reqs))
			}
			for _, e := range tt.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("error %q lacks %q", err, e)
				}
			}
		})
	}
	// Shared-prefix ids are numbered in order of first appearance.
	reqs, err := serve.ReadTrace(strings.NewReader("arrival_s,input_tokens,output_tokens,prefix_id\n0,10,5,sys-b\n0.5,20,7,\n1,3,2,sys-a\n2,3,2,sys-b\n"), "p.csv", 0)
	if err != nil || reqs[0].Prefix != 1 || reqs[1].Prefix != 0 || reqs[2].Prefix != 2 || reqs[3].Prefix != 1 {
		t.Errorf("prefix ids: %+v, %v", reqs, err)
	}
	reqs, err = serve.ReadTrace(strings.NewReader(`{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5, "prefix_id": 7}`+"\n"+`{"arrival_s": 1, "input_tokens": 10, "output_tokens": 5, "prefix_id": "7"}`+"\n"), "p.jsonl", 0)
	if err != nil || reqs[0].Prefix != 1 || reqs[1].Prefix != 1 {
		t.Errorf("JSON prefix ids: %+v, %v", reqs, err)
	}
	var te *serve.TraceError
	_, err = serve.ReadTrace(strings.NewReader("arrival_s,input_tokens,output_tokens\n1,0,1\n"), "t.csv", 0)
	if !errors.As(err, &te) || te.Line != 2 || te.Key != "input_tokens" {
		t.Errorf("error %v is not a TraceError at line 2, input_tokens", err)
	}
}

// TestLoadTrace_stream: the trace is read as a stream. Its format is
// told past any blanks, read again by the parser; a
// read that fails, or a file over MaxTraceSize, is the only problem
// reported, however much was parsed before it.
func TestLoadTrace_stream(t *testing.T) {
	jl := " \n\n" + `{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}` + "\n"
	tr, err := serve.LoadTrace(iotest.OneByteReader(strings.NewReader(jl)), "b.jsonl", 0)
	if err != nil || tr.Len() != 1 || tr.Requests()[0] != (serve.Request{ID: 3, Input: 10, Output: 5}) {
		t.Errorf("JSON lines after blanks: %+v, %v", tr, err)
	}
	bad := io.MultiReader(strings.NewReader("arrival_s,input_tokens,output_tokens\n0,x,1\n"), iotest.ErrReader(errors.New("disk gone")))
	if _, err := serve.LoadTrace(bad, "f.csv", 0); err == nil || err.Error() != "serve: f.csv: disk gone" {
		t.Errorf("a failed read: %v", err)
	}
	rows := strings.Repeat("1,1,1\n", serve.MaxTraceSize/6+1)
	if _, err := serve.LoadTrace(strings.NewReader("arrival_s,input_tokens,output_tokens\n"+rows), "big.csv", 0); err == nil || !strings.Contains(err.Error(), "over the 64 MiB limit") {
		t.Errorf("a trace over the limit: %v", err)
	}
}

// FuzzReadTrace: no input panics; what is read back is valid, within
// serve.MaxTime and in order.
func FuzzReadTrace(f *testing.F) {
	f.Add("arrival_s,input_tokens,output_tokens\n0,10,5\n0.5,20,7\n")
	f.Add(`{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}`)
	f.Add("arrival_s,input_tokens\n\"0")
	f.Fuzz(func(t *testing.T, s string) {
		reqs, err := serve.ReadTrace(strings.NewReader(s), "f", 0)
		// Read a byte at a time, the stream gives the same.
		again, err2 := serve.ReadTrace(iotest.OneByteReader(strings.NewReader(s)), "f", 0)
		if fmt.Sprint(err) != fmt.Sprint(err2) || !slices.Equal(reqs, again) {
			t.Fatalf("read whole: %v, %v; a byte at a time: %v, %v", reqs, err, again, err2)
		}
		if err != nil {
			return
		}
		for i, r := range reqs {
			if r.Input < 1 || r.Output < 1 || r.Arrival < 0 || r.Arrival > serve.MaxTime || (i > 0 && r.Arrival < reqs[i-1].Arrival) {
				t.Fatalf("request %d: %+v", i, r)
			}
		}
	})
}

func TestParseLengths(t *testing.T) {
	for _, tt := range []struct {
		in   string
		mean float64
		ok   bool
	}{
		{"512", 512, true}, {"uniform:10:20", 15, true}, {"normal:500:100", 500, true},
		{"lognormal:200:150:4:2000", 200, true}, {"empirical:1,2,3", 2, true}, {"lognormal:100:0", 100, true},
		{"0", 0, false}, {"-3", 0, false}, {"uniform:20:10", 0, false}, {"normal:1", 0, false},
		{"lognormal:x:1", 0, false}, {"empirical:", 0, false}, {"gamma:1:2", 0, false}, {"1.5", 0, false},
	} {
		l, err := serve.ParseLengths(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseLengths(%q) = %v, %v; want ok %v", tt.in, l, err, tt.ok)
			continue
		}
		if tt.ok && l.Mean() != tt.mean {
			t.Errorf("ParseLengths(%q).Mean() = %g, want %g", tt.in, l.Mean(), tt.mean)
		}
	}
}

// FuzzParseLengths: no spec panics, and a parsed distribution draws
// lengths of at least 1.
func FuzzParseLengths(f *testing.F) {
	for _, s := range []string{"512", "uniform:1:9", "normal:5:2:1:9", "lognormal:200:150", "empirical:3,4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := serve.ParseLengths(s)
		if err != nil {
			return
		}
		r := rand.New(rand.NewPCG(1, 2))
		for range 8 {
			if v := l.Draw(r); v < 1 {
				t.Fatalf("%q drew %d", s, v)
			}
		}
	})
}

// TestParseLengths_messages: a wrong count of numbers is said in words
// ("2 or 4 numbers", not Go's "[2 4] numbers"), and an unknown form lists
// file:PATH among the forms taken.
func TestParseLengths_messages(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"lognormal:1000:1500:16", `"lognormal:1000:1500:16": lognormal takes 2 or 4 numbers, got 3`},
		{"uniform:1", `uniform takes 2 numbers, got 1`},
		{"fixed:100", `empirical:N1,N2,…,Nk or file:PATH`},
	} {
		_, err := serve.ParseLengths(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseLengths(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}
