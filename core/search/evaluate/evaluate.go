// Package evaluate is the search's Evaluator over planning requests: every candidate of
// core/search's grid is the base request with the candidate's knobs (a variant of the
// prepared base, core/request's Prepared.With), planned and simulated exactly as a user's
// request would be, and bounded from the same analytic estimates. RunQuery, the one search
// doorway of the command line, the JS API and the page, runs a core/search Query with it.
//
// It is core/search's planner side, apart from the search's data (Query, Knobs, Report),
// so that a program that only builds queries and reads reports (the browser page, whose
// planner runs in a Web Worker) links none of the planner.
package evaluate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/schedule"
	"pipeplan/core/search"
	"pipeplan/core/wire"
)

// RunQuery is the one search doorway: it runs a query (wire.SearchQuery: a base request
// and knobs) with an Evaluator over its request and answers with wire.SearchAnswer, the JSON
// the command line, the JS API and the page all give. Errors of the base request name
// its fields under "request". On cancellation it returns the answer so far with the
// context's error.
func RunQuery(ctx context.Context, q *wire.SearchQuery, opt search.Options) (*wire.SearchAnswer, error) {
	if err := search.ValidateKnobs(&q.SearchKnobs); err != nil { // before the request is prepared
		return nil, err
	}
	ev, err := New(q.Request)
	if err != nil {
		return nil, model.Prefixed("request", err)
	}
	s, err := ev.Space(q.SearchKnobs)
	if err != nil {
		return nil, err
	}
	opt.Exhaustive = opt.Exhaustive || q.Exhaustive
	rep, err := search.Run(ctx, s, ev, opt)
	if rep == nil {
		return nil, err
	}
	a := search.NewAnswer(rep)
	if rep.Best != nil {
		best, err := ev.Request(rep.Best.Candidate)
		if err != nil {
			return nil, err
		}
		if a.BestID, err = request.ID(best); err != nil {
			return nil, err
		}
		a.BestRequest = best
	}
	if err == nil {
		err = ctx.Err()
	}
	return a, err
}

