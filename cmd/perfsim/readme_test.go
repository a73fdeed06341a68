package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/internal/racedetect"
)

// docFiles are the pages whose commands TestDocCommands runs.
func docFiles(t *testing.T) []string {
	files := []string{filepath.Join("..", "..", "README.md")}
	more, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, more...)
}

// docSkip lists the commands of the docs that are not run, and why.
var docSkip = []struct{ contains, why string }{
	{"my-chip.toml", "a placeholder for the reader's own file"},
	{"calibrate fit --hw hardware/devices/h100-sxm.toml", "fits ../shared's measurements for minutes (calibrate/fitted/regen.sh runs it)"},
}

// raceSkip lists the commands that fit this machine's real timings, and
// the one that reads that fit: the race detector slows the measured Go
// kernels unevenly (its instrumentation, not the hardware, sets their
// times), so the fit's p90 error passes 100% and calibrate fit rightly
// refuses it. They run in normal builds.
var raceSkip = []string{"calibrate fit --hw host.toml", "--hw host-fitted.toml"}

// outputFlags take a path perfsim writes: it stays relative to the
// temporary directory the commands run in.
var outputFlags = map[string]bool{"-o": true, "--out": true, "--requests-out": true, "--describe": true}

// TestDocCommands runs every perfsim command the README and docs/ show
// (lines in their indented or fenced code blocks that start with
// "perfsim ", "$ perfsim " or "go run ./cmd/perfsim ", with "\"
// continuations joined) and checks that each exits 0. A page's commands
// run in order in a temporary directory of its own; paths to files in the repository are made
// absolute, and what a command writes lands in the temporary directory.
func TestDocCommands(t *testing.T) {
	wd, _ := os.Getwd()
	root := filepath.Join(wd, "..", "..")
	n := 0
	for _, file := range docFiles(t) {
		cmds := docCommands(t, file)
		n += len(cmds)
		name := filepath.Base(file)
		// One directory per page: a page's commands may read what its
		// earlier ones wrote.
		dir := t.TempDir()
		for _, c := range cmds {
			t.Run(name+": "+strings.Join(c, " "), func(t *testing.T) {
				line := strings.Join(c, " ")
				for _, s := range docSkip {
					if strings.Contains(line, s.contains) {
						t.Skipf("not run: %s", s.why)
					}
				}
				for _, s := range raceSkip {
					if racedetect.Enabled && strings.Contains(line, s) {
						t.Skip("not run under the race detector: it fits real CPU timings, which its instrumentation slows unevenly (p90 error over 100%, refused)")
					}
				}
				args := make([]string, len(c))
				for i, a := range c {
					if i > 0 && outputFlags[c[i-1]] {
						if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(a)), 0o755); err != nil {
							t.Fatal(err)
						}
					} else if strings.Contains(a, "/") {
						if _, err := os.Stat(filepath.Join(root, a)); err == nil {
							a = filepath.Join(root, a)
						}
					}
					args[i] = a
				}
				if err := os.Chdir(dir); err != nil {
					t.Fatal(err)
				}
				defer os.Chdir(wd)
				_, stderr, code := perfsim(t, args...)
				if code != 0 {
					t.Errorf("%s: perfsim %s exited %d:\n%s", name, line, code, stderr)
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("README.md and docs/ show no perfsim command")
	}
}

// docCommands returns the argument lists of the perfsim commands in the
// code of a markdown file.
func docCommands(t *testing.T, path string) [][]string {
	var cmds [][]string
	for _, line := range codeLines(t, path) {
		line = strings.TrimPrefix(line, "$ ")
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		var rest string
		switch {
		case strings.HasPrefix(line, "go run ./cmd/perfsim "):
			rest = strings.TrimPrefix(line, "go run ./cmd/perfsim ")
		case strings.HasPrefix(line, "perfsim "):
			rest = strings.TrimPrefix(line, "perfsim ")
		default:
			continue
		}
		if strings.ContainsAny(rest, "|><;&") {
			t.Logf("skipping shell pipeline: %s", line)
			continue
		}
		cmds = append(cmds, shellFields(rest))
	}
	return cmds
}

// shellFields splits a command line at spaces outside double or single
// quotes, dropping the quotes, as a shell does for the commands the docs
// show (--purchase "25000 USD").
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, started := rune(0), false, false
	for _, r := range s {
		switch {
		case quote && r == in:
			quote = false
		case !quote && (r == '"' || r == '\''):
			quote, in, started = true, r, true
		case !quote && r == ' ':
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// codeLines returns the trimmed lines of a markdown file's indented and
// fenced code blocks, with "\" continuations joined.
func codeLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	fenced, cont := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(line, "    ") {
			cont = ""
			continue
		}
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, "\\") {
			cont += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		out = append(out, cont+line)
		cont = ""
	}
	return out
}

// TestWorkedExample checks docs/simulate.md's worked example against the
// binary: the output block under "$ perfsim simulate ..." must be what
// the command prints, and the figures its reading quotes (TTFT, TPOT,
// E2E, tokens/s, max batch) must be the block's.
func TestWorkedExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "simulate.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	_, after, ok := strings.Cut(doc, "## A worked example\n")
	if !ok {
		t.Fatal(`docs/simulate.md has no "## A worked example"`)
	}
	var cmd []string
	var block []string
	lines := strings.Split(after, "\n")
	i := 0
	for ; i < len(lines); i++ {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "$ perfsim ") {
			cmd = strings.Fields(strings.TrimPrefix(l, "$ perfsim "))
			break
		}
	}
	if cmd == nil {
		t.Fatal("the worked example shows no command")
	}
	for i++; i < len(lines); i++ {
		l := lines[i]
		if l != "" && !strings.HasPrefix(l, "    ") {
			break
		}
		block = append(block, strings.TrimRight(strings.TrimPrefix(l, "    "), " "))
	}
	reading := strings.Join(lines[i:], "\n")
	want := strings.TrimRight(strings.Join(block, "\n"), "\n")
	out, stderr, code := perfsim(t, cmd...)
	if code != 0 {
		t.Fatalf("perfsim %s: exit %d: %s", strings.Join(cmd, " "), code, stderr)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		got = append(got, strings.TrimRight(l, " "))
	}
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("docs/simulate.md's worked example is stale; perfsim %s prints:\n%s\n\nthe doc shows:\n%s", strings.Join(cmd, " "), g, want)
	}
	// The figures the reading quotes.
	for _, re := range []string{`TTFT +(\S+ \S+)`, `TPOT +(\S+ \S+)`, `E2E +(\S+ \S+)`, `output tokens/s +(\S+)`, `max batch (\d+)`} {
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("output has no %s", re)
			continue
		}
		if !strings.Contains(reading, m[1]) {
			t.Errorf("the reading of the worked example does not quote %s %q", re, m[1])
		}
	}
}

// readmeCommands is docCommands under the name other tests call.
func readmeCommands(t *testing.T, path string) [][]string { return docCommands(t, path) }
