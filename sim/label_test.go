package sim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// TestLabel: a Label stands for its string, prints and marshals as it,
// and equal strings have equal Labels.
func TestLabel(t *testing.T) {
	for _, s := range []string{"", "attn.qkv", "gemm", "a label met first here", "ünïcode"} {
		l := LabelOf(s)
		if got := l.String(); got != s {
			t.Errorf("LabelOf(%q).String() = %q", s, got)
		}
		if again := LabelOf(s); again != l {
			t.Errorf("LabelOf(%q) = %d, then %d", s, l, again)
		}
		if got := fmt.Sprintf("%s|%v|%-3s", l, l, l); got != fmt.Sprintf("%s|%s|%-3s", s, s, s) {
			t.Errorf("%q formats as %q", s, got)
		}
		b, err := json.Marshal(struct{ K Label }{l})
		if want, _ := json.Marshal(struct{ K string }{s}); err != nil || string(b) != string(want) {
			t.Errorf("%q marshals as %s, %v; want %s", s, b, err, want)
		}
	}
	if LabelOf("") != 0 || Label(0).String() != "" {
		t.Error(`the zero Label is not ""`)
	}
	if got := Label(1 << 30).String(); got != "" {
		t.Errorf("a Label never made prints %q", got)
	}
	if kindOf(nil) != kindOther || kindGEMM.String() != "gemm" || kindGrouped.String() != "grouped_gemm" {
		t.Error("kind labels")
	}
}

// TestLabel_concurrent interns and reads labels from several goroutines
// (run with -race).
func TestLabel_concurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				s := fmt.Sprintf("concurrent.%d", (i*7+g)%50)
				if got := LabelOf(s).String(); got != s {
					t.Errorf("LabelOf(%q).String() = %q", s, got)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestLabelMemo: the memo gives the table's labels, place by place, when
// the strings at a place change, for places past its bound, and
// without a memo.
func TestLabelMemo(t *testing.T) {
	var m labelMemo
	for _, tt := range []struct {
		i           int
		name, stage string
	}{
		{0, "embed.tokens", "embedding"}, {1, "attn.qkv", "attention"}, {1, "attn.qkv", "attention"},
		{1, "ffn.up", "attention"}, {1, "ffn.up", "ffn"}, {1, "", ""}, {3, "x", ""}, {0, "", "y"},
		{maxLabelMemo + 5, "far", "away"},
	} {
		for _, memo := range []*labelMemo{&m, nil} {
			n, s := memo.of(tt.i, tt.name, tt.stage)
			if n != LabelOf(tt.name) || s != LabelOf(tt.stage) {
				t.Errorf("place %d %q %q (memo %v): %q %q", tt.i, tt.name, tt.stage, memo != nil, n, s)
			}
		}
	}
	if len(m.at) > maxLabelMemo {
		t.Errorf("the memo grew to %d places", len(m.at))
	}
}

// TestRows_noPointers: report rows hold no pointers (label.go), so that
// a run's rows are allocated untyped, copied without write barriers and
// never scanned; a string or slice field added to a row fails here.
func TestRows_noPointers(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[OpRow](), reflect.TypeFor[ClassRow]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			default:
				t.Errorf("%s.%s is a %s: rows hold no pointers (use a Label for a string)", typ.Name(), f.Name, f.Type)
			}
		}
	}
	if s := reflect.TypeFor[OpRow]().Size(); s > 72 {
		t.Errorf("an OpRow is %d bytes, was 72", s)
	}
}
