package request

import (
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
	"pipeplan/core/wire"
)

// The defaults Normalize applies, in one place.
const (
	// DefaultSchedule for training; inference runs the inference schedule.
	DefaultSchedule = "1f1b"
	// DefaultMicrobatchesPerStage: with no microbatch count given, a step runs this many
	// microbatches per pipeline device, which keeps the 1F1B bubble (p-1)/(m+p-1) under
	// 20% (popxl's pipelining guide asks for at least twice the stages).
	DefaultMicrobatchesPerStage = 4
	// DefaultSeq caps the default sequence length of an architecture: its context
	// (max_position_embeddings), at most this.
	DefaultSeq = 4096
	// DefaultWeightGradFraction is zb-h1's share of the backward that computes weight
	// gradients: for matrix products the input and weight gradients cost the same.
	DefaultWeightGradFraction = 0.5
)

// prepared is a normalized request with what it names built: the model (adjusted for
// the training settings), one pipeline's cluster, the schedule.
type prepared struct {
	req    *wire.Request
	model  *model.Model
	format load.Format // of a document or example; "" for an architecture
	est    *analytic.Result
	// target is the device an architecture is costed on, with the request's overrides.
	target analytic.Target
	arch   *arch.Arch
	// archKey is the cache's parse of arch (nil without a cache), which keys estimates.
	archKey *arch.Arch
	// cache, when set, holds parsed architectures and analytic estimates across requests.
	cache *Cache
	// cluster is one pipeline: Parallelism.Pipeline devices.
	cluster *cluster.Cluster
	// dataLink is what the data-parallel all-reduce crosses; nil when free or d = 1.
	dataLink *cluster.Link
	// fullWeights and fullGrads are each layer's weights and gradients before sharding
	// (fullState).
	fullWeights, fullGrads []int64
	// layerComm and layerAdded are, per layer and microbatch, ZeRO-3's (and HSDP's)
	// all-gathers and reduce-scatters beside its compute and what they add to its
	// passes, layerSlow the compute they slow of that, layerBackward those of them that
	// run in its backward pass (gatherLayers); nil under other shardings.
	layerComm, layerAdded, layerSlow, layerBackward []float64
	// tiedLink joins the first and the last stage for a copied tied embedding.
	tiedLink *cluster.Link
	// tensorLink carries an architecture's tensor-parallel all-reduces (zero: the
	// device preset's usual link).
	tensorLink cluster.Link
	// mesh is the full-mesh rate a link (cluster.LinkPreset.MeshBytesPerSecond) of the
	// cluster.link that joins all the devices, without a topology; 0 for none.
	// meshDevices is how many devices such a mesh joins, the device preset's scale-up
	// domain (0: not known).
	mesh        float64
	meshDevices int
	// topo is the cluster of nodes (cluster.devices_per_node), and placement where the
	// run sits on it.
	topo      *cluster.Topology
	placement *cluster.Placement
	sched     schedule.Config
	// recomputeStages: the estimator and the schedule stash stage inputs only (full
	// recomputation of a profile).
	recomputeStages bool
	// modules: training.recompute_modules (analytic.Modules), what selective recomputation
	// reruns or auto chooses from.
	modules analytic.Modules
	// estKey is the analytic estimate's cache key (an architecture's), from which
	// per-layer recomputation (recompute auto) costs its variants.
	estKey estimateKey
	// memoryEfficiency per device: the fraction of memory_bytes_per_second the optimizer
	// update reaches (an architecture's memory_efficiency, else a preset's figure, else 1).
	memoryEfficiency []float64
	// framework runs an architecture (model.architecture.framework); the zero value for
	// profiles, whose measured times hold their framework's costs.
	framework cluster.Framework
	notes     []wire.Diagnostic
	// loaded is what was read from the request's documents (or reused from them: a
	// variant's, Prepared.With), kept for the variants.
	loaded *loaded
}

