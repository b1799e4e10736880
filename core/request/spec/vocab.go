package spec

// The request's vocabulary a front end lists without linking the planner (the page's
// selects): each list holds the values core accepts for its field, the default first.
// core/request's tests check them against the planner's own lists (core/analytic), so
// that a value core learns is offered, and no value is offered that core refuses.
var (
	// Precisions are training.precision's values for an architecture: mixed (16-bit
	// passes, fp32 master weights and optimizer state), mixed-fp32-grads (and fp32
	// gradients, as Megatron-LM), amp (PyTorch autocast: fp32 parameters) and pure.
	Precisions = []string{"mixed", "mixed-fp32-grads", "amp", "pure"}
	// DTypes are model.architecture.dtype's values: bf16, fp16, fp32 and fp8 (whose
	// products run in fp8 with training.fp8_recipe's scaling).
	DTypes = []string{"bf16", "fp16", "fp32", "fp8"}
	// FP8Recipes are training.fp8_recipe's values (Transformer Engine's recipes).
	FP8Recipes = []string{"delayed", "current", "blockwise", "mxfp8"}
)
