package request

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// Dropped is a field a model change left out of a request (WithModel), and why.
type Dropped struct {
	// Path is the field's path in the request ("parallelism.expert"), as a refusal
	// names it (model.FieldError).
	Path string `json:"path"`
	// Reason is why it went: Normalize's refusal of it for the new model, or what it
	// belonged to.
	Reason string `json:"reason"`
}

// WithModel is r planning model m instead of its own, keeping every field the new model
// takes: the rule of what survives a model change (the page's model picker).
//
//   - The old architecture's knobs (every field of model.architecture but name and
//     config) carry over to an architecture m names, under m's own where m sets them; a
//     profile (an example or a document) has no architecture, so they go.
//   - model.name, the old model's label, and boundaries, a split of the old model's
//     layers, go.
//   - Every other field stays unless Normalize refuses it for the new model: then it
//     goes, one refusal at a time (the first refused field Normalize names, until it
//     names none that can go), with Normalize's reason. What can go is a knob: a field
//     of parallelism, training and schedule, objective, partition, memory_proportion, or
//     a carried architecture knob; never the cluster, the model itself or the version.
//     A refusal of another field (one r had already) is left for the plan to show.
//
// r is not changed. The fields dropped are listed in the order they went.
func WithModel(r *wire.Request, m wire.ModelSpec) (*wire.Request, []Dropped) {
	if r == nil {
		return nil, nil
	}
	out := clone(r)
	var dropped []Dropped
	var knobs map[string]json.RawMessage
	if old := out.Model.Architecture; old != nil {
		if b, err := json.Marshal(old); err == nil && json.Unmarshal(b, &knobs) == nil {
			delete(knobs, "name")
			delete(knobs, "config")
		}
	}
	if out.Model.Name != "" {
		dropped = append(dropped, Dropped{"model.name", "labels the former model"})
	}
	if len(out.Boundaries) > 0 {
		dropped = append(dropped, Dropped{"boundaries", "split the former model's layers"})
		out.Boundaries = nil
	}
	out.Model = m
	if m.Architecture != nil {
		ar := *m.Architecture
		if own, err := json.Marshal(m.Architecture); err == nil && len(knobs) > 0 {
			var mine map[string]json.RawMessage
			if json.Unmarshal(own, &mine) == nil {
				for k, v := range mine {
					knobs[k] = v
				}
				b, _ := json.Marshal(knobs)
				ar = wire.Architecture{}
				if json.Unmarshal(b, &ar) != nil {
					ar = *m.Architecture
				}
			}
		}
		out.Model.Architecture = &ar
	} else {
		for _, k := range sortedKeys(knobs) {
			dropped = append(dropped, Dropped{"model.architecture." + k, "applies to architectures; the model is a measured profile"})
		}
	}
	// A profile's document is read once for every round (reading one of 200,000 layers
	// takes seconds; what the rounds drop is never the model).
	var reuse *loaded
	if len(m.Document) > 0 {
		p := &prepared{req: clone(out), loaded: &loaded{}}
		var es model.Errors
		if p.loadModel(&es); len(es) == 0 {
			reuse = p.loaded
		}
	}
	// Each round drops one field, so the rounds are bounded by the request's fields.
	for range 256 {
		_, err := prepareFrom(out, nil, reuse)
		es, ok := model.AsFieldErrors(err)
		if !ok {
			break
		}
		next := (*wire.Request)(nil)
		for _, fe := range es {
			if path, _, _ := strings.Cut(fe.Path, "["); droppable(path) {
				if c, ok := without(out, path); ok {
					next = c
					dropped = append(dropped, Dropped{path, fe.Reason})
					break
				}
			}
		}
		if next == nil {
			break
		}
		out = next
	}
	return out, dropped
}

// droppable reports whether a model change may drop the field at path (WithModel): a
// knob, not the cluster, the model or the version.
func droppable(path string) bool {
	top, rest, _ := strings.Cut(path, ".")
	switch top {
	case "parallelism", "training", "schedule":
		return rest != ""
	case "objective", "partition", "memory_proportion":
		return rest == ""
	case "model":
		knob, ok := strings.CutPrefix(rest, "architecture.")
		return ok && knob != "name" && knob != "config" && !strings.Contains(knob, ".")
	}
	return false
}

// without is r less the field at path (its zero value, core's default), and whether that
// changed the request. The documents (a profile's, an architecture's config, a
// cluster's), which no droppable path reaches, are set aside for the round trip through
// JSON: a profile of 200,000 layers is tens of megabytes.
func without(r *wire.Request, path string) (*wire.Request, bool) {
	bare := clone(r)
	bare.Model.Document, bare.Cluster.Document = nil, nil
	if ar := bare.Model.Architecture; ar != nil {
		ar.Config = nil
	}
	b, err := json.Marshal(bare)
	if err != nil {
		return nil, false
	}
	var root map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&root) != nil {
		return nil, false
	}
	obj := root
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			return nil, false
		}
		obj = next
	}
	last := parts[len(parts)-1]
	if _, ok := obj[last]; !ok {
		return nil, false
	}
	delete(obj, last)
	c, err := json.Marshal(root)
	if err != nil {
		return nil, false
	}
	var out wire.Request
	if json.Unmarshal(c, &out) != nil {
		return nil, false
	}
	if again, err := json.Marshal(&out); err != nil || bytes.Equal(again, b) {
		return nil, false
	}
	out.Model.Document, out.Cluster.Document = r.Model.Document, r.Cluster.Document
	if out.Model.Architecture != nil && r.Model.Architecture != nil {
		out.Model.Architecture.Config = r.Model.Architecture.Config
	}
	return &out, true
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// LeftOut is the notice of a model change (WithModel) to model m: the fields dropped,
// those that went for the same reason on one line, "" for none. A line names its fields
// by their common parent where they have one ("model.architecture's attention, dtype
// and seq (each applies to architectures; ...)"), else by their paths; a field that
// went alone has its path and reason. The lines keep the order in which their first
// field went, and the notice says what m is: "Left out for this measured profile: "
// where m has no architecture, "Left out for this model: " where it has one.
func LeftOut(m wire.ModelSpec, dropped []Dropped) string {
	if len(dropped) == 0 {
		return ""
	}
	var reasons []string
	paths := map[string][]string{}
	for _, d := range dropped {
		if _, ok := paths[d.Reason]; !ok {
			reasons = append(reasons, d.Reason)
		}
		paths[d.Reason] = append(paths[d.Reason], d.Path)
	}
	lines := make([]string, len(reasons))
	for i, why := range reasons {
		ps := paths[why]
		if len(ps) == 1 {
			lines[i] = ps[0] + " (" + why + ")"
			continue
		}
		parent, _ := parentOf(ps[0])
		names := slices.Clone(ps)
		for j, p := range ps {
			q, name := parentOf(p)
			if parent == "" || q != parent {
				parent = ""
				break
			}
			names[j] = name
		}
		if parent == "" {
			names = ps
		}
		list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
		if parent != "" {
			list = parent + "'s " + list
		}
		lines[i] = list + " (each " + why + ")"
	}
	head := "Left out for this model: "
	if m.Architecture == nil {
		head = "Left out for this measured profile: "
	}
	return head + strings.Join(lines, "; ")
}

// parentOf splits a field's path at its last dot: "model.architecture.seq" is
// "model.architecture" and "seq"; a path without a dot has no parent ("").
func parentOf(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}
