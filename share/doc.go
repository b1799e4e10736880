// Package share is the shared-plans service: an HTTP API that stores planning requests
// with the plans core makes of them, under the requests' content ids, so that a link
// (?plan=ID) opens the same plan for a colleague, from a documentation page, or months
// later. Small requests travel in the URL fragment instead; the store is for the large
// ones (imported profiles of thousands of layers).
//
// One handler (NewHandler) serves the API for both of its homes: the Cloudflare Worker
// (wasm/worker, over Workers KV) and its local twin (`pipeplan share-server`, over a
// bbolt file, package boltstore). It depends on two small interfaces: a Store (get and
// put a document by id) and a Planner (core/request's Decode, Canonical, ID and Run:
// CorePlanner).
//
//	POST /v1/plans        body: a planning request (docs/request.md)
//	                      201 {"id", "url"} stored now; 200 the same, already stored
//	GET  /v1/plans/{id}   200 {"id", "request", "result"}, Cache-Control immutable,
//	                      ETag "{id}" (If-None-Match: 304); 404 unknown id
//	OPTIONS either        CORS preflight: 204 for a configured origin, 403 otherwise
//
// A POST is capped (Config.MaxRequestBytes: 413), must be one JSON object (else 400),
// and must be a request core validates and plans (else 422, with the bad fields): so
// nothing is stored that core would not make. The document stored is the canonical
// request and the result of planning it; the same request, however spelled, has the
// same id, and posting it again changes nothing. Errors are JSON: ErrorBody.
//
// Client calls the API from Go (the page, in js/wasm, or the command line). Package
// sharetest holds the suites every implementation passes. docs/share.md is the API's
// reference.
package share
