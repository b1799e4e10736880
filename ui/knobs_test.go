package ui

import (
	"slices"
	"strings"
	"testing"

	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// TestFinerKnobs: the Cluster panel's finer knobs set their request fields (parallelism
// shard_group, prefetch, reshard, reduce_dtype, fully_shard, overlap_grad_reduce, overlap_param_gather, overlap_tensor_comm, context_inner,
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
	for _, f := range a.KnobFields("finer") {
		names = append(names, f.Name)
		enabled[f.Name] = !f.Disabled
	}
	if got := strings.Join(names, " "); got != "shard_group prefetch reshard reduce_dtype fully_shard overlap_grad_reduce overlap_param_gather dp_bucket_bytes dp_bucket_elements check_for_nan_in_grad overlap_tensor_comm tp_comm_overlap_config context_inner expert_tensor expert_imbalance capacity_factor moe_aux_loss moe_force_load_balancing" {
		t.Errorf("knobs %s", got)
	}
	// hsdp's knobs and the experts' apply; without hierarchical context parallelism its
	// group does not, nor the userbuffers config without the userbuffers overlap.
	for name, want := range map[string]bool{"shard_group": true, "prefetch": true, "reshard": true, "reduce_dtype": true, "fully_shard": true, "overlap_grad_reduce": true, "expert_tensor": true, "expert_imbalance": true, "context_inner": false, "tp_comm_overlap_config": false, "dp_bucket_bytes": true, "dp_bucket_elements": false, "check_for_nan_in_grad": false, "moe_aux_loss": false, "moe_force_load_balancing": false} {
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
		{"reshard", "step", func() string { return a.Req.Parallelism.Reshard }},
		{"reduce_dtype", "fp32", func() string { return a.Req.Parallelism.ReduceDType }},
		{"fully_shard", "true", func() string { return a.Field("fully_shard") }},
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

// TestModelKnobs: the knobs of every request field the Model, Plan and Cluster panels
// had no control for (model.architecture framework, cross_entropy, fp8_attention,
// expert_fused_mlp, split and tie; training.recompute_modules and train_metrics;
// schedule.weight_grad_fraction; cluster.free_transfers and data_link; the device's and
// framework's figures, which only a calibration set before) set their fields,
// offer core's values, say core's default, apply where core's normal form has a value
// for them, and change the step where they price something else; a name core does not
// know is refused by core, by field.
func TestModelKnobs(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:qwen3-30b-a3b")
	a.SetCluster("device", "b200")
	a.SetCluster("per_node", "8")
	a.SetDegree("data", "4")
	a.SetDegree("expert", "4")
	if a.Err != nil {
		t.Fatalf("the base: %v", a.Err)
	}
	names := func(group string) string {
		var s []string
		for _, f := range a.KnobFields(group) {
			s = append(s, f.Name)
		}
		return strings.Join(s, " ")
	}
	for group, want := range map[string]string{
		"arch":    "seq dtype fp8_recipe fp8_param_gather fp8_amax_tp_only expert_fused_mlp attention fp8_attention precision optimizer framework cross_entropy split tie",
		"train":   "batch mode recompute recompute_modules train_metrics",
		"plan":    "schedule microbatches weight_grad_fraction objective partition",
		"cluster": "memory_proportion free_transfers", // data_link: cluster documents only
		"figures": "matmul_efficiency memory_efficiency kernel_seconds host_kernel_seconds host_layer_seconds",
	} {
		if got := names(group); got != want {
			t.Errorf("group %s: knobs %s, want %s", group, got, want)
		}
	}
	for name, want := range map[string]string{"framework": "default (eager)", "cross_entropy": "default (unfused)", "split": "default (block)", "tie": "default (copy)"} {
		if got := a.ChoiceText(name, ""); got != want {
			t.Errorf("%s's default reads %q, want %q", name, got, want)
		}
	}
	if got, want := KnobChoices("framework"), append([]string{""}, wire.Frameworks()...); !slices.Equal(got, want) {
		t.Errorf("framework offers %q, want core's %q", got, want)
	}
	disabled := func(name string) bool {
		for _, g := range []string{"arch", "train", "plan", "cluster", "figures"} {
			for _, f := range a.KnobFields(g) {
				if f.Name == name {
					return f.Disabled
				}
			}
		}
		t.Fatalf("no knob %s", name)
		return false
	}
	// Without fp8, selective recomputation and zb-h1 their knobs do not apply.
	for _, name := range []string{"fp8_attention", "recompute_modules", "weight_grad_fraction"} {
		if !disabled(name) {
			t.Errorf("%s applies before its condition (core's normal form: %q)", name, a.Resolved(name))
		}
	}
	if disabled("expert_fused_mlp") || disabled("cross_entropy") {
		t.Errorf("the mixture's fused MLP or the loss kernel does not apply")
	}

	step := func() string { return a.Summary().Step }
	for _, c := range []struct {
		name, v string
		field   func() string
		changes bool
	}{
		{"framework", "megatron", func() string { return a.Req.Model.Architecture.Framework }, true},
		{"cross_entropy", "vocab-parallel", func() string { return a.Req.Model.Architecture.CrossEntropy }, true},
		{"split", "sublayer", func() string { return a.Req.Model.Architecture.Split }, false},
		{"dtype", "fp8", func() string { return a.Req.Model.Architecture.DType }, true},
		{"fp8_recipe", "mxfp8", func() string { return a.Req.Training.FP8Recipe }, true},
		{"expert_fused_mlp", "true", func() string { return check(a.Req.Model.Architecture.ExpertFusedMLP) }, true},
		{"attention", "cudnn", func() string { return a.Req.Model.Architecture.Attention }, true},
		{"fp8_attention", "true", func() string { return check(a.Req.Model.Architecture.FP8Attention) }, true},
		{"recompute", "selective", func() string { return a.Req.Training.Recompute }, false},
		{"recompute_modules", "moe_act,layernorm", func() string { return strings.Join(a.Req.Training.RecomputeModules, ",") }, true},
		{"train_metrics", "2", func() string { return itoa0(a.Req.Training.TrainMetrics) }, true},
		{"free_transfers", "true", func() string { return check(a.Req.Cluster.FreeTransfers) }, true},
	} {
		if c.name == "fp8_attention" && disabled(c.name) {
			t.Errorf("fp8_attention does not apply with dtype fp8")
		}
		before := step()
		if c.v == "true" {
			a.SetCheck(c.name, true)
		} else {
			a.SetField(c.name, c.v)
		}
		if got := c.field(); got != c.v || a.Err != nil {
			t.Errorf("%s = %s: the request has %q (err %v)", c.name, c.v, got, a.Err)
		}
		if c.changes && step() == before {
			t.Errorf("%s = %s: the step stays %s", c.name, c.v, before)
		}
		if got := a.Field(c.name); got != c.v {
			t.Errorf("%s = %s: the knob shows %q", c.name, c.v, got)
		}
	}
	// The device's and framework's figures: the presets' by default, the request's when
	// typed ("" the preset's again, 0 a time of none).
	for _, name := range []string{"matmul_efficiency", "memory_efficiency", "kernel_seconds", "host_kernel_seconds", "host_layer_seconds"} {
		if d := a.DefaultText(name); !strings.HasPrefix(d, "default: ") || disabled(name) {
			t.Errorf("%s: placeholder %q, disabled %v", name, d, disabled(name))
		}
	}
	before := step()
	a.SetField("matmul_efficiency", "0.3")
	a.SetField("host_kernel_seconds", "0")
	if ar := a.Req.Model.Architecture; ar.MatmulEfficiency != 0.3 || ar.HostKernelSeconds == nil || *ar.HostKernelSeconds != 0 || a.Err != nil || step() == before {
		t.Errorf("matmul efficiency 0.3, no host time: %+v, err %v, step %s (was %s)", ar, a.Err, step(), before)
	}
	if a.Field("host_kernel_seconds") != "0" || a.Field("kernel_seconds") != "" {
		t.Errorf("the figures show host %q, device %q", a.Field("host_kernel_seconds"), a.Field("kernel_seconds"))
	}
	a.SetField("matmul_efficiency", "")
	a.SetField("host_kernel_seconds", "")
	if ar := a.Req.Model.Architecture; ar.MatmulEfficiency != 0 || ar.HostKernelSeconds != nil || step() != before {
		t.Errorf("the presets' figures again: %+v, step %s (was %s)", ar, step(), before)
	}
	a.SetField("recompute_modules", "core_attn, made-up")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "recompute_modules") {
		t.Errorf("an unknown module: %v, want core's refusal naming recompute_modules", a.Err)
	}
	a.SetField("recompute_modules", "")
	a.SetPlanOption("schedule", "zb-h1")
	a.SetDegree("expert", "") // 8 stages, whose bubble the weight gradients fill
	a.SetKnob("sharding", "")
	a.SetDegree("data", "")
	if a.Err != nil {
		t.Fatalf("8 stages under zb-h1: %v", a.Err)
	}
	if disabled("weight_grad_fraction") || a.DefaultText("weight_grad_fraction") != "default: 0.5" {
		t.Errorf("zb-h1's weight-gradient share: disabled %v, %q", disabled("weight_grad_fraction"), a.DefaultText("weight_grad_fraction"))
	}
	// The optimum's slowest stage is the last (the loss), whose step the weight-gradient
	// share does not shorten; a manual split whose slowest stage has a stage after it
	// shows the share in the step.
	b := slices.Clone(a.Res.Plan.Boundaries)
	b[len(b)-2] += 2 // a block (two sublayers) more on the stage before the last
	a.SetBoundaries(joinInts(b))
	if a.Err != nil || a.Res.Step == nil {
		t.Fatalf("a manual split: %v (boundaries %v)", a.Err, a.Req.Boundaries)
	}
	pipeline := func() float64 { return a.Res.Step.PipelineSeconds }
	was := pipeline()
	a.SetField("weight_grad_fraction", "0.9")
	if a.Req.Schedule.WeightGradFraction != 0.9 || a.Err != nil || pipeline() == was {
		t.Errorf("weight_grad_fraction 0.9: request %v, err %v, pipeline %v s (was %v s)", a.Req.Schedule.WeightGradFraction, a.Err, pipeline(), was)
	}
	a.SetField("weight_grad_fraction", "2")
	if a.Req.Schedule.WeightGradFraction != 0.9 || !a.NoticeBad {
		t.Errorf("weight_grad_fraction 2: request %v, notice %q", a.Req.Schedule.WeightGradFraction, a.Notice)
	}
	a.SetTab("model")
	html := render(t, a)
	for _, id := range []string{"knob-framework", "knob-cross_entropy", "knob-fp8_attention", "knob-expert_fused_mlp", "knob-recompute_modules", "knob-fp8-recipe", "knob-dtype"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("the Model panel has no #%s", id)
		}
	}
}

