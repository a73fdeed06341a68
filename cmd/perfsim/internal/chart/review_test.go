package chart

import (
	"flag"
	"path/filepath"
	"testing"
)

var outDir = flag.String("out", "", "also write each test chart as PNG into this directory, for review")

// dump writes c as name.png into -out, when given.
func dump(t *testing.T, name string, c *Chart) {
	t.Helper()
	if *outDir == "" {
		return
	}
	if err := Save(filepath.Join(*outDir, name+".png"), c, DefaultWidth, DefaultHeight); err != nil {
		t.Fatal(err)
	}
}
