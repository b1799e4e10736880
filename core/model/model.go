// Package model defines a model to be pipelined: its layers in execution order, what each
// costs (time, memory), the tensors passed between them and the layers that must share a
// stage. Every importer produces a Model, and every Model crosses one validation gate,
// Validate, before the rest of pipeplan uses it.
//
// The native JSON form is the Model struct itself (snake_case keys); see the package
// example and docs/formats.md.
package model

import (
	"bytes"
	"encoding/json"
)

// TimeUnit says how the layer times of a model are measured.
type TimeUnit string

// The time units a model may use.
const (
	// Seconds: forward_seconds and backward_seconds hold wall-clock times.
	Seconds TimeUnit = "seconds"
	// Cycles: forward_cycles and backward_cycles hold device clock cycles (Graphcore IPU
	// profiles); they convert to seconds with the device clock.
	Cycles TimeUnit = "cycles"
)

// Model is a network as a sequence of layers in execution order.
type Model struct {
	// Name is a label for people; it does not affect planning.
	Name string `json:"name,omitempty"`
	// TimeUnit is Seconds (the default when empty) or Cycles.
	TimeUnit TimeUnit `json:"time_unit,omitempty"`
	// Inputs are the tensors the model receives from the host (consumed by layers but
	// produced by none). Their bytes are what the first stage receives.
	Inputs []Tensor `json:"inputs,omitempty"`
	// Layers in execution order; a pipeline stage holds a contiguous range of them.
	Layers []Layer `json:"layers"`

	// MeasuredOn names the device the profile's times were measured on: a device preset
	// name ("a100-80gb") or a device with its dense peak. Planning on another device
	// scales the times by the ratio of the two devices' speeds. Unset: the times are taken
	// as they are on every device (core/request says so in its result).
	MeasuredOn *MeasuredOn `json:"measured_on,omitempty"`
	// MicrobatchSize is the samples in the microbatch the profile was measured with; the
	// throughput counts samples with it. 0: unknown, counted as 1 (with a note).
	MicrobatchSize int `json:"microbatch_size,omitempty"`
	// TokensPerSample is the tokens in one sample (the sequence length), when the model
	// reads sequences; it turns samples/s into tokens/s. 0: unknown.
	TokensPerSample int `json:"tokens_per_sample,omitempty"`

	// ConvertedFrom names the format a profile written in this JSON was converted from,
	// when it keeps that format's meaning (core/request plans it by that format's rules):
	// "graphcore" (in training, a stage holds one microbatch's activations, as Graphcore's
	// auto-pipeline tool counts them) or "pipedream" (param_bytes are fp32 weights only,
	// to which training adds gradients and optimizer state). Empty: this format's own
	// meaning (the schedule's stash; the state as stated).
	ConvertedFrom string `json:"converted_from,omitempty"`
	// ScaledFrom is the microbatch size the profile was measured with, when pipeplan
	// scaled it linearly to MicrobatchSize (core/request's ScaleProfile): planning it
	// says so. 0: the profile is as measured.
	ScaledFrom int `json:"scaled_from,omitempty"`
}

// The formats a profile may be converted from and keep the meaning of (ConvertedFrom):
// core/load's names of them.
const (
	FromGraphcore = "graphcore"
	FromPipeDream = "pipedream"
)

// MeasuredOn is the device a profile was measured on. In JSON it is either a preset name
// (a string) or an object with a name and the device's dense peak FLOP/s.
type MeasuredOn struct {
	// Name is a device preset name, or a label when FLOPSPerSecond is given.
	Name string `json:"name,omitempty"`
	// FLOPSPerSecond is the device's dense peak, the figure times scale with. 0: the
	// preset's of that Name.
	FLOPSPerSecond float64 `json:"flops_per_second,omitempty"`
}

// UnmarshalJSON reads a preset name or an object.
func (d *MeasuredOn) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var name string
		if err := json.Unmarshal(b, &name); err != nil {
			return err
		}
		*d = MeasuredOn{Name: name}
		return nil
	}
	type plain MeasuredOn
	var v plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*d = MeasuredOn(v)
	return nil
}

// MarshalJSON writes a bare preset name as a string, and a device with figures as an
// object.
func (d MeasuredOn) MarshalJSON() ([]byte, error) {
	if d.FLOPSPerSecond == 0 {
		return json.Marshal(d.Name)
	}
	type plain MeasuredOn
	return json.Marshal(plain(d))
}

