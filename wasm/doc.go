// Package wasm holds no code: its subdirectories are the programs built for WebAssembly
// (app, the page; planner, the page's Web Worker; worker, the Cloudflare Worker). Its
// test guards the direction of imports around them: they import the rest of the module,
// and nothing outside wasm/ imports them.
package wasm