// Evaluator evaluates candidates as planning requests: each candidate is the base request
// with the candidate's knobs set (parallelism, schedule, microbatches and their size,
// recomputation, memory proportion), planned and simulated by request.Run, exactly as a
// user's request would be. Request gives the request of a candidate, so any outcome can
// be reproduced alone.
//
// Bounds come from the analytic estimates of the architecture, cached per tensor-parallel
// degree, microbatch size and recomputation, which every candidate with those shares
// (see Bound). A profile (a measured model document) is scaled with the microbatch size
// (ScaleProfile) and bounded by its scaled layer times.
type Evaluator struct {
	base *wire.Request // normalized, without the knobs
	// prepared is the base request prepared: every candidate is a variant of it
	// (request.Prepared.With), which reuses its model, documents and estimates.
	prepared *request.Prepared
	arch     *arch.Arch
	// secondsPer converts a profile's time unit to seconds on the cluster's device
	// (cycles at its clock; times are in seconds once prepared).
	secondsPer float64
	topo       *cluster.Topology
	link       cluster.Link // between devices, without nodes
	linkMesh   float64      // link's full-mesh rate a link (cluster.LinkPreset.MeshBytesPerSecond)
	meshOf     int          // the devices such a mesh joins: the device's scale-up domain (0: not known)
	memoryBW   float64      // bytes/s the optimizer update reaches
	// collectiveShare is the share of the SMs an overlapped data-parallel collective
	// holds (request.Prepared.CollectiveSMShare), as the plan prices them.
	collectiveShare float64
	train           bool
	sp              bool // sequence parallelism wherever t > 1
	// contextMethod is the base request's context_method (ring unless it says);
	// contextNamed whether it says one; contextInner its context_inner (0: core's
	// default), which its hierarchical candidates take (innerOf). refused caches
	// Refuses' errors.
	contextMethod string
	contextNamed  bool
	contextInner  int
	// reshard is parallelism.reshard of the ZeRO-3 and HSDP candidates, as the knobs fix
	// it (Fix); "" leaves core's rule to each candidate (request.DefaultReshard).
	reshard string
	refused map[refuseKey]error
	// selectiveOpRefused caches selectiveOpRefusal's answers.
	selectiveOpRefused map[selectiveOpKey]error
	terms              map[termKey]*terms
	estimates          map[termKey]*analytic.Result // analytic estimates without their terms (Twin)
	layers             int                          // the model's layers
	// twins caches Twin's comparison per tensor-parallel degree and expert-parallel
	// degree, by microbatch size (0: not known, 1: the same, -1: not).
	twins map[[2]int][]int8
	// expertOverlap: the base request's parallelism.expert_overlap, for the candidates
	// it applies to (expert parallelism, no full recomputation); dispatcher its
	// parallelism.expert_dispatcher.
	expertOverlap bool
	dispatcher    string
	// overlaps are the base request's parallelism.overlap_grad_reduce,
	// overlap_param_gather, overlap_tensor_comm and tp_comm_overlap_config, which every
	// candidate takes (withOverlaps).
	overlaps wire.Parallelism
	// fsdp2 holds the base request's parallelism.fully_shard and reduce_dtype: how its
	// weight sharding is implemented (PyTorch FSDP2's fully_shard and its reduce dtype),
	// which the candidates that shard weights (zero3, hsdp) take (withFSDP2).
	fsdp2 wire.Parallelism
	// fp8Gather is the base request's training.fp8_fsdp_all_gather, which the
	// candidates it applies to take (fp8GatherOn).
	fp8Gather bool
	// gathered caches the terms of ZeRO-3 candidates (termsFor).
	gathered map[gatherKey]*terms
	// gatherLinks caches gatherLink per (stages, replicas, devices of a stage).
	gatherLinks map[[3]int]linkOK
	// framework is the base request's (Prepared.Framework): its fixed memory and
	// allocator reserve take from every device's memory (allocatable).
	framework cluster.Framework
	// inFlight caches chunkInFlight per (stages, chunks, microbatches, PyTorch's order
	// or not).
	inFlight map[[4]int][]int
	// device is the cluster's device, as one stage's cluster holds it (memory limits).
	device *cluster.Device
	// baseBatch is the base request's samples per step as core normalizes it (0 when it
	// does not normalize as given): the search's default global batch (Space).
	baseBatch int
}

