package ui

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"pipeplan/core/examples"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// --- The Model panel.

// ModelSource is "example", "architecture" or "document".
func (a *App) ModelSource() string {
	switch {
	case a.Req.Model.Architecture != nil:
		return "architecture"
	case len(a.Req.Model.Document) > 0:
		return "document"
	}
	return "example"
}

// ModelChoice is the value of the model picker: "example:NAME", "arch:NAME" or "file".
func (a *App) ModelChoice() string {
	switch a.ModelSource() {
	case "architecture":
		if len(a.Req.Model.Architecture.Config) > 0 {
			return "file"
		}
		return "arch:" + a.Req.Model.Architecture.Name
	case "document":
		return "file"
	}
	return "example:" + a.Req.Model.Example
}

// ModelOption is an entry of the model picker.
type ModelOption struct{ Value, Label, Group string }

// ModelOptions lists the bundled examples and architectures.
func (a *App) ModelOptions() []ModelOption {
	var out []ModelOption
	for _, e := range examples.All() {
		out = append(out, ModelOption{"example:" + e.Name, e.Title, "Example profiles"})
	}
	for _, n := range wire.Architectures() {
		out = append(out, ModelOption{"arch:" + n, n, "Architectures (costed analytically)"})
	}
	if a.ModelChoice() == "file" {
		out = append(out, ModelOption{"file", "the imported file", "Imported"})
	}
	return out
}

// ModelGroups returns the picker's option groups in order.
func (a *App) ModelGroups() []string {
	var g []string
	for _, o := range a.ModelOptions() {
		if !slices.Contains(g, o.Group) {
			g = append(g, o.Group)
		}
	}
	return g
}

// ModelOptionsIn returns the picker's options of one group.
func (a *App) ModelOptionsIn(group string) []ModelOption {
	var out []ModelOption
	for _, o := range a.ModelOptions() {
		if o.Group == group {
			out = append(out, o)
		}
	}
	return out
}

// PickModel handles the model picker. What of the request survives the change is
// core's rule (request.WithModel, the planner's "model"): every field the new model
// takes; the notice names the fields core left out, with its reasons.
func (a *App) PickModel(v string) {
	kind, name, _ := strings.Cut(v, ":")
	var m wire.ModelSpec
	switch kind {
	case "example":
		m.Example = name
	case "arch":
		m.Architecture = &wire.Architecture{Name: name}
	default:
		return
	}
	a.planSeq++
	seq, r := a.planSeq, clone(a.Req)
	a.background(func() {
		var w answer
		err := a.call(nil, "model", &w, r, m)
		a.update(func() {
			if seq != a.planSeq {
				return
			}
			if err != nil || w.Request == nil {
				a.notice(fmt.Sprint("the model did not change: ", err), true)
				return
			}
			a.Req = w.Request
			a.BoundsText, a.LayerStart = "", 0
			a.notice(a.leftOut(w), false)
			a.relayout(true)
		})
	})
}

// leftOut is core's notice of the fields it left out for another model (request.LeftOut
// of request.WithModel's dropped fields), "" for none, and forgets what was typed in
// their boxes.
func (a *App) leftOut(w answer) string {
	for _, d := range w.Dropped {
		a.typed(d.Path[strings.LastIndexByte(d.Path, '.')+1:], "", true)
	}
	return w.Notice
}

// answer is a planner's answer that carries a request: "layout"'s, with the stages and
// the rule that laid it out, and "model"'s, with the fields core left out and its notice
// of them.
type answer struct {
	Request *wire.Request
	Stages  int
	Rule    string
	Dropped []model.FieldError
	Notice  string
}

// relayout asks core for the starting layout of the devices (the planner's "layout":
// request.StartLayout) when the model or the cluster changed, unless the user set the
// replicas or the stages, then plans. The answer for a request edited since is dropped.
func (a *App) relayout(push bool) {
	par := &a.Req.Parallelism
	if a.Layout != "" { // the replicas and sharding were the last layout's: lay out again
		par.Data, par.Sharding, par.ZeRO = 0, "", 0
		a.Layout = ""
	}
	// Core lays out architectures only (request.StartLayout); a model document, which
	// may be megabytes, is not sent to be told so.
	if len(a.Req.Model.Document) > 0 || len(a.Req.Cluster.Document) > 0 || par.Pipeline != 0 || par.Data != 0 || a.Req.Cluster.Count < 2 {
		a.changed(push)
		return
	}
	a.planSeq++
	seq, r := a.planSeq, clone(a.Req)
	a.background(func() {
		var l answer
		err := a.call(nil, "layout", &l, r)
		a.update(func() {
			if seq != a.planSeq {
				return
			}
			if err == nil && l.Request != nil && l.Stages > 0 {
				a.Req.Parallelism.Data, a.Req.Parallelism.Sharding = l.Request.Parallelism.Data, l.Request.Parallelism.Sharding
				a.Layout = l.Rule
				a.typed("data", "", true)
			}
			a.changed(push)
		})
	})
}

