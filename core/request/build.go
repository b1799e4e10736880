package request

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// buildModel costs an architecture on the cluster's device, or adjusts a profile to the
// training settings and the devices.
// fixedTimesNote says how a scaled profile's fixed per-layer costs were priced: kept
// where its layers state them (forward_fixed_seconds, backward_fixed_seconds), else
// scaled with the rest.
func fixedTimesNote(m *model.Model) string {
	fixed := 0
	for _, l := range m.Layers {
		if l.ForwardFixedSeconds > 0 || l.BackwardFixedSeconds > 0 {
			fixed++
		}
	}
	if fixed == 0 {
		return "no layer states its fixed times (forward_fixed_seconds, backward_fixed_seconds), so launches and host dispatch scale too, pricing a smaller microbatch too fast and a larger one too slow"
	}
	return fmt.Sprintf("the fixed times %d of its %d layers state (forward_fixed_seconds, backward_fixed_seconds) are kept and the rest of their times scaled", fixed, len(m.Layers))
}

func (p *prepared) buildModel(es *model.Errors) {
	if p.arch != nil {
		p.architecture(es)
	} else {
		p.profile(es)
	}
	if p.model != nil && p.req.Model.Name != "" {
		p.model.Name = p.req.Model.Name
	}
	p.memoryEfficiency = make([]float64, len(p.cluster.Devices))
	for i, d := range p.cluster.Devices {
		p.memoryEfficiency[i] = 1
		if pr, err := cluster.LookupDevice(d.Name); err == nil && d.Name != "" {
			p.memoryEfficiency[i] = pr.Perf.MemoryEfficiency
		}
		if a := p.req.Model.Architecture; a != nil && a.MemoryEfficiency != 0 {
			p.memoryEfficiency[i] = a.MemoryEfficiency // the override holds for the update too
		}
	}
}