// New prepares an evaluator for a base request: a model (an architecture, or a
// profile document or example) on a device preset (cluster.device, with
// cluster.devices_per_node for nodes). Its parallelism, schedule, microbatch, recompute
// and memory-proportion fields are what each candidate sets.
func New(base *wire.Request) (*Evaluator, error) {
	b := *base
	// The knobs the search sets are cleared, so that the base normalizes whatever they are.
	if c, err := schedule.Parse(b.Schedule.Name); err == nil && b.Schedule.Name != "" && c.Kind == schedule.Inference {
		b.Training.Mode = wire.ModeInference
	}
	baseBatch := 0
	if n, err := request.Normalize(base); err == nil {
		baseBatch = n.Schedule.MicrobatchSize * n.Schedule.Microbatches * n.Parallelism.Data
	}
	// The data-parallel overlaps stay: they go with any candidate, and the framework
	// the bounds read (Prepared.Framework) applies them.
	overlaps := wire.Parallelism{OverlapGradReduce: base.Parallelism.OverlapGradReduce, OverlapParamGather: base.Parallelism.OverlapParamGather,
		OverlapTensorComm: base.Parallelism.OverlapTensorComm, TPCommOverlapConfig: base.Parallelism.TPCommOverlapConfig,
		DPBucketBytes: base.Parallelism.DPBucketBytes, DPBucketElements: base.Parallelism.DPBucketElements}
	// Megatron-Core's bucket_size stays on the base too, so that a framework without
	// Megatron-Core's buckets is refused with the request's field path, as core refuses
	// training.check_for_nan_in_grad there, not on every candidate.
	b.Parallelism = wire.Parallelism{Pipeline: 1, OverlapGradReduce: overlaps.OverlapGradReduce, OverlapParamGather: overlaps.OverlapParamGather,
		DPBucketElements: overlaps.DPBucketElements}
	// FSDP2's fields say how weights are sharded, not whether: the candidates that shard
	// them take them (withFSDP2); checked here as core checks them on such a candidate.
	fsdp2 := wire.Parallelism{FullyShard: base.Parallelism.FullyShard, ReduceDType: base.Parallelism.ReduceDType}
	if err := checkFSDP2(&b, fsdp2); err != nil {
		return nil, err
	}
	// torchao's FSDP float8 all-gather likewise applies to the candidates whose weights
	// FSDP2 shards over two replicas or more (withFP8Gather).
	fp8Gather := b.Training.FP8FSDPAllGather
	b.Training.FP8FSDPAllGather = false
	if err := checkFP8Gather(&b, fsdp2, fp8Gather); err != nil {
		return nil, err
	}
	b.Schedule = wire.Schedule{}
	b.Training.Recompute, b.MemoryProportion, b.Boundaries, b.Events = "", 0, nil, false
	b.Cluster.Count = 0
	if b.Cluster.Device == "" {
		return nil, &model.FieldError{Path: "cluster.device", Reason: "the search needs a device preset (and devices_per_node for nodes): it decides how many devices a pipeline uses"}
	}
	prepared, err := request.Prepare(&b)
	if err != nil {
		return nil, err
	}
	// Every candidate is planned by the rules its request is planned by alone: the
	// profile's format's (Graphcore's auto-pipeline tool's memory rule, PipeDream's
	// weights only), at the profile's own microbatch size in its own format and at any
	// other scaled in native JSON that keeps that meaning (request.Prepared.With).
	n := prepared.Request()
	n.Parallelism = wire.Parallelism{}
	n.Schedule = wire.Schedule{}
	n.Cluster.Count = 0
	r := &Evaluator{base: n, baseBatch: baseBatch, prepared: prepared, arch: prepared.Architecture(), layers: len(prepared.Model().Layers),
		sp: base.Parallelism.SequenceParallel, train: n.Training.Mode == wire.ModeTraining,
		expertOverlap: base.Parallelism.ExpertOverlap, dispatcher: base.Parallelism.ExpertDispatcher, overlaps: overlaps, fsdp2: fsdp2, fp8Gather: fp8Gather,
		contextMethod: contextMethodOf(base.Parallelism.ContextMethod), contextNamed: base.Parallelism.ContextMethod != "", contextInner: base.Parallelism.ContextInner, refused: map[refuseKey]error{}, selectiveOpRefused: map[selectiveOpKey]error{},
		terms: map[termKey]*terms{}, estimates: map[termKey]*analytic.Result{}, twins: map[[2]int][]int8{}, gathered: map[gatherKey]*terms{}, gatherLinks: map[[3]int]linkOK{}, inFlight: map[[4]int][]int{}, secondsPer: 1}
	if err := checkContextInner(&b, base.Parallelism); err != nil {
		return nil, err
	}
	dp, err := cluster.LookupDevice(n.Cluster.Device)
	if err != nil {
		return nil, err
	}
	r.memoryBW = dp.Perf.MemoryBytesPerSecond * dp.Perf.MemoryEfficiency
	r.framework = prepared.Framework()
	r.collectiveShare = prepared.CollectiveSMShare()
	if one, err := cluster.FromPreset(n.Cluster.Device, 1); err == nil {
		r.device = &one.Devices[0]
	}
	if n.Cluster.DevicesPerNode > 0 {
		topo, err := cluster.PresetTopology(1, n.Cluster.DevicesPerNode, n.Cluster.LinkIntra, n.Cluster.LinkInter)
		if err != nil {
			return nil, err
		}
		topo.NICPCIeBytesPerSecond = dp.NICPCIeBytesPerSecond // as request's nodes sets it
		r.topo = &topo
	} else {
		l, err := cluster.LookupLink(n.Cluster.Link)
		if err != nil {
			return nil, err
		}
		r.link, r.linkMesh = l.Link, l.MeshBytesPerSecond
		if d, err := cluster.LookupDevice(n.Cluster.Device); err == nil {
			r.meshOf = d.ScaleUpDevices
		}
	}
	if n.Cluster.FreeTransfers {
		r.link, r.linkMesh, r.topo = cluster.Link{}, 0, nil
	}
	if prepared.Model().Unit() == model.Cycles {
		if !(dp.ClockHz > 0) {
			return nil, &model.FieldError{Path: "cluster.device", Reason: fmt.Sprintf("%s states no clock to convert the profile's cycles with", dp.Name)}
		}
		r.secondsPer = 1 / dp.ClockHz
	}
	return r, nil
}

