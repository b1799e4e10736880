package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// DecodeQuery reads a query from JSON: one object, no unknown keys. Errors name the field.
func DecodeQuery(data []byte) (*wire.SearchQuery, error) {
	if len(data) > wire.MaxBytes {
		return nil, &model.FieldError{Reason: fmt.Sprintf("the query is %d bytes, more than the %d it may hold", len(data), wire.MaxBytes)}
	}
	var raw struct {
		Request json.RawMessage `json:"request"`
		wire.SearchKnobs
		Exhaustive bool `json:"exhaustive,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, &model.FieldError{Reason: "invalid search query: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &model.FieldError{Reason: "unexpected data after the query's JSON object"}
	}
	// The knobs first: they are cheap to check, and they bound the search's work.
	if err := ValidateKnobs(&raw.SearchKnobs); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw.Request)) == 0 || string(bytes.TrimSpace(raw.Request)) == "null" {
		return nil, &model.FieldError{Path: "request", Reason: "is required: the planning request to search around (docs/request.md)"}
	}
	r, err := wire.Decode(raw.Request)
	if err != nil {
		return nil, model.Prefixed("request", err)
	}
	return &wire.SearchQuery{Request: r, SearchKnobs: raw.SearchKnobs, Exhaustive: raw.Exhaustive}, nil
}

// The bounds of the knobs, checked before anything is allocated for them: a search's grid
// and its memory grow with the devices, the replica counts, the lists and the microbatch
// sizes, so an absurd knob (max_devices 1e9) is refused at once, naming it.
const (
	// MaxDevices bounds max_devices (65,536): more devices than the largest clusters
	// built. A request's stages, replicas and tensor degree are each at most
	// cluster.MaxStages.
	MaxDevices = 1 << 16
	// MaxListLength bounds each list of the knobs (schedules, memory_proportions,
	// microbatches_per_stage).
	MaxListLength = 64
	// MaxScheduleName bounds the length of a schedule's name ("interleaved:16").
	MaxScheduleName = 64
	// MaxMicrobatchSize bounds microbatch_size and max_microbatch_size (4,096 samples):
	// the search keeps the sizes 1..max_microbatch_size as a list.
	MaxMicrobatchSize = 1 << 12
	// MaxMicrobatches bounds microbatches and microbatches_per_stage (2^20, a
	// request's schedule.microbatch_size bound: the simulator refuses far fewer).
	MaxMicrobatches = 1 << 20
	// MaxGlobalBatch bounds global_batch (2^30 samples per step).
	MaxGlobalBatch = 1 << 30
)

// ValidateKnobs checks the knobs against their bounds (MaxDevices and the others);
// errors name the field. It allocates nothing for the values, so that it can run first.
func ValidateKnobs(k *wire.SearchKnobs) error {
	var es model.Errors
	between := func(path string, v, lo, hi int) {
		if v < lo || v > hi {
			es.Add(path, "must be between %d and %d, got %d", lo, hi, v)
		}
	}
	between("max_devices", k.MaxDevices, 1, MaxDevices)
	between("stages", k.Stages, 0, cluster.MaxStages)
	between("replicas", k.Replicas, 0, cluster.MaxStages)
	between("tensor", k.Tensor, 0, cluster.MaxStages)
	between("shard_group", k.ShardGroup, 0, cluster.MaxStages)
	if len(k.Schedules) > MaxListLength {
		es.Add("schedules", "must hold at most %d schedules, got %d", MaxListLength, len(k.Schedules))
	} else {
		for i, s := range k.Schedules {
			if len(s) > MaxScheduleName {
				es.Add(fmt.Sprintf("schedules[%d]", i), "must be a schedule's name (at most %d bytes), got %d bytes", MaxScheduleName, len(s))
			}
		}
	}
	if len(k.Schedule) > MaxScheduleName {
		es.Add("schedule", "must be a schedule's name (at most %d bytes), got %d bytes", MaxScheduleName, len(k.Schedule))
	}
	if len(k.Recompute) > MaxScheduleName {
		es.Add("recompute", "must be none, selective or full, got %d bytes", len(k.Recompute))
	}
	if len(k.MemoryProportions) > MaxListLength {
		es.Add("memory_proportions", "must hold at most %d proportions, got %d", MaxListLength, len(k.MemoryProportions))
	}
	if len(k.MicrobatchesPerStage) > MaxListLength {
		es.Add("microbatches_per_stage", "must hold at most %d values, got %d", MaxListLength, len(k.MicrobatchesPerStage))
	} else {
		for i, v := range k.MicrobatchesPerStage {
			between(fmt.Sprintf("microbatches_per_stage[%d]", i), v, 1, MaxMicrobatches)
		}
	}
	between("microbatches", k.Microbatches, 0, MaxMicrobatches)
	between("global_batch", k.GlobalBatch, 0, MaxGlobalBatch)
	between("microbatch_size", k.MicrobatchSize, 0, MaxMicrobatchSize)
	between("max_microbatch_size", k.MaxMicrobatchSize, 0, MaxMicrobatchSize)
	if k.ZeRO != nil && (*k.ZeRO < 0 || *k.ZeRO > 3) {
		es.Add("zero", "must be 0, 1, 2 or 3, got %d", *k.ZeRO)
	}
	between("context", k.Context, 0, cluster.MaxStages)
	if k.ContextMethod != "" && !slices.Contains(wire.ContextMethods(), k.ContextMethod) {
		es.Add("context_method", "must be one of %s, got %q", strings.Join(wire.ContextMethods(), ", "), clip(k.ContextMethod))
	}
	if k.Reshard != "" && !slices.Contains(wire.ReshardModes(), k.Reshard) {
		es.Add("reshard", "must be one of %s, got %q", strings.Join(wire.ReshardModes(), ", "), clip(k.Reshard))
	}
	if len(k.Contexts) > MaxListLength {
		es.Add("contexts", "must hold at most %d values, got %d", MaxListLength, len(k.Contexts))
	} else {
		for i, v := range k.Contexts {
			between(fmt.Sprintf("contexts[%d]", i), v, 1, cluster.MaxStages)
		}
	}
	return es.Err()
}

// clip is a value as an error quotes it: at most MaxScheduleName bytes, so that an
// absurd knob does not make an absurd message.
func clip(s string) string {
	if len(s) > MaxScheduleName {
		return s[:MaxScheduleName] + "..."
	}
	return s
}

// TopCount is how many of the report's rows an answer lists (wire.SearchAnswer.Top).
const TopCount = 10

// NewAnswer is the answer of a report: its best, its first TopCount rows (Top), its
// Pareto front, the global batch and its rule, every candidate it planned and its
// counts. The best's request and id are the evaluator's to give.
func NewAnswer(rep *Report) *wire.SearchAnswer {
	ev := rep.Evaluated
	if ev == nil {
		ev = []Outcome{}
	}
	pareto := rep.Pareto
	if pareto == nil {
		pareto = []Outcome{}
	}
	all := rep.Rows
	if all == nil {
		all = rows(ev, rep.Best)
	}
	batch := "Every candidate's samples per step were searched (the throughputs compare different global batches)."
	if rep.GlobalBatch > 0 {
		batch = fmt.Sprintf("Every candidate runs a global batch of %d samples: %s.", rep.GlobalBatch, rep.GlobalBatchRule)
	}
	rule := fmt.Sprintf("%s The best is the one with the most memory headroom among those within %g%% of the fastest throughput; rows that differ only in ZeRO, recomputation or memory proportion at the same speed are one row, the one with the most headroom.", batch, 100*NearTie)
	rs := wireOutcomes(all)
	return &wire.SearchAnswer{Best: wireBest(rep.Best), Top: rs[:min(TopCount, len(rs))], Rows: rs, Pareto: wireOutcomes(pareto),
		GlobalBatch: rep.GlobalBatch, GlobalBatchRule: rep.GlobalBatchRule, Rule: rule, Evaluated: wireOutcomes(ev),
		Stats: rep.Stats}
}