func (p *prepared) architecture(es *model.Errors) {
	r := p.req
	a := r.Model.Architecture
	if a.Seq == 0 {
		a.Seq = DefaultSeq
		if p.arch.MaxPositions > 0 && p.arch.MaxPositions < a.Seq {
			a.Seq = p.arch.MaxPositions
		}
	}
	o := analytic.Options{
		Batch: r.Schedule.MicrobatchSize, Seq: a.Seq,
		DType: analytic.DType(a.DType), FP8Recipe: analytic.FP8Recipe(r.Training.FP8Recipe), FP8ParamGather: r.Training.FP8ParamGather, FP8FSDPAllGather: r.Training.FP8FSDPAllGather, TrainMetrics: r.Training.TrainMetrics, MoEAuxLoss: analytic.AuxLoss(r.Training.MoEAuxLoss), MoEForceBalance: r.Training.MoEForceLoadBalancing, Precision: analytic.Precision(r.Training.Precision),
		Optimizer: analytic.Optimizer(r.Training.Optimizer), Attention: analytic.Attention(a.Attention),
		FP8Attention: a.FP8Attention, ExpertFusedMLP: a.ExpertFusedMLP,
		Recompute: archRecompute(r.Training.Recompute), Split: analytic.Split(a.Split), Tie: analytic.Tie(a.Tie),
		DataParallel: r.Parallelism.Data, Sharding: analytic.Sharding(r.Parallelism.Sharding),
		ShardGroup: p.shardGroup(), NoPrefetch: r.Parallelism.Prefetch == PrefetchNone, FullyShard: r.Parallelism.FullyShard, ReduceFP32: r.Parallelism.ReduceDType == ReduceFP32,
		KeepGathered:   r.Parallelism.Reshard == ReshardStep,
		TensorParallel: r.Parallelism.Tensor, SequenceParallel: r.Parallelism.SequenceParallel,
		Context: r.Parallelism.Context, ContextMethod: analytic.ContextMethod(r.Parallelism.ContextMethod), ContextInner: r.Parallelism.ContextInner,
		ExpertParallel: r.Parallelism.Expert, ExpertTensorParallel: r.Parallelism.ExpertTensor,
		ExpertImbalance: a.ExpertImbalance, CapacityFactor: a.CapacityFactor, ExpertOverlap: r.Parallelism.ExpertOverlap,
		Dispatcher: analytic.Dispatcher(r.Parallelism.ExpertDispatcher),
	}
	if !p.train() {
		o.Optimizer, o.Precision = analytic.None, ""
	}
	if o.Recompute == analytic.Selective {
		o.RecomputeModules = p.modules
	}
	if r.Training.Recompute == RecomputeAuto {
		// Selective's are checked by the estimate (analytic.Misfit); auto's here.
		for i, n := range p.modules.Names() {
			m, _ := analytic.ParseModules([]string{n})
			if why := analytic.Misfit(p.arch, m); why != "" {
				es.Add(fmt.Sprintf("training.recompute_modules[%d]", i), "%s: %s", n, why)
			}
		}
	}
	// Costed on device 0; the estimator scales each other device's times by its FLOP/s.
	device := p.cluster.Devices[0].Name
	t, err := analytic.PresetTarget(device)
	if err != nil {
		es.Add("cluster.document.devices[0].name", "must name a device preset to cost an architecture on (%v)", err)
		return
	}
	if a.MatmulEfficiency != 0 {
		t.Perf.MatmulEfficiency = a.MatmulEfficiency
	}
	if a.MemoryEfficiency != 0 {
		t.Perf.MemoryEfficiency = a.MemoryEfficiency
	}
	if a.KernelSeconds != nil {
		t.Perf.KernelSeconds = *a.KernelSeconds
	}
	t.TensorLink = p.tensorLink
	if par := r.Parallelism; p.topo != nil && par.Tensor*par.Context > p.topo.DevicesPerNode {
		// The context group spans nodes: its exchanges cross the network, each a send
		// to a neighbour over NCCL's net transport on the device's NIC path
		// (cluster.Topology.NICLink: the NIC at the narrower of its rate and the PCIe
		// link to it).
		t.ContextLink = p.topo.NICLink()
	} else if l, ok := p.meshPairLink(); ok && par.Context > 1 {
		// On a full mesh the tensor group's collectives ride its t-1 links (tensorLink);
		// a context ring's exchange is a send to its neighbour, on one link, as a stage's
		// send is, whatever the tensor degree.
		t.ContextLink = l
	}
	if !hasBandwidth(&p.tensorLink) {
		// A cluster document states no link inside a stage's group: tensor and context
		// groups, and one replica's shards, use the device preset's usual link.
		p.tensorLink = t.Link
	}
	p.expertLinks(&t)
	fw, ok := p.lookupFramework(es, device)
	if !ok {
		return
	}
	t.Framework = fw
	if r.Training.CheckForNaNInGrad && !fw.MegatronBuckets {
		es.Add("training.check_for_nan_in_grad", "is Megatron-Core's DistributedDataParallelConfig check, which framework %q does not run (megatron or cuda-graphs)", fw.Name)
	}
	if r.Training.FP8FSDPAllGather && fw.Name != cluster.Eager && fw.Name != cluster.Compiled {
		// torchao's Float8 training runs under PyTorch's own modules (torchtitan);
		// Megatron-Core's fp8 weights are training.fp8_param_gather.
		es.Add("training.fp8_fsdp_all_gather", "is torchao's FSDP2 float8 all-gather, which framework %q does not run (eager or compiled; Megatron-Core's is training.fp8_param_gather)", fw.Name)
	}
	if r.Parallelism.DPBucketElements > 0 && !fw.MegatronBuckets {
		es.Add("parallelism.dp_bucket_elements", "is Megatron-Core's bucket_size, which framework %q does not run (megatron or cuda-graphs)", fw.Name)
	}
	if o.MoEAuxLoss != "" && !megatronRouter(fw.Name) {
		// HuggingFace's mixtures compute their loss otherwise (once a step over every
		// layer's router logits, load_balancing_loss_func), which is not priced.
		es.Add("training.moe_aux_loss", "is priced as Megatron-Core's router computes it: needs framework megatron, cuda-graphs, deepspeed or none, got %s", fw.Name)
		return
	}
	if o.MoEForceBalance && !megatronRouter(fw.Name) {
		// HuggingFace's mixtures have no forced balancing.
		es.Add("training.moe_force_load_balancing", "is Megatron-Core's router's (moe_router_force_load_balancing): needs framework megatron, cuda-graphs, deepspeed or none, got %s", fw.Name)
		return
	}
	if fw.ParamGradAccumulate && p.train() {
		// Its gradients accumulate in .grad over the step's microbatches, each after the
		// first adding its own (analytic.Options.Microbatches).
		o.Microbatches = r.Schedule.Microbatches
	}
	par := &r.Parallelism
	if fe := PipelineEngineRefusal(fw.Name, par.Pipeline, p.sched, par.Sharding, par.OverlapGradReduce, par.OverlapParamGather); fe != nil {
		es.Add(fe.Path, "%s", fe.Reason)
		return
	}
	if o.Attention == "" {
		o.Attention = analytic.DefaultAttention(p.arch, fw.Name)
	}
	o.TensorCommOverlap = fw.OverlapTensorComm && p.train()
	o.TensorCommAsync = o.TensorCommOverlap && fw.AsyncTensorComm
	o.TensorCommConfig = par.TPCommOverlapConfig
	if fw.FixedBytes > 0 || fw.AllocatorReserve > 0 {
		// The framework's memory is counted explicitly (estimate.Options.FixedBytes and
		// AllocatorReserve): a preset's blanket usable fraction would count it twice. A
		// fraction the cluster document states is the user's and stays.
		for i := range p.cluster.Devices {
			if d := &p.cluster.Devices[i]; d.PresetUsable {
				d.UsableFraction, d.PresetUsable = 1, false
			}
		}
	}
	if r.Model.Name != "" {
		p.arch.Name = r.Model.Name
	}
	k := estimateKey{arch: p.archKey, name: r.Model.Name, device: device, tensorLink: t.TensorLink, contextLink: t.ContextLink,
		expertLink: t.ExpertLink, expertInterLink: t.ExpertInterLink, expertPerNode: t.ExpertPerNode,
		matmul: a.MatmulEfficiency, memory: a.MemoryEfficiency, framework: fw, opts: o}
	if a.KernelSeconds != nil {
		k.kernel, k.kernelSet = *a.KernelSeconds, true
	}
	p.estKey = k
	est, m, err := p.cache.estimate(k, p.arch, t, o)
	if err != nil {
		addPrefixed(es, "", archPaths(err))
		return
	}
	o = est.Opts
	if r.Training.FP8AmaxTPOnly && !amaxHistory(o.DType, o.FP8Recipe, p.train()) {
		// With the defaults filled: a bf16 run, or fp8 under a block or current recipe,
		// keeps no amax history to reduce, and inference reduces none.
		es.Add("training.fp8_amax_tp_only", "applies to training in fp8 with fp8_recipe delayed (the amax history's all-reduce), got dtype %s, fp8_recipe %q", o.DType, o.FP8Recipe)
		return
	}
	a.DType, a.Attention, a.Split, a.Tie = string(o.DType), string(o.Attention), string(o.Split), string(o.Tie)
	r.Training.FP8Recipe = string(o.FP8Recipe)
	if p.train() {
		r.Training.Precision = string(o.Precision)
	}
	p.est, p.target = est, t
	p.model = m
	p.pipelineBuffers(fw)
	p.delayedAmaxReductions(fw, o)
	p.fullState()
	p.model.MicrobatchSize = o.Batch
	p.model.TokensPerSample = o.Seq
	if p.arch.Name != "" {
		p.model.Name = p.arch.Name
	}
}