// checkContextInner checks the base request's parallelism.context_inner by core's rule
// (core/request: it goes with context_method hierarchical, divides the context degree
// leaving two groups or more on the ring, and fits a node beside the tensor group),
// preparing b (the base, its parallelism cleared) with the base's context split: its
// context degree, or where the search chooses the degree, the least the group divides.
// The candidates' own degrees are checked as they are tried (Refuses).
func checkContextInner(b *wire.Request, par wire.Parallelism) error {
	g := par.ContextInner
	if g == 0 {
		return nil
	}
	c := par.Context
	if c <= 1 {
		c = 2 * g
	}
	probe := *b
	probe.Parallelism = wire.Parallelism{Pipeline: 1, Tensor: par.Tensor, Context: c, ContextMethod: par.ContextMethod, ContextInner: g}
	_, err := request.Prepare(&probe)
	fes, _ := model.AsFieldErrors(err)
	for _, e := range fes {
		if e.Path == "parallelism.context_inner" {
			return e
		}
	}
	return nil
}

// checkFSDP2 refuses the base request's parallelism.fully_shard and reduce_dtype (par)
// where core refuses them on a candidate that shards weights (a profile, inference, a
// reduce dtype other than fp32), by core's own check on such a probe (zero3 over two
// replicas), so that the search answers as a single request would rather than drop them.
func checkFSDP2(b *wire.Request, par wire.Parallelism) error {
	if !par.FullyShard && par.ReduceDType == "" {
		return nil
	}
	probe := *b
	probe.Parallelism = wire.Parallelism{Pipeline: 1, Data: 2, Sharding: string(analytic.ZeRO3), FullyShard: par.FullyShard, ReduceDType: par.ReduceDType}
	_, err := request.Prepare(&probe)
	fes, _ := model.AsFieldErrors(err)
	for _, e := range fes {
		if e.Path == "parallelism.fully_shard" || e.Path == "parallelism.reduce_dtype" {
			return e
		}
	}
	return nil
}

// checkFP8Gather refuses the base request's training.fp8_fsdp_all_gather (on) where core
// refuses it on every candidate that could take it (a profile, bf16, a block recipe,
// routed experts, inference, another framework, no fully_shard), by core's own check on
// a probe that shards over two replicas with the base's FSDP2 fields (fsdp2).
func checkFP8Gather(b *wire.Request, fsdp2 wire.Parallelism, on bool) error {
	if !on {
		return nil
	}
	probe := *b
	probe.Training.FP8FSDPAllGather = true
	probe.Parallelism = wire.Parallelism{Pipeline: 1, Data: 2, Sharding: string(analytic.ZeRO3), FullyShard: fsdp2.FullyShard, ReduceDType: fsdp2.ReduceDType}
	_, err := request.Prepare(&probe)
	fes, _ := model.AsFieldErrors(err)
	for _, e := range fes {
		if e.Path == "training.fp8_fsdp_all_gather" {
			return e
		}
	}
	return nil
}