// Normalize checks the request and returns a copy with every default applied: the
// documented meaning of each zero value (docs/request.md):
//
//   - version: 1;
//   - training.mode: inference when schedule.name is inference, else training;
//   - training.optimizer: adamw, for training an architecture or a profile that gives
//     weights only (PipeDream); other profiles state their optimizer state;
//   - training.precision: mixed for a 16-bit architecture, pure for fp32 and for
//     PipeDream profiles (measured in fp32);
//   - training.recompute: none;
//   - cluster.count: pipeline x data x tensor x context; cluster.link: the device preset's usual
//     link; with devices_per_node, link_intra: the device's usual link, link_inter: its
//     usual network;
//   - parallelism.data: 1; parallelism.tensor: 1; parallelism.context: 1;
//     parallelism.sharding: none (zero 1 becomes zero1, fsdp zero3);
//     parallelism.prefetch: next-layer with zero3 and hsdp; parallelism.shard_group with
//     hsdp: the replicas a node holds; parallelism.context_method: ring with context >= 2;
//     parallelism.context_inner with hierarchical: the largest divisor of context below
//     it that fits in a node beside the tensor group; parallelism.pipeline: the devices of a cluster document, or cluster.count /
//     (data x tensor x context);
//   - schedule.name: 1f1b (training) or inference; schedule.microbatches: 4 per pipeline
//     device (fewer where the simulator takes no more: 1,024 on 1,024 devices, 262 on
//     4,000; for interleaved, a multiple of the devices); schedule.microbatch_size: the profile's own (1 when it does not say), or 1
//     sequence for an architecture; schedule.weight_grad_fraction: 0.5 for zb-h1;
//   - model.architecture: seq = the context, at most 4096; dtype bf16; attention flash;
//     split block; tie copy; framework eager on GPUs (what a PyTorch training script
//     runs), none on TPUs and IPUs (compiled programs);
//   - objective: compute; memory_proportion: 1; partition: layers (normalized to nothing, so
//     that requests from before the field keep their ids).
//
// Fields that do not apply to the request (an optimizer for inference, ZeRO without data
// parallelism, selective recomputation of a measured profile, a weight-gradient share
// for a schedule without W passes) are errors naming the field, never ignored.
func Normalize(r *wire.Request) (*wire.Request, error) {
	p, err := prepare(r)
	if err != nil {
		return nil, err
	}
	return p.req, nil
}

// Validate reports whether the request is valid (Normalize's errors).
func Validate(r *wire.Request) error {
	_, err := prepare(r)
	return err
}

func prepare(in *wire.Request) (*prepared, error) { return prepareWith(in, nil) }

// prepareWith is prepare with a cache (nil: none).
func prepareWith(in *wire.Request, cache *Cache) (*prepared, error) {
	return prepareFrom(in, cache, nil)
}

// prepareFrom is prepareWith reading the documents that reuse holds (nil: none) as the
// request's instead of loading them again (a variant's, Prepared.With).
func prepareFrom(in *wire.Request, cache *Cache, reuse *loaded) (*prepared, error) {
	if in == nil {
		return nil, &model.FieldError{Reason: "the request is missing"}
	}
	r := clone(in)
	p := &prepared{req: r, cache: cache, loaded: &loaded{}}
	if reuse != nil {
		*p.loaded = *reuse
	}
	var es model.Errors
	switch r.Version {
	case 0, wire.Version:
		r.Version = wire.Version
	default:
		es.Add("version", "must be %d, the version this planner reads, got %d", wire.Version, r.Version)
		return nil, es.Err()
	}
	p.mode(&es)
	if len(es) > 0 {
		return nil, es.Err()
	}
	p.loadModel(&es)
	p.loadCluster(&es)
	if len(es) > 0 {
		return nil, es.Err()
	}
	p.parallelism(&es)
	p.defaultReshard()
	p.training(&es)
	if len(es) > 0 {
		return nil, es.Err()
	}
	p.schedule(&es)
	p.objective(&es)
	if len(es) > 0 {
		return nil, es.Err()
	}
	p.buildModel(&es)
	if len(es) > 0 {
		return nil, es.Err()
	}
	p.links(&es)
	if len(es) > 0 {
		return nil, es.Err()
	}
	p.gatherLayers(&es)
	if err := es.Err(); err != nil {
		return nil, err
	}
	if reuse == nil && p.loaded.origin != nil {
		p.loaded.spec = p.req.Model
	}
	return p, nil
}

func clone(r *wire.Request) *wire.Request {
	c := *r
	if r.Model.Architecture != nil {
		a := *r.Model.Architecture
		c.Model.Architecture = &a
	}
	c.Boundaries = append([]int(nil), r.Boundaries...)
	if len(r.Boundaries) == 0 {
		c.Boundaries = nil
	}
	return &c
}

func (p *prepared) mode(es *model.Errors) {
	r := p.req
	t := &r.Training
	if t.Mode == "" {
		t.Mode = wire.ModeTraining
		if c, err := schedule.Parse(r.Schedule.Name); err == nil && r.Schedule.Name != "" && c.Kind == schedule.Inference {
			t.Mode = wire.ModeInference
		}
	}
	if t.Mode != wire.ModeTraining && t.Mode != wire.ModeInference {
		es.Add("training.mode", "must be %s or %s, got %q", wire.ModeTraining, wire.ModeInference, t.Mode)
	}
}

func (p *prepared) train() bool { return p.req.Training.Mode == wire.ModeTraining }

func (p *prepared) note(d wire.Diagnostic) { p.notes = append(p.notes, d) }

// addPrefixed adds err's field errors under prefix, or err as one error at prefix.
func addPrefixed(es *model.Errors, prefix string, err error) {
	join := func(path string) string {
		switch {
		case prefix == "":
			return path
		case path == "":
			return prefix
		case strings.HasPrefix(path, "["):
			return prefix + path
		}
		return prefix + "." + path
	}
	if fes, ok := model.AsFieldErrors(err); ok {
		for _, fe := range fes {
			*es = append(*es, &model.FieldError{Path: join(fe.Path), Reason: fe.Reason})
		}
		return
	}
	es.Add(prefix, "%v", err)
}
