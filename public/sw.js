// pipeplan's service worker: it keeps the app shell and the planner (main.wasm) in a cache,
// so that after one visit the page works with the network off. build.sh copies this file
// to the site's root (a worker's scope is its own folder and below) and replaces VERSION
// with a hash of the files, so that a new build installs a new cache and drops the old.
// Every path is relative to this file, so the site works from any sub-path.
const VERSION = "dev";
const CACHE = "pipeplan-" + VERSION;
const SHELL = [
  "./", "index.html", "wasm_exec.js", "main.wasm",
  "public/style.css", "public/icon.svg", "public/manifest.webmanifest", "public/embed-example.html",
];

self.addEventListener("install", event => {
  event.waitUntil(caches.open(CACHE).then(c => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", event => {
  event.waitUntil(
    caches.keys()
      .then(keys => Promise.all(keys.filter(k => k.startsWith("pipeplan-") && k !== CACHE).map(k => caches.delete(k))))
      .then(() => self.clients.claim()));
});

// Cache first: the files of one build never change, and a new build comes with a new
// worker. A page's query (?embed=1) and fragment do not change the file it loads.
self.addEventListener("fetch", event => {
  const req = event.request;
  if (req.method !== "GET" || new URL(req.url).origin !== location.origin) return;
  event.respondWith(
    caches.open(CACHE).then(async cache => {
      const hit = await cache.match(req, { ignoreSearch: req.mode === "navigate" });
      if (hit) return hit;
      try {
        return await fetch(req);
      } catch (err) {
        if (req.mode === "navigate") {
          const shell = await cache.match("index.html");
          if (shell) return shell;
        }
        throw err;
      }
    }));
});
