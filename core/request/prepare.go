package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/examples"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/request/spec"
	"pipeplan/core/schedule"
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
	req    *Request
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
	// tiedLink joins the first and the last stage for a copied tied embedding.
	tiedLink *cluster.Link
	// tensorLink carries an architecture's tensor-parallel all-reduces (zero: the
	// device preset's usual link).
	tensorLink cluster.Link
	// topo is the cluster of nodes (cluster.devices_per_node), and placement where the
	// run sits on it.
	topo      *cluster.Topology
	placement *cluster.Placement
	sched     schedule.Config
	// recomputeStages: the estimator and the schedule stash stage inputs only (full
	// recomputation of a profile).
	recomputeStages bool
	// memoryEfficiency per device: the fraction of memory_bytes_per_second the optimizer
	// update reaches (an architecture's memory_efficiency, else a preset's figure, else 1).
	memoryEfficiency []float64
	// framework runs an architecture (model.architecture.framework); the zero value for
	// profiles, whose measured times hold their framework's costs.
	framework cluster.Framework
	notes     []Diagnostic
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
//     parallelism.pipeline: the devices of a cluster document, or cluster.count /
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
func Normalize(r *Request) (*Request, error) {
	p, err := prepare(r)
	if err != nil {
		return nil, err
	}
	return p.req, nil
}

// Validate reports whether the request is valid (Normalize's errors).
func Validate(r *Request) error {
	_, err := prepare(r)
	return err
}

func prepare(in *Request) (*prepared, error) { return prepareWith(in, nil) }

// prepareWith is prepare with a cache (nil: none).
func prepareWith(in *Request, cache *Cache) (*prepared, error) { return prepareFrom(in, cache, nil) }

// prepareFrom is prepareWith reading the documents that reuse holds (nil: none) as the
// request's instead of loading them again (a variant's, Prepared.With).
func prepareFrom(in *Request, cache *Cache, reuse *loaded) (*prepared, error) {
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
	case 0, Version:
		r.Version = Version
	default:
		es.Add("version", "must be %d, the version this planner reads, got %d", Version, r.Version)
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

func clone(r *Request) *Request {
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
		t.Mode = ModeTraining
		if c, err := schedule.Parse(r.Schedule.Name); err == nil && r.Schedule.Name != "" && c.Kind == schedule.Inference {
			t.Mode = ModeInference
		}
	}
	if t.Mode != ModeTraining && t.Mode != ModeInference {
		es.Add("training.mode", "must be %s or %s, got %q", ModeTraining, ModeInference, t.Mode)
	}
}

func (p *prepared) train() bool { return p.req.Training.Mode == ModeTraining }

// document returns the bytes of a document field: a JSON object as it is, a JSON string
// as the text it holds.
func document(raw json.RawMessage) ([]byte, error) {
	s := bytes.TrimSpace(raw) // no copy: a profile may be hundreds of megabytes
	if bytes.HasPrefix(s, []byte(`"`)) {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		return []byte(text), nil
	}
	if !bytes.HasPrefix(s, []byte("{")) {
		return nil, fmt.Errorf("must be a JSON object or a string holding a file's text")
	}
	return raw, nil
}

func (p *prepared) loadModel(es *model.Errors) {
	ms := &p.req.Model
	if ld := p.loaded; ld.model != nil {
		p.model, p.format = ld.model, ld.format
		return
	}
	n := 0
	for _, set := range []bool{ms.Example != "", len(ms.Document) > 0, ms.Architecture != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		es.Add("model", "must give exactly one of example, document and architecture, got %d", n)
		return
	}
	switch {
	case ms.Example != "":
		e, err := examples.Lookup(ms.Example)
		if err != nil {
			es.Add("model.example", "%v", err)
			return
		}
		m, err := e.Model()
		if err != nil {
			es.Add("model.example", "%v", err)
			return
		}
		ms.Example = e.Name
		p.model, p.format = m, load.Native
		p.keepProfile()
	case len(ms.Document) > 0:
		data, err := document(ms.Document)
		if err != nil {
			es.Add("model.document", "%v", err)
			return
		}
		m, f, err := load.Model(data)
		if err != nil {
			addPrefixed(es, "model.document", err)
			return
		}
		p.model, p.format = m, f
		p.keepProfile()
	default:
		a := ms.Architecture
		switch {
		case (a.Name == "") == (len(a.Config) == 0):
			es.Add("model.architecture", "must give exactly one of name (a bundled config: %s) and config (a config.json object)", strings.Join(arch.BundledNames(), ", "))
			return
		case a.Name != "":
			name := a.Name
			def, key, err := p.cache.archOf(name, nil, func() (*arch.Arch, error) { return arch.Bundled(name) })
			if err != nil {
				es.Add("model.architecture.name", "%v", err)
				return
			}
			a.Name = def.Name
			p.arch, p.archKey = def, key
		default:
			data, err := document(a.Config)
			if err != nil {
				es.Add("model.architecture.config", "%v", err)
				return
			}
			def, key, err := p.cache.archOf("", data, func() (*arch.Arch, error) { return arch.Parse(data) })
			if err != nil {
				addPrefixed(es, "model.architecture.config", err)
				return
			}
			p.arch, p.archKey = def, key
		}
	}
}

// keepProfile records the profile as loaded, for the variants (Prepared.With).
func (p *prepared) keepProfile() {
	ld := p.loaded
	ld.model, ld.format, ld.origin, ld.originFormat = p.model, p.format, p.model, p.format
}

