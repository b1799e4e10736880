package ui

import (
	"strconv"
	"strings"

	"pipeplan/core/wire"
)

// KnobField is one of the Cluster panel's finer knobs, drawn from a list (KnobFields) so
// that each is one row of the panel: a select of core's values (Choices, "" first for
// core's default) or a number box (Choices nil) with Step and Max ("any" and core's
// bound for a fraction, else whole numbers up to wire.MaxDevices). The knob's value, its
// default and its setter go by Name (Field, DefaultText, SetField); its element's id is
// "knob-" + Name.
type KnobField struct {
	Name, Label, Hint string
	Choices           []string
	Step              string
	Max               int
	// Disabled: core's normal form of the request has no value for the knob (it does not
	// apply, e.g. a shard group without hsdp) and the request sets none.
	Disabled bool
	choose   bool // a select of KnobChoices(Name)
	arch     bool // an architecture's knob only
}

// finerKnobs are KnobFields' rows, in order.
var finerKnobs = [...]KnobField{
	{Name: "shard_group", Label: "HSDP shard group (replicas)", Max: wire.MaxDevices,
		Hint: "hsdp shards inside a group of this many replicas and replicates across groups; it divides the replicas."},
	{Name: "prefetch", Label: "Weight prefetch", choose: true,
		Hint: "zero3 and hsdp: next-layer gathers a layer's weights while the layer before it computes (FSDP2), none when it runs."},
	{Name: "overlap_grad_reduce", Label: "Overlap gradient reduction", choose: true, arch: true,
		Hint: "the gradients' all-reduce or reduce-scatter in buckets during the last backward (Megatron-LM's --overlap-grad-reduce)."},
	{Name: "overlap_param_gather", Label: "Overlap weight all-gather", choose: true, arch: true,
		Hint: "zero1 and zero2: the updated weights' all-gather during the next step's first forward (Megatron-LM's --overlap-param-gather)."},
	{Name: "overlap_tensor_comm", Label: "Overlap tensor-parallel communication", choose: true, arch: true,
		Hint: "with sequence parallelism: tensor parallelism's all-gathers and reduce-scatters in chunks behind the linear layers' products: userbuffers (Transformer Engine's, Megatron-LM's --tp-comm-overlap), async-tp (PyTorch's async TP, torch.compile only: the backward reduce-scatters of summed gradients stay exposed), on (the framework's own)."},
	{Name: "context_inner", Label: "All-to-all group (hierarchical context)", Max: wire.MaxDevices,
		Hint: "hierarchical context parallelism: all-to-all inside groups of this many devices, a ring between the groups."},
	{Name: "expert_tensor", Label: "Expert tensor-parallel degree", Max: wire.MaxDevices,
		Hint: "each expert split over this many devices (Megatron-Core's expert_tensor_parallel_size)."},
	{Name: "expert_imbalance", Label: "Routing imbalance", Max: wire.MaxExpertImbalance, Step: "any",
		Hint: "how many times the mean routed tokens the busiest device of an expert-parallel group gets."},
	{Name: "capacity_factor", Label: "Capacity factor", Max: wire.MaxExpertImbalance, Step: "any",
		Hint: "caps each expert's tokens at this many times the mean, dropping the rest; 0 is dropless."},
}

// KnobFields lists the Cluster panel's finer knobs: sharding's group and prefetch, the
// data-parallel and tensor-parallel overlaps (architectures), hierarchical context parallelism's all-to-all
// group, expert tensor parallelism, routing imbalance and capacity factor (mixtures of
// experts). The lists of values and the bounds are core's (core/wire); whether a knob
// applies is what core's normal form says (Resolved).
func (a *App) KnobFields() []KnobField {
	out := make([]KnobField, 0, len(finerKnobs))
	for _, f := range finerKnobs {
		if f.arch && a.ModelSource() != "architecture" {
			continue
		}
		if f.choose {
			f.Choices = KnobChoices(f.Name)
		} else if f.Step == "" {
			f.Step = "1"
		}
		f.Disabled = a.Field(f.Name) == "" && a.Resolved(f.Name) == ""
		out = append(out, f)
	}
	return out
}

// Field is a finer knob's value as its box or select shows it ("" for core's default).
func (a *App) Field(name string) string {
	par := &a.Req.Parallelism
	ar := a.Req.Model.Architecture
	float := func(v float64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	switch name {
	case "shard_group":
		return itoa0(par.ShardGroup)
	case "prefetch":
		return par.Prefetch
	case "overlap_grad_reduce":
		return par.OverlapGradReduce
	case "overlap_param_gather":
		return par.OverlapParamGather
	case "overlap_tensor_comm":
		return par.OverlapTensorComm
	case "context_inner":
		return itoa0(par.ContextInner)
	case "expert_tensor":
		return itoa0(par.ExpertTensor)
	case "expert_imbalance":
		if ar != nil {
			return float(ar.ExpertImbalance)
		}
	case "capacity_factor":
		if ar != nil {
			return float(ar.CapacityFactor)
		}
	}
	return ""
}

// SetField handles a finer knob: "" is core's default. A number that does not parse is
// kept as typed with a notice; core checks the rest (a shard group that does not divide
// the replicas, an imbalance below 1) and says so by field.
func (a *App) SetField(name, v string) {
	v = strings.TrimSpace(v)
	par := &a.Req.Parallelism
	ar := a.Req.Model.Architecture
	switch name {
	case "prefetch":
		par.Prefetch = v
	case "overlap_grad_reduce":
		par.OverlapGradReduce = v
	case "overlap_param_gather":
		par.OverlapParamGather = v
	case "overlap_tensor_comm":
		par.OverlapTensorComm = v
	case "shard_group", "context_inner", "expert_tensor":
		n, err := strconv.Atoi(v)
		if v == "" {
			n, err = 0, nil
		}
		if err != nil || n < 0 || n > wire.MaxDevices {
			a.typed(name, v, false)
			a.notice(name+": enter a whole number", true)
			return
		}
		a.typed(name, v, true)
		switch name {
		case "shard_group":
			par.ShardGroup = n
		case "context_inner":
			par.ContextInner = n
		default:
			par.ExpertTensor = n
		}
	case "expert_imbalance", "capacity_factor":
		if ar == nil {
			return
		}
		f, err := strconv.ParseFloat(v, 64)
		if v == "" {
			f, err = 0, nil
		}
		if err != nil || !(f >= 0 && f <= wire.MaxExpertImbalance) { // NaN too, which JSON cannot carry
			a.typed(name, v, false)
			a.notice(name+": enter a number up to "+strconv.Itoa(wire.MaxExpertImbalance), true)
			return
		}
		a.typed(name, v, true)
		if name == "expert_imbalance" {
			ar.ExpertImbalance = f
		} else {
			ar.CapacityFactor = f
		}
	default:
		return
	}
	a.notice("", false)
	a.changed(false)
}
