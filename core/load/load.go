// Package load turns the bytes of a model or cluster file into core types, detecting the
// format: pipeplan's native JSON, Graphcore's auto-pipeline ModelInfo and IPUClusterInfo,
// or a PipeDream graph.txt profile. Every result has passed its Validate.
package load

import (
	"bytes"
	"encoding/json"
	"fmt"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Format names an input format.
type Format string

// The model formats Model detects.
const (
	Native Format = "native"
)

// Model decodes a model file in any supported format and validates it.
func Model(data []byte) (*model.Model, Format, error) {
	var m model.Model
	if err := strictJSON(data, &m); err != nil {
		return nil, "", err
	}
	if err := m.Validate(); err != nil {
		return nil, Native, err
	}
	return &m, Native, nil
}

// Cluster decodes a cluster file in any supported format and validates it.
func Cluster(data []byte) (*cluster.Cluster, error) {
	var c cluster.Cluster
	if err := strictJSON(data, &c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// strictJSON decodes one JSON value, refusing unknown fields and trailing data, with
// errors that say where the input went wrong.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(data, err)
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the JSON value at byte %d", dec.InputOffset())
	}
	return nil
}

func jsonError(data []byte, err error) error {
	switch e := err.(type) {
	case *json.SyntaxError:
		line, col := position(data, e.Offset)
		return fmt.Errorf("JSON syntax error at line %d, column %d: %v", line, col, e)
	case *json.UnmarshalTypeError:
		return &model.FieldError{Path: e.Field, Reason: fmt.Sprintf("must be a JSON %s, got %s", jsonKind(e.Type.Kind().String()), e.Value)}
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	case "bool":
		return "boolean"
	}
	return "number (" + goKind + ")"
}

func position(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
