package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"pipeplan/core/arch"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// requestFlags are the flags that build a planning request (core/request): plan, estimate
// and the commands built on them share them. They only translate: every default and every
// rule about which options go together is core's (request.Normalize); a flag given with an
// input it cannot describe is refused here only because the request has no place for it.
type requestFlags struct {
	fs *flag.FlagSet

	requestFile string

	// model
	modelFile, example, hfConfig string
	seq                          int
	dtype, attention, split, tie string
	framework                    string
	fp8Attention, fusedMLP       bool
	crossEntropy                 string
	matmulEff, memoryEff         float64
	kernelMicros                 optionalFloat

	// cluster and parallelism
	clusterFile, device, link, dataLink string
	devices, stages, dp, tp             int
	ep, etp                             int
	zero1, freeTransfers, sp, epOverlap bool
	expertImbalance, capacityFactor     float64
	dispatcher                          string
	overlapGrad, overlapParam           string
	overlapTensor                       string
	tpCommOverlapConfig                 string
	dpBucketBytes                       int64
	dpBucketElements                    int64
	devicesPerNode                      int
	linkIntra, linkInter                string
	// sharded data parallelism and context parallelism
	sharding, prefetch, cpMethod string
	reshard                      string
	reduceDType                  string
	fullyShard                   bool
	shardGroup, cp, cpInner      int

	// training
	inference                       bool
	optimizer, precision, recompute string
	recomputeModules                string
	fp8Recipe                       string
	fp8ParamGather                  bool
	fp8FSDPAllGather                bool
	checkForNaNInGrad               bool
	fp8AmaxTPOnly                   bool
	trainMetrics                    int
	moeAuxLoss                      string
	moeForceLoadBalancing           bool

	// schedule
	schedule                  string
	microbatches, batch       int
	weightGradFraction        float64
	objective                 string
	partition                 string
	memoryProportion          optionalFloat
	boundaries                string
	events, printRequest      bool
	name                      string
	withSchedule, withOptions bool
	// clusterOptional lets a request leave the cluster to core's defaults.
	clusterOptional bool

	// own are the command's flags that are not part of the request (export's --format),
	// allowed beside --request.
	own []string
}

// optionalFloat is a float flag that remembers whether it was given.
type optionalFloat struct {
	v   float64
	set bool
}

func (o *optionalFloat) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("must be a number")
	}
	o.v, o.set = v, true
	return nil
}

