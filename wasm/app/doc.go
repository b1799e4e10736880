// Command app is pipeplan's browser app, built for js/wasm and loaded by index.html. It
// mounts the vugu components of package ui into the page's #app element: a page that
// builds a planning request (core/request) from its panels, runs it with core, and
// draws the result; the request lives in the URL's fragment and in localStorage. With
// ?embed=1 it shows a compact read-only view of the request in the URL, for an iframe.
//
// It also exposes the planning request as a JavaScript API (docs/js-api.md):
//
//	pipeplan.plan(request) -> result object, or {error, fields: [{path, reason}]}
//	pipeplan.planJSON(request) -> the result as JSON text, exactly as `pipeplan plan --json` prints it
//	pipeplan.estimate(request) -> the analytic estimate of the request's architecture
//	pipeplan.search(request, onProgress, knobs) -> a Promise of core/search's report
//	pipeplan.export(request, options), pipeplan.exports(request), pipeplan.profiler()
//	pipeplan.exampleRequest() -> the request of the built-in example
//	pipeplan.exampleModel() -> the example model's native JSON
//	pipeplan.export(request, {format}) -> the plan for a framework (docs/export.md)
//	pipeplan.exports(request) -> {exports: [...], unavailable: [{format, error}]}
//	pipeplan.profiler() -> {filename, text}: the PyTorch profiler script, to offer for download
//
// The exports state the request's parallelism (parallelism.tensor and
// sequence_parallel included), which the plan is costed with. A request is an object or
// its JSON text. Values JSON cannot carry (NaN, Infinity,
// BigInt, functions, cycles) come back as error objects naming the field; no call stops
// the Go program, so the next call works. On a page without an #app element (a
// documentation page that only wants the API) nothing is mounted.
//
// The app is deliberately thin: the planning is core's, the page's logic is package ui
// (plain Go, tested natively and with vugu's static renderer), and the files here only
// touch the browser: api.go is plain Go, api_js.go and main_js.go use syscall/js.
package main
