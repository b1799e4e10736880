package request

import (
	"context"
	"encoding/json"
	"math"
	"sync"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/recompute"
	"pipeplan/core/wire"
)

// Prepared is a request made ready to plan: normalized (every default applied), its
// model built (an architecture costed on the cluster's device, or a profile adjusted to
// the training settings and the devices), its cluster and links found. Its canonical
// form and content id are computed once, when first asked. Run plans it; With gives a
// variant with other knobs that reuses what is built (the loaded documents, the parsed
// architecture, the analytic estimates). A Prepared is safe for concurrent use.
type Prepared struct {
	p *prepared
	// cache holds parsed architectures and analytic estimates for the variants; made on
	// the first With when Prepare was given none.
	cacheOnce sync.Once
	cache     *Cache
	// scaled is the profile of a variant scaled to another microbatch size: its request's
	// model document is written when the request is asked for.
	scaled *model.Model

	reqOnce sync.Once
	req     *wire.Request // the normalized request, with a scaled profile's document written

	canonOnce sync.Once
	canonical []byte
	canonErr  error

	idOnce sync.Once
	id     string
	idErr  error
	// pending hashes a large model document while the request is prepared (Run's
	// pendingID); nil once the id is known.
	pending *pendingID
}

// loaded is what preparing a request read from its documents, kept so that a Prepared's
// variants read none of them again. Neither is ever changed.
type loaded struct {
	// model is the profile as loaded (nil for an architecture), in format.
	model  *model.Model
	format load.Format
	// origin is the profile as first loaded, and spec the normalized model of the request
	// that named it: a variant scaled to its microbatch size is scaled from origin.
	origin       *model.Model
	originFormat load.Format
	spec         wire.ModelSpec
	// cluster is the cluster document as loaded (nil for a device preset).
	cluster *cluster.Cluster
}

// Prepare normalizes the request (Normalize's errors) and builds what it names: the
// model, the cluster, the costs. A request whose model fits no split prepares fine: Run
// says why it has no plan.
func Prepare(r *wire.Request) (*Prepared, error) { return prepareRequest(r, nil) }

// Prepare is request.Prepare with the cache, which its variants share.
func (c *Cache) Prepare(r *wire.Request) (*Prepared, error) { return prepareRequest(r, c) }

func prepareRequest(r *wire.Request, cache *Cache) (*Prepared, error) {
	var pending *pendingID
	if r != nil && len(r.Model.Document) >= concurrentJSONBytes {
		pending = startID(r.Model.Document)
	}
	p, err := prepareWith(r, cache)
	if err != nil {
		if pending != nil {
			pending.abandon()
		}
		return nil, err
	}
	return &Prepared{p: p, cache: cache, pending: pending}, nil
}

// Request returns the normalized request (a copy the caller may change).
func (pr *Prepared) Request() *wire.Request {
	pr.reqOnce.Do(func() {
		pr.req = pr.p.req
		if pr.scaled == nil {
			return
		}
		r := clone(pr.p.req)
		doc, err := json.Marshal(pr.scaled)
		if err != nil { // a model of plain numbers and strings always encodes
			panic("request: a scaled profile does not encode: " + err.Error())
		}
		r.Model.Document = doc
		pr.req = r
	})
	return clone(pr.req)
}

// Canonical returns the canonical encoding of the request (Canonical), computed once.
func (pr *Prepared) Canonical() ([]byte, error) {
	pr.canonOnce.Do(func() { pr.canonical, pr.canonErr = canonical(pr.Request()) })
	return pr.canonical, pr.canonErr
}

// ID returns the request's content id (ID), computed once: from the canonical encoding,
// or for a large model document from its hash, taken while the request was prepared.
func (pr *Prepared) ID() (string, error) {
	pr.idOnce.Do(func() {
		if pr.pending != nil {
			pr.id, pr.idErr = requestID(pr.Request(), pr.pending)
			pr.pending = nil
			return
		}
		c, err := pr.Canonical()
		if err != nil {
			pr.idErr = err
			return
		}
		pr.id = contentID(c)
	})
	return pr.id, pr.idErr
}

// Run plans the prepared request, as request.Run does. It may be called more than once.
func (pr *Prepared) Run(ctx context.Context) (*wire.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id, err := pr.ID()
	if err != nil {
		return nil, err
	}
	return pr.p.run(ctx, id)
}

// Plan is Run without the content id (Result.ID is empty): for a caller that plans many
// variants and reports few (the search), which then asks ID of those it reports. The
// id hashes the whole request, a profile's document included.
func (pr *Prepared) Plan(ctx context.Context) (*wire.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return pr.p.run(ctx, "")
}

// Estimate returns the analytic estimate of the request's architecture on its cluster's
// device (request.Estimate). The request must name an architecture.
func (pr *Prepared) Estimate() (*analytic.Result, error) {
	if pr.p.est == nil {
		return nil, &model.FieldError{Path: "model.architecture", Reason: "is required: an estimate costs an architecture (a profile states its own costs)"}
	}
	return pr.p.estimate(), nil
}

