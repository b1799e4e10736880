package request

import "pipeplan/core/request/spec"

// The result's types (core/request/spec).
type (
	// Result is what Run returns for a valid request: the plan (or why there is none),
	// the simulated step and the whole step's time and throughput, with diagnostics.
	Result = spec.Result
	// ModelInfo describes the planned model.
	ModelInfo = spec.ModelInfo
	// LayerCosts are every layer's costs for one microbatch as the planner used them.
	LayerCosts = spec.LayerCosts
	// DeviceStep is what one pipeline device does once per step besides the pipeline.
	DeviceStep = spec.DeviceStep
	// Step is one whole step: the pipeline's makespan, then the all-reduces and the
	// optimizer update.
	Step = spec.Step
	// Diagnostic is one finding, as data a front end can act on and in words.
	Diagnostic = spec.Diagnostic
)

// Severities of a diagnostic.
const (
	// Error: the request has no plan, or the plan does not fit.
	Error = spec.Error
	// Warning: a plan exists but wastes something or needs attention.
	Warning = spec.Warning
	// Note: what the planner assumed.
	Note = spec.Note
)

// Diagnostic codes beyond plan's no-fit reasons (plan.TooFewLayers, ...).
const (
	CodeStageOverMemory        = spec.CodeStageOverMemory
	CodeScheduleAdvice         = spec.CodeScheduleAdvice
	CodeIdleDevices            = spec.CodeIdleDevices
	CodeBeyondScaleUp          = spec.CodeBeyondScaleUp
	CodeTimesScaled            = spec.CodeTimesScaled
	CodeTimesNotScaled         = spec.CodeTimesNotScaled
	CodeMicrobatchSizeUnknown  = spec.CodeMicrobatchSizeUnknown
	CodeStateAdded             = spec.CodeStateAdded
	CodeStateRemoved           = spec.CodeStateRemoved
	CodeDataLinkAssumed        = spec.CodeDataLinkAssumed
	CodeGradBytesAssumed       = spec.CodeGradBytesAssumed
	CodeOptimizerTimeUnknown   = spec.CodeOptimizerTimeUnknown
	CodeGraphPartitionFallback = spec.CodeGraphPartitionFallback
	CodeGraphcoreMemoryRule    = spec.CodeGraphcoreMemoryRule
	CodeProfileScaled          = spec.CodeProfileScaled
)

func ptr(i int) *int { return &i }
