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
// pipeplanJSON(value, what) is the JSON text of an argument the page passed as an object
// (structured-cloned by postMessage, which keeps shared sub-objects shared): {text}, or
// {error} naming the path of what JSON cannot carry (NaN, Infinity, a BigInt, a boxed
// NaN, a cycle) or the reason it is too large. The walk visits each distinct object once
// and counts the values it holds as JSON: an object shared by many parents is repeated in
// JSON, and a DAG of 41 levels would be 2^41 values, refused here before JSON.stringify
// would try. It runs in the worker, off the page's thread. The planner (Go) calls it.
const maxDepth = 64, maxValues = 1 << 25;
self.pipeplanJSON = (value, what) => {
  const sizes = new Map(); // object -> the values it holds as JSON; -1 while it is walked
  let why = "";
  const fail = (path, msg) => {
    why = (path ? (what ? what + "." : "") + path : what || "the request") + ": " + msg;
    return -1;
  };
  const walk = (v, path, depth) => {
    switch (typeof v) {
      case "number":
        return Number.isFinite(v) ? 1 : fail(path, "must be a finite number, got " + v);
      case "bigint":
        return fail(path, "must be a number, got a BigInt");
      case "function":
      case "symbol":
        return fail(path, "must be a JSON value, got a " + typeof v);
      case "undefined":
        return 0;
      case "object":
        break;
      default:
        return 1;
    }
    if (v === null || v instanceof Date) return 1;
    if (v instanceof Number || v instanceof String || v instanceof Boolean) {
      return walk(v.valueOf(), path, depth); // JSON.stringify unboxes them
    }
    const known = sizes.get(v);
    if (known === -1) return fail(path, "holds an object that holds it (a cyclic object)");
    if (known !== undefined) return known;
    if (depth >= maxDepth) return fail(path, "nests deeper than " + maxDepth + " levels");
    sizes.set(v, -1);
    let n = 1;
    const add = (k) => {
      if (k < 0) return false;
      n += k;
      if (n > maxValues) {
        fail(path, "holds more than " + maxValues + " values as JSON (an object shared by many parents is repeated in JSON each time)");
        return false;
      }
      return true;
    };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (!add(walk(v[i], path + "[" + i + "]", depth + 1))) return -1;
      }
    } else {
      for (const key of Object.keys(v)) {
        if (!add(walk(v[key], path ? path + "." + key : key, depth + 1))) return -1;
      }
    }
    sizes.set(v, n);
    return n;
  };
  try {
    if (walk(value, "", 0) < 0) return { error: why };
    return { text: JSON.stringify(value) };
  } catch (err) {
    return { error: (what || "the request") + " cannot be read as JSON: " + err };
  }
};
// A trap in a call from JavaScript into Go (a message, a yield) ends the planner too.
// The page hears of it once, by the {fatal} message (the event is not passed on to the
// Worker's onerror).
self.addEventListener("error", e => {
  e.preventDefault();
  died(e.message || "an uncaught error");
});
// The browser's storage of model files too large for a link (wasm/planner/ops: Store):
// IndexedDB "pipeplan", object store "models", each file's bytes under "sha256-" and
// its SHA-256 in hex, and object store "used" ({bytes, used}: its size, and when it was
// last imported, kept or read, in milliseconds since 1970) under the same key, which
// the planner reads to keep the storage within its bounds (ops.Evict). The files are
// read, hashed and stored here, in the worker: the page's thread passes the File object
// and never reads it.
const openStore = () => self.pipeplanDB ??= new Promise((ok, fail) => {
  const r = indexedDB.open("pipeplan", 2);
  r.onupgradeneeded = () => {
    const db = r.result;
    if (!db.objectStoreNames.contains("models")) db.createObjectStore("models");
    if (!db.objectStoreNames.contains("used")) {
      // Files kept by version 1 get their sizes, and the oldest time.
      const used = db.createObjectStore("used");
      r.transaction.objectStore("models").openCursor().onsuccess = e => {
        const c = e.target.result;
        if (!c) return;
        used.put({ bytes: c.value.byteLength, used: 0 }, c.key);
        c.continue();
      };
    }
  };
  r.onsuccess = () => ok(r.result);
  r.onerror = () => fail(r.error);
});
// storeRequest runs f on the object stores (models, used) in one transaction and
// answers the result of the request f returns, once the transaction is done.
const storeRequest = async (mode, f) => {
  const db = await openStore();
  return new Promise((ok, fail) => {
    const t = db.transaction(["models", "used"], mode);
    const r = f(t.objectStore("models"), t.objectStore("used"));
    t.oncomplete = () => ok(r && r.result);
    t.onerror = t.onabort = () => fail(t.error || new Error("the transaction was aborted"));
  });
};
const putFile = (key, buf) => storeRequest("readwrite", (models, used) => {
  used.put({ bytes: buf.byteLength, used: Date.now() }, key);
  return models.put(buf, key);
});
// pipeplanReadFile(file, maxBytes): {hash, data (Uint8Array), kept}, or {error}; kept
// is false when the storage refused the file (full, or a private window without one).
self.pipeplanReadFile = async (file, maxBytes) => {
  if (file.size > maxBytes) {
    return { error: "the file is " + (file.size / 1048576).toFixed(1) + " MiB, larger than the " + (maxBytes / 1048576) + " MiB the planner takes" };
  }
  const buf = await file.arrayBuffer();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buf));
  const hash = Array.from(digest, b => b.toString(16).padStart(2, "0")).join("");
  let kept = false;
  try {
    await putFile("sha256-" + hash, buf);
    kept = true;
  } catch (err) {
    console.warn("pipeplan: the model file was not kept in this browser's storage: " + err);
  }
  return { hash, data: new Uint8Array(buf), kept };
};
// pipeplanLoadFile(key): the stored file's bytes (Uint8Array), or null.
self.pipeplanLoadFile = async key => {
  const v = await storeRequest("readonly", models => models.get(key));
  return v ? new Uint8Array(v) : null;
};
// pipeplanKeepFile(key, bytes): true when the storage took the file.
self.pipeplanKeepFile = async (key, bytes) => {
  try {
    await putFile(key, bytes.buffer);
    return true;
  } catch (err) {
    console.warn("pipeplan: the model file was not kept in this browser's storage: " + err);
    return false;
  }
};
// pipeplanUseFile(key) marks a stored file as used now (nothing when it is not stored,
// or the storage refuses: the order of use is a hint).
self.pipeplanUseFile = key => {
  storeRequest("readwrite", (models, used) => {
    const r = used.get(key);
    r.onsuccess = () => { if (r.result) used.put({ bytes: r.result.bytes, used: Date.now() }, key); };
    return null;
  }).catch(err => console.warn("pipeplan: " + err));
};
// pipeplanStoredFiles(): the stored files, as JSON: [{key, bytes, used}].
self.pipeplanStoredFiles = async () => {
  const out = [];
  await storeRequest("readonly", (models, used) => {
    used.openCursor().onsuccess = e => {
      const c = e.target.result;
      if (!c) return;
      out.push({ key: c.key, bytes: c.value.bytes, used: c.value.used });
      c.continue();
    };
    return null;
  });
  return JSON.stringify(out);
};
// pipeplanDeleteFiles(keys): deletes the stored files of these keys.
self.pipeplanDeleteFiles = keys => storeRequest("readwrite", (models, used) => {
  for (const k of keys) {
    models.delete(k);
    used.delete(k);
  }
  return null;
});