// fp8GatherOn reports whether candidate configuration g takes the base request's
// training.fp8_fsdp_all_gather: its weights sharded (zero3 or hsdp) over two replicas or
// more (torchtitan's dp_shard > 1; the context devices FSDP also spans do not count).
func (r *Evaluator) fp8GatherOn(g search.Config) bool {
	dpShard := g.Data
	if g.ShardGroup > 0 {
		dpShard = g.ShardGroup
	}
	return r.fp8Gather && r.train && g.ZeRO == 3 && dpShard >= 2
}

// innerOf is the all-to-all group of a context split of c devices by method: the base
// request's context_inner under hierarchical (0: core's default), else 0.
func (r *Evaluator) innerOf(c int, method string) int {
	if c > 1 && method == string(analytic.Hierarchical) {
		return r.contextInner
	}
	return 0
}

// Request is the planning request of a candidate: the base with the candidate's knobs
// (a profile scaled to the candidate's microbatch size, request.Prepared.With).
func (r *Evaluator) Request(c search.Candidate) (*wire.Request, error) {
	k := r.knobs(c)
	q := *r.base
	q.Parallelism, q.Schedule, q.Training.Recompute, q.MemoryProportion = k.Parallelism, k.Schedule, k.Recompute, k.MemoryProportion
	q.Training.FP8FSDPAllGather = k.FP8FSDPAllGather
	if r.arch == nil {
		v, err := r.prepare(c)
		if err != nil {
			return nil, err
		}
		q.Model = v.Request().Model
	}
	return &q, nil
}

// knobs are a candidate's knobs of the base request.
func (r *Evaluator) knobs(c search.Candidate) request.Knobs {
	k := request.Knobs{Parallelism: wire.Parallelism{Pipeline: c.Pipeline, Data: c.Data, Tensor: c.Tensor,
		Sharding: zeroStages[c.ZeRO], SequenceParallel: r.seqParallel(c.Tensor, c.Expert), Expert: c.Expert,
		ExpertOverlap: r.expertOverlap && c.Expert > 1 && c.Recompute != string(analytic.Full), ExpertDispatcher: r.dispatcher},
		Schedule:  wire.Schedule{Name: c.Schedule, Microbatches: c.Microbatches, MicrobatchSize: c.MicrobatchSize},
		Recompute: c.Recompute, MemoryProportion: c.MemoryProportion, Partition: r.base.Partition}
	if c.Context > 1 {
		k.Parallelism.Context, k.Parallelism.ContextMethod = c.Context, r.methodOf(c.Config)
		k.Parallelism.ContextInner = r.innerOf(c.Context, k.Parallelism.ContextMethod)
	}
	if c.ShardGroup > 0 {
		k.Parallelism.Sharding, k.Parallelism.ShardGroup = string(analytic.HSDP), c.ShardGroup
	}
	if c.ZeRO == 3 && r.train {
		k.Parallelism.Reshard = r.reshard
	}
	if !r.train {
		k.Recompute = ""
	}
	r.withOverlaps(&k.Parallelism)
	r.withFSDP2(&k.Parallelism)
	k.FP8FSDPAllGather = r.fp8GatherOn(c.Config)
	return k
}

// withFSDP2 sets the base request's parallelism.fully_shard and reduce_dtype on a
// candidate's parallelism p where p shards weights (zero3 or hsdp), the only sharding
// they describe (core refuses them elsewhere): a base request that says its weights are
// sharded by PyTorch FSDP2 has every candidate that shards them priced as FSDP2 runs
// (its copies, its reduce dtype), as the single request would be.
func (r *Evaluator) withFSDP2(p *wire.Parallelism) {
	if analytic.Sharding(p.Sharding).Level() >= 3 {
		p.FullyShard, p.ReduceDType = r.fsdp2.FullyShard, r.fsdp2.ReduceDType
	}
}

