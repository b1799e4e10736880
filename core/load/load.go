// Package load turns the bytes of a model or cluster file into core types, detecting the
// format: pipeplan's native JSON, Graphcore's auto-pipeline ModelInfo and IPUClusterInfo,
// or a PipeDream graph.txt profile. Every result has passed its Validate.
package load

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Format names an input format.
type Format string

// The formats Model and Cluster detect.
const (
	// Native is pipeplan's own JSON: the model.Model and cluster.Cluster structs.
	Native Format = "native"
	// Graphcore is the JSON of Graphcore's auto-pipeline tool: a ModelInfo
	// (keys layerName, layerType, layerInfo) or an IPUClusterInfo (clock, memory,
	// connection).
	Graphcore Format = "graphcore"
	// PipeDream is the text graph.txt profile of PipeDream's profiler: node lines and
	// tab-indented edge lines.
	PipeDream Format = "pipedream"
)

// MaxInputBytes bounds the size of a model or cluster file (512 MiB): room for a profile
// of a million layers (about 320 bytes each) and most of model.MaxLayers. Real profiles
// are a few megabytes; Model and Cluster refuse larger inputs before reading them.
const MaxInputBytes = 512 << 20

// Model decodes a model file in any supported format and validates it. It returns the
// format it detected (empty when the input is in none). Errors name the bad field by its
// path in the source format ("layerInfo[3].cycle.forward: must be >= 0", "line 12: ...").
//
// Hostile input is refused early and cheaply: a file over MaxInputBytes, more than
// model.MaxLayers layers, and JSON that encoding/json would read with a silent meaning
// (a key given twice, null for a value, a number written as a string); docs/formats.md
// says what each format accepts.
func Model(data []byte) (*model.Model, Format, error) {
	if err := checkSize(data); err != nil {
		return nil, "", err
	}
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
		m, err = nativeModel(data)
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
	if err := checkSize(data); err != nil {
		return nil, err
	}
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
		if err := decodeNative(data, c, map[string]int{"devices": cluster.MaxStages}); err != nil {
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

func checkSize(data []byte) error {
	if len(data) > MaxInputBytes {
		return fmt.Errorf("the input is %d bytes; at most %d (%d MiB) are read", len(data), MaxInputBytes, MaxInputBytes>>20)
	}
	return CheckText(data)
}

// SniffBytes is how much of an input CheckText looks at: enough to tell text from a
// binary file at once, whatever the file's size.
const SniffBytes = 4096

// CheckText refuses an input that is not text, from its first SniffBytes bytes: a NUL
// byte, or bytes that are not UTF-8 (every format read here is UTF-8 text: JSON, a
// PipeDream graph.txt). A binary file (64 MB of zeros given as a model) is refused in
// microseconds, where reading it as a document took seconds and gigabytes. A character
// cut by the end of the window is not an error.
func CheckText(data []byte) error {
	return CheckTextHead(data[:min(len(data), SniffBytes)], len(data) > SniffBytes)
}

// CheckTextHead is CheckText of the first bytes of an input (head), read before the rest:
// more says whether more bytes follow, so that a character cut at head's end is not an
// error.
func CheckTextHead(head []byte, more bool) error {
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fmt.Errorf("the input is binary (a NUL byte at offset %d), not text: give a JSON file or a PipeDream graph.txt", i)
	}
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n <= 1 {
			if more && !utf8.FullRune(head[i:]) {
				break // cut by the window
			}
			return fmt.Errorf("the input is not UTF-8 text (byte 0x%02x at offset %d): give a JSON file or a PipeDream graph.txt, saved as UTF-8", head[i], i)
		}
		i += n
	}
	return nil
}

// decodeNative decodes a file of pipeplan's own JSON into v (a *model.Model or a
// *cluster.Cluster), its top-level arrays bounded.
func decodeNative(data []byte, v any, bounds map[string]int) error {
	r := newReader(data)
	r.bounds = bounds
	r.decode(reflect.ValueOf(v).Elem())
	return r.end()
}

// nativeModel decodes pipeplan's own JSON (model.Model), layer by layer. Besides what
// Validate checks, every layer must have a name of its own: two layers may share one
// only as calls of one layer, in one tie group (as Graphcore profiles name them).
func nativeModel(data []byte) (*model.Model, error) {
	m := new(model.Model)
	if err := decodeNative(data, m, map[string]int{"layers": model.MaxLayers}); err != nil {
		return nil, err
	}
	var es model.Errors
	first := make(map[string]int, len(m.Layers)) // layer name -> the first layer with it
	for i, l := range m.Layers {
		j, dup := first[l.Name]
		switch {
		case l.Name == "":
			es.Add(fmt.Sprintf("layers[%d].name", i), "is missing: every layer needs a name")
		case !dup:
			first[l.Name] = i
		case l.TieGroup == "" || l.TieGroup != m.Layers[j].TieGroup:
			es.Add(fmt.Sprintf("layers[%d].name", i), "%q is already the name of layers[%d]: names must differ, unless both layers are calls of one layer in one tie_group", l.Name, j)
		}
		if len(es) == maxErrors {
			break
		}
	}
	if len(es) > 0 {
		return nil, es
	}
	return m, nil
}

// DetectModel says which format a model file is in, from its first bytes and top-level
// keys, without validating it: Graphcore for a JSON object with any of the keys layerName,
// layerType or layerInfo; Native for any other JSON (whose decoding then says what is
// wrong); PipeDream for text with a " -- " separator; empty otherwise.
func DetectModel(data []byte) Format {
	data = trimBOM(data)
	if isJSON(data) {
		if hasTopKey(data, "layerName", "layerType", "layerInfo") {
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
	if hasTopKey(trimBOM(data), "clock", "memory", "connection") {
		return Graphcore
	}
	return Native
}

// isJSON reports whether data starts, after white space, like a JSON object or array.
func isJSON(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && (data[0] == '{' || data[0] == '[')
}

func trimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) }

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
