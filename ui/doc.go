// Package ui is the page: its vugu components (root.vugu and the charts, compiled to
// *_gen.go by vugugen) and the logic behind them, in plain Go. App holds the page's whole
// state, a planning request (core/wire's Request, the state a link keeps) with its
// result, and its methods are the panels' event handlers: each edit changes the request
// and has it planned again. The page computes no costs and picks no defaults: it sends
// the request to the planner (a Planner, wasm/planner's operations in a Web Worker) and
// draws the answer, and it lists the choices core offers (core/wire's vocabulary, the
// device and link presets).
//
// The browser is behind Host (wasm/app implements it with syscall/js), so the logic is
// tested natively, with the planner in process and vugu's static renderer.
package ui