// add registers the flags. withSchedule adds the schedule and plan options (plan, export);
// estimate has only the model's and the device's.
func (f *requestFlags) add(fs *flag.FlagSet, withSchedule bool) {
	f.fs, f.withSchedule = fs, withSchedule
	fs.StringVar(&f.requestFile, "request", "", "a planning request `file` (JSON, docs/request.md): everything else comes from it")
	fs.StringVar(&f.modelFile, "model", "", "model `file`: native JSON, Graphcore ModelInfo, PipeDream graph.txt, or a HuggingFace config.json (as --hf-config)")
	fs.StringVar(&f.example, "example", "", "a built-in example profile `name` (pipeplan example)")
	fs.StringVar(&f.hfConfig, "hf-config", "", "HuggingFace config.json `file`, or a bundled name: "+strings.Join(arch.BundledNames(), ", "))
	fs.StringVar(&f.name, "name", "", "label the model (default: its own name, or the file's)")
	fs.IntVar(&f.seq, "seq", 0, "sequence length with --hf-config (default: the model's context, at most 4096)")
	fs.StringVar(&f.dtype, "dtype", "", "element type with --hf-config: bf16 (default), fp16, fp32 or fp8 (pipeplan devices lists the fp8 rates)")
	fs.StringVar(&f.fp8Recipe, "fp8-recipe", "", "fp8 scaling with --hf-config (means --dtype fp8): delayed (default), current, blockwise or mxfp8")
	fs.BoolVar(&f.fp8ParamGather, "fp8-param-gather", false, "with fp8: keep the fp8 layers' weights in fp8 only (Megatron-LM's --fp8-param-gather)")
	fs.BoolVar(&f.fp8FSDPAllGather, "fp8-fsdp-all-gather", false, "with fp8 under FSDP2 (zero3 or hsdp, --fully-shard, eager or compiled): all-gather the fp8 layers' weight shards cast to fp8 (torchao's enable_fsdp_float8_all_gather)")
	fs.BoolVar(&f.checkForNaNInGrad, "check-for-nan-in-grad", false, "Megatron-Core's check_for_nan_in_grad (megatron and cuda-graphs modes): each gradient bucket's norm read back to the host twice before its reduction, two synchronizations a bucket")
	fs.BoolVar(&f.fp8AmaxTPOnly, "fp8-amax-tp-only", false, "with fp8 delayed scaling under megatron: reduce the amax history over the tensor-parallel group only (Megatron-LM's --tp-only-amax-red)")
	fs.IntVar(&f.trainMetrics, "train-metrics", 0, "training metrics the loop computes on each microbatch's logits and synchronises every step (Composer's; LLM Foundry's MPT: 2)")
	fs.StringVar(&f.moeAuxLoss, "moe-aux-loss", "", "a mixture of experts' load-balancing loss, as Megatron-Core's fused router computes it in training: none (default), aux_loss or seq_aux_loss")
	fs.BoolVar(&f.moeForceLoadBalancing, "moe-force-load-balancing", false, "replace a mixture's router logits with random ones, balancing its experts (Megatron-Core's moe_router_force_load_balancing, as Megatron-Bridge's MoE benchmarks run)")
	fs.StringVar(&f.attention, "attention", "", "attention kernel with --hf-config: flash (FlashAttention-2, default), flash3 (FlashAttention-3, Hopper), cudnn, flash-triton (FlashAttention in Triton, LLM Foundry's triton), flash1 (flash-attn 1.x) or eager")
	fs.BoolVar(&f.fp8Attention, "fp8-attention", false, "attention in fp8 (TE's fp8_dpa; needs fp8, cudnn)")
	fs.BoolVar(&f.fusedMLP, "expert-fused-mlp", false, "experts as TE's fused grouped MLP (mxfp8, Blackwell)")
	fs.StringVar(&f.framework, "framework", "", "how --hf-config runs: eager (default on GPUs), compiled, cuda-graphs, megatron, deepspeed or none")
	fs.StringVar(&f.crossEntropy, "cross-entropy", "", "loss kernel of --hf-config: unfused (fp32, HuggingFace's), fused (flash-attn's, or a compiled F.cross_entropy), fused-inplace (Transformer Engine's), vocab-parallel (Megatron-LM's unfused) or loss-parallel (PyTorch's loss_parallel, torchtitan's with TP); default: the framework's")
	fs.StringVar(&f.split, "split", "", "pipeline layers with --hf-config: block (default) or sublayer")
	fs.StringVar(&f.tie, "tie", "", "tied embeddings with --hf-config: copy (default; gradients all-reduced) or stage")
	fs.Float64Var(&f.matmulEff, "matmul-efficiency", 0, "fraction of the peak FLOP/s matrix products reach (default: the device preset's)")
	fs.Float64Var(&f.memoryEff, "memory-efficiency", 0, "fraction of the memory bandwidth memory-bound kernels reach (default: the preset's)")
	fs.Var(&f.kernelMicros, "kernel-us", "launch cost of one kernel in microseconds (default: the preset's)")

	fs.StringVar(&f.clusterFile, "cluster", "", "cluster `file`: native JSON or Graphcore IPUClusterInfo (one pipeline)")
	fs.StringVar(&f.device, "device", "", "device preset `name` (pipeplan devices)")
	fs.IntVar(&f.devices, "devices", 0, "devices in all with --device (default: stages x dp)")
	fs.StringVar(&f.link, "link", "", "link preset between devices with --device (default: the device's usual link)")
	fs.StringVar(&f.dataLink, "data-link", "", "link preset of the data-parallel all-reduce with --cluster (default: its slowest link)")
	fs.IntVar(&f.stages, "stages", 0, "pipeline stages (devices per pipeline)")
	fs.IntVar(&f.dp, "dp", 0, "data-parallel replicas of the pipeline (default 1)")
	fs.BoolVar(&f.zero1, "zero1", false, "shard optimizer state and master weights over the --dp replicas (ZeRO-1)")
	fs.IntVar(&f.tp, "tp", 0, "tensor-parallel degree with --hf-config (default 1): each stage is a group of N devices splitting every block Megatron-style")
	fs.BoolVar(&f.sp, "sp", false, "sequence parallelism with --tp: norms, dropout and residuals split along the sequence too")
	fs.StringVar(&f.sharding, "sharding", "", "shard training state over the --dp replicas (x --cp): none, zero1, zero2, zero3 (fsdp), hsdp")
	fs.IntVar(&f.shardGroup, "shard-group", 0, "with --sharding hsdp: replicas per shard group (default: those a node holds)")
	fs.StringVar(&f.prefetch, "prefetch", "", "with --sharding zero3 or hsdp: next-layer (default, as PyTorch FSDP2) or none")
	fs.StringVar(&f.reduceDType, "reduce-dtype", "", "with --sharding zero3 or hsdp: fp32 reduce-scatters the gradients in fp32 (PyTorch FSDP2's reduce_dtype=torch.float32, as torchtitan runs it; default: the gradients' own type)")
	fs.BoolVar(&f.fullyShard, "fully-shard", false, "with --sharding zero3 or hsdp: PyTorch FSDP2's fully_shard, whose all-gathers are copied out into the parameters and reduce-scatters copied in from the gradients (leave off for FSDP1 and DeepSpeed ZeRO-3)")
	fs.StringVar(&f.reshard, "reshard", "", "with --sharding zero3 or hsdp: layer (gathered weights freed layer by layer) or step (held gathered, gradients accumulated whole in fp32: FSDP2 under PyTorch's pipelining, as torchtitan runs FSDP with PP); default step with --stages 2 or more (training, an architecture), else layer")
	fs.IntVar(&f.cp, "cp", 0, "context-parallel degree with --hf-config (default 1): each sequence split over N devices")
	fs.StringVar(&f.cpMethod, "cp-method", "", "with --cp: ring (default, ring attention), all-to-all (DeepSpeed-Ulysses), hierarchical (Megatron-LM's a2a+p2p) or all-gather (PyTorch's context_parallel, rotate method allgather)")
	fs.IntVar(&f.cpInner, "cp-inner", 0, "with --cp-method hierarchical: the all-to-all group's size (default: what fits in a node)")
	fs.IntVar(&f.ep, "ep", 0, "expert-parallel degree of a mixture of experts (default 1): each device holds 1/N of the experts; N x --etp must divide --dp x --tp")
	fs.IntVar(&f.etp, "etp", 0, "expert tensor-parallel degree of a mixture of experts (default: --tp)")
	fs.BoolVar(&f.epOverlap, "ep-overlap", false, "hide the expert all-to-alls behind an adjacent microbatch (Megatron-Core's combined 1F1B, DeepSeek's DualPipe)")
	fs.StringVar(&f.overlapGrad, "overlap-grad-reduce", "", "on or off: the data-parallel gradient reduction runs during the last backward (default: the framework's, on for eager and compiled, off for cuda-graphs, megatron and deepspeed)")
	fs.StringVar(&f.overlapParam, "overlap-param-gather", "", "on or off: zero1/zero2's weight all-gather runs during the first forward (default: the framework's)")
	fs.Int64Var(&f.dpBucketBytes, "dp-bucket-bytes", 0, "bytes of gradients in one data-parallel bucket, each bucket one collective paying its latency, on every stage (a recipe's: NeMo's distributed_fused_adam bucket_cap_mb MiB of its grad_sync_dtype; default: the framework's own buckets)")
	fs.Int64Var(&f.dpBucketElements, "dp-bucket-elements", 0, "Megatron-Core's bucket_size in elements (megatron and cuda-graphs modes): buckets closed at parameters' ends once they hold that many, so a size below the smallest parameter makes a bucket of each (default: max(40M, 1M x dp))")
	fs.StringVar(&f.overlapTensor, "overlap-tensor-comm", "", "userbuffers, async-tp, on or off: tensor parallelism's all-gathers and reduce-scatters run behind the products: userbuffers is Transformer Engine's (Megatron-LM's --tp-comm-overlap), async-tp PyTorch's async TP (compiled framework only), on the framework's own; needs --sp (default: the framework's, off)")
	fs.StringVar(&f.tpCommOverlapConfig, "tp-comm-overlap-config", "", "te-default or a Megatron-Bridge userbuffers config name (e.g. userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192): the per-GEMM settings Transformer Engine's userbuffers overlap runs with, priced; of the model's hidden size and the device family, at any tensor degree (default: te-default)")
	fs.StringVar(&f.dispatcher, "dispatcher", "", "how a mixture of experts moves tokens: alltoall (default), deepep (Megatron-Core with DeepEP: once per node over the network, 16-bit), deepep-fp8 (routed as deepep, fp8 dispatch with --dtype fp8, as DeepSeek-V3 trained) or hybridep (routed as deepep, 16-bit)")
	fs.Float64Var(&f.expertImbalance, "expert-imbalance", 0, "routed tokens of the busiest device over the mean (default 1, balanced)")
	fs.Float64Var(&f.capacityFactor, "capacity-factor", 0, "cap each expert's tokens at this many times the mean, dropping the rest (default 0: dropless)")
	fs.IntVar(&f.devicesPerNode, "devices-per-node", 0, "with --device: devices per node; stages, replicas and tensor-parallel groups are placed on the nodes")
	fs.StringVar(&f.linkIntra, "link-intra", "", "link preset inside a node with --devices-per-node (default: the device's usual link)")
	fs.StringVar(&f.linkInter, "link-inter", "", "link preset between nodes with --devices-per-node (default: the device's usual network)")
	fs.BoolVar(&f.freeTransfers, "free-transfers", false, "plan as if transfers took no time (links may then be absent)")

	fs.BoolVar(&f.inference, "inference", false, "plan inference: forward passes only (no gradients, no optimizer state)")
	fs.StringVar(&f.optimizer, "optimizer", "", "adamw (default), adam or sgd: for --hf-config and PipeDream profiles")
	fs.StringVar(&f.precision, "precision", "", "mixed (default for 16-bit: 16 bytes per parameter with Adam), mixed-fp32-grads (Megatron-LM's fp32 gradient buffers: 18), amp (PyTorch autocast: fp32 parameters, 16), pure, or deepspeed-bf16 (DeepSpeed's BF16 optimizer: 16-bit gradients kept beside fp32 ones, 20; bf16, ZeRO 0-1 only): for --hf-config and PipeDream profiles")
	fs.StringVar(&f.recompute, "recompute", "", "activation recomputation: none (default), selective (--hf-config), selective-op (torchtitan's per-op policy, --hf-config), full, or auto (per stage, the layers that fit its memory at the least extra time)")
	fs.StringVar(&f.recomputeModules, "recompute-modules", "", "the parts of each block selective recomputation reruns, comma-separated in Megatron-LM's names: core_attn (default), mlp, moe_act, layernorm, mla_up_proj, moe, shared_experts (--hf-config; with --recompute auto, what it may choose from)")
	fs.IntVar(&f.batch, "batch", 0, "samples per microbatch (sequences with --hf-config; a profile's own by default)")
	if !withSchedule {
		return
	}
	fs.StringVar(&f.schedule, "schedule", "", "pipeline `schedule`: 1f1b (default), gpipe, interleaved:V, interleaved-pytorch:V, zb-h1, ipu, overlap or inference")
	fs.IntVar(&f.microbatches, "microbatches", 0, "microbatches per step (default: 4 per pipeline device)")
	fs.Float64Var(&f.weightGradFraction, "weight-grad-fraction", 0, "zb-h1: share of each backward that computes weight gradients (default 0.5)")
	fs.StringVar(&f.objective, "objective", "", "what to minimise: compute (default; the bottleneck) or compute+transfer")
	fs.StringVar(&f.partition, "partition", "", "what the stages are: layers (default; ranges of the layer order) or graph (convex parts of the tensor graph, for models that branch)")
	fs.Var(&f.memoryProportion, "memory-proportion", "fraction of each device's usable memory a stage may fill, in (0, 1] (default 1)")
	fs.StringVar(&f.boundaries, "boundaries", "", "cost this split instead of the optimum: comma-separated, from 0 to the layer count (0,8,15,26)")
	fs.BoolVar(&f.events, "events", false, "keep the schedule's timeline (events per device) in --json output")
	fs.BoolVar(&f.printRequest, "print-request", false, "print the planning request the flags make, and stop")
}

