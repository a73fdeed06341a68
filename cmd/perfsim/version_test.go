package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/perfsim/perfsim/hardware"
)

// TestWriteVersion: the revision, commit time and Go version come from
// the build info, and the catalog's fit dates are listed.
func TestWriteVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.22.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-24T04:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	var b bytes.Buffer
	writeVersion(&b, bi)
	for _, want := range []string{"perfsim devel\n", "revision 0123456789abcdef0123456789abcdef01234567 (with uncommitted changes)\n",
		"committed 2026-11-24T04:00:00Z\n", "built with go1.22.0\n", "catalog fits:\n", "  H100 SXM: 2026-11-26\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeVersion(&b, &debug.BuildInfo{GoVersion: "go1.22.0"})
	if !strings.Contains(b.String(), "revision unknown") {
		t.Errorf("without VCS settings: %q", b.String())
	}
}

// TestVersion_gitBuild builds the binary from the git checkout it is in
// (with -buildvcs=true, whatever GOFLAGS says) and checks that perfsim
// version prints the commit's revision. It needs the repository's .git
// directory (a worktree's .git file is not one Go stamps from) and the
// git and go tools; otherwise it skips, saying which.
func TestVersion_gitBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		t.Skipf("%s/.git is not a directory (a worktree or an export): Go stamps no revision there", root)
	}
	gitRev, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "perfsim")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "revision " + strings.TrimSpace(string(gitRev))
	if !strings.Contains(string(out), want) || !regexp.MustCompile(`(?m)^committed \d{4}-`).Match(out) {
		t.Errorf("perfsim version:\n%s\nwant %q and the commit time", out, want)
	}
}

// TestCatalogFitDates checks the fit dates version reads from the fitted
// overlays' text against those in the sources of every loaded catalog
// device (how version found them before, at 50 ms a run).
func TestCatalogFitDates(t *testing.T) {
	var want []string
	for _, d := range hardware.Catalog() {
		srcs := make([]string, 0, len(d.Sources))
		for _, s := range d.Sources {
			srcs = append(srcs, s)
		}
		if ds := fitDates(srcs); ds != "" {
			want = append(want, d.Name+": "+ds)
		}
	}
	got := catalogFitDates()
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("fit dates from the overlays' text:\n%q\nfrom the loaded devices:\n%q", got, want)
	}
}