// TestDataLinkKnob: a cluster document's data-parallel link (cluster.data_link) has a
// control where the cluster is a document, its list core's links, and none where the
// cluster is a device preset's.
func TestDataLinkKnob(t *testing.T) {
	mixed := InitialRequest()
	mixed.Cluster = wire.ClusterSpec{Device: "a100-80gb", Devices: []string{"a100-80gb", "h100-sxm"}}
	n, err := request.Normalize(mixed)
	if err != nil || len(n.Cluster.Document) == 0 {
		t.Fatalf("a mixed cluster's document: %v", err)
	}
	n.Parallelism.Data = 2
	a := NewApp(n, &fakeHost{}, local)
	if a.Err != nil {
		t.Fatalf("the document's plan: %v", a.Err)
	}
	f := a.KnobFields("cluster")
	if len(f) != 3 || f[2].Name != "data_link" || f[2].Disabled || !slices.Equal(f[2].Choices[1:], wire.LinkPresets()) {
		t.Fatalf("a cluster document's knobs: %+v", f)
	}
	if got := a.ChoiceText("data_link", ""); got != "default (the slowest between stages)" {
		t.Errorf("the data link's default reads %q", got)
	}
	a.SetField("data_link", "ib-hdr")
	if a.Req.Cluster.DataLink != "ib-hdr" || a.Err != nil || a.Field("data_link") != "ib-hdr" {
		t.Errorf("data_link ib-hdr: request %q, err %v", a.Req.Cluster.DataLink, a.Err)
	}
	a = NewApp(nil, &fakeHost{}, local)
	for _, f := range a.KnobFields("cluster") {
		if f.Name == "data_link" {
			t.Errorf("a device preset's cluster has a data-link knob")
		}
	}
}

