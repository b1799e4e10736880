// pipeplan's planner worker: a dedicated Web Worker that runs planner.wasm (wasm/planner).
// build.sh copies this file to the site's root as planner.js, beside wasm_exec.js and
// planner.wasm; paths are relative to it. Messages that come before Go is running wait
// in pipeplanQueue, which Go reads when it starts.
importScripts("wasm_exec.js");
self.pipeplanQueue = [];
self.onmessage = e => self.pipeplanQueue.push(e.data);
(async () => {
  try {
    const go = new Go();
    const { instance } = await WebAssembly.instantiateStreaming(fetch("planner.wasm"), go.importObject);
    go.run(instance);
  } catch (err) {
    self.postMessage({ id: 0, fatal: "the planner failed to load: " + err });
  }
})();
