package hardware

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// noStash rewrites an overlay so that stashLists takes nothing out of it
// (a comment after each list), leaving its meaning unchanged.
func noStash(data []byte) []byte {
	var out []byte
	for line := range bytes.Lines(data) {
		l := bytes.TrimRight(line, "\n")
		if _, _, ok := stashable(l); ok {
			l = append(append([]byte(nil), l...), " # not stashed"...)
		}
		out = append(append(out, l...), '\n')
	}
	return out
}

// TestStashLists checks that the calibrated devices load the same with
// their residual lists taken out of the TOML parser's way and without.
func TestStashLists(t *testing.T) {
	for _, stem := range []string{"h100-sxm", "a100-sxm-80gb", "h200-sxm"} {
		data, err := devicesFS.ReadFile("devices/fitted/" + stem + ".toml")
		if err != nil {
			t.Fatal(err)
		}
		stripped, lists := stashLists(data)
		if len(lists) == 0 {
			t.Errorf("%s: nothing stashed; the fitted residual lists should be", stem)
		}
		if bytes.Count(stripped, []byte("\n")) != bytes.Count(data, []byte("\n")) {
			t.Errorf("%s: stashing changed the number of lines", stem)
		}
		slow := noStash(data)
		if _, l := stashLists(slow); l != nil {
			t.Fatalf("%s: noStash left %d lists to stash", stem, len(l))
		}
		base, err := loadCatalogFile(stem) // with the overlay applied
		if err != nil {
			t.Fatal(err)
		}
		// Reload the hand-written file alone, then apply the slow overlay.
		hw, _ := devicesFS.ReadFile("devices/" + stem + ".toml")
		d, err := Load(bytes.NewReader(hw), "hardware/devices/"+stem+".toml")
		if err != nil {
			t.Fatal(err)
		}
		if err := ApplyFitted(d, bytes.NewReader(slow), "hardware/devices/fitted/"+stem+".toml"); err != nil {
			t.Fatal(err)
		}
		d.File = base.File
		if !reflect.DeepEqual(d, base) {
			t.Errorf("%s: the overlay applied with and without stashing differ", stem)
		}
	}
}

// TestStashLists_errorLine checks that a bad number in a stashed list is
// reported at its key's line.
func TestStashLists_errorLine(t *testing.T) {
	list := strings.Repeat("0.5 ", 80) + "1e999"
	text := "[efficiency.gemm.bf16]\ncompute = 0.8\nmemory = 0.8\nsource = \"test\"\n\n[efficiency.gemm.bf16.residual]\nlog2_m = \"0\"\nlog2_n = \"0\"\nlog2_k = \"" + strings.Repeat("1 ", 80) + "\"\nvalues = \"" + list + "\"\n"
	if _, l := stashLists([]byte(text)); len(l) != 1 {
		t.Fatalf("%d lists stashed, want 1 (values)", len(l))
	}
	d, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	err = ApplyFitted(d, strings.NewReader(text), "x.toml")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 10 || !strings.Contains(err.Error(), "not a finite number") {
		t.Errorf("got %v; want an error at x.toml:10 about a number that is not finite", err)
	}
}

// FuzzStashLists checks that stashing keeps the lines and that putting
// the lists back gives the text.
func FuzzStashLists(f *testing.F) {
	f.Add([]byte("values = \"" + strings.Repeat("1.5 -2e3 ", 40) + "\"\nx = 1\n"))
	f.Add([]byte("log2_m = \"" + strings.Repeat("1 ", 200) + "\" # c\n"))
	f.Add([]byte("values=\"" + strings.Repeat("7", 300) + "\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, lists := stashLists(data)
		if lists == nil {
			if !bytes.Equal(out, data) {
				t.Fatal("nothing stashed but the text changed")
			}
			return
		}
		a, b := bytes.Split(out, []byte("\n")), bytes.Split(data, []byte("\n"))
		if len(a) != len(b) {
			t.Fatalf("%d lines, want %d", len(a), len(b))
		}
		for i := range a {
			l, ok := lists[i+1]
			if !ok {
				if !bytes.Equal(a[i], b[i]) {
					t.Fatalf("line %d changed without a stash", i+1)
				}
				continue
			}
			j := bytes.Index(a[i], []byte(`""`))
			if j < 0 || string(a[i][:j+1])+l+string(a[i][j+1:]) != string(b[i]) {
				t.Fatalf("line %d: %q with %q put back is not %q", i+1, a[i], l, b[i])
			}
		}
	})
}
