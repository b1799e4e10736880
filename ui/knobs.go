package ui

import (
	"strconv"
	"strings"

	"pipeplan/core/wire"
)

// KnobField is one row of a panel's knobs, drawn from a list (KnobFields) so that each
// is one row of the KnobRows component: a select of core's values (Choices, "" first
// for core's default), a check box (Check), a text box (Text: a list, applied when the
// box is left) or a number box (else) with Step and Max ("any" and core's bound for a
// fraction, else whole numbers up to wire.MaxDevices). The knob's value, its default and
// its setter go by Name (Field, DefaultText, SetField); its element's id is ID.
type KnobField struct {
	ID, Name, Label, Hint string
	Choices               []string
	Check, Text           bool
	Step                  string
	Max                   int
	// Disabled: core's normal form of the request has no value for the knob (it does not
	// apply, e.g. a shard group without hsdp) and the request sets none.
	Disabled bool
	choose   bool // a select of KnobChoices(Name)
	arch     bool // an architecture's knob only
	always   bool // never disabled (the Model panel's first knobs, as they were)
	doc      bool // a cluster document's knob only
	group    string
}

// knobRows are KnobFields' rows, in order, by group: "arch" (the Model panel's
// architecture knobs), "train" (its training knobs), "plan" (the Plan panel's, beside
// the schedule), "cluster" (the Cluster panel's, beside the memory proportion) and
// "finer" (the Cluster panel's finer settings).
var knobRows = [...]KnobField{
	{group: "arch", Name: "dtype", Label: "Data type", choose: true, always: true},
	{group: "arch", ID: "knob-fp8-recipe", Name: "fp8_recipe", Label: "FP8 recipe", choose: true, always: true},
	{group: "arch", ID: "knob-fp8-param-gather", Name: "fp8_param_gather", Label: "FP8 primary weights", Check: true, always: true,
		Hint: "keeps the fp8 products' weights in fp8 only, without their 16-bit copy (Megatron-LM's --fp8-param-gather; needs fp8)"},
	{group: "arch", Name: "expert_fused_mlp", Label: "Fused expert MLP", Check: true,
		Hint: "a mixture's experts as Transformer Engine's fused grouped MLP (needs mxfp8 and a Blackwell device)"},
	{group: "arch", Name: "attention", Label: "Attention", choose: true, always: true},
	{group: "arch", Name: "fp8_attention", Label: "FP8 attention", Check: true,
		Hint: "the attention core in fp8 at cuDNN's rates (Transformer Engine's fp8_dpa; needs fp8 and attention cudnn)"},
	{group: "arch", Name: "precision", Label: "Precision", choose: true, always: true},
	{group: "arch", Name: "optimizer", Label: "Optimizer", choose: true, always: true},
	{group: "arch", Name: "framework", Label: "Framework", choose: true, always: true,
		Hint: "how the model runs: its host time per kernel, fusions, memory and overlaps (pipeplan devices lists the modes)"},
	{group: "arch", Name: "cross_entropy", Label: "Loss kernel", choose: true},
	{group: "arch", Name: "split", Label: "One layer is", choose: true, always: true},
	{group: "arch", Name: "tie", Label: "Tied embedding", choose: true, always: true,
		Hint: "copy: on both ends, gradients all-reduced; stage: in one stage"},
	{group: "train", Name: "mode", Label: "Mode", choose: true, always: true},
	{group: "train", Name: "recompute", Label: "Recomputation", choose: true, always: true},
	{group: "train", Name: "recompute_modules", Label: "Recomputed parts", Text: true, arch: true},
	{group: "plan", Name: "weight_grad_fraction", Label: "Weight-gradient share", Max: 1, Step: "any",
		Hint: "zb-h1: the share of each backward that computes weight gradients, run apart"},
	{group: "cluster", Name: "free_transfers", Label: "Free transfers", Check: true, always: true,
		Hint: "plans as if every transfer took no time"},
	{group: "cluster", Name: "data_link", Label: "Data-parallel link", choose: true, doc: true,
		Hint: "the link the gradient all-reduce crosses"},
	{group: "finer", Name: "shard_group", Label: "HSDP shard group (replicas)", Max: wire.MaxDevices,
		Hint: "hsdp shards inside a group of this many replicas and replicates across groups; it divides the replicas."},
	{group: "finer", Name: "prefetch", Label: "Weight prefetch", choose: true,
		Hint: "zero3 and hsdp: next-layer gathers a layer's weights while the layer before it computes (FSDP2), none when it runs."},
	{group: "finer", Name: "overlap_grad_reduce", Label: "Overlap gradient reduction", choose: true, arch: true,
		Hint: "the gradients' all-reduce or reduce-scatter in buckets during the last backward (Megatron-LM's --overlap-grad-reduce)."},
	{group: "finer", Name: "overlap_param_gather", Label: "Overlap weight all-gather", choose: true, arch: true,
		Hint: "zero1 and zero2: the updated weights' all-gather during the next step's first forward (Megatron-LM's --overlap-param-gather)."},
	{group: "finer", Name: "overlap_tensor_comm", Label: "Overlap tensor-parallel communication", choose: true, arch: true,
		Hint: "with sequence parallelism: tensor parallelism's all-gathers and reduce-scatters in chunks behind the linear layers' products: userbuffers (Transformer Engine's, Megatron-LM's --tp-comm-overlap), async-tp (PyTorch's async TP, torch.compile only: the backward reduce-scatters of summed gradients stay exposed), on (the framework's own)."},
	{group: "finer", Name: "context_inner", Label: "All-to-all group (hierarchical context)", Max: wire.MaxDevices,
		Hint: "hierarchical context parallelism: all-to-all inside groups of this many devices, a ring between the groups."},
	{group: "finer", Name: "expert_tensor", Label: "Expert tensor-parallel degree", Max: wire.MaxDevices,
		Hint: "each expert split over this many devices (Megatron-Core's expert_tensor_parallel_size)."},
	{group: "finer", Name: "expert_imbalance", Label: "Routing imbalance", Max: wire.MaxExpertImbalance, Step: "any",
		Hint: "how many times the mean routed tokens the busiest device of an expert-parallel group gets."},
	{group: "finer", Name: "capacity_factor", Label: "Capacity factor", Max: wire.MaxExpertImbalance, Step: "any",
		Hint: "caps each expert's tokens at this many times the mean, dropping the rest; 0 is dropless."},
}