// withOverlaps sets the base request's overlaps on a candidate's parallelism p: the
// data-parallel ones always, the tensor-parallel one where p has tensor parallelism
// (with none there is no tensor-parallel communication to hide, and core refuses the
// field), and the base's data-parallel bucket sizes (parallelism.dp_bucket_bytes and
// Megatron-Core's parallelism.dp_bucket_elements) where p's sharding reduces a bucket
// at a time (none, zero1, zero2; core refuses dp_bucket_bytes with zero3 and hsdp,
// whose collectives are priced a layer at a time, and prices no bucket of
// dp_bucket_elements there).
func (r *Evaluator) withOverlaps(p *wire.Parallelism) {
	p.OverlapGradReduce, p.OverlapParamGather = r.overlaps.OverlapGradReduce, r.overlaps.OverlapParamGather
	if analytic.Sharding(p.Sharding).Level() < 3 {
		p.DPBucketBytes, p.DPBucketElements = r.overlaps.DPBucketBytes, r.overlaps.DPBucketElements
	}
	if p.Tensor > 1 {
		p.OverlapTensorComm, p.TPCommOverlapConfig = r.overlaps.OverlapTensorComm, r.overlaps.TPCommOverlapConfig
	}
}

// prepare is the candidate's request prepared, as a variant of the base.
func (r *Evaluator) prepare(c search.Candidate) (*request.Prepared, error) {
	return r.prepared.With(r.knobs(c))
}

// methodOf is a configuration's context method: "" without context parallelism, else
// the one it names, else the base request's (contextMethod).
func (r *Evaluator) methodOf(g search.Config) string {
	switch {
	case g.Context <= 1:
		return ""
	case g.ContextMethod != "":
		return g.ContextMethod
	}
	return r.contextMethod
}

// Refuses reports that core refuses the configuration whatever its other knobs
// (search.Refuser): a pipeline, schedule and sharding the base request's framework
// cannot run (pipelineEngineRefuses), recompute selective-op where core refuses it
// (selectiveOpRefusal), and a context split: all-to-all whose degree does not divide the heads on a
// device, hierarchical with no all-to-all group that fits a node beside the tensor
// group, as core's rules say when the split alone is prepared and estimated (one
// stage, one replica, the tensor degree; cached per split). It answers only for the
// configurations whose method the space chose (Config.ContextMethod): the base
// request's own are planned, and their errors reported, as before.
func (r *Evaluator) Refuses(g search.Config) bool {
	if r.train && r.pipelineEngineRefuses(g) {
		return true
	}
	if g.Tensor > 1 && request.TensorCommRefusal(r.framework.Name, r.overlaps.OverlapTensorComm) != nil {
		return true // withOverlaps sets overlap_tensor_comm on it
	}
	if g.Recompute == string(analytic.SelectiveOp) && r.train && r.selectiveOpRefusal(g) != nil {
		return true
	}
	if g.ContextMethod == "" {
		return false
	}
	return r.refusal(g.Tensor, g.Context, g.ContextMethod) != nil
}

// pipelineEngineRefuses is whether core refuses the configuration's pipeline, schedule
// and sharding under the base request's framework (request.PipelineEngineRefusal:
// framework deepspeed's PipelineEngine runs 1F1B alone, and ZeRO below stage 2).
func (r *Evaluator) pipelineEngineRefuses(g search.Config) bool {
	c, err := schedule.Parse(g.Schedule)
	if err != nil || g.ZeRO < 0 || g.ZeRO >= len(zeroStages) {
		return false // Evaluate says what is wrong
	}
	sharding := zeroStages[g.ZeRO]
	if g.ZeRO == 3 && g.ShardGroup > 0 {
		sharding = string(analytic.HSDP)
	}
	return request.PipelineEngineRefusal(r.framework.Name, g.Pipeline, c, sharding, r.overlaps.OverlapGradReduce, r.overlaps.OverlapParamGather) != nil
}

// refusal is core's error for a context split of c devices by method beside a t-way
// tensor group, as Refuses asks it (nil: core takes it, or no context parallelism).
func (r *Evaluator) refusal(t, c int, method string) error {
	if c <= 1 || r.arch == nil {
		return nil
	}
	k := refuseKey{t, c, method}
	if err, ok := r.refused[k]; ok {
		return err
	}
	_, err := r.estimateOf(t, 1, string(analytic.NoRecompute), c, method, 0)
	r.refused[k] = err
	return err
}

