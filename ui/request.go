package ui

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Request is the planning request the page builds: the whole state of the page that a
// link, a reload or localStorage restores. It mirrors core/request.Request as
// /work/wt/notes/REQUEST-CONTRACT.md describes it, field for field and in the same JSON,
// so that when core/request lands this type becomes an alias of request.Request and the
// page's planning becomes one call to request.Run.
type Request struct {
	Version          int         `json:"version"`
	Model            ModelSpec   `json:"model"`
	Cluster          ClusterSpec `json:"cluster"`
	Parallelism      Parallelism `json:"parallelism,omitzero"`
	Training         Training    `json:"training,omitzero"`
	Schedule         Schedule    `json:"schedule,omitzero"`
	Objective        string      `json:"objective,omitempty"`
	MemoryProportion float64     `json:"memory_proportion,omitempty"`
	// Boundaries, when set, are a manual split to cost instead of the optimum:
	// [0, s1, ..., n] as in core/plan.Plan.
	Boundaries []int `json:"boundaries,omitempty"`
	// Events keeps the schedule's timeline in the result (the Schedule panel draws it).
	Events bool `json:"events,omitempty"`
}

// ModelSpec says where the model comes from: exactly one of Document, Example and
// Architecture.
type ModelSpec struct {
	// Document is an imported model file: a JSON object (native, Graphcore), or a JSON
	// string holding the file's text (PipeDream graph.txt).
	Document json.RawMessage `json:"document,omitempty"`
	// Example names a bundled example profile (core/examples).
	Example string `json:"example,omitempty"`
	// Architecture is a transformer costed analytically (core/analytic).
	Architecture *Architecture `json:"architecture,omitempty"`
}

// Architecture is a HuggingFace architecture: a bundled config's Name or a config.json
// (Config), with the knobs of the analytic profiler.
type Architecture struct {
	Name      string          `json:"name,omitempty"`
	Config    json.RawMessage `json:"config,omitempty"`
	Batch     int             `json:"batch,omitempty"`
	Seq       int             `json:"seq,omitempty"`
	DType     string          `json:"dtype,omitempty"`
	Attention string          `json:"attention,omitempty"`
}

// ClusterSpec is a cluster document (native or Graphcore IPUClusterInfo), or Count
// copies of a Device preset joined by a Link preset.
type ClusterSpec struct {
	Document      json.RawMessage `json:"document,omitempty"`
	Device        string          `json:"device,omitempty"`
	Count         int             `json:"count,omitempty"`
	Link          string          `json:"link,omitempty"`
	FreeTransfers bool            `json:"free_transfers,omitempty"`
}

// Parallelism: pipeline stages, data-parallel replicas, ZeRO stage (0 or 1).
type Parallelism struct {
	Pipeline int `json:"pipeline,omitempty"`
	Data     int `json:"data,omitempty"`
	Zero     int `json:"zero,omitempty"`
}

// Training: mode "training" or "inference", optimizer, precision, recompute
// (none, selective, full).
type Training struct {
	Mode      string `json:"mode,omitempty"`
	Optimizer string `json:"optimizer,omitempty"`
	Precision string `json:"precision,omitempty"`
	Recompute string `json:"recompute,omitempty"`
}

// Schedule: the pipeline schedule's name as core/schedule.Parse reads it, the
// microbatches per step and the samples per microbatch.
type Schedule struct {
	Name           string `json:"name,omitempty"`
	Microbatches   int    `json:"microbatches,omitempty"`
	MicrobatchSize int    `json:"microbatch_size,omitempty"`
}

// Clone returns a deep copy.
func (r *Request) Clone() *Request {
	c := *r
	c.Model.Document = bytes.Clone(r.Model.Document)
	if r.Model.Architecture != nil {
		a := *r.Model.Architecture
		a.Config = bytes.Clone(a.Config)
		c.Model.Architecture = &a
	}
	c.Cluster.Document = bytes.Clone(r.Cluster.Document)
	c.Boundaries = append([]int(nil), r.Boundaries...)
	if len(c.Boundaries) == 0 {
		c.Boundaries = nil
	}
	return &c
}

// fragmentPrefix starts the URL fragment that holds a request: "r1." then the request's
// JSON, deflated (compress/flate) and base64url-encoded without padding. The 1 is the
// encoding's version, so that another encoding can be added without breaking links.
const fragmentPrefix = "r1."

// maxFragmentJSON bounds the JSON a fragment may inflate to (a 10,000-layer profile is a
// few MB), so that a crafted link cannot make the page allocate without limit.
const maxFragmentJSON = 64 << 20

// EncodeFragment writes the request as a URL fragment (without the "#").
func EncodeFragment(r *Request) (string, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		return "", err
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		return "", err
	}
	return fragmentPrefix + base64.RawURLEncoding.EncodeToString(buf.Bytes()), nil
}

// DecodeFragment reads a fragment written by EncodeFragment (with or without the "#").
// Errors say what is wrong with the link.
func DecodeFragment(s string) (*Request, error) {
	s = strings.TrimPrefix(s, "#")
	if !strings.HasPrefix(s, fragmentPrefix) {
		return nil, errors.New("the link's #fragment is not a pipeplan request (it should start with r1.)")
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[len(fragmentPrefix):])
	if err != nil {
		return nil, fmt.Errorf("the link's request is damaged (base64: %v): was it cut short?", err)
	}
	data, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxFragmentJSON+1))
	if err != nil {
		return nil, fmt.Errorf("the link's request is damaged (deflate: %v): was it cut short?", err)
	}
	if len(data) > maxFragmentJSON {
		return nil, fmt.Errorf("the link's request is larger than %d MiB", maxFragmentJSON>>20)
	}
	return DecodeRequest(data)
}

// DecodeRequest reads a request's JSON strictly: unknown fields are errors.
func DecodeRequest(data []byte) (*Request, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("request: %v", err)
	}
	if dec.More() {
		return nil, errors.New("request: unexpected data after the JSON value")
	}
	return &r, nil
}
