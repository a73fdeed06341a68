// Package jsonkeys finds the keys a JSON text gives twice in one object:
// encoding/json keeps the last of them silently, and perfsim's readers
// (HuggingFace config.json, JSON-lines traces) refuse them instead.
package jsonkeys

import (
	"bytes"
	"encoding/json"
)

// A Duplicate is an object key given twice in one object.
type Duplicate struct {
	Key  string // dotted path, e.g. "rope_scaling.factor"
	Line int    // 1-based line of the second
}

// Duplicates returns the keys src gives twice in the same object, at the
// line of the second, in order. It stops quietly at the first syntax
// error (the caller's decoder reports it).
func Duplicates(src []byte) []Duplicate {
	dec := json.NewDecoder(bytes.NewReader(src))
	var out []Duplicate
	var walk func(prefix string) bool
	walk = func(prefix string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				k, _ := kt.(string)
				if seen[k] {
					line := 1 + bytes.Count(src[:min(int(dec.InputOffset()), len(src))], []byte("\n"))
					out = append(out, Duplicate{prefix + k, line})
				}
				seen[k] = true
				if !walk(prefix + k + ".") {
					return false
				}
			}
			_, err = dec.Token() // }
			return err == nil
		case json.Delim('['):
			for dec.More() {
				if !walk(prefix) {
					return false
				}
			}
			_, err = dec.Token() // ]
			return err == nil
		}
		return true
	}
	walk("")
	return out
}