// PipelineBuffersKey is the model.Layer.Shared key of the boundary tensors a PyTorch
// pipeline stage holds for a step's microbatches (cluster.PipelineStageBufferBytes),
// counted once by each stage (each chunk, interleaved: every PipelineStage has its own).
const PipelineBuffersKey = "pipeline-stage-buffers"

// pipelineBuffers gives every layer of a transformer's blocks (block, or its attention
// and MLP halves) the shared item PipelineBuffersKey, of
// cluster.PipelineStageBufferBytes for the step's microbatches and the largest output
// of those layers (the hidden state a stage sends), when a training step runs on
// pipeline stages >= 2 under a framework that runs PyTorch's pipelining
// (cluster.Framework.PipelineStageBuffers). A shared item is counted once by each
// stage that holds one of its layers, so each stage of blocks holds the buffers once.
// The model's layers are the cache's: the changed ones are copied.
func (p *prepared) pipelineBuffers(fw cluster.Framework) {
	if !fw.PipelineStageBuffers || !p.train() || p.req.Parallelism.Pipeline < 2 {
		return
	}
	var boundary int64
	blocks := p.blockLayers()
	for _, i := range blocks {
		for _, t := range p.model.Layers[i].Outputs {
			boundary = max(boundary, t.Bytes)
		}
	}
	size := cluster.PipelineStageBufferBytes(p.sched.Microbatches, boundary)
	if size == 0 {
		return
	}
	// The same layers for every request of this estimate and size: a search's
	// candidates share them (Cache.bufferedLayers).
	p.model.Layers = p.cache.bufferedLayers(p.estKey.arch != nil, p.model.Layers, size, func() []model.Layer {
		layers := slices.Clone(p.model.Layers)
		for _, i := range blocks {
			l := &layers[i]
			shared := maps.Clone(l.Shared)
			if shared == nil {
				shared = map[string]int64{}
			}
			shared[PipelineBuffersKey] = size
			l.Shared = shared
		}
		return layers
	})
}