func (p *prepared) loadCluster(es *model.Errors) {
	cs := &p.req.Cluster
	if (cs.Device == "") == (len(cs.Document) == 0) {
		es.Add("cluster", "must give exactly one of device (a preset: %s) and document", strings.Join(cluster.DeviceNames(), ", "))
		return
	}
	if cs.Device != "" {
		d, err := cluster.LookupDevice(cs.Device)
		if err != nil {
			es.Add("cluster.device", "%v", err)
			return
		}
		cs.Device = d.Name
		if cs.Link == "" {
			cs.Link = d.Link
		}
		if l, err := cluster.LookupLink(cs.Link); err != nil {
			es.Add("cluster.link", "%v", err)
		} else {
			cs.Link = l.Name // names are read in any case; the canonical request has the preset's
		}
		if cs.Count < 0 || cs.Count > cluster.MaxStages {
			es.Add("cluster.count", "must be between 1 and %d, got %d", cluster.MaxStages, cs.Count)
		}
		if cs.DataLink != "" {
			es.Add("cluster.data_link", "goes with a cluster document: with a device preset the data-parallel all-reduce crosses cluster.link")
		}
		p.nodes(es, d)
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"devices_per_node", cs.DevicesPerNode != 0}, {"link_intra", cs.LinkIntra != ""}, {"link_inter", cs.LinkInter != ""}} {
		if f.set {
			es.Add("cluster."+f.name, "goes with cluster.device: a cluster document states its devices and links")
		}
	}
	if cs.Count != 0 {
		es.Add("cluster.count", "goes with cluster.device: a cluster document lists its devices (one pipeline)")
	}
	if cs.Link != "" {
		es.Add("cluster.link", "goes with cluster.device: a cluster document states its links")
	}
	c := p.loaded.cluster
	if c == nil {
		data, err := document(cs.Document)
		if err != nil {
			es.Add("cluster.document", "%v", err)
			return
		}
		if c, err = load.Cluster(data); err != nil {
			addPrefixed(es, "cluster.document", err)
			return
		}
		p.loaded.cluster = c
	}
	p.cluster = copyCluster(c) // links and devices are adjusted below
	if cs.DataLink != "" {
		if l, err := cluster.LookupLink(cs.DataLink); err != nil {
			es.Add("cluster.data_link", "%v", err)
		} else {
			cs.DataLink = l.Name
		}
	}
}

func (p *prepared) parallelism(es *model.Errors) {
	r := p.req
	par, cs := &r.Parallelism, &r.Cluster
	if par.Data == 0 {
		par.Data = 1
	}
	if par.Data < 1 || par.Data > cluster.MaxStages {
		es.Add("parallelism.data", "must be between 1 and %d, got %d", cluster.MaxStages, par.Data)
		return
	}
	if par.Pipeline < 0 || par.Pipeline > cluster.MaxStages {
		es.Add("parallelism.pipeline", "must be between 1 and %d, got %d", cluster.MaxStages, par.Pipeline)
		return
	}
	if par.Tensor == 0 {
		par.Tensor = 1
	}
	if par.Tensor < 1 || par.Tensor > cluster.MaxStages {
		es.Add("parallelism.tensor", "must be between 1 and %d, got %d", cluster.MaxStages, par.Tensor)
		return
	}
	if par.Tensor > 1 && p.arch == nil {
		es.Add("parallelism.tensor", "splits an architecture's blocks (model.architecture); a measured profile cannot be split")
	}
	if par.SequenceParallel && par.Tensor < 2 {
		es.Add("parallelism.sequence_parallel", "splits along the sequence what tensor parallelism leaves whole: it needs parallelism.tensor >= 2")
	}
	p.context(es)
	p.sharding(es)
	p.experts(es)
	if p.cluster != nil { // a document: its devices are one pipeline
		n := len(p.cluster.Devices)
		if par.Pipeline != 0 && par.Pipeline != n {
			es.Add("parallelism.pipeline", "must be %d, the devices of the cluster document (one per pipeline device), got %d", n, par.Pipeline)
		}
		par.Pipeline = n
		return
	}
	t := par.Tensor * par.Context // a stage's group: tensor x context devices
	switch {
	case par.Pipeline == 0 && cs.Count == 0:
		es.Add("cluster.count", "give the number of devices (or parallelism.pipeline)")
		return
	case par.Pipeline == 0:
		if cs.Count%(par.Data*t) != 0 {
			es.Add("parallelism.data", "%d replicas of stages of %d devices (tensor x context) do not divide the %d devices of cluster.count: give parallelism.pipeline", par.Data, t, cs.Count)
			return
		}
		par.Pipeline = cs.Count / (par.Data * t)
	case cs.Count == 0:
		cs.Count = par.Pipeline * par.Data * t
	}
	if need := int64(par.Pipeline) * int64(par.Data) * int64(t); need > int64(cs.Count) {
		if par.Context > 1 {
			es.Add("cluster.count", "%d devices cannot hold %d pipeline stages times %d replicas times %d-way tensor times %d-way context parallelism (%d devices)", cs.Count, par.Pipeline, par.Data, par.Tensor, par.Context, need)
		} else {
			es.Add("cluster.count", "%d devices cannot hold %d pipeline stages times %d replicas times %d-way tensor parallelism (%d devices)", cs.Count, par.Pipeline, par.Data, t, need)
		}
		return
	}
	c, err := cluster.FromPreset(cs.Device, par.Pipeline)
	if err != nil {
		es.Add("parallelism.pipeline", "%v", err)
		return
	}
	if p.topo != nil {
		// Stage links are placed in links(), once the model's traffic is known.
		p.topo.Nodes = (cs.Count + p.topo.DevicesPerNode - 1) / p.topo.DevicesPerNode
		if p.topo.DevicesPerNode%par.Tensor != 0 {
			es.Add("parallelism.tensor", "must divide cluster.devices_per_node (%d): a tensor-parallel group stays inside a node, got %d", p.topo.DevicesPerNode, par.Tensor)
			return
		}
		if K := p.topo.DevicesPerNode; K%t != 0 && t%K != 0 {
			es.Add("parallelism.context", "times parallelism.tensor (%d x %d) must divide cluster.devices_per_node (%d), or be whole nodes: a stage's group of tensor x context devices fills nodes evenly", par.Context, par.Tensor, K)
			return
		}
		c.Links = []cluster.Link{p.topo.Intra}
		p.tensorLink = p.topo.Intra
	} else {
		l, _ := cluster.LookupLink(cs.Link)
		c.Links = []cluster.Link{l.Link}
		p.tensorLink = l.Link
		if d, err := cluster.LookupDevice(cs.Device); err == nil && d.ScaleUpDevices > 0 && cs.Count > d.ScaleUpDevices && strings.EqualFold(cs.Link, d.Link) {
			p.note(Diagnostic{Code: CodeBeyondScaleUp, Severity: Warning, Field: "cluster.devices_per_node",
				Message: fmt.Sprintf("%d %s are planned as one %s fabric, but it joins %d of them (its scale-up domain): give cluster.devices_per_node %d to place the rest across its network",
					cs.Count, d.Name, d.Link, d.ScaleUpDevices, d.ScaleUpDevices)})
		}
	}
	p.cluster = c
	if idle := cs.Count - par.Pipeline*par.Data*t; idle > 0 {
		msg := fmt.Sprintf("%d of the %d devices are idle: the plan uses %d pipeline stages times %d replicas", idle, cs.Count, par.Pipeline, par.Data)
		if par.Tensor > 1 {
			msg += fmt.Sprintf(" times %d-way tensor parallelism", par.Tensor)
		}
		if par.Context > 1 {
			msg += fmt.Sprintf(" times %d-way context parallelism", par.Context)
		}
		p.note(Diagnostic{Code: CodeIdleDevices, Severity: Warning, Field: "cluster.count", Message: msg})
	}
}

