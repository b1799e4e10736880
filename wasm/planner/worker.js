// pipeplan's planner worker: a dedicated Web Worker that runs planner.wasm (wasm/planner).
// build.sh copies this file to the site's root as planner.js, beside wasm_exec.js and
// planner.wasm; paths are relative to it. Messages that come before Go is running wait
// in pipeplanQueue, which Go reads when it starts.
//
// When the planner stops (Go exits: out of memory, a fatal error; or its WebAssembly
// traps), the worker says so in a {fatal} message with the planner's last words: the page
// rejects the calls in flight with it and starts a new worker for the next call.
importScripts("wasm_exec.js");
self.pipeplanQueue = [];
self.onmessage = e => self.pipeplanQueue.push(e.data);
// Go writes its fatal errors ("fatal error: out of memory", a panic) through console.log,
// a line at a time: the last few are kept for the {fatal} message.
const lastLines = [];
const log = console.log.bind(console);
console.log = (...args) => {
  lastLines.push(args.join(" "));
  if (lastLines.length > 4) lastLines.shift();
  log(...args);
};
let gone = false;
const died = why => {
  if (gone) return;
  gone = true;
  const words = lastLines.filter(l => /fatal error|panic|out of memory|exit code/.test(l)).join("; ");
  self.postMessage({ id: 0, fatal: "the planner stopped (" + (words || why) + ")" });
  self.onmessage = null;
};
(async () => {
  let instance;
  try {
    const go = new Go();
    go.exit = code => lastLines.push("exit code " + code);
    ({ instance } = await WebAssembly.instantiateStreaming(fetch("planner.wasm"), go.importObject));
    await go.run(instance);
  } catch (err) {
    if (!instance) {
      self.postMessage({ id: 0, fatal: "the planner failed to load: " + err });
      return;
    }
    died(String(err));
    return;
  }
  died("it exited");
})();
// A trap in a call from JavaScript into Go (a message, a yield) ends the planner too.
self.addEventListener("error", e => died(e.message || "an uncaught error"));