// Layer is one layer invocation. A layer called twice (shared weights) appears twice,
// both entries with the same TieGroup.
type Layer struct {
	// Name identifies the layer to people and in error messages.
	Name string `json:"name"`
	// Kind is the layer's class and configuration ("Linear(4096,4096)"); layers of one kind
	// may share compiled code, which the Shared map expresses.
	Kind string `json:"kind,omitempty"`

	// ForwardSeconds and BackwardSeconds: time of one microbatch, when TimeUnit is Seconds.
	ForwardSeconds  float64 `json:"forward_seconds,omitempty"`
	BackwardSeconds float64 `json:"backward_seconds,omitempty"`
	// ForwardCycles and BackwardCycles: the same in device cycles, when TimeUnit is Cycles.
	ForwardCycles  int64 `json:"forward_cycles,omitempty"`
	BackwardCycles int64 `json:"backward_cycles,omitempty"`
	// ForwardFixedSeconds and BackwardFixedSeconds, when measured, are the part of
	// ForwardSeconds and BackwardSeconds that does not grow with the samples in the
	// microbatch: kernel launches, host dispatch, a layer's fixed costs (the intercept of
	// its times measured at two microbatch sizes). A profile scaled to another
	// microbatch size keeps them and scales the rest; 0: not measured, all of the time
	// scales.
	ForwardFixedSeconds  float64 `json:"forward_fixed_seconds,omitempty"`
	BackwardFixedSeconds float64 `json:"backward_fixed_seconds,omitempty"`

	// ParamBytes holds the layer's parameters (and, for training, their gradients).
	ParamBytes int64 `json:"param_bytes,omitempty"`
	// GradBytes is the part of ParamBytes that is gradients: what the data-parallel
	// replicas all-reduce each step. 0: half of ParamBytes in training (weights and their
	// gradients of the same type).
	GradBytes int64 `json:"grad_bytes,omitempty"`
	// OptimizerBytes holds optimizer state (Adam moments, fp32 master weights).
	OptimizerBytes int64 `json:"optimizer_bytes,omitempty"`
	// ExclusiveBytes is any other always-alive memory the layer alone owns (Graphcore's
	// vertex instance state, control code).
	ExclusiveBytes int64 `json:"exclusive_bytes,omitempty"`
	// Shared is always-alive memory that layers may share: each key is counted once per
	// stage, with the size of its first occurrence in the stage (compiled code of one
	// layer kind, a tied weight held once).
	Shared map[string]int64 `json:"shared,omitempty"`

	// TemporaryBytes is the layer's own peak working memory while it runs.
	TemporaryBytes int64 `json:"temporary_bytes,omitempty"`
	// ActivationBytes is what the layer adds that stays alive after it, for one
	// microbatch: in training, what it keeps for its backward pass.
	ActivationBytes int64 `json:"activation_bytes,omitempty"`
	// CarryOverBytes is memory of earlier tensors alive across this layer that the tensor
	// graph below does not describe (importers of profiles that state it directly). The
	// planner adds what Outputs and InputIDs imply.
	CarryOverBytes int64 `json:"carry_over_bytes,omitempty"`

	// InputIDs name the tensors it consumes: outputs of earlier layers or model inputs.
	InputIDs []string `json:"inputs,omitempty"`
	// Outputs are the tensors the layer produces.
	Outputs []Tensor `json:"outputs,omitempty"`

	// RecvBytes, when set, overrides the bytes a stage starting at this layer receives
	// (otherwise: the tensors crossing the cut before it). SendBytes likewise for a stage
	// ending at this layer. Graphcore profiles state both per layer.
	RecvBytes *int64 `json:"recv_bytes,omitempty"`
	SendBytes *int64 `json:"send_bytes,omitempty"`

	// TieGroup names a group of layers that must all be in one stage (layers using one
	// variable). Empty: no constraint.
	TieGroup string `json:"tie_group,omitempty"`
}

// Tensor is a value passed between layers.
type Tensor struct {
	ID    string `json:"id"`
	Bytes int64  `json:"bytes"`
}

// FromPrevious reports whether tensor id is the one output of layer i-1, as the input of
// most layers of a profile is: what a lookup among every tensor would find, without it.
func (m *Model) FromPrevious(i int, id string) bool {
	return i > 0 && len(m.Layers[i-1].Outputs) == 1 && id == m.Layers[i-1].Outputs[0].ID && id != ""
}

// Unit returns the model's time unit, Seconds when unset.
func (m *Model) Unit() TimeUnit {
	if m.TimeUnit == "" {
		return Seconds
	}
	return m.TimeUnit
}

// Forward returns the layer's forward time in the model's unit.
func (m *Model) Forward(i int) float64 {
	if m.Unit() == Cycles {
		return float64(m.Layers[i].ForwardCycles)
	}
	return m.Layers[i].ForwardSeconds
}

// Backward returns the layer's backward time in the model's unit.
func (m *Model) Backward(i int) float64 {
	if m.Unit() == Cycles {
		return float64(m.Layers[i].BackwardCycles)
	}
	return m.Layers[i].BackwardSeconds
}
