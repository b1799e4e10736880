// Package analytic is pipeplan's analytic (symbolic) profiler: from an architecture
// (package arch), a device and the run's options it estimates, without running anything,
// what every layer of a transformer costs for one microbatch: parameters, FLOPs, forward
// and backward time, memory kept for the backward pass, working memory and the tensor
// passed on; and it turns the estimate into a model.Model the partitioner splits.
//
// Method. Time is a roofline per operation (each matrix product at the device's dense
// peak times an efficiency, or its bytes at the memory bandwidth times an efficiency,
// whichever is longer; each memory-bound operation at the bandwidth times an efficiency)
// plus a launch cost per kernel. Activation memory follows Korthikanti et al. 2022
// (s*b*h*(34 + 5*a*s/h) bytes per GPT block at 16 bits with dropout), generalised to
// grouped-query attention, SwiGLU, mixtures of experts, flash attention and
// recomputation. Parameters, gradients and optimizer state follow the ZeRO paper
// (Rajbhandari et al. 2020): 16 bytes per parameter in mixed precision with Adam.
//
// Tensor parallelism follows Megatron-LM (Shoeybi et al. 2019; Narayanan et al. 2021):
// attention heads, MLP width and vocabulary split over t devices, the activations of
// Korthikanti et al. 2022, Table 2, with and without sequence parallelism
// (s*b*h*(10 + 24/t + 5*a*s/(h*t)) and s*b*h/t*(34 + 5*a*s/h) per GPT block), and a
// ring all-reduce of the b*s*h activation (2(t-1)/t of its bytes each way, plus 2(t-1)
// link latencies) twice in each block's forward pass and twice in its backward pass.
//
// Everything here is an estimate of a typical implementation (Megatron-style fused
// softmax, HuggingFace-style fp32 loss); see the doc comments of each part for what is
// counted.
package analytic