// blockLayers are the positions of the model's layers that are a transformer's blocks
// (pipelineBoundaryKind), in the model's order.
func (p *prepared) blockLayers() []int {
	var blocks []int
	for i := range p.model.Layers {
		if pipelineBoundaryKind(p.est.Layers[i].Kind) {
			blocks = append(blocks, i)
		}
	}
	return blocks
}

// pipelineBoundaryKind reports whether an estimate's layer of that kind is one of a
// transformer's blocks (block, or its attention or MLP half), whose output is the hidden
// state.
func pipelineBoundaryKind(kind string) bool {
	switch kind {
	case "block", "attention", "mlp":
		return true
	}
	return false
}

// expertLinks sets the links of an architecture's expert-parallel all-to-alls: on a
// cluster of nodes, the EP group is expert_tensor x expert consecutive ranks
// (Megatron-Core numbers expert layers' ranks expert-tensor first, then expert, then
// expert-data, then pipeline), so a node of K devices holds K / expert_tensor of its
// members (all, when the group fits), joined by link_intra, the rest across link_inter;
// on one link, cluster.link joins them all.
func (p *prepared) expertLinks(t *analytic.Target) {
	par := p.req.Parallelism
	if par.Expert < 2 {
		return
	}
	if p.topo == nil {
		t.ExpertLink = p.tensorLink
		if l, ok := p.meshPairLink(); ok {
			// A full mesh: one link, as with nodes (topo.Intra), not the tensor group's
			// t-1 (tensorLink), which would tie the exchanges' rate to the tensor degree.
			t.ExpertLink = l
		}
		return
	}
	t.ExpertLink, t.ExpertInterLink = p.topo.Intra, p.topo.Inter
	t.ExpertPerNode = min(par.Expert, max(1, p.topo.DevicesPerNode/max(1, par.ExpertTensor)))
}

// meshPairLink is one link between two devices of a full mesh (cluster.LinkPreset's
// MeshBytesPerSecond: AMD Infinity Fabric) that joins a node, or without nodes all the
// devices (the device preset's cluster.link); ok is false on a switched fabric or a
// cluster document.
func (p *prepared) meshPairLink() (cluster.Link, bool) {
	if p.topo != nil {
		return p.topo.Intra, p.topo.IntraMeshBytesPerSecond > 0
	}
	if p.mesh <= 0 {
		return cluster.Link{}, false
	}
	l, _ := cluster.LookupLink(p.req.Cluster.Link)
	return l.Link, true
}