// The shardings of parallelism.sharding, and its aliases.
var shardings = map[string]analytic.Sharding{
	"none": analytic.NoSharding, "zero1": analytic.ZeRO1, "zero2": analytic.ZeRO2,
	"zero3": analytic.ZeRO3, "fsdp": analytic.ZeRO3, "hsdp": analytic.HSDP,
}

// The values of parallelism.prefetch.
const (
	PrefetchNextLayer = "next-layer"
	PrefetchNone      = "none"
)

// context checks and defaults context parallelism: c >= 1, only for an architecture
// (a measured profile's sequence cannot be split), the method for c >= 2 only.
func (p *prepared) context(es *model.Errors) {
	par := &p.req.Parallelism
	if par.Context == 0 {
		par.Context = 1
	}
	if par.Context < 1 || par.Context > cluster.MaxStages {
		es.Add("parallelism.context", "must be between 1 and %d, got %d", cluster.MaxStages, par.Context)
		par.Context = 1
		return
	}
	if par.Context > 1 && p.arch == nil {
		es.Add("parallelism.context", "splits an architecture's sequence (model.architecture); a measured profile's cannot be split")
	}
	switch {
	case par.Context == 1 && par.ContextMethod != "":
		es.Add("parallelism.context_method", "goes with parallelism.context >= 2")
	case par.Context == 1:
	case par.ContextMethod == "":
		par.ContextMethod = string(analytic.Ring)
	case par.ContextMethod != string(analytic.Ring) && par.ContextMethod != string(analytic.AllToAll):
		es.Add("parallelism.context_method", "must be %s or %s, got %q", analytic.Ring, analytic.AllToAll, par.ContextMethod)
	}
}

// sharding checks and defaults the sharding of training state: zero (the former
// field) moves to sharding, fsdp reads as zero3, and a sharding needs training and at
// least two devices to shard over (replicas x context); hsdp's shard group must divide
// the replicas and leave at least two groups.
func (p *prepared) sharding(es *model.Errors) {
	par := &p.req.Parallelism
	field := "parallelism.sharding"
	switch par.ZeRO {
	case 0:
	case 1:
		if par.Sharding != "" && par.Sharding != "zero1" {
			es.Add("parallelism.zero", "1 means sharding zero1, and parallelism.sharding says %q: give sharding alone", par.Sharding)
			return
		}
		par.Sharding, par.ZeRO, field = "zero1", 0, "parallelism.zero"
	default:
		es.Add("parallelism.zero", "must be 0 or 1 (for ZeRO-2 and 3 give parallelism.sharding: zero2, zero3), got %d", par.ZeRO)
		return
	}
	if par.Sharding == "" {
		par.Sharding = "none"
	}
	sh, ok := shardings[par.Sharding]
	if !ok {
		es.Add(field, "must be one of none, zero1, zero2, zero3, fsdp, hsdp, got %q", par.Sharding)
		return
	}
	par.Sharding = string(sh)
	level := sh.Level()
	if level > 0 {
		name := fmt.Sprintf("ZeRO-%d", level)
		if sh == analytic.HSDP {
			name = "HSDP"
		}
		switch n := par.Data * par.Context; {
		case n >= 2:
		case level == 1:
			es.Add(field, "ZeRO-1 shards optimizer state over data-parallel replicas: it needs parallelism.data >= 2, got %d", par.Data)
		default:
			es.Add(field, "%s shards training state over the data-parallel devices: it needs parallelism.data (or parallelism.context) >= 2, got %d", name, n)
		}
		if !p.train() {
			es.Add(field, "shards optimizer state, which inference does not have")
		}
	}
	switch {
	case level == 3 && par.Prefetch == "":
		par.Prefetch = PrefetchNextLayer
	case level == 3 && par.Prefetch != PrefetchNextLayer && par.Prefetch != PrefetchNone:
		es.Add("parallelism.prefetch", "must be %s or %s, got %q", PrefetchNextLayer, PrefetchNone, par.Prefetch)
	case level < 3 && par.Prefetch != "":
		es.Add("parallelism.prefetch", "goes with sharding zero3 or hsdp, which gather weights layer by layer")
	}
	if sh != analytic.HSDP {
		if par.ShardGroup != 0 {
			es.Add("parallelism.shard_group", "goes with sharding hsdp")
		}
		return
	}
	if par.ShardGroup == 0 {
		if p.topo == nil {
			es.Add("parallelism.shard_group", "give the replicas in a shard group (or cluster.devices_per_node, whose node holds one)")
			return
		}
		// The replicas a node holds, at most the replicas (a divisor of both).
		fit := max(1, p.topo.DevicesPerNode/(par.Tensor*par.Context))
		g := 1
		for k := 1; k <= min(fit, par.Data); k++ {
			if par.Data%k == 0 && fit%k == 0 {
				g = k
			}
		}
		par.ShardGroup = g
	}
	switch g := par.ShardGroup; {
	case g < 1 || g > par.Data:
		es.Add("parallelism.shard_group", "must be between 1 and parallelism.data (%d), got %d", par.Data, g)
	case par.Data%g != 0:
		es.Add("parallelism.shard_group", "must divide parallelism.data (%d): the replicas form whole shard groups, got %d", par.Data, g)
	case g == par.Data:
		es.Add("parallelism.shard_group", "holds all %d replicas, which leaves nothing to replicate: use sharding zero3", par.Data)
	case g*par.Context < 2:
		es.Add("parallelism.shard_group", "one device per shard group shards nothing: give at least 2 replicas (or context parallelism)")
	}
}

