// Command app is pipeplan's browser app, built for js/wasm as main.wasm and loaded by
// index.html. It mounts the vugu components of package ui into the page's #app element:
// a page that builds a planning request (core/request) from its panels, has it planned,
// and draws the result; the request lives in the URL's fragment and in localStorage.
// With ?embed=1 it shows a compact read-only view of the request in the URL, for an
// iframe.
//
// It does not link the planner, which keeps it small (under 5 MB is the aim; README's
// "Size") and its thread free: it starts a dedicated Web Worker, planner.js, which runs
// planner.wasm (wasm/planner), and sends it every plan, search and export as a message
// {id, op, args}; the page draws each answer when it comes. client.go routes the answers
// (and a search's progress, and cancels); it uses core/request's types and JSON only.
//
// It also exposes the planning request as a JavaScript API (docs/js-api.md); the calls
// that plan run in the worker and return Promises:
//
//	pipeplan.plan(request) -> Promise of the result object, or of {error, fields: [{path, reason}]}
//	pipeplan.planJSON(request) -> Promise of the result as JSON text, exactly as `pipeplan plan --json` prints it
//	pipeplan.estimate(request) -> Promise of the analytic estimate of the request's architecture
//	pipeplan.search(request, onProgress, knobs) -> Promise of the search's answer (core/wire.SearchAnswer; with cancel())
//	pipeplan.export(request, {format}) -> Promise of the plan for a framework (docs/export.md)
//	pipeplan.exports(request) -> Promise of {exports: [...], unavailable: [{format, error}]}
//	pipeplan.calibrate(request, profileText) -> Promise of the fit of the request's architecture to a measured profile
//	pipeplan.profiler() -> {filename, text}: the PyTorch profiler script, to offer for download
//	pipeplan.exampleRequest() -> the request of the built-in example
//	pipeplan.exampleModel() -> the example model's native JSON
//
// The exports state the request's parallelism (parallelism.tensor and
// sequence_parallel included), which the plan is costed with. A request is an object or
// its JSON text. Values JSON cannot carry (NaN, Infinity, BigInt, functions, cycles) come
// back as error objects naming the field; no call stops the Go program, so the next call
// works. On a page without an #app element (a documentation page that only wants the API)
// nothing is mounted.
//
// The app is deliberately thin: the planning is core's (in the worker, through
// wasm/planner/ops), the page's logic is package ui (plain Go, tested natively and with
// vugu's static renderer), and the files here only touch the browser: api.go and
// client.go are plain Go, the *_js.go files use syscall/js.
package main