// TestShardingSwitchKeeps: a change of the sharding keeps the fields core's list
// (wire.ShardingFields) says the new mode takes, so that prefetch, reshard,
// reduce_dtype and fully_shard survive zero3 to hsdp and back (hsdp's group goes on
// zero3, which refuses it), and clears every one of them on zero2, which takes none;
// the request stays one core plans. A refusal naming the shard group leaves its knob
// enabled.
func TestShardingSwitchKeeps(t *testing.T) {
	a := NewApp(nil, &fakeHost{}, local)
	a.PickModel("arch:gpt2-medium")
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "4")
	a.SetCluster("nodes", "4")
	a.SetDegree("data", "8")
	a.SetKnob("sharding", "zero3")
	for name, v := range map[string]string{"prefetch": "none", "reshard": "step", "reduce_dtype": "fp32", "fully_shard": "true"} {
		a.SetField(name, v)
	}
	if a.Err != nil {
		t.Fatalf("zero3 with FSDP2's fields: %v", a.Err)
	}
	want := wire.Parallelism{Prefetch: "none", Reshard: "step", ReduceDType: "fp32", FullyShard: true}
	got := func() wire.Parallelism {
		p := a.Req.Parallelism
		return wire.Parallelism{Prefetch: p.Prefetch, Reshard: p.Reshard, ReduceDType: p.ReduceDType, FullyShard: p.FullyShard, ShardGroup: p.ShardGroup}
	}
	a.SetKnob("sharding", "hsdp")
	a.SetField("shard_group", "2")
	if w := want; got() != func() wire.Parallelism { w.ShardGroup = 2; return w }() || a.Err != nil {
		t.Errorf("zero3 to hsdp: %+v (err %v), want %+v and group 2", got(), a.Err, want)
	}
	a.SetKnob("sharding", "zero3")
	if got() != want || a.Err != nil {
		t.Errorf("hsdp to zero3: %+v (err %v), want %+v without the group", got(), a.Err, want)
	}
	// One node of 8 devices, 8 replicas: hsdp's default group (a node's replicas) holds
	// them all, which core refuses by parallelism.shard_group; that knob stays enabled
	// to answer it.
	a.SetCluster("per_node", "8")
	a.SetCluster("nodes", "1")
	a.SetKnob("sharding", "hsdp")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "parallelism.shard_group") {
		t.Fatalf("hsdp with a node's group holding every replica: %v, want core's refusal by parallelism.shard_group", a.Err)
	}
	for _, f := range a.KnobFields("finer") {
		if f.Name == "shard_group" && f.Disabled {
			t.Errorf("the shard group's knob is disabled where core's refusal names it")
		}
	}
	a.SetField("shard_group", "2")
	if w := want; got() != func() wire.Parallelism { w.ShardGroup = 2; return w }() || a.Err != nil {
		t.Errorf("hsdp with group 2 on one node: %+v (err %v)", got(), a.Err)
	}
	a.SetKnob("sharding", "zero2")
	if got() != (wire.Parallelism{}) || a.Err != nil {
		t.Errorf("zero3 to zero2: %+v (err %v), want none of them", got(), a.Err)
	}
	for _, f := range a.KnobFields("finer") {
		if slices.Contains([]string{"prefetch", "reshard", "reduce_dtype", "fully_shard", "shard_group"}, f.Name) && !f.Disabled {
			t.Errorf("zero2: %s enabled (core's normal form: %q)", f.Name, a.Resolved(f.Name))
		}
	}
}

