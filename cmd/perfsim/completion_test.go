package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletion_bash sources the bash script in bash and completes a few
// command lines: commands, subcommands, flags, and catalog names after
// --hw and --model.
func TestCompletion_bash(t *testing.T) {
	script, stderr, code := perfsim(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the script in")
	}
	file := filepath.Join(t.TempDir(), "perfsim.bash")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		want  string // the completions, space-separated
	}{
		{[]string{"perfsim", "sim"}, "simulate"},
		{[]string{"perfsim", "comp"}, "completion"},
		{[]string{"perfsim", "simulate", "--hw", "h20"}, "h200"},
		{[]string{"perfsim", "simulate", "--model", "llama3-7"}, "llama3-70b"},
		{[]string{"perfsim", "simulate", "--requ"}, "--require-fit"},
		{[]string{"perfsim", "simulate", "--com"}, "--comm"},
		{[]string{"perfsim", "plot", "roo"}, "roofline"},
		{[]string{"perfsim", "plot", "roofline", "--ba"}, "--batch"},
		{[]string{"perfsim", "plan", "tr"}, "train"},
		{[]string{"perfsim", "plan", "train", "--glo"}, "--global-batch"},
		{[]string{"perfsim", "hardware", "show", "mi3"}, "mi300x mi325x mi300x-platform"},
		{[]string{"perfsim", "calibrate", "me"}, "merge measure"},
		{[]string{"perfsim", "completion", "f"}, "fish"},
	} {
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c",
			`source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _perfsim; echo "${COMPREPLY[*]}"`, "bash", file)
		cmd.Args = append(cmd.Args, tc.words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", tc.words, err, out)
		}
		got := strings.Join(strings.Fields(string(out)), " ")
		if got != tc.want {
			t.Errorf("%s<TAB> = %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// TestCompletion_shells checks the zsh and fish scripts' content (the
// shells may not be installed) and that an unknown shell is a usage
// error.
func TestCompletion_shells(t *testing.T) {
	zsh, _, code := perfsim(t, "completion", "zsh")
	if code != 0 || !strings.Contains(zsh, "bashcompinit") || !strings.Contains(zsh, "complete -o default -F _perfsim perfsim") {
		t.Errorf("zsh: exit %d, script without bashcompinit or the completion function:\n%.400s", code, zsh)
	}
	fish, _, code := perfsim(t, "completion", "fish")
	if code != 0 {
		t.Fatalf("fish: exit %d", code)
	}
	for _, want := range []string{
		"complete -c perfsim -n __fish_use_subcommand -a simulate -d 'latency, throughput and memory of a model on hardware'",
		"complete -c perfsim -n '__fish_seen_subcommand_from simulate' -l require-fit",
		"complete -c perfsim -n '__fish_seen_subcommand_from plot; and __fish_seen_subcommand_from roofline' -l batch",
		"-l hw -r -F -a 'v100 a100-40gb",
	} {
		if !strings.Contains(fish, want) {
			t.Errorf("fish script lacks %q", want)
		}
	}
	if _, stderr, code := perfsim(t, "completion", "powershell"); code != 2 || !strings.Contains(stderr, `unknown shell "powershell" (want bash, zsh or fish)`) {
		t.Errorf("completion powershell: exit %d, %q; want 2 naming the shells", code, stderr)
	}
	if _, stderr, code := perfsim(t, "completion"); code != 2 || !strings.Contains(stderr, "give one shell") {
		t.Errorf("completion: exit %d, %q; want 2", code, stderr)
	}
}
