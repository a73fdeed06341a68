package main

import (
	"errors"

	"github.com/perfsim/perfsim/workloads"
)

// resolveModel turns a --model argument (a catalog name, or a path to a
// model TOML or a HuggingFace config.json) into a model. A name that is
// neither, and a file that fails to load, are usage errors (exit 2;
// inputError): the file's problems each at its file, line and key.
func resolveModel(arg string) (*workloads.Model, error) {
	if arg == "" {
		return nil, usagef("--model is required (a catalog name such as llama3-8b, or a .toml or config.json file)")
	}
	m, err := workloads.Resolve(arg)
	if err != nil {
		var ce *workloads.ConfigError
		return nil, inputError("--model", err, errors.As(err, &ce))
	}
	return m, nil
}
