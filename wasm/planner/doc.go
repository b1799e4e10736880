// Command planner is pipeplan's planner for the browser: built for js/wasm as
// planner.wasm, it runs in a dedicated Web Worker (worker.js, which build.sh copies to the
// site as planner.js), so that the page's program (wasm/app, main.wasm) stays small and
// its thread stays free while core plans.
//
// The page posts messages {id, op, args} (args: JSON texts) and the worker answers
// {id, result} (JSON text), or {id, progress} while a search runs, or {id, error} (abort
// set when a cancel stopped it). {id, op: "cancel"} stops the search with that id.
// {id, op: "import", args: [name, file]} passes a File as it is: the worker reads it,
// keeps it in the browser's storage (IndexedDB, worker.js) and answers ops.Store.Import's
// JSON; requests that reference a stored file find it there (ops.Store.Load).
// Package ops is what the operations do, in plain Go; the files here only carry messages.
package main
