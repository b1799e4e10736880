// Package request is pipeplan's one doorway: a planning request is plain data that says
// which model to plan, on which cluster, with which parallelism, schedule and training
// settings. Every front end (the command line, the browser page, the shared-plans Worker,
// the search) turns what its user gave into a Request, and Run plans it. So a rule (a
// default, a unit, what recomputation or inference means, what a step includes) lives
// here once, and the front ends cannot disagree.
//
// A request is versioned JSON with snake_case keys (docs/request.md). Decode reads one
// strictly; Normalize checks it and applies the defaults, in one documented place;
// Canonical encodes the normalized request so that the same request gives the same bytes,
// and ID hashes those bytes with the planner's version into a content id for caches and
// links. Run returns a Result: the plan, each stage's costs, the simulated step with the
// whole step's time (pipeline, optimizer update, gradient all-reduces) and throughput,
// and diagnostics as data.
//
// The request and result types, Decode and the constants of the format are package
// core/request/spec's, re-exported here: a front end that only builds requests and reads
// results (the browser page) imports spec and links none of the planner.
package request

import "pipeplan/core/request/spec"

// Version is the request format's version, the "version" every request carries.
const Version = spec.Version

// PlannerVersion names the planner's behaviour: it changes whenever the same request
// would give a different result, and is part of the content id.
const PlannerVersion = "pipeplan-2026.11.7"

// MaxBytes bounds a request's JSON (with its embedded documents): larger inputs are
// refused before they are decoded.
const MaxBytes = spec.MaxBytes

// The request's types (core/request/spec).
type (
	// Request is a planning request. The zero value of every field means its default
	// (Normalize).
	Request = spec.Request
	// ModelSpec names the model: exactly one of Example, Document and Architecture.
	ModelSpec = spec.ModelSpec
	// Architecture is a HuggingFace-style architecture with the shape of a microbatch
	// and how it runs.
	Architecture = spec.Architecture
	// ClusterSpec names the cluster: a Document, or Count devices of a Device preset.
	ClusterSpec = spec.ClusterSpec
	// Parallelism says how the devices are used.
	Parallelism = spec.Parallelism
	// Training says what is run.
	Training = spec.Training
	// Schedule is the pipeline schedule of one step.
	Schedule = spec.Schedule
)

// The modes of Training.Mode.
const (
	ModeTraining  = spec.ModeTraining
	ModeInference = spec.ModeInference
)

// The values of Request.Partition.
const (
	PartitionLayers = spec.PartitionLayers
	PartitionGraph  = spec.PartitionGraph
)

// Decode reads a request from JSON: one object, no unknown keys, at most MaxBytes.
// Errors name the field ("schedule.microbatches: must be a number").
func Decode(data []byte) (*Request, error) { return spec.Decode(data) }
