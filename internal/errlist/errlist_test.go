package errlist

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestFlatten(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	wrapped := fmt.Errorf("w: %w", a) // one error, not a join
	tests := []struct {
		name string
		err  error
		want []error
	}{
		{"nil", nil, nil},
		{"one", a, []error{a}},
		{"wrapped stays whole", wrapped, []error{wrapped}},
		{"joined", errors.Join(a, b), []error{a, b}},
		{"nested joins in order", errors.Join(a, errors.Join(b, c)), []error{a, b, c}},
		{"nil parts dropped by Join", errors.Join(nil, a, nil), []error{a}},
	}
	for _, tt := range tests {
		if got := Flatten(tt.err); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Flatten = %v, want %v", tt.name, got, tt.want)
		}
	}
}