// experts checks and defaults the expert parallelism of a mixture of experts: expert 1
// and expert_tensor the tensor degree by default; for other models both stay unset (1
// is read as unset), and any other value is refused. Whether EP divides the experts and
// EP x expert_tensor the data x tensor devices is core/analytic's check (archPaths).
func (p *prepared) experts(es *model.Errors) {
	r := p.req
	par := &r.Parallelism
	moe := p.arch != nil && p.arch.MoE()
	for _, f := range []struct {
		name string
		v    int
	}{{"expert", par.Expert}, {"expert_tensor", par.ExpertTensor}} {
		if f.v < 0 || f.v > cluster.MaxStages {
			es.Add("parallelism."+f.name, "must be between 1 and %d, got %d", cluster.MaxStages, f.v)
			return
		}
	}
	if !moe {
		if par.Expert > 1 || (par.ExpertTensor > 1 && par.ExpertTensor != par.Tensor) || par.ExpertOverlap {
			field := "parallelism.expert"
			switch {
			case par.ExpertOverlap && par.Expert <= 1:
				field = "parallelism.expert_overlap"
			case par.Expert <= 1:
				field = "parallelism.expert_tensor"
			}
			es.Add(field, "splits the experts of a mixture-of-experts architecture; the model has none")
		}
		if par.ExpertDispatcher != "" {
			es.Add("parallelism.expert_dispatcher", "moves the tokens of a mixture of experts; the model has none")
		}
		par.Expert, par.ExpertTensor, par.ExpertOverlap, par.ExpertDispatcher = 0, 0, false, ""
		if a := r.Model.Architecture; a != nil && (a.ExpertImbalance != 0 || a.CapacityFactor != 0) {
			es.Add("model.architecture.expert_imbalance", "applies to a mixture of experts; the model has none")
		}
		return
	}
	if par.Expert == 0 {
		par.Expert = 1
	}
	if par.ExpertTensor == 0 {
		par.ExpertTensor = par.Tensor
	}
	if par.ExpertDispatcher == "" {
		par.ExpertDispatcher = string(analytic.DispatchAllToAll)
	}
	if par.ExpertOverlap && par.Expert < 2 {
		es.Add("parallelism.expert_overlap", "hides the expert-parallel all-to-alls: it needs parallelism.expert >= 2")
	}
	if a := r.Model.Architecture; a.ExpertImbalance == 1 {
		a.ExpertImbalance = 0 // 1 is the default, balanced routing
	}
}

// nodes reads a cluster of nodes: devices_per_node with the links inside and between
// nodes (defaults: the device preset's usual link and network).
func (p *prepared) nodes(es *model.Errors, d cluster.DevicePreset) {
	cs := &p.req.Cluster
	if cs.DevicesPerNode == 0 {
		for _, f := range []struct{ name, v string }{{"link_intra", cs.LinkIntra}, {"link_inter", cs.LinkInter}} {
			if f.v != "" {
				es.Add("cluster."+f.name, "goes with cluster.devices_per_node (a cluster of nodes); between all devices give cluster.link")
			}
		}
		return
	}
	if cs.DevicesPerNode < 1 || cs.DevicesPerNode > cluster.MaxStages {
		es.Add("cluster.devices_per_node", "must be between 1 and %d, got %d", cluster.MaxStages, cs.DevicesPerNode)
		return
	}
	if cs.Link != "" && cs.Link != d.Link {
		es.Add("cluster.link", "goes without cluster.devices_per_node: a cluster of nodes has link_intra and link_inter")
		return
	}
	cs.Link = ""
	if cs.LinkIntra == "" {
		cs.LinkIntra = d.Link
	}
	if n := d.ScaleUpDevices; n > 0 && cs.DevicesPerNode > n && strings.EqualFold(cs.LinkIntra, d.Link) {
		// A node is what the intra-node link joins: no more devices than the preset's
		// scale-up domain (8 on an HGX board, 72 in an NVL72 rack) share its fabric.
		es.Add("cluster.devices_per_node", "must be at most %d, the scale-up domain of %s (devices on one %s fabric), got %d: nodes beyond it talk over link_inter",
			n, d.Name, d.Link, cs.DevicesPerNode)
		return
	}
	if cs.LinkInter == "" {
		cs.LinkInter = d.Network
	}
	if cs.LinkInter == "" {
		es.Add("cluster.link_inter", "names the link between nodes: %s has no usual network preset (pipeplan devices lists the links)", d.Name)
		return
	}
	topo := &cluster.Topology{DevicesPerNode: cs.DevicesPerNode}
	for _, f := range []struct {
		name string
		v    *string
		l    *cluster.Link
	}{{"link_intra", &cs.LinkIntra, &topo.Intra}, {"link_inter", &cs.LinkInter, &topo.Inter}} {
		l, err := cluster.LookupLink(*f.v)
		if err != nil {
			es.Add("cluster."+f.name, "%v", err)
			return
		}
		*f.v, *f.l = l.Name, l.Link
	}
	p.topo = topo
}

// weightsOnly reports whether the model's param_bytes are weights only, to which training
// adds gradients and optimizer state: PipeDream profiles.
func (p *prepared) weightsOnly() bool { return p.format == load.PipeDream }