// Model returns the model as planned (the caller must not change it): an architecture's
// layers as costed, or the profile adjusted to the training settings and the devices.
func (pr *Prepared) Model() *model.Model { return pr.p.model }

// Framework is the framework an architecture's plans are costed with (its fixed memory
// and allocator reserve on every device, the same for every variant); the zero
// Framework for a profile.
func (pr *Prepared) Framework() cluster.Framework { return pr.p.framework }

// CollectiveSMShare is the fraction of the device's multiprocessors an NCCL collective
// holds while it runs beside computation (cluster.CollectiveSMShare of the target's
// Perf.Multiprocessors; 0 where it states none), as gatherLayers prices ZeRO-3's
// overlapped gathers and DataParallelExposedSeconds every other overlapped
// data-parallel collective.
func (pr *Prepared) CollectiveSMShare() float64 { return pr.p.collectiveSMShare() }

// RecomputeOptions are the layers' recomputation options under training.recompute auto
// (recompute.Choices, relative to Model's layers; option 0 is each layer as it is), nil
// otherwise: what the search bounds an auto candidate's memory with.
func (pr *Prepared) RecomputeOptions() recompute.Choices { return pr.p.recomputeChoices() }

// Knobs are the fields of a request that its variants change (With): how the devices
// are used, the devices (cluster.count), the schedule, recomputation, the memory
// proportion and the split. Each means what the request's field means; a zero value is
// its default.
type Knobs struct {
	Parallelism wire.Parallelism
	Count       int
	Schedule    wire.Schedule
	Recompute   string
	// FP8FSDPAllGather is training.fp8_fsdp_all_gather, which applies only where the
	// weights are sharded by FSDP2 over two replicas or more (a knob with them).
	FP8FSDPAllGather bool
	MemoryProportion float64
	Boundaries       []int
	Partition        string
	Events           bool
}

// Knobs returns the normalized request's knobs.
func (pr *Prepared) Knobs() Knobs {
	r := pr.p.req
	return Knobs{Parallelism: r.Parallelism, Count: r.Cluster.Count, Schedule: r.Schedule, Recompute: r.Training.Recompute,
		FP8FSDPAllGather: r.Training.FP8FSDPAllGather, MemoryProportion: r.MemoryProportion, Boundaries: append([]int(nil), r.Boundaries...), Partition: r.Partition, Events: r.Events}
}

// With prepares the request with the knobs k in place of its own, reusing what is built:
// the documents as loaded, the parsed architecture and its analytic estimates (shared by
// every variant of pr). Errors are Normalize's, of the variant's request.
//
// A measured profile planned at a microbatch size other than the one it states (1 when
// it states none) is
// scaled to it (ScaleProfile), as Graphcore's auto-pipeline tool's auto-auto re-profiles
// the model at each batch size; the variant's request then holds the scaled profile as
// its model document, so that it plans alone to the same result: in pipeplan's native
// JSON, which states the size it was measured with (scaled_from, which its plan notes)
// and the format it came in (converted_from), whose rules it is planned by.
func (pr *Prepared) With(k Knobs) (*Prepared, error) {
	pr.cacheOnce.Do(func() {
		if pr.cache == nil {
			pr.cache = NewCache()
		}
	})
	base := pr.p
	q := clone(base.req)
	q.Parallelism, q.Cluster.Count, q.Schedule = k.Parallelism, k.Count, k.Schedule
	q.Training.Recompute, q.MemoryProportion, q.Events = k.Recompute, k.MemoryProportion, k.Events
	q.Training.FP8FSDPAllGather = k.FP8FSDPAllGather
	if k.Recompute != string(analytic.Selective) && k.Recompute != RecomputeAuto {
		// The request's modules say what selective recomputation (or auto) reruns: a
		// variant recomputing none or full has none.
		q.Training.RecomputeModules = nil
	}
	q.Boundaries, q.Partition = append([]int(nil), k.Boundaries...), k.Partition
	if len(k.Boundaries) == 0 {
		q.Boundaries = nil
	}
	ld := base.loaded
	var scaled *model.Model
	if m := ld.origin; m != nil {
		if b := k.Schedule.MicrobatchSize; b != 0 && b != max(1, m.MicrobatchSize) {
			scaled = ScaleProfile(m, max(1, m.MicrobatchSize), b)
			if scaled.Name == "" {
				scaled.Name = ld.spec.Name
			}
			// As its request states it: a native model document, which keeps the meaning
			// of the format the profile came in (converted_from), so that the scaled
			// profile is planned by the rules the profile is.
			if ld.originFormat != load.Native {
				scaled.ConvertedFrom = string(ld.originFormat)
			}
			ld = &loaded{model: scaled, format: ld.originFormat, origin: m, originFormat: ld.originFormat, spec: ld.spec, cluster: ld.cluster}
			q.Model = wire.ModelSpec{Name: scaled.Name}
		} else if pr.scaled != nil {
			ld = &loaded{model: m, format: ld.originFormat, origin: m, originFormat: ld.originFormat, spec: ld.spec, cluster: ld.cluster}
			q.Model = ld.spec
		}
	}
	p, err := prepareFrom(q, pr.cache, ld)
	if err != nil {
		return nil, err
	}
	return &Prepared{p: p, cache: pr.cache, scaled: scaled}, nil
}