// given reports the flags given on the command line.
func (f *requestFlags) given() map[string]bool {
	g := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { g[fl.Name] = true })
	return g
}

// architectureFlags describe an architecture: the request has no place for them with a
// profile.
var architectureFlags = []string{"seq", "dtype", "attention", "framework", "cross-entropy", "split", "tie", "matmul-efficiency", "memory-efficiency", "kernel-us", "expert-imbalance", "capacity-factor", "fp8-attention", "expert-fused-mlp"}

// build returns the request the flags describe.
func (f *requestFlags) build() (*wire.Request, error) {
	g := f.given()
	if f.requestFile != "" {
		var others []string
		for name := range g {
			if name != "request" && name != "json" && name != "print-request" && !slices.Contains(f.own, name) {
				others = append(others, "--"+name)
			}
		}
		if len(others) > 0 {
			sort.Strings(others)
			return nil, fmt.Errorf("--request: the request file says everything; drop %s (or edit the request)", strings.Join(others, ", "))
		}
		data, err := readInput(f.requestFile, wire.MaxBytes)
		if err != nil {
			return nil, err
		}
		r, err := request.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.requestFile, err)
		}
		return r, nil
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"stages", f.stages}, {"dp", f.dp}, {"tp", f.tp}, {"ep", f.ep}, {"etp", f.etp}, {"devices-per-node", f.devicesPerNode}, {"devices", f.devices}, {"cp", f.cp}, {"cp-inner", f.cpInner}, {"shard-group", f.shardGroup}, {"batch", f.batch}, {"microbatches", f.microbatches}, {"seq", f.seq}} {
		if g[c.name] && c.v < 1 { // 0 would read as "the default"
			return nil, fmt.Errorf("--%s: must be >= 1, got %d", c.name, c.v)
		}
	}
	r := &wire.Request{Version: wire.Version}
	if err := f.modelSpec(r, g); err != nil {
		return nil, err
	}
	if err := f.clusterSpec(r, g); err != nil {
		return nil, err
	}
	r.Parallelism.Pipeline, r.Parallelism.Data, r.Parallelism.Tensor = f.stages, f.dp, f.tp
	r.Parallelism.SequenceParallel = f.sp
	r.Parallelism.Expert, r.Parallelism.ExpertTensor, r.Parallelism.ExpertOverlap = f.ep, f.etp, f.epOverlap
	r.Parallelism.OverlapGradReduce, r.Parallelism.OverlapParamGather = f.overlapGrad, f.overlapParam
	r.Parallelism.OverlapTensorComm = f.overlapTensor
	r.Parallelism.TPCommOverlapConfig = f.tpCommOverlapConfig
	r.Parallelism.DPBucketBytes = f.dpBucketBytes
	r.Parallelism.DPBucketElements = f.dpBucketElements
	r.Parallelism.ExpertDispatcher = f.dispatcher
	if f.zero1 {
		r.Parallelism.ZeRO = 1
	}
	r.Parallelism.Sharding, r.Parallelism.ShardGroup, r.Parallelism.Prefetch = f.sharding, f.shardGroup, f.prefetch
	r.Parallelism.Reshard = f.reshard
	r.Parallelism.ReduceDType = f.reduceDType
	r.Parallelism.FullyShard = f.fullyShard
	r.Parallelism.Context, r.Parallelism.ContextMethod, r.Parallelism.ContextInner = f.cp, f.cpMethod, f.cpInner
	if f.inference {
		r.Training.Mode = wire.ModeInference
	}
	r.Training.Optimizer, r.Training.Precision, r.Training.Recompute = f.optimizer, f.precision, f.recompute
	r.Training.FP8Recipe, r.Training.FP8ParamGather = f.fp8Recipe, f.fp8ParamGather
	r.Training.FP8FSDPAllGather = f.fp8FSDPAllGather
	r.Training.CheckForNaNInGrad = f.checkForNaNInGrad
	r.Training.FP8AmaxTPOnly = f.fp8AmaxTPOnly
	r.Training.TrainMetrics = f.trainMetrics
	r.Training.MoEAuxLoss = f.moeAuxLoss
	r.Training.MoEForceLoadBalancing = f.moeForceLoadBalancing
	if f.recomputeModules != "" {
		r.Training.RecomputeModules = strings.Split(f.recomputeModules, ",")
	}
	r.Schedule = wire.Schedule{Name: f.schedule, Microbatches: f.microbatches, MicrobatchSize: f.batch, WeightGradFraction: f.weightGradFraction}
	r.Objective = f.objective
	r.Partition = f.partition
	if f.memoryProportion.set {
		if p := f.memoryProportion.v; !(p > 0 && p <= 1) { // 0 would read as "the default"
			return nil, fmt.Errorf("--memory-proportion: must be in (0, 1], got %v", p)
		}
		r.MemoryProportion = f.memoryProportion.v
	}
	if f.boundaries != "" {
		for _, s := range strings.Split(f.boundaries, ",") {
			b, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("--boundaries: %q is not an integer (give them as 0,8,15,26)", s)
			}
			r.Boundaries = append(r.Boundaries, b)
		}
	}
	r.Events = f.events
	return r, nil
}

