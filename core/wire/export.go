package wire

// ExportVersion is the version of the exports' content: the plan JSON's "version", and the
// version each snippet's header names. It changes when an export's meaning changes.
const ExportVersion = 1

// Format names a framework.
type Format string

// The formats.
const (
	// PyTorch: torch.distributed.pipelining's split_spec and schedule class (Python).
	PyTorch Format = "pytorch"
	// DeepSpeed: a PipelineModule that takes the planned partition (Python).
	DeepSpeed Format = "deepspeed"
	// Megatron: Megatron-LM's pipeline layout and parallel sizes (shell arguments).
	Megatron Format = "megatron"
	// Graphcore: the Keras pipeline stage assignment and the popxl IPU mapping (Python).
	Graphcore Format = "graphcore"
	// JSON: pipeplan's own plan document (docs/export.md).
	JSON Format = "json"
)

// Formats lists the formats in the order the command line documents them.
var Formats = []Format{PyTorch, DeepSpeed, Megatron, Graphcore, JSON}

// Export is one framework's form of a plan.
type Export struct {
	// Format and Version of the export.
	Format  Format `json:"format"`
	Version int    `json:"version"`
	// Filename suggests a file name; Language is python, shell or json.
	Filename string `json:"filename"`
	Language string `json:"language"`
	// Text is the export itself.
	Text string `json:"text"`
	// Exact reports whether the framework runs the plan as planned: the same split under
	// the same schedule.
	Exact bool `json:"exact"`
	// Boundaries is the split Text expresses, in pipeplan's layer indices (one entry per
	// stage, or model chunk, plus one); Schedule the schedule the framework runs, as
	// pipeplan names it.
	Boundaries []int  `json:"boundaries"`
	Schedule   string `json:"schedule"`
	// Planned is the plan's price; Expressed the price of what Text expresses when it is
	// not exact (nil when no Coster could price it).
	Planned   *Cost `json:"planned,omitempty"`
	Expressed *Cost `json:"expressed,omitempty"`
	// Notes: what could not be expressed, and what to check.
	Notes []ExportNote `json:"notes,omitempty"`
}

// Cost is the price of one plan.
type Cost struct {
	// Schedule as schedule.Parse reads it; Boundaries the split.
	Schedule   string `json:"schedule"`
	Boundaries []int  `json:"boundaries"`
	// StepSeconds is the simulated step (the pipeline's makespan, or the step with the
	// optimizer and all-reduces where the Coster counts them); SamplesPerSecond the
	// throughput.
	StepSeconds      float64 `json:"step_seconds"`
	SamplesPerSecond float64 `json:"samples_per_second"`
	// Fits reports whether every device's peak memory fits it.
	Fits bool `json:"fits"`
}

// ExportNote is something the user must know about an export: what the framework could not
// express and what the export did instead, or what to check.
type ExportNote struct {
	// Code names the kind of note (the Note* constants).
	Code string `json:"code"`
	// Message says it in words.
	Message string `json:"message"`
}

// The codes of notes.
const (
	// NoteSchedule: the framework lacks the planned schedule; the export runs another.
	NoteSchedule = "schedule_not_expressible"
	// NoteSplit: the framework cannot make the planned cuts; the export moved them.
	NoteSplit = "split_not_expressible"
	// NoteModuleNames: layer names were taken as module names.
	NoteModuleNames = "module_names_assumed"
	// NoteLayerList: the framework's list of layers must match pipeplan's one to one.
	NoteLayerList = "layer_list_must_match"
	// NotePrivateAPI: the snippet relies on a framework internal.
	NotePrivateAPI = "private_api"
	// NoteTensorModules: the framework's pipeline does not split layers itself; the
	// user's modules must be tensor-parallel over the groups the export sets up.
	NoteTensorModules = "tensor_parallel_modules"
	// NoteMicrobatches: fewer microbatches than the framework's schedule wants.
	NoteMicrobatches = "few_microbatches"
	// NoteCost: the closest plan could not be priced.
	NoteCost = "cost_unavailable"
	// NoteTied: a tied embedding spans stages; the framework must keep its copies in step.
	NoteTied = "tied_weights_across_stages"
	// NoteParallelism: the framework cannot shard or split as planned (a ZeRO stage,
	// context parallelism); the export says what it runs instead.
	NoteParallelism = "parallelism_not_expressible"
	// NotePrecision: the framework cannot run the planned precision (an fp8 recipe, 16-bit
	// gradients, no master weights); the export says what it runs instead.
	NotePrecision = "precision_not_expressible"
	// NoteRecompute: the framework cannot recompute per layer as planned (training.recompute
	// auto); the export says what it recomputes instead.
	NoteRecompute = "recompute_not_expressible"
	// NoteTrainingLoop: the plan priced work of its training loop that the framework's
	// export does not run as priced (training.train_metrics' metrics, framework
	// deepspeed's blocking pipeline transfers, parallelism.dp_bucket_bytes' buckets);
	// the export says what it runs instead.
	NoteTrainingLoop = "training_loop_not_expressible"
)

// Exports is every format a plan can be written in, and why the others cannot (the
// planner's "exports" operation, pipeplan.exports).
type Exports struct {
	Exports     []*Export           `json:"exports"`
	Unavailable []ExportUnavailable `json:"unavailable,omitempty"`
}

// ExportUnavailable is a format a plan cannot be written in, and why.
type ExportUnavailable struct {
	Format Format `json:"format"`
	Error  string `json:"error"`
}