func (p *prepared) training(es *model.Errors) {
	t := &p.req.Training
	if t.FP8Recipe != "" && p.arch == nil {
		es.Add("training.fp8_recipe", "applies to architectures (a measured profile ran in the precision it was measured in)")
	}
	if t.FP8ParamGather && p.arch == nil {
		es.Add("training.fp8_param_gather", "applies to architectures (a measured profile states its weights' memory)")
	}
	for _, o := range []struct{ field, v string }{
		{"parallelism.overlap_grad_reduce", p.req.Parallelism.OverlapGradReduce},
		{"parallelism.overlap_param_gather", p.req.Parallelism.OverlapParamGather},
	} {
		switch {
		case o.v != "" && o.v != OverlapOn && o.v != OverlapOff:
			es.Add(o.field, "must be %q or %q (or left out: the framework's default), got %q", OverlapOn, OverlapOff, o.v)
		case o.v != "" && p.arch == nil:
			es.Add(o.field, "applies to architectures (their framework overlaps the communication or not; a profile's plan hides none)")
		}
	}
	if !p.train() {
		if t.Optimizer != "" {
			es.Add("training.optimizer", "applies to training: inference has no optimizer")
		}
		if t.Precision != "" {
			es.Add("training.precision", "applies to training (master weights and optimizer state): inference has neither")
		}
		if t.Recompute != "" && t.Recompute != "none" {
			es.Add("training.recompute", "applies to training: inference keeps no activations for a backward pass to recompute")
		}
		t.Recompute = "none"
		return // ZeRO with inference is refused by parallelism
	}
	switch {
	case p.arch != nil || p.weightsOnly():
		if t.Optimizer == "" {
			t.Optimizer = string(analytic.AdamW)
		}
		switch analytic.Optimizer(t.Optimizer) {
		case analytic.AdamW, analytic.Adam, analytic.SGD:
		default:
			es.Add("training.optimizer", "must be adamw, adam or sgd, got %q (for inference set training.mode)", t.Optimizer)
		}
	case t.Optimizer != "":
		es.Add("training.optimizer", "applies to architectures and to profiles that give weights only (PipeDream): this profile states its optimizer state (layers[].optimizer_bytes)")
	}
	switch {
	case p.arch != nil:
		switch analytic.Precision(t.Precision) {
		case "", analytic.Mixed, analytic.MixedFP32Grads, analytic.AMP, analytic.Pure:
		default:
			es.Add("training.precision", "must be mixed, mixed-fp32-grads, amp or pure, got %q", t.Precision)
		}
	case p.weightsOnly():
		if t.Precision == "" {
			t.Precision = string(analytic.Pure)
		}
		if t.Precision != string(analytic.Pure) {
			es.Add("training.precision", "must be pure for a PipeDream profile: its weights were measured in fp32, with no 16-bit copy to keep master weights of")
		}
	case t.Precision != "":
		es.Add("training.precision", "applies to architectures and to profiles that give weights only (PipeDream): this profile states its optimizer state")
	}
	if t.Recompute == "" {
		t.Recompute = string(analytic.NoRecompute)
	}
	switch analytic.Recompute(t.Recompute) {
	case analytic.NoRecompute, analytic.Full:
	case analytic.Selective:
		if p.arch == nil {
			es.Add("training.recompute", "selective recomputation needs an architecture (a measured profile does not say which activations are cheap to rebuild): use none or full")
		}
	default:
		es.Add("training.recompute", "must be none, selective or full, got %q", t.Recompute)
	}
	p.recomputeStages = p.arch == nil && t.Recompute == string(analytic.Full)
}

// defaultMicrobatches is DefaultMicrobatchesPerStage per pipeline device, or fewer on
// pipelines so long that the simulator would refuse that many: then the most it takes
// (for interleaved schedules, which run microbatches in groups of the devices, the most
// multiple of the devices, at least the devices).
func defaultMicrobatches(devices, chunks int) int {
	m := DefaultMicrobatchesPerStage * devices
	if most := schedule.MaxMicrobatches(devices * chunks); m > most {
		m = max(1, most)
		if chunks > 1 {
			m = max(1, most/devices) * devices
		}
	}
	return m
}

func (p *prepared) schedule(es *model.Errors) {
	r := p.req
	s := &r.Schedule
	if s.Name == "" {
		s.Name = DefaultSchedule
		if !p.train() {
			s.Name = string(schedule.Inference)
		}
	}
	c, err := schedule.Parse(s.Name)
	if err != nil {
		es.Add("schedule.name", "%v", err)
		return
	}
	s.Name = c.String()
	switch {
	case p.train() && c.Kind == schedule.Inference:
		es.Add("schedule.name", "inference runs forward passes only, but training.mode is training")
	case !p.train() && c.Kind != schedule.Inference:
		es.Add("schedule.name", "%s is a training schedule, but training.mode is inference: use the inference schedule", c)
	}
	devices := r.Parallelism.Pipeline
	if s.Microbatches == 0 {
		s.Microbatches = defaultMicrobatches(devices, max(1, c.Chunks))
	}
	c.Microbatches = s.Microbatches
	c.Recompute = p.recomputeStages
	if err := c.Validate(devices * max(1, c.Chunks)); err != nil {
		// The schedule's "stages" are the request's pipeline devices (times the chunks).
		fes, _ := model.AsFieldErrors(err)
		for _, fe := range fes {
			switch fe.Path {
			case "stages":
				es.Add("parallelism.pipeline", "%s", fe.Reason)
			default:
				addPrefixed(es, "schedule", fe)
			}
		}
		if len(fes) == 0 {
			es.Add("schedule", "%v", err)
		}
	}
	if n := TimelineEvents(r); r.Events && n > MaxEvents {
		es.Add("events", "the timeline of %d microbatches on %d pipeline stages holds at least %d events, more than the %d a result may keep: leave events out, or ask for fewer microbatches", s.Microbatches, devices*max(1, c.Chunks), n, MaxEvents)
	}
	switch {
	case c.Kind == schedule.ZBH1 && s.WeightGradFraction == 0:
		s.WeightGradFraction = DefaultWeightGradFraction
	case c.Kind == schedule.ZBH1:
		if f := s.WeightGradFraction; !(f >= 0 && f <= 1) {
			es.Add("schedule.weight_grad_fraction", "must be in [0, 1], got %v", f)
		}
	case s.WeightGradFraction != 0:
		es.Add("schedule.weight_grad_fraction", "applies to zb-h1, which runs weight gradients apart; %s does not", c)
	}
	// Samples per microbatch: an architecture's batch, or what the profile was measured with.
	switch {
	case p.arch != nil:
		if s.MicrobatchSize == 0 {
			s.MicrobatchSize = 1
		}
	case p.model.MicrobatchSize > 0:
		if s.MicrobatchSize != 0 && s.MicrobatchSize != p.model.MicrobatchSize {
			es.Add("schedule.microbatch_size", "must be %d, the samples per microbatch the profile was measured with (its microbatch_size), got %d", p.model.MicrobatchSize, s.MicrobatchSize)
		}
		s.MicrobatchSize = p.model.MicrobatchSize
	default:
		// The note depends on the profile alone, not on whether the request spelled the
		// size out, so that a request and its normalized form give the same result.
		if s.MicrobatchSize == 0 {
			s.MicrobatchSize = 1
		}
		p.note(Diagnostic{Code: CodeMicrobatchSizeUnknown, Severity: Note, Field: "schedule.microbatch_size",
			Message: fmt.Sprintf("the profile does not say how many samples a microbatch holds (its microbatch_size): throughput counts %d per microbatch (schedule.microbatch_size)", s.MicrobatchSize)})
	}
	if s.MicrobatchSize < 1 || s.MicrobatchSize > 1<<20 {
		es.Add("schedule.microbatch_size", "must be between 1 and %d, got %d", 1<<20, s.MicrobatchSize)
	}
	// A step's tokens must fit the result's integer. Samples per step are at most 2^56
	// (microbatch size 2^20, microbatches 2^20, replicas 2^16); an architecture's tokens
	// per microbatch are at most 2^26 (core/analytic), a profile's are its own.
	if t := int64(p.modelTokensPerSample()); t > 0 && s.MicrobatchSize >= 1 && s.Microbatches >= 1 {
		samples := int64(s.MicrobatchSize) * int64(s.Microbatches) * int64(r.Parallelism.Data)
		if t > maxTokensPerStep/samples {
			es.Add(p.modelField("tokens_per_sample"), "%d tokens per sample times the %d samples of a step is more than the %d tokens a step may count", t, samples, int64(maxTokensPerStep))
		}
	}
	p.toolMemoryNote(c)
	p.sched = c
}

