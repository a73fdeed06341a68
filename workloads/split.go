package workloads

import (
	"fmt"
	"strings"
)

// SplitError is a dimension of the model that tensor parallelism does not
// split evenly over its ranks: Ops and AppendOps return one (inside the
// phase's error, matched with errors.As) for every such dimension, so that
// a caller can tell a tensor-parallel degree the model cannot take from
// other bad input without trying the phase again at TP 1.
type SplitError struct {
	// Field is the dimension, as the config names it ("heads", "ffn",
	// "kv_heads", "expert_ffn", ...).
	Field string
	// Size is the dimension's size and TP the degree that does not
	// split it: the phase's TP, or TP/EP for an expert's FFN, split
	// within its expert group.
	Size, TP int

	msg string
}

// Error returns the problem as the phase's error lists it, e.g. "8 does
// not divide heads (tp) 12".
func (e *SplitError) Error() string { return e.msg }

// splitErr returns a SplitError for field of size by tp, with the message
// "tp does not divide label size".
func splitErr(field, label string, size, tp int) *SplitError {
	return &SplitError{Field: field, Size: size, TP: tp, msg: fmt.Sprintf("%d does not divide %s %d", tp, label, size)}
}

// phaseError is the error of a phase that Ops refuses: every problem in
// one message, and the SplitErrors among them for errors.As.
type phaseError struct {
	msg    string
	splits []error
}

func (e *phaseError) Error() string   { return e.msg }
func (e *phaseError) Unwrap() []error { return e.splits }

// newPhaseError joins the problems errs and splits of model name's phase
// kind into one error, "workloads: name kind: problem; problem".
func newPhaseError(name string, kind PhaseKind, errs []string, splits []error) error {
	msgs := errs
	for _, e := range splits {
		msgs = append(msgs, e.Error())
	}
	return &phaseError{msg: fmt.Sprintf("workloads: %s %s: %s", name, kind, strings.Join(msgs, "; ")), splits: splits}
}