func (f *requestFlags) modelSpec(r *wire.Request, g map[string]bool) error {
	n := 0
	for _, s := range []string{f.modelFile, f.example, f.hfConfig} {
		if s != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return errors.New("--model: a model file is required (or --example NAME, or --hf-config FILE|NAME)")
	case n > 1:
		return errors.New("--model, --example and --hf-config: give one of them")
	}
	if f.modelFile != "" {
		data, err := readInput(f.modelFile, load.MaxInputBytes)
		if err != nil {
			return err
		}
		m, err := wire.ModelFromFile(data, load.MaxInputBytes)
		if err == nil && m.Architecture != nil {
			// A HuggingFace config.json (core's classification): read as --hf-config reads it.
			f.hfConfig, f.modelFile = f.modelFile, ""
		} else if r.Model.Document, err = documentJSON(data); err != nil { // as it is: core reports a syntax error with its position
			return fmt.Errorf("%s: %w", f.modelFile, err)
		}
	}
	if f.hfConfig == "" {
		for _, name := range architectureFlags {
			if g[name] {
				return fmt.Errorf("--%s: describes an architecture, and goes with --hf-config; a measured profile fixes it", name)
			}
		}
	}
	r.Model.Name = f.name
	switch {
	case f.example != "":
		r.Model.Example = f.example
	case f.modelFile != "":
		if r.Model.Name == "" && request.DocumentName(r.Model.Document) == "" { // Graphcore and PipeDream profiles carry no name: use the file's
			r.Model.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f.modelFile), ".json"), ".graph.txt")
		}
	default:
		a := &wire.Architecture{Seq: f.seq, DType: f.dtype, Attention: f.attention, Split: f.split, Tie: f.tie, Framework: f.framework, CrossEntropy: f.crossEntropy,
			MatmulEfficiency: f.matmulEff, MemoryEfficiency: f.memoryEff,
			ExpertImbalance: f.expertImbalance, CapacityFactor: f.capacityFactor,
			FP8Attention: f.fp8Attention, ExpertFusedMLP: f.fusedMLP}
		if f.kernelMicros.set {
			if !(f.kernelMicros.v >= 0) {
				return fmt.Errorf("--kernel-us: must be >= 0, got %v", f.kernelMicros.v)
			}
			s := f.kernelMicros.v * 1e-6
			a.KernelSeconds = &s
		}
		path := f.hfConfig
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			// A model's folder, as HuggingFace's hub lays one out: its config.json.
			path = filepath.Join(path, "config.json")
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("--hf-config: %s is a folder without a config.json: give the config.json of a HuggingFace model, or a bundled name (%s)", f.hfConfig, strings.Join(arch.BundledNames(), ", "))
			}
		}
		if data, err := readInput(path, arch.MaxConfigBytes); err == nil {
			a.Config = json.RawMessage(data)
			if !json.Valid(data) {
				doc, _ := json.Marshal(string(data))
				a.Config = doc // the core reports the syntax error with its position
			}
			if r.Model.Name == "" {
				r.Model.Name = strings.TrimSuffix(filepath.Base(f.hfConfig), ".json")
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--hf-config: %w", err) // a file that is there but too large, binary, unreadable
		} else if _, ok := arch.BundledConfig(f.hfConfig); ok {
			a.Name = f.hfConfig
		} else if strings.ContainsAny(f.hfConfig, `/\`) || strings.HasSuffix(f.hfConfig, ".json") {
			return fmt.Errorf("--hf-config: %w", err)
		} else {
			return fmt.Errorf("--hf-config: no file %q and no bundled config of that name; bundled: %s", f.hfConfig, strings.Join(arch.BundledNames(), ", "))
		}
		r.Model.Architecture = a
	}
	return nil
}

// documentJSON puts a file into a request: what starts as a JSON object as it is (core
// reports a syntax error with its position), anything else (a PipeDream graph.txt) as a
// string.
func documentJSON(data []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if bytes.HasPrefix(trimmed, []byte("{")) {
		// As it is, without a copy or a check (a profile may be hundreds of megabytes):
		// the planner reports JSON errors with their position.
		return json.RawMessage(trimmed), nil
	}
	return json.Marshal(string(data))
}

func (f *requestFlags) clusterSpec(r *wire.Request, g map[string]bool) error {
	switch {
	case f.clusterFile != "" && f.device != "":
		return errors.New("--cluster and --device: give one of them, not both")
	case f.clusterFile != "":
		for _, name := range []string{"devices", "link", "devices-per-node", "link-intra", "link-inter"} {
			if g[name] {
				return fmt.Errorf("--%s: goes with --device; a cluster file lists its devices and links", name)
			}
		}
		data, err := readInput(f.clusterFile, load.MaxInputBytes)
		if err != nil {
			return err
		}
		doc, err := documentJSON(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f.clusterFile, err)
		}
		r.Cluster.Document = doc
	case f.device != "":
		r.Cluster.Device, r.Cluster.Count, r.Cluster.Link = f.device, f.devices, f.link
		r.Cluster.DevicesPerNode, r.Cluster.LinkIntra, r.Cluster.LinkInter = f.devicesPerNode, f.linkIntra, f.linkInter
	case f.clusterOptional:
		return nil // core fills the cluster in (calibrate: the profile's measured_on)
	default:
		return errors.New("--cluster FILE or --device NAME --stages N: a cluster is required")
	}
	r.Cluster.DataLink, r.Cluster.FreeTransfers = f.dataLink, f.freeTransfers
	return nil
}

// flagOf names the flag that sets a request field, for error messages.
var flagOf = map[string]string{
	"model.architecture.seq": "--seq", "model.architecture.dtype": "--dtype", "model.architecture.attention": "--attention",
	"model.architecture.fp8_attention": "--fp8-attention", "model.architecture.expert_fused_mlp": "--expert-fused-mlp",
	"model.architecture.split": "--split", "model.architecture.tie": "--tie",
	"model.architecture.matmul_efficiency": "--matmul-efficiency", "model.architecture.memory_efficiency": "--memory-efficiency",
	"model.architecture.kernel_seconds": "--kernel-us", "model.example": "--example",
	"model.architecture": "--hf-config", "model.architecture.name": "--hf-config", "model.architecture.framework": "--framework", "model.architecture.cross_entropy": "--cross-entropy",
	"cluster.device": "--device", "cluster.count": "--devices", "cluster.link": "--link", "cluster.data_link": "--data-link",
	"parallelism.pipeline": "--stages", "parallelism.data": "--dp", "parallelism.zero": "--zero1",
	"parallelism.tensor": "--tp", "parallelism.sequence_parallel": "--sp",
	"parallelism.sharding": "--sharding", "parallelism.shard_group": "--shard-group", "parallelism.prefetch": "--prefetch", "parallelism.reshard": "--reshard", "parallelism.reduce_dtype": "--reduce-dtype", "parallelism.fully_shard": "--fully-shard",
	"parallelism.context": "--cp", "parallelism.context_method": "--cp-method", "parallelism.context_inner": "--cp-inner",
	"parallelism.expert": "--ep", "parallelism.expert_tensor": "--etp", "parallelism.expert_overlap": "--ep-overlap", "parallelism.overlap_grad_reduce": "--overlap-grad-reduce", "parallelism.overlap_param_gather": "--overlap-param-gather", "parallelism.overlap_tensor_comm": "--overlap-tensor-comm", "parallelism.tp_comm_overlap_config": "--tp-comm-overlap-config", "parallelism.expert_dispatcher": "--dispatcher", "parallelism.dp_bucket_bytes": "--dp-bucket-bytes", "parallelism.dp_bucket_elements": "--dp-bucket-elements",
	"model.architecture.expert_imbalance": "--expert-imbalance", "model.architecture.capacity_factor": "--capacity-factor",
	"cluster.devices_per_node": "--devices-per-node", "cluster.link_intra": "--link-intra", "cluster.link_inter": "--link-inter",
	"training.mode": "--inference", "training.optimizer": "--optimizer", "training.precision": "--precision",
	"training.recompute": "--recompute", "training.recompute_modules": "--recompute-modules", "training.fp8_recipe": "--fp8-recipe", "training.fp8_param_gather": "--fp8-param-gather", "training.fp8_fsdp_all_gather": "--fp8-fsdp-all-gather", "training.check_for_nan_in_grad": "--check-for-nan-in-grad", "training.fp8_amax_tp_only": "--fp8-amax-tp-only", "training.train_metrics": "--train-metrics", "training.moe_aux_loss": "--moe-aux-loss", "training.moe_force_load_balancing": "--moe-force-load-balancing", "schedule.name": "--schedule", "schedule.microbatches": "--microbatches",
	"schedule.microbatch_size": "--batch", "schedule.weight_grad_fraction": "--weight-grad-fraction",
	"objective": "--objective", "partition": "--partition", "memory_proportion": "--memory-proportion", "boundaries": "--boundaries",
	"schedule": "--schedule", "events": "--events",
}

// flagError names the flag beside the request field in field errors built from flags
// ("--microbatches (schedule.microbatches): must be >= 1"); a request file's errors keep
// the request's paths.
func (f *requestFlags) flagError(err error) error {
	es, ok := model.AsFieldErrors(err)
	if !ok || f.requestFile != "" {
		return err
	}
	out := make(model.Errors, len(es))
	for i, e := range es {
		out[i] = e
		path := e.Path
		for _, d := range []struct{ prefix, file string }{
			{"model.document", f.modelFile}, {"cluster.document", f.clusterFile}, {"model.architecture.config", f.hfConfig},
		} {
			if rest, ok := strings.CutPrefix(path, d.prefix); ok && d.file != "" {
				path = d.file
				if rest = strings.TrimPrefix(rest, "."); rest != "" {
					path += ": " + rest
				}
			}
		}
		if fl, ok := flagOf[e.Path]; ok {
			path = fl
		} else if base, _, ok := strings.Cut(e.Path, "["); ok && strings.HasPrefix(base, "training.") {
			if fl, ok := flagOf[base]; ok {
				path = fl // an item of a list flag (--recompute-modules), which the reason names
			}
		}
		out[i] = &model.FieldError{Path: path, Reason: e.Reason}
	}
	return out
}
