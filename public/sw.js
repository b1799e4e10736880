// pipeplan's service worker: it keeps the app shell (main.wasm) and the planner (planner.js
// and planner.wasm, which the page runs in a Web Worker) in a cache,
// so that after one visit the page works with the network off. build.sh copies this file
// to the site's root (a worker's scope is its own folder and below) and replaces VERSION
// with a hash of the files, so that a new build installs a new cache and drops the old.
// Every path is relative to this file, so the site works from any sub-path.
const VERSION = "dev";
const CACHE = "pipeplan-" + VERSION;
const SHELL = [
  "./", "wasm_exec.js", "main.wasm", "planner.js", "planner.wasm",
  "public/style.css", "public/render.js", "public/icon.svg", "public/manifest.webmanifest", "public/embed-example.html",
];

// A response that came through a redirect (a server sending index.html to ./) may not
// answer a navigation: keep a plain copy.
async function plain(resp) {
  if (!resp.redirected) return resp;
  return new Response(await resp.blob(), { status: resp.status, statusText: resp.statusText, headers: resp.headers });
}

// The install caches what the page has just fetched: cache: "no-cache" asks the server
// whether the browser's HTTP cache still holds the current file (a conditional request,
// answered 304 without the body), where "reload" downloaded every file a second time
// while the page was still loading it. A request for a file the page is still fetching
// waits for that download (the HTTP cache lets one request at a time write a URL).
self.addEventListener("install", event => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(SHELL.map(async path => {
      const resp = await fetch(path, { cache: "no-cache" });
      if (!resp.ok) throw new Error(path + ": " + resp.status);
      await cache.put(path, await plain(resp));
    }));
    await self.skipWaiting();
  })());
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
      const nav = req.mode === "navigate";
      const url = new URL(req.url);
      // The page itself, as ./ or ./index.html, with any query.
      const page = nav && new URL("./", location).href === new URL(".", url).href &&
        (url.pathname.endsWith("/") || url.pathname.endsWith("/index.html"));
      const hit = page ? await cache.match("./") : await cache.match(req, { ignoreSearch: nav });
      if (hit) return hit;
      return fetch(req);
    }));
});