// selectiveOpRefusal is core's error for recompute selective-op on the configuration's
// tensor, context and expert split (nil: core takes it): core/analytic refuses it on a
// profile, with eager attention, a mixture of experts or latent attention, and for
// GPT-2, MPT and BERT blocks. It asks core by estimating the split at microbatch size
// 1 (cached per split), as refusal does for a context split.
func (r *Evaluator) selectiveOpRefusal(g search.Config) error {
	if r.arch == nil {
		return errSelectiveOpProfile
	}
	c, method := max(1, g.Context), r.methodOf(g)
	k := selectiveOpKey{refuseKey{g.Tensor, c, method}, g.Expert}
	if err, ok := r.selectiveOpRefused[k]; ok {
		return err
	}
	_, err := r.estimateOf(g.Tensor, 1, string(analytic.SelectiveOp), c, method, g.Expert)
	r.selectiveOpRefused[k] = err
	return err
}

// errSelectiveOpProfile is core's reason for refusing selective-op on a profile.
var errSelectiveOpProfile = errors.New("selective-op recomputation needs an architecture")

// selectiveOpKey is a split selectiveOpRefusal asks about: its context split and
// expert degree.
type selectiveOpKey struct {
	refuseKey
	expert int
}

// refuseKey is a context split: tensor degree, context degree and method.
type refuseKey struct {
	t, c   int
	method string
}

// contextMethodOf is the context method of the search's candidates: the base request's,
// ring when it gives none.
func contextMethodOf(m string) string {
	if m == "" {
		return string(analytic.Ring)
	}
	return m
}

// zeroStages are the request's shardings of the search's ZeRO stages.
var zeroStages = [...]string{"none", "zero1", "zero2", "zero3"}

// Evaluate plans the candidate's request.
func (r *Evaluator) Evaluate(ctx context.Context, c search.Candidate) (search.Outcome, error) {
	v, err := r.prepare(c)
	if err != nil {
		return search.Outcome{}, fmt.Errorf("%s: %w", c, err)
	}
	res, err := v.Plan(ctx) // no content id: only the reported candidates get one
	if err != nil {
		return search.Outcome{}, fmt.Errorf("%s: %w", c, err)
	}
	return outcome(res), nil
}

// outcome reads a result.
func outcome(res *wire.Result) search.Outcome {
	o := search.Outcome{Feasible: res.Feasible}
	if res.Plan != nil {
		if res.Plan.LayerOrder == nil { // a graph partition's are positions in an order of its own
			o.Boundaries = res.Plan.Boundaries
		}
		o.HeadroomBytes = math.MaxInt64
		for _, s := range res.Plan.Stages {
			if h := s.LimitBytes - s.MemoryBytes; h < o.HeadroomBytes {
				o.HeadroomBytes = h
				if s.LimitBytes > 0 {
					o.HeadroomFraction = float64(h) / float64(s.LimitBytes)
				}
			}
		}
	}
	if st := res.Step; st != nil && res.Feasible {
		o.SamplesPerSecond, o.TokensPerSecond, o.StepSeconds = st.SamplesPerSecond, st.TokensPerSecond, st.StepSeconds
		o.BubbleFraction, o.MFU = st.BubbleFraction, st.MFU
	}
	if !res.Feasible {
		var why []string
		for _, d := range res.Diagnostics {
			if d.Severity == wire.Error {
				why = append(why, d.Message)
			}
		}
		o.Reason = strings.Join(why, "; ")
	}
	return o
}

// seqParallel is whether a candidate of tensor degree t and expert degree e runs
// sequence parallelism: as the base request says wherever t > 1, and always with both
// tensor and expert parallelism, which Megatron-LM requires it for.
func (r *Evaluator) seqParallel(t, e int) bool { return t > 1 && (r.sp || e > 1) }