// MaxEvents bounds the schedule timeline a result keeps (events: true) to 1,048,576
// events, about 160 MB of JSON: more than a page draws or a person reads, and a
// request of a few hundred bytes may otherwise ask the simulator for its whole 2^22
// operations as JSON (0.9 GB, 20 s).
const MaxEvents = 1 << 20

// MinEventBytes is the fewest bytes one event of the timeline takes in a result's JSON
// ({"stage":0,"chunk":0,"kind":"F","microbatch":0,"step":-1,"start_seconds":0,...}).
const MinEventBytes = 80

// TimelineEvents is the fewest events the schedule timeline of a normalized request
// holds: a forward per microbatch and stage (pipeline devices times chunks), and a
// backward too in training. It prices a request's work before it runs: with events, its
// result's JSON holds at least MinEventBytes times as many bytes.
func TimelineEvents(n *Request) int64 {
	c, err := schedule.Parse(n.Schedule.Name)
	if err != nil || n.Parallelism.Pipeline < 1 || n.Schedule.Microbatches < 1 {
		return 0
	}
	per := int64(2)
	if c.Kind == schedule.Inference || c.Kind == schedule.Overlap {
		per = 1
	}
	return int64(n.Parallelism.Pipeline) * int64(max(1, c.Chunks)) * int64(n.Schedule.Microbatches) * per
}

// MinResultBytes is the fewest bytes the JSON of a normalized request's result takes, as
// far as they can be known before it runs (its timeline's, with events): a server that
// keeps results refuses a request whose result cannot fit, before planning it.
func MinResultBytes(n *Request) int64 {
	if !n.Events {
		return 0
	}
	return TimelineEvents(n) * MinEventBytes
}

// maxTokensPerStep bounds the tokens of one step (samples per step times tokens per
// sample), so that the result's counts are exact integers.
const maxTokensPerStep = 1 << 62

// modelTokensPerSample is a profile's tokens_per_sample (an architecture's model is built
// later, with at most 2^26 tokens per microbatch).
func (p *prepared) modelTokensPerSample() int {
	if p.model == nil {
		return 0
	}
	return p.model.TokensPerSample
}

func (p *prepared) objective(es *model.Errors) {
	r := p.req
	if r.Objective == "" {
		r.Objective = partition.MaxCompute.String()
	}
	if _, err := partition.ParseObjective(r.Objective); err != nil {
		es.Add("objective", "%v", err)
	}
	switch r.Partition {
	case "", spec.PartitionLayers:
		r.Partition = ""
	case spec.PartitionGraph:
		if r.Boundaries != nil {
			es.Add("partition", "%q finds the split; boundaries give one: leave one out", r.Partition)
		}
	default:
		es.Add("partition", "must be %q or %q, got %q", spec.PartitionLayers, spec.PartitionGraph, r.Partition)
	}
	if r.MemoryProportion == 0 {
		r.MemoryProportion = 1
	}
	if f := r.MemoryProportion; !(f > 0 && f <= 1) {
		es.Add("memory_proportion", "must be in (0, 1], got %v", f)
	}
}