// Knob returns the value, as text, of a knob whose row has no field of its own (the
// training mode, the sharding, the context exchange: their setters, SetKnob, set more).
func (a *App) Knob(name string) string {
	switch name {
	case "mode":
		return a.Req.Training.Mode
	case "sharding":
		if a.Req.Parallelism.ZeRO == 1 && a.Req.Parallelism.Sharding == "" {
			return "zero1" // the former field's value, as core reads it
		}
		return a.Req.Parallelism.Sharding
	case "context_method":
		return a.Req.Parallelism.ContextMethod
	}
	return ""
}

// KnobChoices lists the values of an enumerated knob, core's (core/wire): "" (core's
// default), then the values. Core refuses a value the request's device lacks (an fp8
// recipe, flash3 off Hopper) and says why.
func KnobChoices(name string) []string {
	var values []string
	switch name {
	case "dtype":
		values = wire.DTypes()
	case "fp8_recipe":
		values = wire.FP8Recipes()
	case "attention":
		values = wire.Attentions()
	case "precision":
		values = wire.Precisions()
	case "optimizer":
		values = wire.Optimizers()
	case "recompute":
		values = wire.RecomputeModes()
	case "mode":
		values = wire.Modes()
	case "sharding":
		values = wire.ShardingModes()
	case "context_method":
		values = wire.ContextMethods()
	case "expert_dispatcher":
		values = wire.ExpertDispatchers()
	case "prefetch":
		values = wire.PrefetchModes()
	case "reshard":
		values = wire.ReshardModes()
	case "reduce_dtype":
		values = wire.ReduceDTypes()
	case "overlap_grad_reduce", "overlap_param_gather":
		values = wire.OverlapModes()
	case "overlap_tensor_comm":
		values = wire.TensorOverlapModes()
	case "moe_aux_loss": // none is "" (core's default)
		values = wire.MoEAuxLosses()[1:]
	case "tp_comm_overlap_config": // te-default is "" (core's default)
		values = wire.TPCommOverlapConfigs()[1:]
	case "framework":
		values = wire.Frameworks()
	case "cross_entropy":
		values = wire.CrossEntropies()
	case "split":
		values = wire.Splits()
	case "tie":
		values = wire.Ties()
	case "data_link":
		values = wire.LinkPresets()
	case "objective":
		values = wire.Objectives()
	case "schedule":
		values = wire.Schedules()
	case "partition":
		values = wire.Partitions()
	case "search.schedule":
		values = wire.SearchSchedules()
	case "search.recompute":
		values = wire.RecomputeModes()
	case "search.zero":
		values = wire.SearchZeROStages()
	case "search.reshard":
		values = wire.ReshardModes()
	case "search.context_method":
		values = wire.ContextMethods()
	default:
		return nil
	}
	return append([]string{""}, values...)
}

// ChoiceText labels knob name's value v: "" is "default (bf16)", with what core's
// normal form of the request resolves it to (Resolved), "default" before it is known.
func (a *App) ChoiceText(name, v string) string {
	if v != "" {
		return v
	}
	if k := searchRow(name); k != nil {
		return k.emptyText()
	}
	if r := a.Resolved(name); r != "" {
		return "default (" + r + ")"
	}
	return "default"
}

// DefaultText is a number box's placeholder: "default: 4096", from core's normal form.
func (a *App) DefaultText(name string) string {
	if k := searchRow(name); k != nil {
		return k.emptyText()
	}
	if r := a.Resolved(name); r != "" {
		return "default: " + r
	}
	return "default"
}

// Resolved is what knob name's default resolves to in core's normal form of the
// request (Normal, the planner's "normal" answer by the page's knob names), "" when
// unknown or when core leaves it unset.
func (a *App) Resolved(name string) string { return a.Normal[name] }

