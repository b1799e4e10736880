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
// The request and result types, Decode and the constants and vocabulary of the format
// are package core/wire's: a front end that only builds requests and reads results (the
// browser page) imports wire, not this package, and links none of the planner.
package request

import "pipeplan/core/wire"

// PlannerVersion names the planner's behaviour: it changes whenever the same request
// would give a different result, and is part of the content id.
const PlannerVersion = "pipeplan-2026.11.28.2"

// Decode reads a request from JSON: one object, no unknown keys, at most MaxBytes.
// Errors name the field ("schedule.microbatches: must be a number").
func Decode(data []byte) (*wire.Request, error) { return wire.Decode(data) }