// buildModel costs an architecture on the cluster's device, or adjusts a profile to the
// training settings and the devices.
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
		DType: analytic.DType(a.DType), FP8Recipe: analytic.FP8Recipe(r.Training.FP8Recipe), FP8ParamGather: r.Training.FP8ParamGather, Precision: analytic.Precision(r.Training.Precision),
		Optimizer: analytic.Optimizer(r.Training.Optimizer), Attention: analytic.Attention(a.Attention),
		Recompute: analytic.Recompute(r.Training.Recompute), Split: analytic.Split(a.Split), Tie: analytic.Tie(a.Tie),
		DataParallel: r.Parallelism.Data, Sharding: analytic.Sharding(r.Parallelism.Sharding),
		ShardGroup: p.shardGroup(), NoPrefetch: r.Parallelism.Prefetch == PrefetchNone,
		TensorParallel: r.Parallelism.Tensor, SequenceParallel: r.Parallelism.SequenceParallel,
		Context: r.Parallelism.Context, ContextMethod: analytic.ContextMethod(r.Parallelism.ContextMethod),
		ExpertParallel: r.Parallelism.Expert, ExpertTensorParallel: r.Parallelism.ExpertTensor,
		ExpertImbalance: a.ExpertImbalance, CapacityFactor: a.CapacityFactor, ExpertOverlap: r.Parallelism.ExpertOverlap,
		Dispatcher: analytic.Dispatcher(r.Parallelism.ExpertDispatcher),
	}
	if !p.train() {
		o.Optimizer, o.Precision = analytic.None, ""
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
		// The context group spans nodes: its exchanges cross the network.
		t.ContextLink = p.topo.Inter
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
	est, m, err := p.cache.estimate(k, p.arch, t, o)
	if err != nil {
		addPrefixed(es, "", archPaths(err))
		return
	}
	o = est.Opts
	a.DType, a.Attention, a.Split, a.Tie = string(o.DType), string(o.Attention), string(o.Split), string(o.Tie)
	r.Training.FP8Recipe = string(o.FP8Recipe)
	if p.train() {
		r.Training.Precision = string(o.Precision)
	}
	p.est, p.target = est, t
	p.model = m
	p.fullState()
	p.model.MicrobatchSize = o.Batch
	p.model.TokensPerSample = o.Seq
	if p.arch.Name != "" {
		p.model.Name = p.arch.Name
	}
}

// shardGroup is the number of devices training state is sharded over: the replicas
// times the context-parallel degree (the devices that hold the same layers), or for hsdp
// its shard group's.
func (p *prepared) shardGroup() int {
	par := p.req.Parallelism
	if par.Sharding == string(analytic.HSDP) {
		return par.ShardGroup * par.Context
	}
	return par.Data * par.Context
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
		return
	}
	t.ExpertLink, t.ExpertInterLink = p.topo.Intra, p.topo.Inter
	t.ExpertPerNode = min(par.Expert, max(1, p.topo.DevicesPerNode/max(1, par.ExpertTensor)))
}

