package model

// WorkingPeakBytes is one microbatch's working peak on a stage (or a pipeline chunk)
// whose layers' own figures give peak (the largest over its layers of their temporaries,
// the tensors carried across them and the activations its earlier layers keep) and which
// keeps activation bytes for its backward pass: the larger of the two. A stage's
// microbatch holds all its activations at once where its forward ends and its backward
// begins (and again while its last layer's backward reads them with the gradient of its
// output), whatever its layers' stated temporaries; a layer's TemporaryBytes counts its
// own saved activations (core/analytic's layers do), so peak alone is short of that
// moment only where a layer states temporaries below the activations it keeps (a profile,
// or none given). Both the planner (core/estimate's ranges, core/plan's devices) and the
// schedule's simulation (core/schedule) charge a microbatch's working memory by this
// rule, so a plan's memory is its simulation's peak. A working peak of 0 with activations
// (a one-layer stage without temporaries) is therefore the activations. In inference
// nothing is kept (activation 0) and the peak is peak.
func WorkingPeakBytes(peak, activation int64) int64 { return max(peak, activation) }