// SetKnob handles the knobs Knob reads, whose edits set more than their field, and the
// rows' other knobs (SetField).
func (a *App) SetKnob(name, v string) {
	v = strings.TrimSpace(v)
	switch name {
	case "sharding":
		// One field says it (the former zero goes). The fields that go with a sharding
		// (prefetch, reshard, reduce dtype, FSDP2's copies, hsdp's group) stay where
		// the new mode takes them (core's list, wire.ShardingFields: between zero3 and
		// hsdp) and go back to core's defaults elsewhere, where core would refuse them.
		par := &a.Req.Parallelism
		keep := wire.ShardingFields(v)
		par.Sharding, par.ZeRO = v, 0
		if !slices.Contains(keep, "shard_group") {
			par.ShardGroup = 0
		}
		if !slices.Contains(keep, "prefetch") {
			par.Prefetch = ""
		}
		if !slices.Contains(keep, "reshard") {
			par.Reshard = ""
		}
		if !slices.Contains(keep, "reduce_dtype") {
			par.ReduceDType = ""
		}
		if !slices.Contains(keep, "fully_shard") {
			par.FullyShard = false
		}
		a.Layout = "" // the user's sharding, not the layout's
	case "context_method":
		// The all-to-all group is the hierarchical split's: another method starts from
		// core's default again.
		a.Req.Parallelism.ContextMethod, a.Req.Parallelism.ContextInner = v, 0
	case "mode":
		// Inference runs the inference schedule and has no optimizer (core refuses
		// either otherwise); training goes back to core's default schedule.
		a.Req.Training.Mode = v
		if v == "inference" {
			a.Req.Schedule.Name = "inference"
			a.Req.Training.Optimizer = ""
		} else if a.Req.Schedule.Name == "inference" {
			a.Req.Schedule.Name = ""
		}
	default:
		if knob(name) != nil { // a knob of KnobFields' rows (seq, batch, ...)
			a.SetField(name, v)
		}
		return
	}
	a.notice("", false)
	a.changed(false)
}

// Import loads a model file picked or dropped by the user: a native or Graphcore model,
// a PipeDream graph.txt, or a HuggingFace config.json. The planner plans it in the
// background; a file that does not load (a model that fits no split still loads) leaves
// the model as it was and a message naming the problem.
func (a *App) Import(name string, data []byte) {
	spec, err := importSpec(data)
	if err != nil {
		a.notImported(name, err)
		return
	}
	a.importModel(name, spec, "")
}

// ImportAnswer takes the planner's answer to a file handed to it (Host.ImportFile): the
// request's model, which for a large file is a reference to the file the planner kept in
// the browser's storage, so that links and localStorage stay short.
func (a *App) ImportAnswer(name, answer string, err error) {
	if err == nil {
		if e := errorObject(answer); e != nil {
			err = e
		}
	}
	var im struct {
		Model        wire.ModelSpec `json:"model"`
		Stored, Kept bool
	}
	if err == nil {
		err = json.Unmarshal([]byte(answer), &im)
	}
	if err != nil {
		a.notImported(name, err)
		return
	}
	extra := ""
	switch {
	case im.Stored && im.Kept:
		extra = " It is kept in this browser's storage: the link and a reload find it here (a share server's link opens it elsewhere)."
	case im.Stored:
		extra = " This browser's storage did not take it: a reload will not find it."
	}
	a.importModel(name, im.Model, extra)
}

// importModel plans the request with the model spec of the file name, and shows it
// when it plans; extra ends the notice. What of the request survives the change is
// core's rule, as for the model picker (request.WithModel, the planner's "model"); the
// notice names the fields core left out.
func (a *App) importModel(name string, m wire.ModelSpec, extra string) {
	if m.Architecture != nil {
		m.Name = path.Base(name)
	}
	r := clone(a.Req)
	a.background(func() {
		var w answer
		var v *wire.View
		err := a.call(nil, "model", &w, r, m)
		if err == nil {
			v, err = a.plan(w.Request, wire.Window{})
		}
		a.update(func() {
			if err != nil {
				a.notImported(name, err)
				return
			}
			a.Req = w.Request
			a.BoundsText, a.LayerStart, a.StageStart = "", 0, 0
			a.planSeq++ // an answer still coming is for the model before
			a.show(v, nil)
			a.Err, a.Opened = nil, ""
			a.Replans++
			a.keep(true)
			msg := fmt.Sprintf("Loaded %s: %d layers.%s", name, v.Result.Model.Layers, extra)
			if left := a.leftOut(w); left != "" {
				msg += " " + left
			}
			a.notice(msg, false)
			a.layersPending, a.layersShown = a.DrawInFrames, 0
		})
	})
}

func (a *App) notImported(name string, err error) {
	a.notice(fmt.Sprintf("%s was not loaded: %v. The model shown is unchanged.", name, err), true)
}

// maxImportBytes bounds a file the page reads itself (a calibration profile, a model in
// the tests); the Model panel's files go to the planner worker (Host.ImportFile), which
// takes files up to the planner's own bound.
const maxImportBytes = 32 << 20

// importSpec turns a file into a model spec (spec.ModelFromFile).
func importSpec(data []byte) (wire.ModelSpec, error) { return wire.ModelFromFile(data, maxImportBytes) }
