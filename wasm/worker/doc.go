// Command worker is the Cloudflare Worker that keeps shared plans, built for js/wasm
// with github.com/syumai/workers (standard Go, not TinyGo) and run by workerd: in
// production on Cloudflare, locally and in tests under `wrangler dev`.
//
// It serves the API of package share (POST /v1/plans, GET /v1/plans/{id}) over Workers
// KV: the namespace bound as PLANS in wrangler.toml holds each document under its id.
// Its settings are the Worker's variables ([vars] in wrangler.toml):
//
//	ALLOWED_ORIGINS    origins whose pages may call it, comma-separated ("*": any)
//	MAX_REQUEST_BYTES  the cap on a POST body (default share.DefaultMaxRequestBytes)
//	PUBLIC_URL         the URL the Worker is reached at, for the url of a stored plan
//	                   (default: the URL of the request)
//
// Build it with `../../build.sh worker` (build/ here: app.wasm and the JavaScript shim
// of workers-assets-gen), run it with `npx wrangler dev`, deploy it with `npx wrangler
// deploy` after setting the KV namespace's id in wrangler.toml. `pipeplan share-server`
// runs the same handler natively over a bbolt file: the Worker's local twin.
//
// workerd starts a new Go instance for each request, so nothing is kept in memory
// between requests: the store is the only state.
package main
