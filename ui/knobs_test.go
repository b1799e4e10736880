package ui

import (
	"strings"
	"testing"
)

// TestFinerKnobs: the Cluster panel's finer knobs set their request fields (parallelism
// shard_group, prefetch, overlap_grad_reduce, overlap_param_gather, overlap_tensor_comm, context_inner,
// expert_tensor; the architecture's expert_imbalance and capacity_factor), apply where
// core's normal form has a value for them, keep a number that does not parse out of the
// request (NaN included, which JSON cannot carry), let core refuse what its rules refuse
// by field, survive a change of the devices, and render.
func TestFinerKnobs(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:qwen1.5-moe-a2.7b")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "8")
	a.SetCluster("nodes", "4")
	a.SetDegree("data", "16")
	a.SetKnob("sharding", "hsdp")
	a.SetDegree("expert", "2")
	if a.Err != nil {
		t.Fatalf("the base: %v", a.Err)
	}
	var names []string
	enabled := map[string]bool{}
	for _, f := range a.KnobFields() {
		names = append(names, f.Name)
		enabled[f.Name] = !f.Disabled
	}
	if got := strings.Join(names, " "); got != "shard_group prefetch overlap_grad_reduce overlap_param_gather overlap_tensor_comm context_inner expert_tensor expert_imbalance capacity_factor" {
		t.Errorf("knobs %s", got)
	}
	// hsdp's knobs and the experts' apply; without hierarchical context parallelism its
	// group does not.
	for name, want := range map[string]bool{"shard_group": true, "prefetch": true, "overlap_grad_reduce": true, "expert_tensor": true, "expert_imbalance": true, "context_inner": false} {
		if enabled[name] != want {
			t.Errorf("%s enabled %v, want %v (core's normal form: %q)", name, enabled[name], want, a.Resolved(name))
		}
	}

	for _, c := range []struct {
		name, v string
		field   func() string
	}{
		{"shard_group", "2", func() string { return itoa0(a.Req.Parallelism.ShardGroup) }},
		{"prefetch", "none", func() string { return a.Req.Parallelism.Prefetch }},
		{"overlap_grad_reduce", "off", func() string { return a.Req.Parallelism.OverlapGradReduce }},
		{"overlap_param_gather", "off", func() string { return a.Req.Parallelism.OverlapParamGather }},
		{"overlap_tensor_comm", "off", func() string { return a.Req.Parallelism.OverlapTensorComm }},
		{"expert_tensor", "1", func() string { return itoa0(a.Req.Parallelism.ExpertTensor) }},
		{"expert_imbalance", "1.5", func() string { return a.Field("expert_imbalance") }},
		{"capacity_factor", "1.25", func() string { return a.Field("capacity_factor") }},
	} {
		a.SetField(c.name, c.v)
		if got := c.field(); got != c.v || a.Err != nil || a.NoticeBad {
			t.Errorf("%s = %s: the request has %q (err %v, notice %q)", c.name, c.v, got, a.Err, a.Notice)
		}
	}
	for _, bad := range []struct{ name, v string }{{"expert_imbalance", "NaN"}, {"capacity_factor", "-1"}, {"shard_group", "x"}, {"context_inner", "1.5"}} {
		before := a.Field(bad.name)
		a.SetField(bad.name, bad.v)
		if a.Field(bad.name) != before || !a.NoticeBad || a.Val(bad.name, "") != bad.v {
			t.Errorf("%s = %q: request %q (was %q), notice %q, box %q", bad.name, bad.v, a.Field(bad.name), before, a.Notice, a.Val(bad.name, ""))
		}
	}
	a.SetField("overlap_tensor_comm", "on")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "overlap_tensor_comm") {
		t.Errorf("tensor-parallel overlap without sequence parallelism: %v, want core's refusal naming overlap_tensor_comm", a.Err)
	}
	a.SetField("overlap_tensor_comm", "")
	a.SetField("expert_imbalance", "0.5")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "expert_imbalance") {
		t.Errorf("an imbalance of 0.5: %v, want core's refusal naming expert_imbalance", a.Err)
	}
	a.SetField("expert_imbalance", "")
	a.SetCluster("nodes", "8")
	if p := a.Req.Parallelism; p.ExpertTensor != 1 || p.OverlapGradReduce != "off" || p.OverlapParamGather != "off" {
		t.Errorf("a change of the devices lost the finer knobs: %+v", p)
	}
	a.SetTab("cluster")
	html := render(t, a)
	for _, id := range []string{"knob-shard_group", "knob-prefetch", "knob-context_inner", "knob-capacity_factor"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("the Cluster panel has no #%s", id)
		}
	}
}