// ScaleProfile returns the profile measured at microbatch size from, scaled to size to,
// as Graphcore's auto-pipeline tool's auto-auto re-profiles the model at each batch size: times (seconds or
// cycles, cycles rounded up), activations, temporaries, carried tensors, the tensors
// passed between layers and stated transfers grow in proportion to the samples; weights,
// gradients, optimizer state, exclusive and shared (code) memory do not. A layer's
// measured fixed times (forward_fixed_seconds, backward_fixed_seconds: launches, host
// dispatch) stay and only the rest of its time scales; without them all of it does,
// which prices a smaller microbatch too fast and a larger one too slow by the fixed
// part (the result's note says which). The model states its new microbatch size. It is
// a linear model of a profile: measure at the sizes that matter when a profile is at
// hand. The scaled model states the size the profile was measured with (ScaledFrom:
// from, or what m states when m is itself scaled).
func ScaleProfile(m *model.Model, from, to int) *model.Model {
	f := float64(to) / float64(from)
	scale := func(v int64) int64 { return int64(math.Ceil(float64(v) * f)) }
	s := *m
	s.MicrobatchSize = to
	if s.ScaledFrom == 0 {
		s.ScaledFrom = from
	}
	if s.ScaledFrom == to {
		s.ScaledFrom = 0
	}
	s.Inputs = scaleTensors(m.Inputs, scale)
	s.Layers = make([]model.Layer, len(m.Layers))
	for i, l := range m.Layers {
		l.ForwardSeconds = l.ForwardFixedSeconds + (l.ForwardSeconds-l.ForwardFixedSeconds)*f
		l.BackwardSeconds = l.BackwardFixedSeconds + (l.BackwardSeconds-l.BackwardFixedSeconds)*f
		l.ForwardCycles = scale(l.ForwardCycles)
		l.BackwardCycles = scale(l.BackwardCycles)
		l.TemporaryBytes = scale(l.TemporaryBytes)
		l.ActivationBytes = scale(l.ActivationBytes)
		l.CarryOverBytes = scale(l.CarryOverBytes)
		l.Outputs = scaleTensors(l.Outputs, scale)
		if l.RecvBytes != nil {
			v := scale(*l.RecvBytes)
			l.RecvBytes = &v
		}
		if l.SendBytes != nil {
			v := scale(*l.SendBytes)
			l.SendBytes = &v
		}
		s.Layers[i] = l
	}
	return &s
}

func scaleTensors(ts []model.Tensor, scale func(int64) int64) []model.Tensor {
	out := make([]model.Tensor, len(ts))
	for i, t := range ts {
		out[i] = model.Tensor{ID: t.ID, Bytes: scale(t.Bytes)}
	}
	return out
}

// copyModel is a model whose layers the caller may change (not what they hold: tensors,
// inputs and shared maps stay shared).
func copyModel(m *model.Model) *model.Model {
	c := *m
	c.Layers = append([]model.Layer(nil), m.Layers...)
	return &c
}

// copyCluster is a cluster whose devices and links the caller may change.
func copyCluster(c *cluster.Cluster) *cluster.Cluster {
	cp := *c
	cp.Devices = append([]cluster.Device(nil), c.Devices...)
	cp.Links = append([]cluster.Link(nil), c.Links...)
	if c.Links == nil {
		cp.Links = nil
	}
	return &cp
}

// Architecture returns the request's architecture as parsed (nil for a profile); the
// caller must not change it.
func (pr *Prepared) Architecture() *arch.Arch { return pr.p.arch }

// AsNative returns the request with its measured profile written as pipeplan's native
// JSON, as loaded, stating the microbatch size it is planned at: the form every variant at
// another microbatch size takes (With). A Graphcore or PipeDream profile keeps its
// format's meaning (converted_from): it plans to the same result. An architecture, or a
// profile already native, is returned as it is.
func (pr *Prepared) AsNative() (*Prepared, error) {
	ld := pr.p.loaded
	if ld.origin == nil || ld.originFormat == load.Native || ld.origin.ConvertedFrom != "" || pr.scaled != nil {
		return pr, nil
	}
	m := *ld.origin
	if m.Name == "" {
		m.Name = ld.spec.Name
	}
	m.MicrobatchSize = pr.p.req.Schedule.MicrobatchSize // the size it is planned at, stated
	m.ConvertedFrom = string(ld.originFormat)
	doc, err := json.Marshal(&m)
	if err != nil {
		return nil, err
	}
	q := clone(pr.p.req)
	q.Model = wire.ModelSpec{Document: doc, Name: m.Name}
	return prepareRequest(q, pr.cache)
}
