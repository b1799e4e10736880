// Command app is pipeplan's browser app, built for js/wasm and loaded by index.html. It
// plans the built-in example (core/examples) with core/plan and renders the stages as a
// table into the page, with a control for the stage count that is kept in the URL
// (?stages=N) and in localStorage. It also exposes a JavaScript API:
//
//	pipeplan.plan(model, cluster, options) -> JSON string
//
// model, cluster and options are JSON strings (or objects, which are stringified); options
// may be omitted: {"objective": "compute" | "compute+transfer", "memory_proportion": 0.9,
// "inference": false, "recompute": false}. The result is the plan (core/plan.Plan as JSON)
// or {"error": "...", "no_fit": bool, "fields": [{"input", "path", "reason"}]}.
//
//	pipeplan.exampleModel() -> the example model's native JSON
//	pipeplan.presetCluster(device, stages) -> a cluster of preset devices as JSON, or {"error"}
//
// The app is deliberately thin: the planning is core's, and the files here only decode,
// format and draw. view.go and api.go are plain Go, tested natively; main_js.go touches
// the DOM.
package main
