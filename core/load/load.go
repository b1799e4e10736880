// Package load turns the bytes of a model or cluster file into core types, detecting the
// format: pipeplan's native JSON, Graphcore's auto-pipeline ModelInfo and IPUClusterInfo,
// or a PipeDream graph.txt profile. Every result has passed its Validate.
package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Format names an input format.
type Format string

// The formats Model and Cluster detect.
const (
	// Native is pipeplan's own JSON: the model.Model and cluster.Cluster structs.
	Native Format = "native"
	// Graphcore is the JSON of Graphcore's auto-pipeline tool (seed 000): a ModelInfo
	// (keys layerName, layerType, layerInfo) or an IPUClusterInfo (clock, memory,
	// connection).
	Graphcore Format = "graphcore"
	// PipeDream is the text graph.txt profile of PipeDream's profiler: node lines and
	// tab-indented edge lines.
	PipeDream Format = "pipedream"
)

// Model decodes a model file in any supported format and validates it. It returns the
// format it detected (empty when the input is in none). Errors name the bad field by its
// path in the source format ("layerInfo[3].cycle.forward: must be >= 0", "line 12: ...").
func Model(data []byte) (*model.Model, Format, error) {
	data = trimBOM(data)
	f := DetectModel(data)
	var (
		m   *model.Model
		err error
	)
	switch f {
	case Graphcore:
		m, err = graphcoreModel(data)
	case PipeDream:
		m, err = pipeDreamModel(data)
	case Native:
		m = new(model.Model)
		if err := strictJSON(data, m); err != nil {
			return nil, "", err
		}
	default:
		return nil, "", errors.New("unrecognised model format: expected a JSON object (a pipeplan model or a Graphcore ModelInfo) or a PipeDream graph.txt (lines \"node1 -- Desc -- forward_compute_time=...\")")
	}
	if err != nil {
		return nil, f, err
	}
	if err := m.Validate(); err != nil {
		return nil, f, err
	}
	return m, f, nil
}

// Cluster decodes a cluster file in any supported format (pipeplan's native JSON or a
// Graphcore IPUClusterInfo) and validates it. Native devices named after a preset get the
// preset's figures they leave out (cluster.FillFromPresets).
func Cluster(data []byte) (*cluster.Cluster, error) {
	data = trimBOM(data)
	var c *cluster.Cluster
	switch DetectCluster(data) {
	case Graphcore:
		var err error
		if c, err = graphcoreCluster(data); err != nil {
			return nil, err
		}
	default:
		c = new(cluster.Cluster)
		if err := strictJSON(data, c); err != nil {
			return nil, err
		}
		if err := c.FillFromPresets(); err != nil {
			return nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// DetectModel says which format a model file is in, from its first bytes and top-level
// keys, without validating it: Graphcore for a JSON object with any of the keys layerName,
// layerType or layerInfo; Native for any other JSON (whose decoding then says what is
// wrong); PipeDream for text with a " -- " separator; empty otherwise.
func DetectModel(data []byte) Format {
	data = trimBOM(data)
	if isJSON(data) {
		if hasAnyKey(data, "layerName", "layerType", "layerInfo") {
			return Graphcore
		}
		return Native
	}
	if bytes.Contains(data, []byte(" -- ")) {
		return PipeDream
	}
	return ""
}

// DetectCluster says which format a cluster file is in: Graphcore for a JSON object with
// any of the keys clock, memory or connection, Native otherwise.
func DetectCluster(data []byte) Format {
	if hasAnyKey(trimBOM(data), "clock", "memory", "connection") {
		return Graphcore
	}
	return Native
}

// isJSON reports whether data starts, after white space, like a JSON object or array.
func isJSON(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && (data[0] == '{' || data[0] == '[')
}

// hasAnyKey reports whether data is a JSON object with one of the keys at its top level.
func hasAnyKey(data []byte, keys ...string) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	for _, k := range keys {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}

func trimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) }

// strictJSON decodes one JSON value, refusing unknown fields and trailing data, with
// errors that say where the input went wrong.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(data, err)
	}
	if dec.More() {
		off := dec.InputOffset()
		for off < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
			off++
		}
		line, col := position(data, off+1)
		return fmt.Errorf("unexpected data after the JSON value at line %d, column %d", line, col)
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

// position turns a json.SyntaxError offset (the bytes read when the error was found, so
// the offending byte is the one before it) into a line and column, both from 1.
func position(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off-1 && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
