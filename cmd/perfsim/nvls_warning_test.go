package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNVLinkSHARPWarning: perfsim serve and plan serve with vllm-0.6 at
// TP 4 on a user's H100 file that does not say in_network_reduction warn,
// once, naming the key and the 2.25 GiB at stake; with the key, or on
// the catalog's H100, they do not.
func TestNVLinkSHARPWarning(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "hardware", "devices", "h100-sxm.toml"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(data), `name = "H100 SXM"`, `name = "Our H100"`, 1)
	src = strings.Replace(src, `aliases = ["h100", "h100-sxm5", "h100-80gb"]`, "", 1)
	unstated := strings.Replace(src, `in_network_reduction = "nvlink-sharp"`+"\n", "", 1)
	unstated = regexp.MustCompile(`, in_network_reduction = "N21[^"]*"`).ReplaceAllString(unstated, "")
	if unstated == src || strings.Contains(unstated, "in_network_reduction") {
		t.Fatal("could not drop in_network_reduction from h100-sxm.toml")
	}
	dir := t.TempDir()
	files := map[string]string{"stated": filepath.Join(dir, "stated.toml"), "unstated": filepath.Join(dir, "unstated.toml")}
	for k, s := range map[string]string{"stated": src, "unstated": unstated} {
		if err := os.WriteFile(files[k], []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, hw := range []string{"h100", files["stated"], files["unstated"]} {
		for _, args := range [][]string{
			{"serve", "--hw", hw, "--model", "llama3-70b", "--tp", "4", "--engine", "vllm-0.6", "--input", "256", "--output", "16", "--requests", "20", "--rate", "2"},
			{"plan", "serve", "--hw", hw, "--model", "llama3-70b", "--tp", "2,4", "--pp", "1", "--engine", "vllm-0.6", "--input", "256", "--output", "16", "--requests", "40", "--rate", "2", "--ttft-p99", "2s", "--tpot-p99", "200ms"},
		} {
			_, errOut, code := perfsim(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			n := strings.Count(errOut, "does not say whether its switch reduces in the network")
			want := 0
			if hw == files["unstated"] {
				want = 1
			}
			if n != want {
				t.Errorf("%s %s on %s: %d warnings of in_network_reduction, want %d:\n%s", args[0], args[1], filepath.Base(hw), n, want, errOut)
			}
			if want == 1 && !strings.Contains(errOut, "2.25 GiB") {
				t.Errorf("%s on %s: the warning does not give the 2.25 GiB at stake:\n%s", args[0], filepath.Base(hw), errOut)
			}
		}
	}
}