// archPaths renames the analytic options' field paths to the request's.
func archPaths(err error) error {
	es, ok := model.AsFieldErrors(err)
	if !ok {
		return err
	}
	paths := map[string]string{
		"batch": "schedule.microbatch_size", "seq": "model.architecture.seq", "dtype": "model.architecture.dtype", "fp8_recipe": "training.fp8_recipe", "fp8_param_gather": "training.fp8_param_gather",
		"precision": "training.precision", "optimizer": "training.optimizer", "attention": "model.architecture.attention",
		"recompute": "training.recompute", "split": "model.architecture.split", "tie": "model.architecture.tie",
		"data_parallel": "parallelism.data", "tensor_parallel": "parallelism.tensor",
		"context_parallel": "parallelism.context", "sharding": "parallelism.sharding", "shard_group": "parallelism.shard_group",
		"expert_parallel": "parallelism.expert", "expert_tensor_parallel": "parallelism.expert_tensor",
		"sequence_parallel": "parallelism.sequence_parallel", "expert_overlap": "parallelism.expert_overlap",
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
		p.note(Diagnostic{Code: CodeStateAdded, Severity: Note,
			Message: fmt.Sprintf("the PipeDream profile gives weights only (fp32): training adds their gradients and %s state (%g x the weights)", r.Training.Optimizer, states)})
	case removed:
		p.note(Diagnostic{Code: CodeStateRemoved, Severity: Note,
			Message: "inference: the profile's gradients (grad_bytes, or half of param_bytes) and optimizer state are not held"})
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
		p.note(Diagnostic{Code: CodeTimesNotScaled, Severity: Note, Field: p.modelField("measured_on"),
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
		p.note(Diagnostic{Code: CodeTimesScaled, Severity: Note, Field: p.modelField("measured_on"),
			Message: fmt.Sprintf("the profile was measured on %s, the cluster's device: times as measured", mo.Name)})
		return
	}
	for i := range m.Layers {
		m.Layers[i].ForwardSeconds *= f
		m.Layers[i].BackwardSeconds *= f
	}
	p.note(Diagnostic{Code: CodeTimesScaled, Severity: Note, Field: p.modelField("measured_on"),
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

// links checks that every transfer between stages has a link with a bandwidth, unless
// transfers are free, and finds the links of the gradient all-reduces.
func (p *prepared) links(es *model.Errors) {
	r := p.req
	c := p.cluster
	if r.Cluster.FreeTransfers {
		c.Links, c.Host = nil, nil
		for i := range c.Devices {
			c.Devices[i].Recv, c.Devices[i].Send = nil, nil
		}
		return
	}
	field := func(i int) string {
		if r.Cluster.Device != "" {
			return "cluster.link"
		}
		if f := c.SendLinkField(i); f != "" {
			return "cluster.document." + f
		}
		return "cluster.document.links"
	}
	if p.topo != nil {
		p.place(es)
		if len(*es) > 0 {
			return
		}
	}
	var slowest *cluster.Link
	for i := 0; i+1 < len(c.Devices); i++ {
		l := c.SendLink(i)
		switch {
		case l == nil:
			es.Add(field(i), "no link joins devices %d and %d, which pass activations between stages: give one, or set cluster.free_transfers", i, i+1)
			return
		case !hasBandwidth(l):
			es.Add(field(i), "has no bandwidth (0 bytes/s) between devices %d and %d: give bytes_per_second or gbps, or set cluster.free_transfers", i, i+1)
			return
		}
		if slowest == nil || bandwidth(l, c.Devices[i].ClockHz) < bandwidth(slowest, c.Devices[i].ClockHz) {
			slowest = l
		}
	}
	if len(c.Devices) > 1 {
		p.tiedLink = slowest
	}
	if r.Parallelism.Data < 2 || !p.train() {
		return
	}
	switch {
	case p.placement != nil:
		p.dataLink = &p.placement.DataLink
	case r.Cluster.Device != "":
		p.dataLink = &c.Links[0]
	case r.Cluster.DataLink != "":
		l, _ := cluster.LookupLink(r.Cluster.DataLink)
		p.dataLink = &l.Link
	case slowest != nil:
		p.dataLink = slowest
		p.note(Diagnostic{Code: CodeDataLinkAssumed, Severity: Note, Field: "cluster.data_link",
			Message: "the data-parallel all-reduce is costed on the slowest link between the pipeline's stages (set cluster.data_link to name another)"})
	default:
		es.Add("cluster.data_link", "the pipeline has one device, so no link of the cluster document joins the data-parallel replicas: name a link preset")
	}
}

// place lays the run on the nodes (cluster.Topology.Choose) with the traffic of one step:
// each device's gradients, all-reduced with its replicas, and what crosses a stage
// boundary (the largest layer output, sent per microbatch); the pipeline's links become
// the ones its stage boundaries cross.
func (p *prepared) place(es *model.Errors) {
	r := p.req
	par := r.Parallelism
	var tr cluster.Traffic
	var out int64
	for i := range p.model.Layers {
		l := &p.model.Layers[i]
		if p.train() {
			tr.GradientBytes += float64(gradBytes(l))
		}
		send := int64(0)
		if l.SendBytes != nil {
			send = *l.SendBytes
		} else {
			for _, t := range l.Outputs {
				send += t.Bytes
			}
		}
		out = max(out, send)
	}
	tr.GradientBytes /= float64(par.Pipeline)
	tr.StageBytes = float64(out) * float64(r.Schedule.Microbatches)
	if p.train() {
		tr.StageBytes *= 2 // activations forward, their gradients back
	}
	pl, err := p.topo.Choose(par.Pipeline, par.Data, par.Tensor*par.Context, tr)
	if err != nil {
		addPrefixed(es, "parallelism", err)
		return
	}
	if par.Context > 1 {
		pl.Tensor, pl.Context = par.Tensor, par.Context // placed as one group of t x c
	}
	p.placement = pl
	c := pl.StageCluster(p.cluster.Devices[0])
	p.cluster.Links = c.Links
}

// shardLinks are the links and group sizes of the data-parallel reductions: the
// devices that hold the same layers (replicas times the context group) reduce their
// gradients over link (the slowest a ring crosses: the data link, or with one replica
// the context group's link inside a node). Under hsdp the shard group reduces over
// link (inside a node when the group fits one, cluster.devices_per_node) and the
// replicas of each shard across groups over across. ok is false when there is no
// reduction (inference, or one device).
func (p *prepared) shardLinks() (link *cluster.Link, members int, across *cluster.Link, groups int, ok bool) {
	par := p.req.Parallelism
	n := par.Data * par.Context
	if !p.train() || n < 2 || p.req.Cluster.FreeTransfers || (par.Data > 1 && p.dataLink == nil) {
		return nil, 0, nil, 0, false
	}
	link = p.dataLink
	if link == nil {
		link = &p.tensorLink // one replica: the context group, inside a node
	}
	if par.Sharding != string(analytic.HSDP) {
		return link, n, nil, 0, true
	}
	g := par.ShardGroup * par.Context
	across = link
	if p.topo != nil && p.placement != nil && p.placement.Order == cluster.TDP && g*par.Tensor <= p.topo.DevicesPerNode {
		intra := p.topo.Intra // TDP numbers replicas next to each other: a group fits a node
		link = &intra
	}
	return link, g, across, n / g, true
}

// gatherLayers adds to each layer's times the communication of ZeRO-3 (and HSDP) that
// its compute does not hide: per microbatch, its weights all-gathered over the shard
// group before its forward and again before its backward, and its gradients
// reduce-scattered after its backward (Rajbhandari et al. 2020, section 7: 1.5 x the
// all-reduce's volume). With prefetch (PyTorch FSDP2's default: the next layer's
// all-gather is issued while this one computes, docs of torch.distributed.fsdp.fully_shard)
// an all-gather hides behind a layer's compute, counted as this layer's (a transformer's
// blocks are alike); the reduce-scatter always runs beside the next layer's backward.
// Exposed: forward max(0, AG - F) (AG without prefetch), backward max(0, AG + RS - B)
// (AG + max(0, RS - B) without prefetch).
func (p *prepared) gatherLayers(es *model.Errors) {
	if analytic.Sharding(p.req.Parallelism.Sharding).Level() < 3 {
		return
	}
	link, n, _, _, ok := p.shardLinks()
	if !ok || p.req.Cluster.FreeTransfers {
		return
	}
	if p.model.Unit() != model.Seconds {
		es.Add("parallelism.sharding", "%s adds gathers to each layer's time: it needs a profile timed in seconds, not cycles", p.req.Parallelism.Sharding)
		return
	}
	prefetch := p.req.Parallelism.Prefetch != PrefetchNone
	p.model.Layers = append([]model.Layer(nil), p.model.Layers...) // a cached model's layers are shared
	sl := secondsLink(link, p.cluster.Devices[0].ClockHz)
	for i := range p.model.Layers {
		l := &p.model.Layers[i]
		ag := cluster.RingAllGatherSeconds(sl, float64(p.fullWeights[i]), n)
		rs := cluster.RingReduceScatterSeconds(sl, float64(p.fullGrads[i]), n)
		if prefetch {
			l.ForwardSeconds += max(0, ag-l.ForwardSeconds)
			l.BackwardSeconds += max(0, ag+rs-l.BackwardSeconds)
		} else {
			l.ForwardSeconds += ag
			l.BackwardSeconds += ag + max(0, rs-l.BackwardSeconds)
		}
	}
}

func hasBandwidth(l *cluster.Link) bool {
	if l.CyclesStyle() {
		return l.GBps > 0
	}
	return l.BytesPerSecond > 0
}

// bandwidth is a link's bytes per second.
func bandwidth(l *cluster.Link, clockHz float64) float64 {
	if l.CyclesStyle() {
		return l.GBps * cluster.GiB
	}
	return l.BytesPerSecond
}

func (p *prepared) note(d Diagnostic) { p.notes = append(p.notes, d) }

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