// TestUserbuffersConfigKnob: the finer knob of parallelism.tp_comm_overlap_config
// applies where core prices the userbuffers overlap (overlap_tensor_comm userbuffers),
// offers core's default (te-default, as core's normal form names it) and core's tuned
// configs (core/wire's list), sets the field, shows core's refusal of a config of
// another shape on the knob (which stays enabled to answer it), is kept in the
// fragment (URL and localStorage) and read back from it, and is one of the fields the
// Search panel says every candidate keeps.
func TestUserbuffersConfigKnob(t *testing.T) {
	h := &fakeHost{}
	a := NewApp(nil, h, local)
	a.PickModel("arch:llama-3.1-70b") // hidden size 8192
	a.SetCluster("device", "h100-sxm")
	a.SetCluster("per_node", "8")
	a.SetCluster("nodes", "8")
	a.SetField("tensor", "4")
	a.SetField("sequence_parallel", "true")
	if a.Err != nil {
		t.Fatalf("the base: %v", a.Err)
	}
	row := func() KnobField {
		for _, f := range a.KnobFields("finer") {
			if f.Name == "tp_comm_overlap_config" {
				return f
			}
		}
		t.Fatal("no tp_comm_overlap_config row")
		return KnobField{}
	}
	if f := row(); !f.Disabled {
		t.Errorf("enabled without the userbuffers overlap (normal form %q)", a.Resolved("overlap_tensor_comm"))
	}
	a.SetField("overlap_tensor_comm", "userbuffers")
	f := row()
	if f.Disabled || a.Err != nil {
		t.Fatalf("with userbuffers: disabled %v, err %v", f.Disabled, a.Err)
	}
	if want := append([]string{""}, wire.TPCommOverlapConfigs()[1:]...); !slices.Equal(f.Choices, want) {
		t.Errorf("choices %q, want %q", f.Choices, want)
	}
	if got := a.ChoiceText("tp_comm_overlap_config", ""); got != "default (te-default)" {
		t.Errorf("the default reads %q", got)
	}
	const tuned = "userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192"
	a.SetField("tp_comm_overlap_config", tuned)
	if a.Req.Parallelism.TPCommOverlapConfig != tuned || a.Err != nil || a.Resolved("tp_comm_overlap_config") != tuned {
		t.Errorf("%s: the request has %q, err %v, normal form %q", tuned, a.Req.Parallelism.TPCommOverlapConfig, a.Err, a.Resolved("tp_comm_overlap_config"))
	}
	f0 := h.kept[len(h.kept)-1]
	b := NewApp(nil, &fakeHost{}, local)
	b.Restore(f0)
	if got := b.Field("tp_comm_overlap_config"); got != tuned {
		t.Errorf("the fragment reads back %q", got)
	}
	// A config of another device family: core's refusal, by field, on the knob.
	a.SetField("tp_comm_overlap_config", "userbuffers_bf16_b200_h8192_tp2_mbs1_seqlen8192")
	if a.Err == nil || !strings.Contains(a.Err.Error(), "tp_comm_overlap_config") || !strings.Contains(a.Err.Error(), "tuned for device b200, the run's is h100-sxm") {
		t.Errorf("a b200 config on h100: %v, want core's refusal naming tp_comm_overlap_config", a.Err)
	}
	if row().Disabled {
		t.Error("the refused knob is disabled")
	}
	a.SetTab("cluster")
	if html := render(t, a); !strings.Contains(html, `id="knob-tp_comm_overlap_config"`) {
		t.Error("the Cluster panel has no #knob-tp_comm_overlap_config")
	}
	a.SetField("tp_comm_overlap_config", "")
	if a.Req.Parallelism.TPCommOverlapConfig != "" || a.Err != nil {
		t.Errorf("back to the default: %q, %v", a.Req.Parallelism.TPCommOverlapConfig, a.Err)
	}
	var base []string
	for _, k := range a.KnobFields("searchbase") {
		base = append(base, k.Name)
	}
	if !slices.Contains(base, "tp_comm_overlap_config") {
		t.Errorf("the Search panel's kept fields %q lack the userbuffers config", base)
	}
}
