// Package promise waits for JavaScript promises from Go compiled to WebAssembly (its
// code builds for js/wasm only).
package promise
