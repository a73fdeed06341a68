package serve_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/serve"
)

func TestParseDisagg(t *testing.T) {
	for _, tt := range []struct {
		in   string
		p, d int
		ok   bool
	}{
		{"2P1D", 2, 1, true}, {"1p1d", 1, 1, true}, {" 4P12D ", 4, 12, true},
		{"0P1D", 0, 0, false}, {"1P0D", 0, 0, false}, {"P1D", 0, 0, false}, {"2P", 0, 0, false},
		{"2PD", 0, 0, false}, {"-1P2D", 0, 0, false}, {"+1P2D", 0, 0, false}, {"2D1P", 0, 0, false}, {"", 0, 0, false}, {"1.5P1D", 0, 0, false},
	} {
		p, d, err := serve.ParseDisagg(tt.in)
		if (err == nil) != tt.ok || p != tt.p || d != tt.d {
			t.Errorf("ParseDisagg(%q) = %d, %d, %v; want %d, %d, ok %v", tt.in, p, d, err, tt.p, tt.d, tt.ok)
		}
	}
}

func FuzzParseDisagg(f *testing.F) {
	for _, s := range []string{"2P1D", "0P1D", "p1d", "12p3D", "1P+1D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, d, err := serve.ParseDisagg(s)
		if err != nil {
			return
		}
		if p < 1 || d < 1 {
			t.Fatalf("%q: %d, %d", s, p, d)
		}
		// Round trip.
		p2, d2, err := serve.ParseDisagg(fmt.Sprintf("%dP%dD", p, d))
		if err != nil || p2 != p || d2 != d {
			t.Fatalf("%q: %d, %d; again %d, %d, %v", s, p, d, p2, d2, err)
		}
	})
}

func TestReadLengths(t *testing.T) {
	got, err := serve.ReadLengths(strings.NewReader("# ShareGPT prompts\n120\n\n 3000 \n7\n"), "in.txt")
	if err != nil || len(got) != 3 || got[0] != 120 || got[1] != 3000 || got[2] != 7 || got.Mean() != 3127.0/3 {
		t.Errorf("got %v, %v", got, err)
	}
	_, err = serve.ReadLengths(strings.NewReader("12\nx\n0\n5\n"), "in.txt")
	if err == nil || !strings.Contains(err.Error(), "in.txt:2:") || !strings.Contains(err.Error(), "in.txt:3:") {
		t.Errorf("bad lines: %v", err)
	}
	if _, err := serve.ReadLengths(strings.NewReader("# nothing\n"), "e.txt"); err == nil || !strings.Contains(err.Error(), "e.txt") {
		t.Errorf("empty: %v", err)
	}
}

func FuzzReadLengths(f *testing.F) {
	f.Add("1\n2\n3\n")
	f.Add("# c\n\n1000000000\n")
	f.Add("-1\n")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := serve.ReadLengths(strings.NewReader(s), "f")
		if err != nil {
			return
		}
		var b strings.Builder
		for _, v := range e {
			if v < 1 || v > 1<<30 {
				t.Fatalf("%d", v)
			}
			fmt.Fprintf(&b, "%d\n", v)
		}
		again, err := serve.ReadLengths(strings.NewReader(b.String()), "f")
		if err != nil || len(again) != len(e) {
			t.Fatalf("round trip: %v, %v", again, err)
		}
	})
}
