package workloads

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDocsCatalogTable checks the catalog table of docs/models.md against
// the catalog: a row for every model, with its exact parameter count and
// its MACs as the table defines them (one forward pass of one sequence of
// min(2048, max context) tokens with every position's logits, or one
// image; attention products included), to the four digits printed.
func TestDocsCatalogTable(t *testing.T) {
	path := filepath.Join("..", "docs", "models.md")
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("docs/models.md not available: %v", err)
	}
	defer f.Close()
	rows := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) == 6 {
			rows[cells[0]] = cells
		}
	}
	ms, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		r, ok := rows[m.Name()]
		if !ok {
			t.Errorf("docs/models.md has no catalog row for %s", m.Name())
			continue
		}
		if got := strconv.FormatFloat(m.Params(), 'f', -1, 64); r[3] != got {
			t.Errorf("docs/models.md: %s has %s parameters, the catalog %s", m.Name(), r[3], got)
		}
		ph := Phase{Kind: Prefill, Batch: 1, Seq: 2048, AllLogits: true}
		if mc := m.Shape().MaxContext; mc > 0 && mc < ph.Seq {
			ph.Seq = mc
		}
		macs := gemmMACs(ExpandAttention(mustOps(t, m, ph)))
		if got := strconv.FormatFloat(macs, 'g', 4, 64); r[4] != got {
			t.Errorf("docs/models.md: %s has %s MACs, the catalog %s", m.Name(), r[4], got)
		}
		if string(m.Kind()) != r[1] {
			t.Errorf("docs/models.md: %s is a %s, the catalog a %s", m.Name(), r[1], m.Kind())
		}
	}
}

// TestReadmeModelCount checks the count of catalog models the README's
// "Models" section states against the catalog: it said 21 while the
// catalog held 55.
func TestReadmeModelCount(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Skipf("README.md not available: %v", err)
	}
	_, models, ok := strings.Cut(string(b), "\n## Models\n")
	if !ok {
		t.Fatal(`README.md has no "## Models" section`)
	}
	var n int
	fields := strings.Fields(models)
	for i := 0; i+1 < len(fields); i++ {
		if strings.TrimRight(fields[i+1], ",") == "models" {
			if v, err := strconv.Atoi(fields[i]); err == nil {
				n = v
				break
			}
		}
	}
	ms, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if n != len(ms) {
		t.Errorf(`README.md's "Models" says %d models; the catalog holds %d`, n, len(ms))
	}
}