import (
	"fmt"
	"math"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

// Layer is the estimate for one pipeline layer and one microbatch.
type Layer struct {
	Name string `json:"name"`
	// Kind is embedding, block, attention, mlp, final_norm or lm_head.
	Kind string `json:"kind"`
	// Params the layer holds: with tied embeddings copied, the matrix counts at both
	// ends; held in one stage, at the embedding only.
	Params int64 `json:"params"`
	// ParamBytes are its weights; GradBytes their gradients (training); OptimizerBytes
	// its optimizer state with fp32 master weights, sharded under ZeRO-1.
	ParamBytes     int64 `json:"param_bytes"`
	GradBytes      int64 `json:"grad_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// FwdFLOPs and BwdFLOPs are the FLOPs of its matrix products (the backward pass
	// includes recomputation).
	FwdFLOPs float64 `json:"fwd_flops"`
	BwdFLOPs float64 `json:"bwd_flops"`
	// FwdSeconds and BwdSeconds: time of one microbatch (BwdSeconds includes recomputation).
	FwdSeconds float64 `json:"fwd_seconds"`
	BwdSeconds float64 `json:"bwd_seconds"`
	// SavedActivationBytes is held from this layer's forward pass to its backward pass.
	SavedActivationBytes int64 `json:"saved_activation_bytes"`
	// OutputBytes is the tensor passed to the next layer (the loss, 4 bytes, after the head
	// in training; the logits in inference).
	OutputBytes int64 `json:"output_bytes"`
	// TemporaryBytes is its peak working memory while it runs (forward or backward): its
	// own saved activations, its output or gradients, and transients.
	TemporaryBytes int64 `json:"temporary_bytes"`
	// TiedParams is the part of Params that is the tied embedding matrix.
	TiedParams int64 `json:"tied_params,omitempty"`
	// TensorAllReduceSeconds is the part of FwdSeconds + BwdSeconds spent in
	// tensor-parallel all-reduces (0 for t = 1).
	TensorAllReduceSeconds float64 `json:"tensor_allreduce_seconds,omitempty"`

	usesTied int64 // the tied matrix this layer uses, held here or in its stage
}

// Total sums the layers for one device holding the whole model, one microbatch, one
// training step (a tied matrix counted once).
type Total struct {
	// Params is the number of distinct parameters of the model; DeviceParams those one
	// device holds (Params / t, about, under t-way tensor parallelism).
	Params       int64 `json:"params"`
	DeviceParams int64 `json:"device_params"`
	// WeightsBytes, GradsBytes and OptimizerBytes: parameters, gradients, optimizer state
	// with master weights (per device under ZeRO-1).
	WeightsBytes   int64 `json:"weights_bytes"`
	GradsBytes     int64 `json:"grads_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// ActivationBytes is what one microbatch keeps for the backward pass, all layers.
	ActivationBytes int64 `json:"activation_bytes"`
	// PeakBytes is the memory high-water mark of a training step: weights, gradients and
	// optimizer state, plus the largest over layers of its working memory and the
	// activations kept by the layers before it.
	PeakBytes int64   `json:"peak_bytes"`
	FwdFLOPs  float64 `json:"fwd_flops"`
	BwdFLOPs  float64 `json:"bwd_flops"`
	// FwdSeconds and BwdSeconds over all layers; OptimizerSeconds is the optimizer update
	// (memory-bound); StepSeconds their sum.
	FwdSeconds       float64 `json:"fwd_seconds"`
	BwdSeconds       float64 `json:"bwd_seconds"`
	OptimizerSeconds float64 `json:"optimizer_seconds"`
	StepSeconds      float64 `json:"step_seconds"`
	// TokensPerSecond is b*s over StepSeconds.
	TokensPerSecond float64 `json:"tokens_per_second"`
	// TiedAllReduceBytes and TiedAllReduceSeconds: with tied embeddings copied to both
	// ends, the gradient all-reduce between the first and last stage, once per step
	// (not in the layers' times).
	TiedAllReduceBytes   int64   `json:"tied_allreduce_bytes,omitempty"`
	TiedAllReduceSeconds float64 `json:"tied_allreduce_seconds,omitempty"`
}

// Result is an analytic estimate of a model on a device.
type Result struct {
	// Name of the model, and of the device.
	Name   string  `json:"model"`
	Device string  `json:"device"`
	Arch   string  `json:"architecture"`
	Opts   Options `json:"options"`
	Layers []Layer `json:"layers"`
	Total  Total   `json:"total"`

	inputBytes int64
	perParam   bytesPerParam
	optShard   float64
}

// TiedGroup is the model.Layer.TieGroup and the model.Layer.Shared key of a tied embedding.
const TiedGroup = "tied_embedding"

// Estimate costs every layer of the architecture on the target for the options.
func Estimate(a *arch.Arch, t Target, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	if err := checkTensorParallel(a, o.TensorParallel); err != nil {
		return nil, err
	}
	if a.LearnedPositions() && o.Seq > a.MaxPositions {
		return nil, &model.FieldError{Path: "seq", Reason: fmt.Sprintf(
			"must be at most %d, the learned position embeddings of %s, got %d", a.MaxPositions, a.ModelType, o.Seq)}
	}
	sh := newShape(a, o)
	c := &calc{sh: sh, rf: newRoofline(t, o.DType), o: o,
		allReduce: cluster.RingAllReduceSeconds(t.tensorLink(), sh.e*sh.t*sh.h, o.TensorParallel)}
	r := &Result{Name: a.Name, Device: t.Device.Name, Arch: a.Description(), Opts: o,
		perParam: o.perParam(), optShard: o.optimizerShard()}

	matrix := vocabShard(a, o) * int64(a.HiddenSize) // the token matrix on one device
	tied := int64(0)
	if a.TiedEmbeddings {
		tied = matrix
	}
	emb := sh.embedding()
	if tied > 0 {
		emb.tied = tied
	} else {
		emb.params += matrix
	}
	r.inputBytes = int64(emb.input)
	r.Layers = append(r.Layers, c.layer("embedding", "embedding", emb))

	attn, mlp := sh.attention(), sh.mlp()
	var blocks []Layer
	if o.Split == Blocks {
		blocks = []Layer{c.layer("block", "block", attn, mlp)}
	} else {
		blocks = []Layer{c.layer("attention", "attention", attn), c.layer("mlp", "mlp", mlp)}
	}
	for i := range a.NumLayers {
		for _, l := range blocks {
			l.Name = fmt.Sprintf("block.%d", i)
			if o.Split == Sublayers {
				l.Name += "." + l.Kind
			}
			r.Layers = append(r.Layers, l)
		}
	}
	if a.FinalNormParams() > 0 {
		r.Layers = append(r.Layers, c.layer("final_norm", "final_norm", sh.finalNorm()))
	}
	head := sh.head()
	if tied > 0 && o.Tie == TieCopy {
		head.tied = tied
	}
	name := "lm_head"
	if a.Family == arch.BERT {
		name = "mlm_head"
	}
	r.Layers = append(r.Layers, c.layer(name, "lm_head", head))
	if tied > 0 {
		// Both ends use the matrix: a stage holding both holds it once (Model).
		r.Layers[0].usesTied = tied
		r.Layers[len(r.Layers)-1].usesTied = tied
	}
	r.total(a, t, c)
	return r, nil
}

// calc turns pieces into layers.
type calc struct {
	sh *shape
	rf roofline
	o  Options
	// allReduce is the time of one tensor-parallel all-reduce of an activation.
	allReduce float64
}

func (c *calc) layer(name, kind string, ps ...piece) Layer {
	l := Layer{Name: name, Kind: kind}
	pp := c.o.perParam()
	train := c.sh.train
	for _, p := range ps {
		l.Params += p.params + p.tied
		l.TiedParams += p.tied
		if c.allReduce > 0 {
			ars := p.fwdAllReduces
			if train {
				ars += p.bwdAllReduces
				if c.o.Recompute == Full && p.recomputable {
					ars += p.fwdAllReduces // the rerun forward communicates again
				}
			}
			l.TensorAllReduceSeconds += ars * c.allReduce
			l.FwdSeconds += p.fwdAllReduces * c.allReduce
			if train {
				l.BwdSeconds += (ars - p.fwdAllReduces) * c.allReduce
			}
		}
		for _, o := range p.ops {
			l.FwdFLOPs += o.fwd.flops
			l.FwdSeconds += c.rf.seconds(o.fwd)
			if !train {
				continue
			}
			l.BwdFLOPs += o.bwd.flops
			l.BwdSeconds += c.rf.seconds(o.bwd)
			recompute := (c.o.Recompute == Full && p.recomputable) ||
				(c.o.Recompute == Selective && o.core && c.o.Attention == Eager)
			if recompute {
				l.BwdFLOPs += o.fwd.flops
				l.BwdSeconds += c.rf.seconds(o.fwd)
			}
		}
	}
	l.ParamBytes = ceil(float64(l.Params) * pp.weight)
	l.GradBytes = ceil(float64(l.Params) * pp.grad)
	l.OptimizerBytes = ceil(float64(l.Params) * c.o.optimizerShard())
	last := ps[len(ps)-1]
	l.OutputBytes = int64(last.output)

	if !train {
		var work float64
		for _, p := range ps {
			work = max(work, p.input+p.output+p.inferExtra)
		}
		l.TemporaryBytes = int64(work)
		return l
	}
	gradIn := func(p piece, i int) float64 {
		if kind == "embedding" && i == 0 {
			return 0 // token ids have no gradient
		}
		return p.input
	}
	full := c.o.Recompute == Full && ps[0].recomputable
	var saved, fwdWork, bwdWork float64
	if full {
		// Only the layer's input is kept; the forward pass runs as in inference, and the
		// backward pass rebuilds everything before it differentiates.
		saved = ps[0].input
		var rebuilt float64
		for i, p := range ps {
			fwdWork = max(fwdWork, p.input+p.output+p.inferExtra)
			bwdWork = max(bwdWork, saved+rebuilt+p.bwdSaved+p.bwdExtra+p.output+gradIn(p, i))
			rebuilt += p.bwdSaved
		}
	} else {
		var before float64 // saved by the pieces before
		for i, p := range ps {
			fwdWork = max(fwdWork, before+p.saved+p.fwdExtra+p.output)
			bwdWork = max(bwdWork, before+p.bwdSaved+p.bwdExtra+p.output+gradIn(p, i))
			before += p.saved
		}
		saved = before
	}
	l.SavedActivationBytes = int64(saved)
	l.TemporaryBytes = int64(max(fwdWork, bwdWork))
	return l
}

func ceil(v float64) int64 { return int64(math.Ceil(v)) }

func (r *Result) total(a *arch.Arch, t Target, c *calc) {
	o := r.Opts
	tt := &r.Total
	tt.Params = a.Params()
	for _, l := range r.Layers {
		tt.DeviceParams += l.Params
	}
	if a.TiedEmbeddings && o.Tie == TieCopy {
		tt.DeviceParams -= r.Layers[0].TiedParams // both ends count the matrix
	}
	tt.WeightsBytes = ceil(float64(tt.DeviceParams) * r.perParam.weight)
	tt.GradsBytes = ceil(float64(tt.DeviceParams) * r.perParam.grad)
	tt.OptimizerBytes = ceil(float64(tt.DeviceParams) * r.optShard)
	var before, peak int64
	for _, l := range r.Layers {
		tt.FwdFLOPs += l.FwdFLOPs
		tt.BwdFLOPs += l.BwdFLOPs
		tt.FwdSeconds += l.FwdSeconds
		tt.BwdSeconds += l.BwdSeconds
		peak = max(peak, before+l.TemporaryBytes)
		before += l.SavedActivationBytes
	}
	tt.ActivationBytes = before
	tt.PeakBytes = tt.WeightsBytes + tt.GradsBytes + tt.OptimizerBytes + peak
	if !o.Inference() {
		// The update reads each gradient, the weight (or fp32 master) and the state, and
		// writes the weight, the master and the state: memory-bound, one fused kernel per
		// layer.
		p := r.perParam
		src := p.weight
		if p.master > 0 {
			src = p.master
		}
		perParam := p.grad + src + p.states + p.weight + p.master + p.states
		if o.ZeRO1 {
			perParam /= float64(o.DataParallel)
		}
		tt.OptimizerSeconds = c.rf.seconds(work{0, perParam * float64(tt.DeviceParams), float64(len(r.Layers))})
		if a.TiedEmbeddings && o.Tie == TieCopy {
			tt.TiedAllReduceBytes = ceil(float64(r.Layers[0].TiedParams) * p.grad)
			tt.TiedAllReduceSeconds = linkSeconds(t.Link, float64(tt.TiedAllReduceBytes))
		}
	}
	tt.StepSeconds = tt.FwdSeconds + tt.BwdSeconds + tt.OptimizerSeconds
	if tt.StepSeconds > 0 {
		tt.TokensPerSecond = float64(o.Batch) * float64(o.Seq) / tt.StepSeconds
	}
}

// Model returns the estimate as a model for the partitioner, times in seconds. Each
// layer's ParamBytes holds its weights and (training) their gradients; OptimizerBytes its
// optimizer state and fp32 master weights; ActivationBytes what it keeps for its backward
// pass; TemporaryBytes its working memory; its output feeds the next layer. A tied
// embedding matrix (weights, gradients and state) is the shared item TiedGroup of the
// embedding and the head, so a stage holding both counts it once; with Tie "stage" the
// two also form a tie group, which keeps them (and everything between) in one stage.
func (r *Result) Model() *model.Model {
	m := &model.Model{
		Name:     fmt.Sprintf("%s (%s)", r.Name, r.Opts),
		TimeUnit: model.Seconds,
		Inputs:   []model.Tensor{{ID: "input_ids", Bytes: r.inputBytes}},
	}
	if r.Name == "" {
		m.Name = "model (" + r.Opts.String() + ")"
	}
	perTied := r.perParam.weight + r.perParam.grad + r.optShard
	prev := "input_ids"
	// Tensor parallelism without sequence parallelism leaves every device of a group with
	// the whole activation; Megatron-LM's scatter-gather sends each device's 1/t of it to
	// the next stage, which all-gathers it over the fast intra-node link.
	t := int64(r.Opts.TensorParallel)
	scatter := t > 1 && !r.Opts.SequenceParallel
	var prevSend int64
	for i, l := range r.Layers {
		own := float64(l.Params - l.TiedParams)
		ml := model.Layer{
			Name:            l.Name,
			Kind:            l.Kind,
			ForwardSeconds:  l.FwdSeconds,
			BackwardSeconds: l.BwdSeconds,
			ParamBytes:      ceil(own * (r.perParam.weight + r.perParam.grad)),
			GradBytes:       ceil(own * r.perParam.grad),
			OptimizerBytes:  ceil(own * r.optShard),
			TemporaryBytes:  l.TemporaryBytes,
			ActivationBytes: l.SavedActivationBytes,
			InputIDs:        []string{prev},
			Outputs:         []model.Tensor{{ID: l.Name + ".out", Bytes: l.OutputBytes}},
		}
		if scatter {
			send := (l.OutputBytes + t - 1) / t
			ml.SendBytes = &send
			if i > 0 {
				recv := prevSend
				ml.RecvBytes = &recv
			}
			prevSend = send
		}
		if l.usesTied > 0 {
			ml.Shared = map[string]int64{TiedGroup: ceil(float64(l.usesTied) * perTied)}
			if r.Opts.Tie == TieStage {
				ml.TieGroup = TiedGroup
			}
		}
		prev = l.Name + ".out"
		m.Layers = append(m.Layers, ml)
	}
	return m
}

// checkTensorParallel requires t to divide what it splits: the query heads, the key/value
// heads and the MLP width.
func checkTensorParallel(a *arch.Arch, t int) error {
	var es model.Errors
	for _, f := range []struct {
		name string
		v    int
	}{{"num_heads", a.NumHeads}, {"num_kv_heads", a.NumKVHeads}, {"intermediate_size", a.IntermediateSize}} {
		if f.v%t != 0 {
			es.Add("tensor_parallel", "must divide the model's %s (%d), got %d", f.name, f.v, t)
		}
	}
	return es.Err()
}
