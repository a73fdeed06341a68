package main

import (
	"errors"

	"github.com/perfsim/perfsim/workloads"
)

// resolveModel turns a --model argument (a catalog name, or a path to a
// model TOML or a HuggingFace config.json) into a model. A name that is
// neither is a usage error (exit 2); a file that fails to load is a run
// failure (exit 1) whose message names the file, line and key.
func resolveModel(arg string) (*workloads.Model, error) {
	if arg == "" {
		return nil, usagef("--model is required (a catalog name such as llama3-8b, or a .toml or config.json file)")
	}
	m, err := workloads.Resolve(arg)
	if errors.Is(err, workloads.ErrUnknownModel) {
		return nil, usagef("--model: %w", err)
	}
	return m, err
}
