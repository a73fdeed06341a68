// Package errlist splits joined errors (errors.Join, and any error with
// an Unwrap() []error method) into the errors they hold, so that the
// loaders and commands that report every problem at once can rewrite or
// filter each one.
package errlist

// Flatten returns the errors err holds, joined ones split all the way
// down, in order; err alone when it joins nothing; nil for nil.
func Flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, Flatten(e)...)
	}
	return out
}
