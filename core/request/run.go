package request

import (
	"context"
	"errors"
	"fmt"
	"math"

	"pipeplan/core/analytic"
	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// Run plans the request: it normalizes it, builds the model and the cluster, finds the
// optimal split (or costs the given boundaries), simulates the schedule and adds what a
// step does once: the optimizer update and the gradient all-reduces. Invalid requests
// give field errors (model.Errors) whose paths are the request's
// ("cluster.document.devices[1].memory_bytes: must be > 0"). A valid request that fits no
// split gives a Result with Feasible false and diagnostics that say why. Run checks ctx
// between its phases.
func Run(ctx context.Context, r *wire.Request) (*wire.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var pending *pendingID
	if r != nil && len(r.Model.Document) >= concurrentJSONBytes {
		pending = startID(r.Model.Document)
		defer pending.abandon() // a request refused before its id leaves it running
	}
	p, err := prepare(r)
	if err != nil {
		return nil, err
	}
	id, err := requestID(p.req, pending)
	if err != nil {
		return nil, err
	}
	return p.run(ctx, id)
}

// run plans the prepared request; its result states id. It changes nothing of p.
func (p *prepared) run(ctx context.Context, id string) (*wire.Result, error) {
	res := &wire.Result{Version: wire.Version, ID: id, PlannerVersion: PlannerVersion, Model: p.modelInfo(), Diagnostics: []wire.Diagnostic{}}
	res.Diagnostics = append(res.Diagnostics, p.notes...)
	res.Placement = wirePlacement(p.placement)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opt := p.options()
	var pl *plan.Plan
	var err error
	if p.req.Boundaries != nil {
		pl, err = plan.Evaluate(p.model, p.cluster, opt, p.req.Boundaries)
	} else {
		pl, err = plan.Make(p.model, p.cluster, opt)
	}
	var nf *plan.NoFitError
	switch {
	case errors.As(err, &nf):
		res.Diagnostics = append(res.Diagnostics, noFit(nf.Reason))
		return res, nil
	case err != nil:
		return nil, p.planError(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.gradCopyMemory(pl, p.tiedMemory(pl))
	p.pipelineBufferMemory(pl)
	res.Plan, res.Schedule, res.Feasible = wirePlan(pl), wireSchedule(pl.Schedule), true
	if fb := pl.GraphFallback; fb != nil {
		res.Diagnostics = append(res.Diagnostics, wire.Diagnostic{Code: wire.CodeGraphPartitionFallback, Severity: wire.Warning, Field: "partition",
			Message:    "the split is of ranges of the layer order, not of the tensor graph: " + fb.Reason,
			Suggestion: "the plan is the best contiguous split of the model's layer order; a graph with fewer branches side by side has fewer ideals"})
	}
	if why := pl.RecomputeHeuristic; why != "" {
		res.Diagnostics = append(res.Diagnostics, wire.Diagnostic{Code: wire.CodeRecomputeHeuristic, Severity: wire.Note, Field: "training.recompute",
			Message: "recompute auto: " + why})
	}
	for i, s := range pl.Stages {
		if s.MemoryBytes > s.LimitBytes {
			res.Feasible = false
			res.Diagnostics = append(res.Diagnostics, overMemory(pl, i))
		}
	}
	for _, a := range res.Schedule.Advice {
		res.Diagnostics = append(res.Diagnostics, wire.Diagnostic{Code: wire.CodeScheduleAdvice, Severity: wire.Warning, Message: a})
	}
	p.step(res)
	return res, nil
}

// pipelineBufferMemory moves the boundary buffers of PyTorch's pipeline stages
// (PipelineBuffersKey), which the plan counts as a shared item (plan.Memory.OtherBytes),
// to their own part (plan.Memory.PipelineBufferBytes) in each stage holding them.
func (p *prepared) pipelineBufferMemory(pl *plan.Plan) {
	for i := range pl.Stages {
		s := &pl.Stages[i]
		for _, l := range pl.StageLayers(i) {
			if size, ok := p.model.Layers[l].Shared[PipelineBuffersKey]; ok && s.Memory.OtherBytes >= size {
				s.Memory.OtherBytes -= size
				s.Memory.PipelineBufferBytes += size
				break
			}
		}
	}
}

// tiedMemory moves a tied embedding matrix, which the plan counts as a shared item
// (plan.Memory.OtherBytes), to the weights, gradients and optimizer state of the stages
// that hold it, and says which stages hold it.
func (p *prepared) tiedMemory(pl *plan.Plan) (holds []bool) {
	if p.est == nil {
		return nil
	}
	w, g, o := p.est.TiedBytes()
	if w+g+o == 0 {
		return nil
	}
	holds = make([]bool, len(pl.Stages))
	for i := range pl.Stages {
		s := &pl.Stages[i]
		for _, l := range pl.StageLayers(i) {
			if size, ok := p.model.Layers[l].Shared[analytic.TiedGroup]; ok && size == w+g+o && s.Memory.OtherBytes >= size {
				s.Memory.OtherBytes -= size
				s.Memory.WeightsBytes += w
				s.Memory.GradsBytes += g
				s.Memory.OptimizerBytes += o
				holds[i] = true
				break
			}
		}
	}
	return holds
}

// gradCopyMemory moves the 16-bit gradient copies that precision deepspeed-bf16 keeps
// beside the fp32 gradients (analytic.Layer.GradCopyBytes), which the model counts with
// the gradients, to their own part (plan.Memory.GradCopyBytes). Run after tiedMemory: a
// tied matrix's copy counts in the stages that tiedMemory says hold it.
func (p *prepared) gradCopyMemory(pl *plan.Plan, holdsTied []bool) {
	if p.est == nil || !p.train() {
		return
	}
	for i := range pl.Stages {
		s := &pl.Stages[i]
		var c, tied int64
		for _, l := range pl.StageLayers(i) {
			own, t := p.est.GradCopyBytes(l)
			c, tied = c+own, max(tied, t)
		}
		if i < len(holdsTied) && holdsTied[i] {
			c += tied
		}
		c = min(c, s.Memory.GradsBytes)
		s.Memory.GradsBytes -= c
		s.Memory.GradCopyBytes += c
	}
}

// options are the plan options of the normalized request.
func (p *prepared) options() plan.Options {
	r := p.req
	obj, _ := partition.ParseObjective(r.Objective) // checked by prepare
	var temp func(first, last int) int64
	if p.est != nil && p.train() {
		temp = p.est.OptimizerTempBytes
	}
	return plan.Options{
		Objective:       obj,
		Graph:           r.Partition == wire.PartitionGraph,
		Recompute:       p.recomputeChoices(),
		RecomputeStages: p.arch == nil,
		RecomputeFixed:  p.recomputeFixed(),
		Estimate: estimate.Options{
			MemoryProportion: r.MemoryProportion,
			Inference:        !p.train(),
			Recompute:        p.recomputeStages,
			// An architecture's framework: its fixed memory and allocator reserve on every
			// device, and its optimizer's temporaries (profiles: none, their memory is
			// what was measured).
			FixedBytes:         p.framework.FixedBytes,
			AllocatorReserve:   p.framework.Reserve(r.Parallelism.Pipeline),
			OptimizerTempBytes: temp,
		},
		Schedule: &plan.ScheduleOptions{
			Config:             p.sched,
			MicrobatchSize:     r.Schedule.MicrobatchSize,
			WeightGradFraction: r.Schedule.WeightGradFraction,
			Events:             r.Events,
			OneMicrobatch:      p.toolMemory(),
			// An architecture's framework may run the transfers between stages in its
			// stages' streams (DeepSpeed's PipelineEngine).
			BlockingTransfers:   p.est != nil && p.framework.BlockingPipelineTransfers,
			PartitionedBoundary: p.partitionedBoundary(),
		},
	}
}

// partitionedBoundary is what DeepSpeed's PipelineEngine does around a blocking
// transfer that sends n bytes a device when tensor parallelism partitions the
// pipeline's tensors (cluster.DeepSpeedPartitionedBoundary): the whole tensor is the
// tensor group's t slices, gathered over the tensor link, its copies at the device's
// memory rate (the roofline's: bandwidth times the memory efficiency) and kernel
// launch cost. nil without blocking transfers, without tensor parallelism, or with
// sequence parallelism (whose activations are already sliced: estimate's model sends
// them whole, with no SendBytes of its own).
func (p *prepared) partitionedBoundary() func(n int64) cluster.PartitionedBoundary {
	par := p.req.Parallelism
	if p.est == nil || !p.framework.BlockingPipelineTransfers || par.Tensor < 2 || par.SequenceParallel {
		return nil
	}
	link, t, train := p.tensorLink, par.Tensor, p.train()
	rate := p.target.Perf.MemoryBytesPerSecond * p.target.Perf.MemoryEfficiency
	kernel := p.target.Perf.KernelSeconds
	return func(n int64) cluster.PartitionedBoundary {
		return cluster.DeepSpeedPartitionedBoundary(link, float64(n)*float64(t), t, rate, kernel, train)
	}
}

// planError puts the planner's field paths under the request's: model fields under the
// model's source, device and link fields under the cluster's.
func (p *prepared) planError(err error) error {
	fes, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	var es model.Errors
	for _, fe := range fes {
		prefix := ""
		switch path := fe.Path; {
		case hasAnyPrefix(path, "layers", "inputs", "time_unit"):
			prefix = "model." + p.modelSource()
		case hasAnyPrefix(path, "devices", "links", "host"):
			prefix = "cluster.document"
			if p.req.Cluster.Device != "" {
				prefix = "cluster"
			}
		case path == "boundaries" || hasAnyPrefix(path, "boundaries["):
		case path == "memory_proportion":
		case path == "recompute":
			prefix = "training"
		default:
			prefix = "schedule"
		}
		addPrefixed(&es, prefix, fe)
	}
	return es
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

func (p *prepared) modelSource() string {
	switch ms := p.req.Model; {
	case ms.Example != "":
		return "example"
	case ms.Architecture != nil:
		return "architecture"
	}
	return "document"
}

func (p *prepared) modelInfo() wire.ModelInfo {
	m := p.model
	mi := wire.ModelInfo{Name: m.Name, Source: p.modelSource(), Format: string(p.format), Layers: len(m.Layers),
		TimeUnit: string(m.Unit()), MicrobatchSize: p.req.Schedule.MicrobatchSize, TokensPerSample: m.TokensPerSample}
	mi.LayerNames = make([]string, len(m.Layers))
	for i := range m.Layers {
		mi.LayerNames[i] = m.Layers[i].Name
	}
	if p.est != nil {
		mi.Params = p.est.Total.Params
	}
	if p.req.Layers {
		mi.LayerCosts = layerCosts(m)
	}
	return mi
}

// layerCosts lists the model's layers' costs, column by column.
func layerCosts(m *model.Model) *wire.LayerCosts {
	n := len(m.Layers)
	lc := &wire.LayerCosts{ParamBytes: make([]int64, n), ActivationBytes: make([]int64, n), OutputBytes: make([]int64, n)}
	cycles := m.Unit() == model.Cycles
	if cycles {
		lc.ForwardCycles, lc.BackwardCycles = make([]int64, n), make([]int64, n)
	} else {
		lc.ForwardSeconds, lc.BackwardSeconds = make([]float64, n), make([]float64, n)
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		if cycles {
			lc.ForwardCycles[i], lc.BackwardCycles[i] = l.ForwardCycles, l.BackwardCycles
		} else {
			lc.ForwardSeconds[i], lc.BackwardSeconds[i] = l.ForwardSeconds, l.BackwardSeconds
		}
		lc.ParamBytes[i], lc.ActivationBytes[i] = l.ParamBytes, l.ActivationBytes
		for _, o := range l.Outputs {
			lc.OutputBytes[i] += o.Bytes
		}
	}
	return lc
}

func noFit(r plan.Reason) wire.Diagnostic {
	d := wire.Diagnostic{Code: r.Code, Severity: wire.Error, Message: "no plan fits: " + r.Message, Suggestion: r.Suggestion,
		BytesNeeded: r.BytesNeeded, CapacityBytes: r.CapacityBytes}
	if r.FirstLayer >= 0 {
		d.Layer, d.LastLayer = ptr(r.FirstLayer), ptr(r.LastLayer)
	}
	if r.Device >= 0 {
		d.Device = ptr(r.Device)
	}
	if r.Code == plan.TooFewLayers || r.Code == plan.TooFewCuts {
		d.Field = "parallelism.pipeline"
	}
	return d
}

// step adds what one step does besides the pipeline, per device and in all, and the
// throughput.
func (p *prepared) step(res *wire.Result) {
	r := p.req
	pl, sr := res.Plan, res.Schedule
	devices := len(p.cluster.Devices)
	d := r.Parallelism.Data
	train := p.train()
	t := r.Parallelism.Tensor
	c := r.Parallelism.Context
	st := &wire.Step{PipelineSeconds: sr.MakespanSeconds, BubbleFraction: sr.BubbleFraction, Devices: devices * d * t * c}
	res.Devices = make([]wire.DeviceStep, devices)
	for i := range res.Devices {
		res.Devices[i] = wire.DeviceStep{Device: i, Name: p.cluster.Devices[i].Name, Stages: []int{}}
	}
	statedGrads, hasParams, unknownBandwidth := false, false, false
	normBytes := make([]float64, devices) // each device's main gradients the clipping's norm reads
	for s, stage := range pl.Stages {
		dev := s % devices
		ds := &res.Devices[dev]
		ds.Stages = append(ds.Stages, s)
		if !train {
			continue
		}
		layers := pl.StageLayers(s)
		sg, hp := p.stageTraffic(ds, layers, r.Schedule.Microbatches)
		statedGrads, hasParams = statedGrads || sg, hasParams || hp
		bw := p.cluster.Devices[dev].MemoryBytesPerSecond * p.memoryEfficiency[dev]
		if p.est != nil {
			// The analytic estimate owns the update's time (analytic.Result.OptimizerSeconds),
			// costed on device 0: another device's pass scales by its bandwidth.
			scale := 1.0
			if bw0 := p.cluster.Devices[0].MemoryBytesPerSecond * p.memoryEfficiency[0]; bw != bw0 && bw > 0 && bw0 > 0 {
				scale = bw0 / bw
			}
			for _, run := range wire.Runs(layers) {
				device, host := p.est.OptimizerSeconds(run[0], run[1])
				ds.OptimizerSeconds += device * scale
				ds.OptimizerHostSeconds += host
				normBytes[dev] += p.est.GradNormBytes(run[0], run[1])
			}
			continue
		}
		// A profile's update reads and writes its parameters and twice its optimizer state.
		touched := float64(stage.ParamBytes) + 2*float64(stage.OptimizerBytes) + float64(stage.SharedBytes)
		if touched > 0 {
			if bw > 0 {
				ds.OptimizerSeconds += touched / bw
			} else {
				unknownBandwidth = true
			}
		}
	}
	if train {
		for i := range res.Devices {
			ds := &res.Devices[i]
			p.dataParallel(ds, pl, devices, r.Schedule.Microbatches)
			// Gradient-norm clipping runs before the update, once a step (gradClipSeconds).
			ds.OptimizerSeconds = max(ds.OptimizerSeconds, ds.OptimizerHostSeconds) + p.gradClipSeconds(i, normBytes[i])
			st.OptimizerSeconds = max(st.OptimizerSeconds, ds.OptimizerSeconds)
			st.DataParallelAllReduceSeconds = max(st.DataParallelAllReduceSeconds, ds.AllReduceSeconds)
			st.DataParallelReduceScatterSeconds = max(st.DataParallelReduceScatterSeconds, ds.ReduceScatterSeconds)
			st.DataParallelAllGatherSeconds = max(st.DataParallelAllGatherSeconds, ds.AllGatherSeconds)
			if i == 0 || ds.ExposedAllReduceSeconds > st.DataParallelExposedSeconds {
				// The slowdown of the device whose communication adds the most.
				st.DataParallelExposedSeconds, st.DataParallelSlowdownSeconds = ds.ExposedAllReduceSeconds, ds.ExposedSlowdownSeconds
			}
			st.DataParallelLayerSeconds = max(st.DataParallelLayerSeconds, ds.LayerCollectiveSeconds)
			if i == 0 || ds.LayerAddedSeconds > st.DataParallelLayerAddedSeconds {
				st.DataParallelLayerAddedSeconds, st.DataParallelLayerSlowdownSeconds = ds.LayerAddedSeconds, ds.LayerSlowdownSeconds
			}
		}
		if p.est != nil && p.est.Opts.Tie == analytic.TieCopy && devices > 1 && p.tiedLink != nil {
			st.TiedAllReduceSeconds = ringAllReduce(2, p.est.Total.TiedAllReduceBytes, p.tiedLink, p.cluster.Devices[0].ClockHz)
		}
		if unknownBandwidth {
			res.Diagnostics = append(res.Diagnostics, wire.Diagnostic{Code: wire.CodeOptimizerTimeUnknown, Severity: wire.Note, Field: "cluster.document.devices",
				Message: "a device states no memory_bytes_per_second: its optimizer update is not counted in the step"})
		}
		if d > 1 && p.est == nil && !p.weightsOnly() && !statedGrads && hasParams {
			res.Diagnostics = append(res.Diagnostics, wire.Diagnostic{Code: wire.CodeGradBytesAssumed, Severity: wire.Note, Field: p.modelField("layers"),
				Message: "the profile gives no grad_bytes: the data-parallel all-reduce moves half of each stage's param_bytes (weights and gradients of one type)"})
		}
	}
	if train {
		st.TrainMetricSyncSeconds = p.trainMetricSyncSeconds(st.Devices)
		if devices == 1 {
			st.ExpertUnpairedSeconds = p.expertUnpairedSeconds()
		}
	}
	st.StepSeconds = stepSeconds(st)
	st.Breakdown = breakdown(st)
	mbs := int64(r.Schedule.MicrobatchSize)
	st.SamplesPerStep = mbs * int64(r.Schedule.Microbatches) * int64(d)
	if t := int64(p.model.TokensPerSample); t > 0 {
		st.TokensPerStep = st.SamplesPerStep * t
	}
	if st.StepSeconds > 0 {
		st.SamplesPerSecond = float64(st.SamplesPerStep) / st.StepSeconds
		st.TokensPerSecond = float64(st.TokensPerStep) / st.StepSeconds
	}
	if p.est != nil {
		perMicrobatch := p.est.Total.ModelFwdFLOPs
		if train {
			perMicrobatch *= 3
		}
		// The estimate is one device's of a tensor- and context-parallel group: t x c of
		// them do the model's.
		st.ModelFLOPsPerStep = perMicrobatch * float64(r.Schedule.Microbatches) * float64(d) * float64(t) * float64(c)
		peak := p.cluster.Devices[0].FLOPSPerSecond
		if p.est.Opts.DType == analytic.FP32 {
			if pr, err := cluster.LookupDevice(p.cluster.Devices[0].Name); err == nil {
				peak = pr.Perf.FP32FLOPSPerSecond
			}
		}
		if st.StepSeconds > 0 && peak > 0 {
			st.MFU = st.ModelFLOPsPerStep / (st.StepSeconds * float64(st.Devices) * peak)
		}
	}
	res.Step = st
}

// stepSeconds is a step's time: the pipeline, then the tied all-reduce, the exposed
// part of the data-parallel communication, the optimizer update and the training
// metrics' synchronisation (wire.Step).
func stepSeconds(st *wire.Step) float64 {
	return st.PipelineSeconds + st.TiedAllReduceSeconds + st.DataParallelExposedSeconds + st.OptimizerSeconds + st.TrainMetricSyncSeconds + st.ExpertUnpairedSeconds
}

// expertUnpairedSeconds is what the expert all-to-alls of the step's first forward and
// last backward add on a training run without pipeline parallelism under
// parallelism.expert_overlap (wire.Step.ExpertUnpairedSeconds): Megatron-Core's
// combined_1f1b_schedule_for_no_pipelining (megatron/core/pipeline_parallel/
// combined_1f1b.py, core_v0.14.0 to core_v0.17.0; schedules.py's
// forward_backward_no_pipelining takes it with overlap_moe_expert_parallel_comm in
// training) runs the first microbatch's forward alone ("executed alone, no a2a
// overlapping"), then each backward beside the next microbatch's forward, then the
// last backward alone: of m microbatches' 2m passes 2m - 2 pair, and the two unpaired
// passes hide none of their dispatch and combine. The layers price every pass as
// paired (analytic's expertComm: Layer.ExpertCommSeconds of device time, of which
// ExpertExposedSeconds is left), so once a step each layer's forward and backward get
// their hidden part back: on a layer of pass time P (FwdSeconds + BwdSeconds, the
// host's where it bounds them) and device time D, max(P, D + Comm - Exposed) - P, the
// whole hidden part where the device bounds the passes. 0 without the overlap or
// without an architecture.
func (p *prepared) expertUnpairedSeconds() float64 {
	if p.est == nil || !p.est.Opts.ExpertOverlap || !p.train() {
		return 0
	}
	var add float64
	for _, l := range p.est.Layers {
		hidden := l.ExpertCommSeconds - l.ExpertExposedSeconds
		if hidden <= 0 {
			continue
		}
		pass := l.FwdSeconds + l.BwdSeconds
		add += max(pass, l.FwdDeviceSeconds+l.BwdDeviceSeconds+hidden) - pass
	}
	return add
}

// stageTraffic adds to ds what a stage of the given layers gives its data-parallel
// communication in a step of microbatches: the layers' whole gradient and weight bytes
// (before sharding; a tied embedding once, the stage's shared item, as the analytic
// layer counts it; the weights as ZeRO-1 and 2 all-gather them,
// analytic.Result.ParamGatherBytes), and under zero3 and hsdp their per-layer collectives and what those
// add to the passes (gatherLayers). It says whether a layer states its gradients, and
// whether one has parameters.
func (p *prepared) stageTraffic(ds *wire.DeviceStep, layers []int, microbatches int) (statedGrads, hasParams bool) {
	var tiedW, tiedG int64
	var comm, added, slow float64
	for _, l := range layers {
		layer := &p.model.Layers[l]
		statedGrads = statedGrads || layer.GradBytes > 0
		hasParams = hasParams || layer.ParamBytes > 0
		ds.GradBytes += p.fullGrads[l]
		w := p.fullWeights[l]
		if p.est != nil {
			w, _ = p.est.ParamGatherBytes(l) // as ZeRO-1 and 2 gather them (fp8 primary weights in fp8)
		}
		ds.WeightBytes += w
		if p.est != nil && p.est.Layers[l].TiedParams > 0 {
			tiedW, tiedG = p.est.TiedFullBytes()
		}
		if p.layerComm != nil {
			comm += p.layerComm[l]
			added += p.layerAdded[l]
			slow += p.layerSlow[l]
		}
	}
	ds.GradBytes += tiedG
	ds.WeightBytes += tiedW
	ds.LayerCollectiveSeconds += float64(microbatches) * comm
	ds.LayerAddedSeconds += float64(microbatches) * added
	ds.LayerSlowdownSeconds += float64(microbatches) * slow
	return statedGrads, hasParams
}

// dataParallel costs device ds's data-parallel communication once per step, by the
// sharding (NCCL's ring formulas over the link each crosses, cluster's collectives):
//
//   - none: a ring all-reduce of the gradients over the replicas x context devices;
//   - zero1 (Megatron-LM's distributed optimizer, DeepSpeed ZeRO-1): a reduce-scatter of
//     the gradients, then after the update an all-gather of the weights (precision
//     deepspeed-bf16: an all-reduce of the fp32 gradients, then the all-gather);
//   - zero2: a reduce-scatter per microbatch (each backward frees its whole gradients),
//     and the all-gather of the weights;
//   - zero3: per layer, in the layers' times (gatherLayers); nothing here;
//   - hsdp: zero3 within the shard group, and a ring all-reduce of each device's
//     gradient shard across the groups.
//
// Where the framework overlaps (PyTorch DDP and FSDP, overlapWindow) the reductions
// hide behind one microbatch's backward (zero2: each microbatch's behind its own), and
// the all-gather behind the next step's first forward (Megatron-LM's
// --overlap-param-gather, FSDP's prefetch); ExposedAllReduceSeconds is what they do not
// hide. A step has microbatches (zero2 reduce-scatters after each).
func (p *prepared) dataParallel(ds *wire.DeviceStep, pl *wire.Plan, devices, microbatches int) {
	level := analytic.Sharding(p.req.Parallelism.Sharding).Level()
	if level != 1 && level != 2 {
		ds.WeightBytes = 0 // gathered by zero1 and zero2 alone
	}
	link, n, across, groups, ok := p.shardLinks()
	if !ok {
		return
	}
	clock := p.cluster.Devices[ds.Device].ClockHz
	bwd, fwd := p.overlapWindow(pl, ds.Device, devices), p.forwardWindow(pl, ds.Device, devices)
	share := p.collectiveSMShare()
	// A mixture's routed experts are reduced (and with ZeRO-1 and 2 gathered) over
	// their expert-data-parallel group, n x tensor / (expert x expert tensor) devices
	// (Megatron-Core's expert-data-parallel group), the rest over the n of the
	// data-parallel group.
	// Their ring has fewer members in a node than the data-parallel ring, and so fewer
	// NICs (expertShardLink).
	eg, ew, en := p.expertBytes(pl, ds.Device, devices)
	g, w := float64(ds.GradBytes-eg), float64(ds.WeightBytes-ew)
	m := float64(microbatches)
	elink := p.expertShardLink(link, en)
	// The share of each buffer's collective that is its last bucket (Megatron-Core's
	// buckets; 0 where the framework's overlap is not bucketed so).
	fd, fe := p.lastBucketFractions(pl, ds.Device, devices)
	// Each buffer's collectives a step, one a bucket (dataParallelBuckets), each paying
	// a collective's latency (bucketed).
	bd, be := p.dataParallelBuckets(pl, ds.Device, devices, ds.GradBytes-eg, eg, level)
	dring, ering := p.dataRing(n, false), p.dataRing(en, true)
	l, el := secondsLink(link, clock), secondsLink(elink, clock)
	// beside prices the collectives beside the passes, and what of that is the compute
	// they slow.
	// Megatron-Core's NaN check runs before each bucket's reduction, on the compute
	// stream and the host, exposed whole (gradNaNCheckSeconds).
	check := p.gradNaNCheckSeconds(ds.Device, bd+be, ds.GradBytes)
	beside := func(reduce, gather, lastReduce, firstGather float64, times int) {
		ds.ExposedAllReduceSeconds = DataParallelBucketedExposedSeconds(p.framework, reduce, gather, lastReduce, firstGather, bwd, fwd, times, share) + check
		ds.ExposedSlowdownSeconds = DataParallelBucketedSlowdownSeconds(p.framework, reduce, gather, lastReduce, firstGather, bwd, fwd, times, share)
	}
	// The gradients' bytes as the all-reduce moves them: DeepSpeed's BF16 optimizer's
	// fp32 gradients in bf16, at ZeRO stage 0 with or without its sharded state
	// (analytic.Precision.CommunicatedGradBytes); the others' as they are held.
	prec := analytic.Mixed
	if p.est != nil {
		prec = p.est.Opts.Precision
	}
	switch level {
	case 0:
		dense, dlast := p.bucketed(dring, cluster.NCCLAllReduce, float64(prec.CommunicatedGradBytes(ds.GradBytes-eg)), l, bd, fd)
		expert, elast := p.bucketed(ering, cluster.NCCLAllReduce, float64(prec.CommunicatedGradBytes(eg)), el, be, fe)
		ds.AllReduceSeconds = dense + expert
		beside(ds.AllReduceSeconds, 0, dlast+elast, 0, 1)
	case 1, 2:
		drs, drsLast := p.bucketed(dring, cluster.NCCLReduceScatter, g, l, bd, fd)
		ers, ersLast := p.bucketed(ering, cluster.NCCLReduceScatter, float64(eg), el, be, fe)
		dag, dagFirst := p.bucketed(dring, cluster.NCCLAllGather, w, l, bd, fd)
		eag, eagFirst := p.bucketed(ering, cluster.NCCLAllGather, float64(ew), el, be, fe)
		rs := drs + ers
		ds.AllGatherSeconds = dag + eag
		if p.est != nil && p.est.Opts.Precision == analytic.DeepSpeedBF16 || level == 1 && p.framework.ZeRO1AllReduce {
			// DeepSpeed's BF16 optimizer shards its update but all-reduces the whole fp32
			// gradients first (pipe/engine.py, _bf16_reduce_grads: buffered_allreduce_fallback
			// of get_grads_for_reduction, the flat fp32 gradients), then all-gathers the
			// updated 16-bit weights (bf16_optimizer.py, step: all_gather_dp_groups);
			// DeepSpeed's ZeRO-1 does the same with its 16-bit gradients
			// (cluster.Framework.ZeRO1AllReduce). The BF16 optimizer's cross in bf16
			// (analytic.Precision.CommunicatedGradBytes).
			dar, _ := p.bucketed(dring, cluster.NCCLAllReduce, float64(prec.CommunicatedGradBytes(ds.GradBytes-eg)), l, bd, 0)
			ear, _ := p.bucketed(ering, cluster.NCCLAllReduce, float64(prec.CommunicatedGradBytes(eg)), el, be, 0)
			ds.AllReduceSeconds = dar + ear
			beside(ds.AllReduceSeconds, ds.AllGatherSeconds, 0, 0, 1)
			return
		}
		ds.ReduceScatterSeconds = rs
		times := 1
		if level == 2 {
			ds.ReduceScatterSeconds, times = m*rs, microbatches
		}
		beside(rs, ds.AllGatherSeconds, drsLast+ersLast, dagFirst+eagFirst, times)
	default:
		if groups > 1 {
			ds.AllReduceSeconds = ringAllReduce(groups, int64(math.Ceil(p.reduceBytes(ds.GradBytes)/float64(n))), across, clock)
			// The shard group's per-layer collectives run in the same backward: the
			// all-reduce hides only in what of it they leave (layerWindow).
			bwd = p.layerWindow(pl, ds.Device, devices, bwd)
			beside(ds.AllReduceSeconds, 0, 0, 0, 1)
		}
	}
}

// layerWindow is what of device dev's backward window (one microbatch's backward of its
// stages, overlapWindow, with ZeRO-3's and HSDP's per-layer collectives in its layers'
// times) the per-layer all-gathers and reduce-scatters of that backward leave to
// other communication: the window less them (layerBackward). Each layer's backward
// takes at least its collectives (cluster.OverlappedSeconds), so it is never negative.
// A collective hidden in what is left adds to the step as any other
// (DataParallelExposedSeconds), so the backward hides at most its own length of
// communication in all: its per-layer collectives and the all-reduce across HSDP's
// groups do not both count its time.
func (p *prepared) layerWindow(pl *wire.Plan, dev, devices int, window float64) float64 {
	if p.layerBackward == nil {
		return window
	}
	for s := range pl.Stages {
		if s%devices != dev {
			continue
		}
		for _, l := range pl.StageLayers(s) {
			window -= p.layerBackward[l]
		}
	}
	return max(0, window)
}

// DataParallelExposedSeconds is what a device's data-parallel communication adds to the
// step, the rule every plan is costed by (dataParallel) and the search bounds by: the
// gradients' reduction (an all-reduce, or a reduce-scatter; run times a step: zero2's
// once per microbatch) beside one microbatch's backward of the device's stages
// (backward), where the framework overlaps it (cluster.Framework.OverlapGradReduce:
// PyTorch DDP's buckets, Megatron-LM's --overlap-grad-reduce), and the weights'
// all-gather beside one microbatch's forward of them (forward), where the framework
// overlaps it (OverlapParamGather: Megatron-LM's --overlap-param-gather). A collective
// beside computation holds share of the device's multiprocessors while it runs (NCCL's
// CTAs, cluster.CollectiveSMShare), slowing the computation it hides behind: the pair
// takes cluster.OverlappedSeconds, the rule ZeRO-3's per-layer gathers are priced by
// (gatherLayers), and what it adds beyond the computation is that less the
// computation, max(D - C, share x D). Without overlap a collective adds its whole time.
// It never decreases as a collective grows or a pass shrinks, and it is convex in them
// together (a maximum of linear functions): the average device's bounds the largest
// device's from below.
func DataParallelExposedSeconds(fw cluster.Framework, reduce, gather, backward, forward float64, times int, share float64) float64 {
	return DataParallelBucketedExposedSeconds(fw, reduce, gather, 0, 0, backward, forward, times, share)
}

// DataParallelBucketedExposedSeconds is DataParallelExposedSeconds where the overlap
// runs in buckets of which one cannot hide: lastReduce seconds of the reduction are the
// bucket whose gradients are ready only when the backward ends, reduced after it, and
// firstGather seconds of the all-gather the bucket the next step's forward needs first,
// gathered before it starts (cluster.Framework.MegatronBuckets: Megatron-Core's
// register_grad_ready dispatches a bucket's reduce-scatter once all its gradients of
// the last microbatch are ready, the others running under no_sync, and its
// finish_param_sync, in the forward pre-hook, dispatches a bucket's all-gather and
// then the next bucket's, behind the layers that use the first). With each collective
// c beside computation C, and its unhidden bucket L of it:
//
//	exposed = besideSeconds(C, c - L) + L = max(c - C, share x c + (1 - share) x L)
//
// for the reduction (times a step) and the gather alike; where the framework does not
// overlap one, it adds its whole time. It is never below DataParallelExposedSeconds
// (L = 0), which the search's bound uses.
func DataParallelBucketedExposedSeconds(fw cluster.Framework, reduce, gather, lastReduce, firstGather, backward, forward float64, times int, share float64) float64 {
	backward, forward, lastReduce, firstGather = overlapWindows(fw, reduce, gather, lastReduce, firstGather, backward, forward)
	return float64(times)*(besideSeconds(backward, reduce-lastReduce, share)+lastReduce) +
		besideSeconds(forward, gather-firstGather, share) + firstGather
}

// lastBucketFractions are the shares of device dev's dense and routed-expert
// gradients (and weights) in the bucket of each buffer that its backward makes ready
// last, and its next forward needs first, under Megatron-Core's buckets
// (cluster.Framework.MegatronBuckets; 0, 0 otherwise or without an analytic model):
// the first stage's first bucket in layer order, of megatronBucketElements, or the
// input embedding's whole matrix where that is
// larger (one parameter, which ends its bucket; param_and_grad_buffer.py). Only the
// device of pipeline rank 0 buckets (distributed_data_parallel.py: "Turn off bucketing
// if we are on a pipeline stage that is not the first"); the others keep the rule
// they had (their one bucket, reduced after their last backward while the stages
// before them finish theirs, is not modelled here).
func (p *prepared) lastBucketFractions(pl *wire.Plan, dev, devices int) (dense, expert float64) {
	if !p.framework.MegatronBuckets || p.est == nil || dev != 0 || len(pl.Stages) == 0 {
		return 0, 0
	}
	denseAll, expertAll := p.deviceElements(pl, dev, devices)
	bucket := p.megatronBucketElements()
	var firstDense, stageDense, stageExpert int64
	for i, l := range pl.StageLayers(0) {
		lay := &p.est.Layers[l]
		if i == 0 && lay.Kind == "embedding" {
			firstDense = lay.Params - lay.ExpertParams
		}
		stageDense += lay.Params - lay.ExpertParams
		stageExpert += lay.ExpertParams
	}
	if denseAll > 0 {
		dense = float64(min(stageDense, max(bucket, firstDense))) / float64(denseAll)
	}
	if expertAll > 0 {
		expert = float64(min(stageExpert, bucket)) / float64(expertAll)
	}
	return dense, expert
}

// overlapWindows is what the data-parallel pricing (DataParallelBucketedExposedSeconds
// and DataParallelBucketedSlowdownSeconds alike) may hide its collectives behind: no
// pass where the framework does not overlap that collective (and no unhidden bucket:
// it runs whole after), and the unhidden buckets clamped to their collectives.
func overlapWindows(fw cluster.Framework, reduce, gather, lastReduce, firstGather, backward, forward float64) (float64, float64, float64, float64) {
	if !fw.OverlapGradReduce {
		backward, lastReduce = 0, 0
	}
	if !fw.OverlapParamGather {
		forward, firstGather = 0, 0
	}
	lastReduce, firstGather = min(max(lastReduce, 0), reduce), min(max(firstGather, 0), gather)
	return backward, forward, lastReduce, firstGather
}

// DataParallelSlowdownSeconds is, of DataParallelExposedSeconds with the same
// arguments, the computation slowed by the collectives that run beside it
// (cluster.OverlapSlowdownSeconds: share x the time they run together); the rest is
// communication that outlasts the computation, or that the framework does not overlap.
// A collective hidden behind its pass adds only this, share x its time.
func DataParallelSlowdownSeconds(fw cluster.Framework, reduce, gather, backward, forward float64, times int, share float64) float64 {
	return DataParallelBucketedSlowdownSeconds(fw, reduce, gather, 0, 0, backward, forward, times, share)
}

// DataParallelBucketedSlowdownSeconds is, of DataParallelBucketedExposedSeconds with the
// same arguments, the computation slowed by the collectives beside it: the buckets that
// cannot hide (lastReduce, firstGather) run apart from the passes and slow nothing.
func DataParallelBucketedSlowdownSeconds(fw cluster.Framework, reduce, gather, lastReduce, firstGather, backward, forward float64, times int, share float64) float64 {
	backward, forward, lastReduce, firstGather = overlapWindows(fw, reduce, gather, lastReduce, firstGather, backward, forward)
	return float64(times)*cluster.OverlapSlowdownSeconds(backward, reduce-lastReduce, share) +
		cluster.OverlapSlowdownSeconds(forward, gather-firstGather, share)
}

// besideSeconds is what a collective of comm seconds adds to compute seconds of
// computation it runs beside (cluster.OverlappedSeconds less the computation): all of
// comm beside no computation, nothing for no communication.
func besideSeconds(compute, comm, share float64) float64 {
	if comm <= 0 {
		return 0
	}
	if compute <= 0 {
		return comm
	}
	return cluster.OverlappedSeconds(compute, comm, share) - compute
}

// expertBytes are the routed experts' whole gradient and weight bytes on a device (its
// stages'; the weights as ZeRO-1 and 2 all-gather them, analytic.Result.ParamGatherBytes), and the devices that reduce them: n x tensor / (expert x expert tensor) of
// the data-parallel group's n (Options.ExpertDataParallel); 0 without experts.
func (p *prepared) expertBytes(pl *wire.Plan, dev, devices int) (grads, weights int64, members int) {
	if p.est == nil || p.est.Total.DeviceExpertParams == 0 {
		return 0, 0, 0
	}
	for s, st := range pl.Stages {
		if s%devices != dev {
			continue
		}
		for l := st.FirstLayer; l <= st.LastLayer; l++ {
			_, g := p.est.ExpertFullBytes(l)
			_, w := p.est.ParamGatherBytes(l)
			grads, weights = grads+g, weights+w
		}
	}
	return grads, weights, p.est.Opts.ExpertDataParallel()
}

// secondsLink is l with its bandwidth and latency in seconds (a Graphcore-style link
// states GB/s and idle cycles), for cluster's collectives.
func secondsLink(l *cluster.Link, clockHz float64) cluster.Link {
	out := cluster.Link{BytesPerSecond: bandwidth(l, clockHz), LatencySeconds: l.LatencySeconds}
	if l.CyclesStyle() && clockHz > 0 {
		out.LatencySeconds = float64(l.IdleCycles) / clockHz
	}
	return out
}

// ringAllReduce is the time of a ring all-reduce of n bytes among k peers over a link:
// 2(k-1)/k x n / bandwidth + 2(k-1) x latency (each of the 2(k-1) steps moves n/k bytes).
func ringAllReduce(k int, n int64, l *cluster.Link, clockHz float64) float64 {
	if k < 2 || n <= 0 {
		return 0
	}
	bw := bandwidth(l, clockHz)
	latency := l.LatencySeconds
	if l.CyclesStyle() && clockHz > 0 {
		latency = float64(l.IdleCycles) / clockHz
	}
	steps := float64(2 * (k - 1))
	t := steps * latency
	if bw > 0 {
		t += steps / float64(k) * float64(n) / bw
	}
	return t
}

// Estimate returns the analytic estimate of the request's architecture on its cluster's
// device: every layer's parameters, FLOPs, times and memory for one microbatch, and the
// totals of one device holding the whole model. The request must name an architecture.
func Estimate(ctx context.Context, r *wire.Request) (*analytic.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := prepare(r)
	if err != nil {
		return nil, err
	}
	if p.est == nil {
		return nil, &model.FieldError{Path: "model.architecture", Reason: "is required: an estimate costs an architecture (a profile states its own costs)"}
	}
	return p.estimate(), nil
}

// estimate is the analytic estimate as the request states it: with data parallelism,
// its communication priced over the cluster's links as a one-stage plan of one
// microbatch prices it (oneStageStep: the plan's own functions), in
// Result.DataParallel, and the step with it. A copy: p.est may be shared (Cache).
func (p *prepared) estimate() *analytic.Result {
	out := *p.est
	st := p.oneStageStep()
	if st == nil {
		// No data-parallel communication; the training metrics still synchronise
		// across the tensor- and context-parallel devices (a one-stage plan's step).
		sync, unpaired, clip := p.trainMetricSyncSeconds(p.oneStageRanks()), p.expertUnpairedSeconds(), p.oneStageGradClipSeconds()
		if sync > 0 || unpaired > 0 || clip > 0 {
			out.Total.TrainMetricSyncSeconds = sync
			out.Total.ExpertUnpairedSeconds = unpaired
			out.Total.OptimizerSeconds += clip
			out.Total.StepSeconds += sync + unpaired + clip
			out.Total.TokensPerSecond = float64(out.Opts.StepTokens()) / out.Total.StepSeconds
		}
		return &out
	}
	out.DataParallel = &analytic.DataParallel{
		PipelineSeconds:        st.PipelineSeconds,
		LayerCollectiveSeconds: st.DataParallelLayerSeconds,
		LayerAddedSeconds:      st.DataParallelLayerAddedSeconds,
		LayerSlowdownSeconds:   st.DataParallelLayerSlowdownSeconds,
		AllReduceSeconds:       st.DataParallelAllReduceSeconds,
		ReduceScatterSeconds:   st.DataParallelReduceScatterSeconds,
		AllGatherSeconds:       st.DataParallelAllGatherSeconds,
		ExposedSeconds:         st.DataParallelExposedSeconds,
		SlowdownSeconds:        st.DataParallelSlowdownSeconds,
		Breakdown:              st.Breakdown,
	}
	out.Total.TrainMetricSyncSeconds = st.TrainMetricSyncSeconds
	out.Total.ExpertUnpairedSeconds = st.ExpertUnpairedSeconds
	out.Total.OptimizerSeconds = st.OptimizerSeconds
	out.Total.StepSeconds = st.StepSeconds
	out.Total.TokensPerSecond = 0
	if st.StepSeconds > 0 {
		out.Total.TokensPerSecond = float64(out.Opts.StepTokens()) / st.StepSeconds
	}
	return &out
}

// oneStageGradClipSeconds is the gradient-norm clipping of the whole model on one
// stage (gradClipSeconds over every layer's main gradients), which a one-stage plan's
// optimizer step adds to the estimate's update.
func (p *prepared) oneStageGradClipSeconds() float64 {
	if p.est == nil || len(p.est.Layers) == 0 {
		return 0
	}
	return p.gradClipSeconds(0, p.est.GradNormBytes(0, len(p.est.Layers)-1))
}

// oneStageRanks is the devices of the request planned on one stage: data x tensor x
// context.
func (p *prepared) oneStageRanks() int {
	par := p.req.Parallelism
	return max(1, par.Data) * max(1, par.Tensor) * max(1, par.Context)
}

// oneStageStep is the step of the whole model on one stage and one microbatch, the
// data-parallel terms priced by step's functions (stageTraffic, dataParallel over
// shardLinks, stepSeconds, breakdown); nil without data-parallel communication
// (inference, one replica, free transfers).
func (p *prepared) oneStageStep() *wire.Step {
	if p.est == nil || !p.train() || len(p.model.Layers) == 0 {
		return nil
	}
	if _, _, _, _, ok := p.shardLinks(); !ok {
		return nil
	}
	pl := &wire.Plan{Stages: []wire.Stage{{FirstLayer: 0, LastLayer: len(p.model.Layers) - 1}}}
	ds := &wire.DeviceStep{Device: 0}
	p.stageTraffic(ds, pl.StageLayers(0), 1)
	p.dataParallel(ds, pl, 1, 1)
	var fwd, bwd float64
	for i := range p.model.Layers {
		fwd += p.model.Layers[i].ForwardSeconds
		bwd += p.model.Layers[i].BackwardSeconds
	}
	st := &wire.Step{
		PipelineSeconds:                  fwd + bwd,
		DataParallelAllReduceSeconds:     ds.AllReduceSeconds,
		DataParallelReduceScatterSeconds: ds.ReduceScatterSeconds,
		DataParallelAllGatherSeconds:     ds.AllGatherSeconds,
		DataParallelExposedSeconds:       ds.ExposedAllReduceSeconds,
		DataParallelSlowdownSeconds:      ds.ExposedSlowdownSeconds,
		DataParallelLayerSeconds:         ds.LayerCollectiveSeconds,
		DataParallelLayerAddedSeconds:    ds.LayerAddedSeconds,
		DataParallelLayerSlowdownSeconds: ds.LayerSlowdownSeconds,
		OptimizerSeconds:                 p.est.Total.OptimizerSeconds + p.oneStageGradClipSeconds(),
	}
	st.TrainMetricSyncSeconds = p.trainMetricSyncSeconds(p.oneStageRanks())
	st.ExpertUnpairedSeconds = p.expertUnpairedSeconds()
	st.StepSeconds = stepSeconds(st)
	st.Breakdown = breakdown(st)
	return st
}

// OneStage is an architecture's analytic estimate with the same request planned on one
// stage and one microbatch: the estimate's per-layer breakdown, and the step, memory,
// throughput and verdict (Result.Feasible and its diagnostics) that a plan gives, so a
// front end that shows an estimate computes none of them itself. The two agree on every
// term: Result.Step.PipelineSeconds is Estimate.Total's forward plus backward (with the
// per-layer collectives of zero3 and hsdp: Estimate.DataParallel.PipelineSeconds),
// Result.Step.OptimizerSeconds its OptimizerSeconds, each data-parallel collective, its
// exposed part and the written breakdown Estimate.DataParallel's, StepSeconds
// Estimate.Total's, the stage's memory its peak.
type OneStage struct {
	Estimate *analytic.Result `json:"estimate"`
	Result   *wire.Result     `json:"result"`
	// Fits is the verdict: the model, whole, fits one device's usable memory (a
	// feasible one-stage plan, its memory within its limit). When it does not,
	// Result.FirstError says why.
	Fits bool `json:"fits"`
}

// EstimateOneStage returns the request's analytic estimate (Estimate) and its plan on one
// stage (Run), both of a copy of the request with parallelism.pipeline 1,
// schedule.microbatches 1 and no boundaries. The request must name an architecture.
func EstimateOneStage(ctx context.Context, r *wire.Request) (*OneStage, error) {
	if r == nil {
		return nil, &model.FieldError{Path: "request", Reason: "is required"}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	one := *r
	one.Parallelism.Pipeline, one.Schedule.Microbatches, one.Boundaries = 1, 1, nil
	p, err := Prepare(&one) // once, for both
	if err != nil {
		return nil, err
	}
	est, err := p.Estimate()
	if err != nil {
		return nil, err
	}
	res, err := p.Run(ctx)
	if err != nil {
		return nil, err
	}
	fits := res.Feasible && res.Plan != nil && len(res.Plan.Stages) == 1 &&
		res.Plan.Stages[0].MemoryBytes <= res.Plan.Stages[0].LimitBytes
	return &OneStage{Estimate: est, Result: res, Fits: fits}, nil
}

// overMemory is the diagnostic of stage i over its limit. A chunk of an interleaved
// schedule shares its device's memory with the device's other chunks, and its limit is
// its own memory plus the device's headroom (plan.Stage.LimitBytes), which is negative
// when the device is over: the message names the device and by how much its chunks
// together exceed it, not that negative limit.
func overMemory(pl *plan.Plan, i int) wire.Diagnostic {
	s := pl.Stages[i]
	d := wire.Diagnostic{Code: wire.CodeStageOverMemory, Severity: wire.Error, Stage: ptr(i),
		Layer: ptr(s.FirstLayer), LastLayer: ptr(s.LastLayer), BytesNeeded: s.MemoryBytes, CapacityBytes: s.LimitBytes,
		Message:    fmt.Sprintf("stage %d (layers %d-%d) needs %s; its device holds %s", i, s.FirstLayer, s.LastLayer, units.Bytes(s.MemoryBytes), units.Bytes(s.LimitBytes)),
		Suggestion: "move a boundary to give the stage fewer layers, or plan the optimal split"}
	if sc := pl.Schedule; sc != nil && len(sc.StageDevices) == len(pl.Stages) {
		dev, chunks := sc.StageDevices[i], 0
		for _, e := range sc.StageDevices {
			if e == dev {
				chunks++
			}
		}
		if chunks > 1 {
			d.Message = fmt.Sprintf("stage %d (layers %d-%d) is one of device %d's %d model chunks, which together need %s more than the device holds (this chunk: %s)",
				i, s.FirstLayer, s.LastLayer, dev, chunks, units.Bytes(s.MemoryBytes-s.LimitBytes), units.Bytes(s.MemoryBytes))
			if dev < len(sc.LimitBytes) {
				limit := sc.LimitBytes[dev]
				d.BytesNeeded, d.CapacityBytes = limit-(s.LimitBytes-s.MemoryBytes), limit
				d.Message = fmt.Sprintf("stage %d (layers %d-%d) is one of device %d's %d model chunks, which together need %s; the device holds %s (this chunk: %s)",
					i, s.FirstLayer, s.LastLayer, dev, chunks, units.Bytes(d.BytesNeeded), units.Bytes(limit), units.Bytes(s.MemoryBytes))
			}
			d.Suggestion = "move a boundary to give the device's chunks fewer layers, or plan the optimal split"
		}
	}
	return d
}
