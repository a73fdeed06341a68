package sim

import (
	"sync"
	"sync/atomic"
)

// Labels. A report's op rows name their op, stage and kernel kind by a
// Label, a number standing for a string kept once for the process, so
// that a row holds no pointer: a run copies its rows into the report
// (from the price cache, at every run of a recurring scenario), and rows
// without pointers are allocated without clearing or type bits, copied
// without write barriers and never scanned by the collector, and are 72
// bytes where three strings made them 120. The strings come from the
// workloads' decompositions (a bounded vocabulary: "attn.qkv", "ffn",
// "gemm"), so the table stays small.

// A Label is an interned string; its String method returns it. The zero
// Label is "". Labels compare equal when their strings do. The numbers
// depend on the order strings were first met and are never printed: a
// Label prints, and marshals as text, as its string.
type Label uint32

// String returns the string l stands for.
func (l Label) String() string {
	names := *labels.names.Load()
	if int(l) >= len(names) {
		return ""
	}
	return names[l]
}

// MarshalText returns l's string, so that a Label encodes as its string
// (JSON, TOML), not as its number.
func (l Label) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// labels is the process's table of interned strings: ids maps a string
// to its Label (under mu), names is the strings by Label, published
// whole so that String reads it without the lock (entries, once
// published, never change; a longer table is published as strings are
// added).
var labels = func() *labelTable {
	t := &labelTable{ids: map[string]Label{"": 0}}
	names := []string{""}
	t.names.Store(&names)
	return t
}()

type labelTable struct {
	mu    sync.Mutex
	ids   map[string]Label
	names atomic.Pointer[[]string]
}

// LabelOf returns the Label of s, adding s to the table when it is new.
func LabelOf(s string) Label {
	t := labels
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.ids[s]; ok {
		return l
	}
	old := *t.names.Load()
	l := Label(len(old))
	// Appended in place when there is room: readers of the published
	// slice never index past its length.
	names := append(old, s)
	t.names.Store(&names)
	t.ids[s] = l
	return l
}

// The labels of the kernel kinds (kindOf).
var (
	kindGEMM        = LabelOf("gemm")
	kindAttention   = LabelOf("attention")
	kindElementwise = LabelOf("elementwise")
	kindGather      = LabelOf("gather")
	kindCollective  = LabelOf("collective")
	kindGrouped     = LabelOf("grouped_gemm")
	kindScan        = LabelOf("scan")
	kindOther       = LabelOf("other")
)

// A labelMemo remembers the labels of the names and stages met at each
// place of the last decompositions a runner priced, so that pricing a
// pass looks its strings up in the table only when they change (a
// string equal to the one remembered, usually the same literal, is
// compared without the lock).
type labelMemo struct {
	at []labelPair
}

type labelPair struct {
	name, stage   string
	nameL, stageL Label
}

// of returns the labels of name and stage at place i of a pass, through
// m when m is not nil.
func (m *labelMemo) of(i int, name, stage string) (Label, Label) {
	if m == nil || i >= maxLabelMemo {
		return LabelOf(name), LabelOf(stage)
	}
	if i >= len(m.at) {
		// Room for a transformer's pass at once, then doubling.
		at := make([]labelPair, min(max(i+1, 2*len(m.at), 64), maxLabelMemo))
		copy(at, m.at)
		m.at = at
	}
	p := &m.at[i]
	if p.name != name || p.nameL == 0 && name != "" {
		p.name, p.nameL = name, LabelOf(name)
	}
	if p.stage != stage || p.stageL == 0 && stage != "" {
		p.stage, p.stageL = stage, LabelOf(stage)
	}
	return p.nameL, p.stageL
}

// maxLabelMemo bounds a labelMemo: places past it (a CNN's hundreds of
// ops) are looked up in the table.
const maxLabelMemo = 1024