// KnobFields lists a group's knobs (knobGroups): the Cluster panel's finer knobs
// ("finer": sharding's group and prefetch, the data-parallel and tensor-parallel
// overlaps, hierarchical context parallelism's all-to-all group, expert tensor
// parallelism, routing imbalance and capacity factor), the Model panel's ("arch",
// "train"), the Plan panel's ("plan") and the Cluster panel's others ("cluster"). The
// lists of values and the bounds are core's (core/wire); whether a knob applies is what
// core's normal form says (Resolved).
func (a *App) KnobFields(group string) []KnobField {
	var out []KnobField
	for _, f := range knobRows {
		if f.group != group || f.arch && a.ModelSource() != "architecture" || f.doc && !a.Form().FromFile {
			continue
		}
		if f.ID == "" {
			f.ID = "knob-" + f.Name
		}
		if f.Text { // recompute_modules: core's names
			f.Hint = "selective: what it reruns; auto: what it may choose from; with commas, of " + strings.Join(wire.RecomputeModules(), ", ")
		}
		if f.choose {
			f.Choices = KnobChoices(f.Name)
		} else if f.Step == "" {
			f.Step = "1"
		}
		f.Disabled = !f.always && a.Field(f.Name) == "" && a.Resolved(f.Name) == ""
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
	case "weight_grad_fraction":
		return float(a.Req.Schedule.WeightGradFraction)
	case "recompute_modules":
		return strings.Join(a.Req.Training.RecomputeModules, ",")
	case "free_transfers":
		return check(a.Req.Cluster.FreeTransfers)
	case "data_link":
		return a.Req.Cluster.DataLink
	case "fp8_param_gather":
		return check(a.Req.Training.FP8ParamGather)
	}
	if ar == nil {
		return a.Knob(name)
	}
	switch name {
	case "framework":
		return ar.Framework
	case "cross_entropy":
		return ar.CrossEntropy
	case "split":
		return ar.Split
	case "tie":
		return ar.Tie
	case "fp8_attention":
		return check(ar.FP8Attention)
	case "expert_fused_mlp":
		return check(ar.ExpertFusedMLP)
	}
	return a.Knob(name)
}

// check is a check box's value as Field gives it: "true", or "" (core's default, off).
func check(on bool) string {
	if on {
		return "true"
	}
	return ""
}

// SetCheck handles a check box of KnobFields.
func (a *App) SetCheck(name string, on bool) { a.SetField(name, check(on)) }

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
	case "fp8_param_gather":
		a.Req.Training.FP8ParamGather = v != ""
	case "free_transfers":
		a.Req.Cluster.FreeTransfers = v != ""
	case "data_link":
		a.Req.Cluster.DataLink = v
	case "recompute_modules":
		// A list typed with commas (or spaces); core checks the names, by index.
		a.Req.Training.RecomputeModules = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
	case "framework", "cross_entropy", "split", "tie", "fp8_attention", "expert_fused_mlp":
		if ar == nil {
			return
		}
		switch name {
		case "framework":
			ar.Framework = v
		case "cross_entropy":
			ar.CrossEntropy = v
		case "split":
			ar.Split = v
		case "tie":
			ar.Tie = v
		case "fp8_attention":
			ar.FP8Attention = v != ""
		default:
			ar.ExpertFusedMLP = v != ""
		}
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
	case "expert_imbalance", "capacity_factor", "weight_grad_fraction":
		if ar == nil && name != "weight_grad_fraction" {
			return
		}
		most := float64(wire.MaxExpertImbalance)
		if name == "weight_grad_fraction" {
			most = 1
		}
		f, err := strconv.ParseFloat(v, 64)
		if v == "" {
			f, err = 0, nil
		}
		if err != nil || !(f >= 0 && f <= most) { // NaN too, which JSON cannot carry
			a.typed(name, v, false)
			a.notice(name+": enter a number up to "+strconv.FormatFloat(most, 'g', -1, 64), true)
			return
		}
		a.typed(name, v, true)
		switch name {
		case "expert_imbalance":
			ar.ExpertImbalance = f
		case "capacity_factor":
			ar.CapacityFactor = f
		default:
			a.Req.Schedule.WeightGradFraction = f
		}
	default:
		a.SetKnob(name, v) // the Model panel's first knobs
		return
	}
	a.notice("", false)
	a.changed(false)
}