// archPaths renames the analytic options' field paths to the request's.
func archPaths(err error) error {
	es, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	paths := map[string]string{
		"batch": "schedule.microbatch_size", "seq": "model.architecture.seq", "dtype": "model.architecture.dtype", "fp8_recipe": "training.fp8_recipe", "fp8_param_gather": "training.fp8_param_gather", "fp8_fsdp_all_gather": "training.fp8_fsdp_all_gather", "train_metrics": "training.train_metrics", "moe_aux_loss": "training.moe_aux_loss", "moe_force_load_balancing": "training.moe_force_load_balancing",
		"precision": "training.precision", "optimizer": "training.optimizer", "attention": "model.architecture.attention",
		"fp8_attention": "model.architecture.fp8_attention", "expert_fused_mlp": "model.architecture.expert_fused_mlp",
		"recompute": "training.recompute", "recompute_modules": "training.recompute_modules", "split": "model.architecture.split", "tie": "model.architecture.tie",
		"data_parallel": "parallelism.data", "tensor_parallel": "parallelism.tensor",
		"context_parallel": "parallelism.context", "context_inner": "parallelism.context_inner", "sharding": "parallelism.sharding", "shard_group": "parallelism.shard_group",
		"expert_parallel": "parallelism.expert", "expert_tensor_parallel": "parallelism.expert_tensor",
		"sequence_parallel": "parallelism.sequence_parallel", "expert_overlap": "parallelism.expert_overlap", "tensor_comm_overlap": "parallelism.overlap_tensor_comm", "tensor_comm_async": "parallelism.overlap_tensor_comm", "tensor_comm_config": "parallelism.tp_comm_overlap_config",
		"expert_imbalance": "model.architecture.expert_imbalance", "dispatcher": "parallelism.expert_dispatcher", "capacity_factor": "model.architecture.capacity_factor",
		"perf.matmul_efficiency": "model.architecture.matmul_efficiency", "perf.memory_efficiency": "model.architecture.memory_efficiency",
		"perf.kernel_seconds":           "model.architecture.kernel_seconds",
		"framework.host_kernel_seconds": "model.architecture.host_kernel_seconds",
		"framework.host_layer_seconds":  "model.architecture.host_layer_seconds",
	}
	out := make(model.Errors, len(es))
	for i, e := range es {
		out[i] = e
		if q, ok := paths[e.Path]; ok {
			out[i] = &model.FieldError{Path: q, Reason: e.Reason}
		} else if strings.HasPrefix(e.Path, "recompute_modules[") {
			out[i] = &model.FieldError{Path: "training." + e.Path, Reason: e.Reason}
		}
	}
	return out
}

// profile adjusts a measured profile to the training settings: gradients and optimizer
// state for weights-only profiles, none of either for inference, optimizer state sharded
// under ZeRO-1, and times rescaled from the device it was measured on.
func (p *prepared) profile(es *model.Errors) {
	p.model = copyModel(p.model) // the profile as loaded stays as it was, for the variants
	m := p.model
	r := p.req
	train := p.train()
	states := 0.0
	switch analytic.Optimizer(r.Training.Optimizer) {
	case analytic.AdamW, analytic.Adam:
		states = 2
	case analytic.SGD:
		states = 1
	}
	removed := false
	for i := range m.Layers {
		l := &m.Layers[i]
		switch {
		case train && p.weightsOnly():
			w := l.ParamBytes
			l.ParamBytes, l.GradBytes = 2*w, w
			l.OptimizerBytes = int64(math.Ceil(float64(w) * states))
		case !train && !p.weightsOnly():
			removed = removed || gradBytes(l) > 0 || l.OptimizerBytes > 0
			l.ParamBytes -= gradBytes(l)
			l.GradBytes, l.OptimizerBytes = 0, 0
		}
	}
	p.fullState()
	sharded := p.shardProfile()
	switch {
	case train && p.weightsOnly():
		p.note(wire.Diagnostic{Code: wire.CodeStateAdded, Severity: wire.Note,
			Message: fmt.Sprintf("the PipeDream profile gives weights only (fp32): training adds their gradients and %s state (%g x the weights)", r.Training.Optimizer, states)})
	case removed:
		p.note(wire.Diagnostic{Code: wire.CodeStateRemoved, Severity: wire.Note,
			Message: "inference: the profile's gradients (grad_bytes, or half of param_bytes) and optimizer state are not held"})
	}
	if m.ScaledFrom > 0 {
		p.note(wire.Diagnostic{Code: wire.CodeProfileScaled, Severity: wire.Note, Field: p.modelField("scaled_from"),
			Message: fmt.Sprintf("the profile was measured with %d samples per microbatch and is scaled linearly to %d (ScaleProfile): times, activations, temporaries and transfers in proportion, weights and state as measured; %s; measure it at this size for exact figures", m.ScaledFrom, m.MicrobatchSize, fixedTimesNote(m))})
	}
	changed := (train && p.weightsOnly()) || removed || sharded
	if changed { // the loader validated the profile as it came
		if err := m.Validate(); err != nil {
			addPrefixed(es, p.modelField(""), err)
			return
		}
	}
	p.rescale(es)
}

// fullState records every layer's weights and gradients before any sharding (of its own
// parameters, without a tied matrix): what the data-parallel reductions move and what
// ZeRO-3 gathers.
func (p *prepared) fullState() {
	n := len(p.model.Layers)
	p.fullWeights, p.fullGrads = make([]int64, n), make([]int64, n)
	for i := range p.model.Layers {
		if p.est != nil {
			p.fullWeights[i], p.fullGrads[i] = p.est.FullBytes(i)
			continue
		}
		l := &p.model.Layers[i]
		if p.train() {
			p.fullGrads[i] = gradBytes(l)
		}
		p.fullWeights[i] = l.ParamBytes - p.fullGrads[i]
	}
}

