package export

import (
	"bytes"
	"encoding/json"
	"fmt"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// DocumentFormat is the "format" of pipeplan's plan document.
const DocumentFormat = "pipeplan.plan"

// Document is pipeplan's own plan document (the json export; docs/export.md): the split
// and what it was planned for, in a versioned JSON a program can read.
type Document struct {
	// Format is DocumentFormat; Version the document's version (Version).
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Model: its name, its layers in order, and their module paths.
	Model DocModel `json:"model"`
	// Parallelism: pipeline devices, data and tensor parallel sizes, ZeRO stage.
	Parallelism DocParallelism `json:"parallelism"`
	// Schedule planned.
	Schedule DocSchedule `json:"schedule"`
	// Boundaries: stage i (model chunk i, interleaved) holds layers
	// Boundaries[i] .. Boundaries[i+1]-1 of the layer order: the model's, or, for a graph
	// split whose stages are not contiguous in it, Plan.LayerOrder's (version 1 of the
	// document states that order in the embedded plan alone).
	Boundaries []int `json:"boundaries"`
	// Stages, each with its device and layers.
	Stages []DocStage `json:"stages"`
	// Cost is the plan's price, when known.
	Cost *wire.Cost `json:"cost,omitempty"`
	// Plan is the planner's full plan (per-stage time, memory and transfers), when known.
	Plan *wire.Plan `json:"plan,omitempty"`
}

// DocModel describes the model of a Document.
type DocModel struct {
	Name   string   `json:"name"`
	Layers []string `json:"layers"`
	// Layers are in the model's order (for a graph split too). Modules are the layers'
	// module paths (HuggingFace's, for an architecture).
	Modules []string `json:"modules"`
}

// DocParallelism describes the devices of a Document.
type DocParallelism struct {
	Pipeline int `json:"pipeline"`
	Data     int `json:"data"`
	Tensor   int `json:"tensor"`
	ZeRO     int `json:"zero"`
	// Sharding names the ZeRO stage as the request does (zero1, zero2, zero3, hsdp) and
	// ShardGroup hsdp's group; Context is the context-parallel degree and ContextMethod
	// its exchange, ContextInner the hierarchical exchange's all-to-all group. Absent:
	// none, 1.
	Sharding      string `json:"sharding,omitempty"`
	ShardGroup    int    `json:"shard_group,omitempty"`
	Context       int    `json:"context,omitempty"`
	ContextMethod string `json:"context_method,omitempty"`
	ContextInner  int    `json:"context_inner,omitempty"`
	// Reshard, ReduceDType and FullyShard are the request's parallelism.reshard,
	// reduce_dtype and fully_shard: how ZeRO-3 and HSDP were priced (absent: not set).
	Reshard     string `json:"reshard,omitempty"`
	ReduceDType string `json:"reduce_dtype,omitempty"`
	FullyShard  bool   `json:"fully_shard,omitempty"`
	// TPCommOverlapConfig is the tuned userbuffers config Transformer Engine's
	// tensor-parallel overlap was priced with (the request's
	// parallelism.tp_comm_overlap_config; absent: none, or initialize_ub's defaults).
	TPCommOverlapConfig string `json:"tp_comm_overlap_config,omitempty"`
}

// DocSchedule describes the schedule of a Document.
type DocSchedule struct {
	// Name as schedule.Parse reads it.
	Name           string `json:"name"`
	Microbatches   int    `json:"microbatches"`
	MicrobatchSize int    `json:"microbatch_size"`
	// Recompute: none, selective or full.
	Recompute string `json:"recompute"`
}

// DocStage is one stage of a Document.
type DocStage struct {
	Stage int `json:"stage"`
	// Device runs the stage; Chunk is its index among the device's stages (interleaved).
	Device int `json:"device"`
	Chunk  int `json:"chunk"`
	// FirstLayer and LastLayer (inclusive, positions in the layer order as Boundaries),
	// with their names.
	FirstLayer int    `json:"first_layer"`
	LastLayer  int    `json:"last_layer"`
	FirstName  string `json:"first_name"`
	LastName   string `json:"last_name"`
}

func planJSON(j *job) error {
	in := j.in
	mods, _ := in.moduleNames()
	p := in.devices()
	rec := in.Recompute
	if rec == "" {
		rec = "none"
	}
	d := Document{
		Format: DocumentFormat, Version: wire.ExportVersion,
		Model: DocModel{Name: in.Model, Layers: in.modelOrder(in.LayerNames), Modules: in.modelOrder(mods)},
		Parallelism: DocParallelism{Pipeline: p, Data: orOne(in.Data), Tensor: orOne(in.Tensor), ZeRO: in.ZeRO, Context: contextOf(in.Context),
			Sharding: docSharding(in.Sharding), ShardGroup: in.ShardGroup, ContextMethod: in.ContextMethod, ContextInner: in.ContextInner,
			Reshard: in.Reshard, ReduceDType: in.ReduceDType, FullyShard: in.FullyShard, TPCommOverlapConfig: in.TensorCommConfig},

		Schedule:   DocSchedule{Name: j.sched.String(), Microbatches: j.sched.Microbatches, MicrobatchSize: orOne(in.MicrobatchSize), Recompute: rec},
		Boundaries: in.Boundaries,
		Cost:       j.ex.Planned,
		Plan:       in.Plan,
	}
	for i, s := range stagesOf(in.Boundaries) {
		d.Stages = append(d.Stages, DocStage{Stage: i, Device: i % p, Chunk: i / p,
			FirstLayer: s[0], LastLayer: s[1], FirstName: in.LayerNames[s[0]], LastName: in.LayerNames[s[1]]})
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	j.ex.Filename, j.ex.Language, j.ex.Text = "pipeplan_plan.json", "json", string(data)+"\n"
	return nil
}

// ReadDocument reads a plan document, refusing other formats, newer versions and
// unknown keys; errors name the field.
func ReadDocument(data []byte) (*Document, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &model.FieldError{Reason: fmt.Sprintf("invalid JSON: %v", err)}
	}
	if head.Format != DocumentFormat {
		return nil, &model.FieldError{Path: "format", Reason: fmt.Sprintf("must be %q, got %q", DocumentFormat, head.Format)}
	}
	if head.Version < 1 || head.Version > wire.ExportVersion {
		return nil, &model.FieldError{Path: "version", Reason: fmt.Sprintf("must be between 1 and %d, got %d", wire.ExportVersion, head.Version)}
	}
	d := new(Document)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(d); err != nil {
		return nil, &model.FieldError{Reason: fmt.Sprintf("invalid plan document: %v", err)}
	}
	return d, nil
}

// docSharding is a Document's sharding: the request's name, none left out.
func docSharding(s string) string {
	if s == "none" {
		return ""
	}
	return s
}

// contextOf is a Document's context-parallel degree: 0 (left out) for none.
func contextOf(c int) int {
	if c <= 1 {
		return 0
	}
	return c
}
