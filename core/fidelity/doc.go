// Package fidelity holds pipeplan's checks against published measurements: its tests
// plan models, GPUs and parallel configurations from papers and framework performance
// tables through the planning request (request.Run, the doorway every front end uses),
// and compare activation memory, model state memory (weights, gradients, optimizer
// state), block time, whole-step time and whole-step peak memory with what was
// published, each case with its source and tolerance, and the median error over the
// cases against a target (activation memory 5%, model state 5%, block time 15%, step
// peak memory 10%, step time 20%). The package has no code of its own; run go test -v
// to see every case's error.
package fidelity