// shardProfile shards a profile's training state over the shard group, as
// analytic.Options does an architecture's: the optimizer state from ZeRO-1 on, the
// gradients from ZeRO-2 on, the weights under ZeRO-3 and HSDP, whose layers then also
// hold their gathered weights (two layers' with prefetch, this layer's size for the
// next) and whole gradients while they run. It reports whether it changed the model.
func (p *prepared) shardProfile() bool {
	level := analytic.Sharding(p.req.Parallelism.Sharding).Level()
	n := int64(p.shardGroup())
	if level == 0 || n < 2 {
		return false
	}
	div := func(v int64) int64 { return (v + n - 1) / n }
	copies := int64(2)
	if p.req.Parallelism.Prefetch == PrefetchNone {
		copies = 1
	}
	for i := range p.model.Layers {
		l := &p.model.Layers[i]
		w, g := p.fullWeights[i], p.fullGrads[i]
		l.OptimizerBytes = div(l.OptimizerBytes)
		if level >= 2 {
			l.GradBytes = div(g)
			l.ParamBytes = w + l.GradBytes
		}
		if level >= 3 {
			l.ParamBytes = div(w) + l.GradBytes
			l.TemporaryBytes += copies*w + g
		}
	}
	return true
}

// gradBytes is the part of a layer's param_bytes that is gradients: grad_bytes, or half
// of param_bytes (weights and gradients of one type) when the profile does not say.
func gradBytes(l *model.Layer) int64 {
	if l.GradBytes > 0 {
		return l.GradBytes
	}
	return l.ParamBytes / 2
}

// rescale scales a profile's times from the device it was measured on to the cluster's
// devices: by measured FLOP/s over device 0's; the estimator scales device 0's times to
// each other device, so every stage is scaled against the profile's device.
func (p *prepared) rescale(es *model.Errors) {
	m := p.model
	if m.Unit() != model.Seconds {
		return
	}
	if m.MeasuredOn == nil {
		p.note(wire.Diagnostic{Code: wire.CodeTimesNotScaled, Severity: wire.Note, Field: p.modelField("measured_on"),
			Message: "the profile does not say what it was measured on (measured_on): its times are taken as they are on every device"})
		return
	}
	mo := *m.MeasuredOn
	from := mo.FLOPSPerSecond
	if from == 0 {
		d, err := cluster.LookupDevice(mo.Name)
		if err != nil {
			es.Add(p.modelField("measured_on"), "%v (or give an object with flops_per_second)", err)
			return
		}
		from, mo.Name = d.FLOPSPerSecond, d.Name
	}
	to := p.cluster.Devices[0].FLOPSPerSecond
	if !(to > 0) {
		es.Add("cluster.document.devices[0].flops_per_second", "is needed to rescale the profile's times from %s, where they were measured (name a device preset, or give flops_per_second)", mo.Name)
		return
	}
	f := from / to
	if f == 1 {
		p.note(wire.Diagnostic{Code: wire.CodeTimesScaled, Severity: wire.Note, Field: p.modelField("measured_on"),
			Message: fmt.Sprintf("the profile was measured on %s, the cluster's device: times as measured", mo.Name)})
		return
	}
	for i := range m.Layers {
		m.Layers[i].ForwardSeconds *= f
		m.Layers[i].BackwardSeconds *= f
	}
	p.note(wire.Diagnostic{Code: wire.CodeTimesScaled, Severity: wire.Note, Field: p.modelField("measured_on"),
		Message: fmt.Sprintf("times measured on %s (%.4g FLOP/s) are scaled by %.4g to %s (%.4g FLOP/s)", mo.Name, from, f, deviceLabel(p.cluster.Devices[0]), to)})
}

// modelField is the request's path of a field of the profile: under model.document for
// a document; a bundled example's fields are the example's (model.example).
func (p *prepared) modelField(sub string) string {
	switch src := p.modelSource(); {
	case src != "document":
		return "model." + src
	case sub == "":
		return "model.document"
	default:
		return "model.document." + sub
	}
}

func deviceLabel(d cluster.Device) string {
	if d.Name == "" {
		return "device 0"
	}
	return d.Name
}
