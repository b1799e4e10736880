// Command app is pipeplan's browser app, built for js/wasm and loaded by index.html. It
// plans the built-in example through core/request and renders the stages as a table into
// the page, with a control for the stage count that is kept in the URL (?stages=N) and in
// localStorage. It also exposes the planning request as a JavaScript API
// (docs/request.md):
//
//	pipeplan.plan(request) -> result object, or {error, fields: [{path, reason}]}
//	pipeplan.planJSON(request) -> the result as JSON text, exactly as `pipeplan plan --json` prints it
//	pipeplan.estimate(request) -> the analytic estimate of the request's architecture
//	pipeplan.exampleRequest() -> the request of the built-in example
//	pipeplan.exampleModel() -> the example model's native JSON
//
// A request is an object or its JSON text. Values JSON cannot carry (NaN, Infinity,
// BigInt, functions, cycles) come back as error objects naming the field; no call stops
// the Go program, so the next call works.
//
// The app is deliberately thin: the planning is core's, and the files here only decode,
// format and draw. view.go and api.go are plain Go, tested natively; main_js.go touches
// the DOM.
package main
