#!/usr/bin/env bash
# pipeplan's one entry point. Usage: ./build.sh build|serve|worker|test|bench|fuzz [SECONDS]
#
#   build   the command-line tool (bin/pipeplan) and the browser app (dist/)
#   serve   build, then serve dist/ on http://127.0.0.1:${PORT:-8080}/
#   worker  the shared-plans Worker (wasm/worker/build/) and wrangler (npm ci)
#   test    everything CI runs: gofmt, go vet, go test natively, the core tests under
#           WebAssembly in node, the browser test in chromium and the Worker under
#           wrangler dev (CI=true: both required)
#   bench   the core benchmarks
#   fuzz    every fuzz target for SECONDS each (default 60; FUZZ_MINIMIZE, default 10s,
#           bounds the minimizing of one input); a crasher is left in its package's
#           testdata/fuzz/, where plain go test replays it: fix the bug, commit the file
set -euo pipefail
cd "$(dirname "$0")"

die() { echo "build.sh: $*" >&2; exit 1; }

# step NAME COMMAND...: runs one named step, timing it. A failing command anywhere in it
# stops the script (set -e applies inside the step's functions), and the EXIT trap names
# the step that failed. A step that ran nothing sets $skip to the reason: it then reports
# "skipped", never "ok", and is listed at the end.
current=
skip=
skipped=()
trap 'rc=$?; [ "$rc" -ne 0 ] && [ -n "$current" ] && echo "build.sh: FAILED: $current (exit $rc)" >&2' EXIT
step() {
  current=$1; shift
  echo "==> $current"
  local start=$SECONDS
  skip=
  "$@"
  if [ -n "$skip" ]; then
    echo "    skipped: $current ($skip)"
    skipped+=("$current")
  else
    echo "    ok: $current ($((SECONDS - start)) s)"
  fi
  current=
}

command -v go >/dev/null || die "go is not on PATH (Go 1.26 is needed: https://go.dev/dl/)"
GOROOT=$(go env GOROOT)
WASM_EXEC_JS=$GOROOT/lib/wasm/wasm_exec.js
[ -f "$WASM_EXEC_JS" ] || die "$WASM_EXEC_JS is missing: is this Go 1.24 or newer?"

build_cli() { go build -trimpath -o bin/pipeplan ./cmd/pipeplan; }

# generate: the vugu components' Go code (ui/*_gen.go) from ui/*.vugu, with vugugen (the
# tool directive in go.mod) less the log import it writes (ui/droplog: ui/generate.go),
# formatted with gofmt so that diffs of the generated files stay readable. The generated
# files are committed, so go vet and go test work without this.
generate() {
  go generate ./ui
  gofmt -w ui/*_gen.go
}

# build_web writes dist/: a static site that works from any host and any sub-path (every
# URL in it is relative) and, after one visit, offline (dist/sw.js, the service worker,
# caches the shell, main.wasm and the planner; its cache name is a hash of the files, so a
# new build replaces the old cache). The page's program (main.wasm, wasm/app) does not
# link the planner: planner.wasm (wasm/planner) runs it in a Web Worker (planner.js, from
# wasm/planner/worker.js). Both wasm files also come precompressed (.gz, .br) for hosts
# that serve such files.
build_web() {
  rm -rf dist/public dist/sw.js dist/main.wasm.gz dist/main.wasm.br dist/planner.wasm.gz dist/planner.wasm.br
  GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o dist/main.wasm ./wasm/app
  GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o dist/planner.wasm ./wasm/planner
  cp index.html "$WASM_EXEC_JS" dist/
  cp wasm/planner/worker.js dist/planner.js
  cp -R public dist/public
  rm dist/public/sw.js
  local version
  version=$(cat dist/index.html dist/wasm_exec.js dist/main.wasm dist/planner.js dist/planner.wasm $(find dist/public -type f | sort) | sha256sum | cut -c1-16)
  sed "s/^const VERSION = \".*\";/const VERSION = \"$version\";/" public/sw.js >dist/sw.js
  grep -q "const VERSION = \"$version\";" dist/sw.js || die "could not stamp the service worker's version"
  go run ./cmd/precompress dist/main.wasm dist/planner.wasm | sed 's/^/    /'
}

# check_wasm_size guards what a visitor downloads: main.wasm compressed (dist/main.wasm.br
# and .gz, from cmd/precompress in build_web), since hosts serve it brotli or gzip encoded.
# Today (vugugen's code as it generates it, less its log import: ui/generate.go) main.wasm
# is 1,021,840 bytes brotli and 1,393,015 gzip (5,223,648 raw); the guards sit a little
# above. The raw size is reported, not guarded. The page's program does not link the
# planner (planner.wasm, in a Web Worker, does) nor crypto/sha256, makes no contexts and
# holds no time.Time in an interface (either keeps time's formatting and parsing).
# README's "Size" has the figures (go run ./cmd/wasmsize breaks a build down by
# package). planner.wasm's sizes are reported, not guarded.
# Issue 23's items 2 and 3 (the planner worker's views, stored model files) add about
# 9.5 KB gzip and 6 KB brotli to main.wasm (1,408,412 gzip, 1,029,974 brotli on
# 2026-11-27): the guards moved up by 5 KB each.
# Issue 20 item 3 (core/wire's own result, search and calibration types: the page links
# no planner package) took main.wasm to 1,026,496 bytes brotli and 1,402,288 gzip
# (5,260,542 raw) on 2026-11-27, from 1,031,160 and 1,409,708. Issue 18's finer knobs on
# the Cluster panel (eight rows: shard group, prefetch, the overlaps, the context group,
# expert tensor parallelism, imbalance, capacity) then added 8.2 KB gzip and 2.1 KB brotli
# (1,410,524 gzip and 1,028,560 brotli with issue 23's render changes; the tensor-parallel
# overlap's row took brotli to 1,031,374, gzip 1,410,424): the guards sit about 3.5 KB above.
# Issue 23 item 2's import frames (the stage bar's spans, the layer rows in frames, the
# collection when idle: runtime.GC) took main.wasm to 1,033,643 brotli and 1,413,666 gzip
# (5,306,517 raw, on main of 2026-11-27 16:00): 334 bytes under the gzip guard.
# Main of 2026-11-27 18:25 built 1,414,125 gzip (over its guard) and 1,034,390 brotli.
# The page's knob rows (ui/knobs.go: every request field a control, 19 of them new, drawn
# by one component instead of a block of markup each) took it to 1,410,452 gzip and
# 1,031,521 brotli (5,247,352 raw, from 5,307,970): the guards stay.
# Main of 2026-11-27 18:45 (the schedule and recompute lists' new values) built
# 1,034,371 brotli and 1,410,553 gzip from 5,247,487 raw: 135 raw bytes more moved brotli
# by 2.8 KB, so brotli's figure swings by kilobytes between near-identical builds. Its
# guard moves to 1,038,000 (about 3.5 KB above, as gzip's is).
# The Search panel's knobs as KnobRows (sharding, shard group, reshard, context exchange,
# microbatches, and the request's framework, precision, dispatcher, metrics and overlaps)
# kept in the URL with the request took main.wasm from 1,410,537 to 1,414,522 gzip and
# 1,030,514 to 1,036,780 brotli (5,247,540 to 5,259,557 raw; brotli read 1,034,498 to
# 1,036,780 between builds a few hundred raw bytes apart): both guards move about 3.5 KB
# above, to 1,418,000 gzip and 1,040,300 brotli.
wasm_brotli_guard=1040300
wasm_gzip_guard=1418000
check_wasm_size() {
  local size br gz planner
  size=$(wc -c <dist/main.wasm)
  br=$(wc -c <dist/main.wasm.br)
  gz=$(wc -c <dist/main.wasm.gz)
  planner=$(wc -c <dist/planner.wasm)
  echo "    dist/main.wasm: $br bytes brotli (guard $wasm_brotli_guard), $gz gzip (guard $wasm_gzip_guard), $size raw; dist/planner.wasm: $planner bytes raw"
  [ "$br" -le "$wasm_brotli_guard" ] || die "dist/main.wasm.br is $br bytes, over the $wasm_brotli_guard-byte guard"
  [ "$gz" -le "$wasm_gzip_guard" ] || die "dist/main.wasm.gz is $gz bytes, over the $wasm_gzip_guard-byte guard"
}

build() {
  mkdir -p bin dist
  step "generate ui/*_gen.go (vugugen)" generate
  step "build bin/pipeplan" build_cli
  step "build dist/ (browser app)" build_web
  check_wasm_size
}

# wrangler, which runs the Worker locally (workerd) and deploys it, is an npm package
# pinned in wasm/worker/package-lock.json; node_modules/ is not committed. Install scripts
# are not run: the packages carry their binaries (workerd, esbuild) and need none.
wrangler_install() {
  if [ -x wasm/worker/node_modules/.bin/wrangler ]; then return; fi
  if ! command -v npm >/dev/null; then
    echo "npm is not on PATH: wrangler is not installed (the Worker's test will skip)" >&2
    return
  fi
  (cd wasm/worker && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
}

# The Worker: workers-assets-gen (a Go tool, see go.mod) writes the JavaScript shim into
# wasm/worker/build/, beside which the Go program is compiled to app.wasm.
build_worker() {
  go tool workers-assets-gen -mode=go -o wasm/worker/build
  GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o wasm/worker/build/app.wasm ./wasm/worker
}

worker() {
  step "wrangler (npm ci in wasm/worker)" wrangler_install
  step "build wasm/worker/build/ (the Worker)" build_worker
  echo "    wasm/worker/build/app.wasm: $(wc -c <wasm/worker/build/app.wasm) bytes, $(gzip -9 -c wasm/worker/build/app.wasm | wc -c) gzipped"
}

gofmt_check() {
  local bad
  bad=$(find . -name '*.go' -not -name '*_gen.go' -not -path './.git/*' -not -path '*/node_modules/*' -print0 |
    xargs -0 gofmt -l)
  if [ -n "$bad" ]; then
    echo "gofmt would change (run gofmt -w on them):" >&2
    echo "$bad" >&2
    return 1
  fi
}

go_vet() {
  go vet ./...
  # Files that only build for the browser, and the browser test.
  GOOS=js GOARCH=wasm go vet ./wasm/app ./wasm/planner ./wasm/planner/ops ./core/... ./wasm/worker ./share ./share/sharetest ./share/api
  go vet -tags browser ./wasm/app
  GOOS=js GOARCH=wasm go vet ./ui
  go vet -tags wrangler ./wasm/worker
}

wasm_tests() {
  command -v node >/dev/null || { echo "node is not on PATH: the WebAssembly tests run in node" >&2; return 1; }
  GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" ./core/...
}

# browser_test builds dist/ as ./build.sh build does, then drives chromium over it
# (wasm/app/browser_test.go; PIPEPLAN_DIST tells the test where the site is), verbosely,
# to see whether it ran: without chromium (and without CI) it skips, which go test alone
# would report as "ok". Its output is shown when it fails; a skip sets $skip to the
# test's reason.
browser_test() {
  mkdir -p dist
  build_web >/dev/null
  check_wasm_size
  PIPEPLAN_DIST=$PWD/dist verbose_test TestBrowser -tags browser -count=1 -timeout 15m -v -run '^TestBrowser' ./wasm/app
}

# verbose_test NAME ARGS... runs go test ARGS (with -v) and reports a skip of test NAME
# as a skip, with t.Skip's reason, and its figures (lines the test logs) otherwise.
verbose_test() {
  local name=$1 out
  shift
  out=$(mktemp)
  if ! go test "$@" >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    return 1
  fi
  if grep -q -- "^--- SKIP: $name (" "$out"; then
    # go test -v prints the reason (t.Skip's message) on the line before.
    skip=$(grep -B1 -- "^--- SKIP: $name (" "$out" | sed -n '1s/^ *[^ ]*_test.go:[0-9]*: //p')
    skip=${skip:-$name skipped}
  else
    grep -- '^--- \|^ok \|^    [a-z_]*_test.go:[0-9]*: ' "$out" || true
  fi
  rm -f "$out"
}

# fuzz_all SECONDS runs every fuzz target (go test -list finds them, package by package)
# for SECONDS each, printing its execs and the new inputs it found.
fuzz_all() {
  local secs=$1 list pkg names name
  [[ $secs =~ ^[1-9][0-9]*$ ]] || die "fuzz: SECONDS must be a whole number, got $secs"
  # go test -list prints a package's names, then its "ok" line.
  list=$(go test -list '^Fuzz' ./... | awk '/^Fuzz/ {n = n " " $1} /^ok / {if (n != "") print $2 n; n = ""}') ||
    die "fuzz: go test -list failed"
  [ -n "$list" ] || die "fuzz: no fuzz targets found"
  while read -r pkg names; do
    for name in $names; do
      step "fuzz $name ($pkg, $secs s)" fuzz_one "$pkg" "$name" "$secs"
    done
  done <<<"$list"
}

fuzz_one() {
  local out
  out=$(mktemp)
  if ! go test -run '^$' -fuzz "^$2\$" -fuzztime "${3}s" -fuzzminimizetime "${FUZZ_MINIMIZE:-10s}" "$1" >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    return 1
  fi
  { grep '^fuzz: elapsed' "$out" || true; } | tail -n 1 |
    sed -E 's/^fuzz: elapsed: ([^,]*), execs: ([0-9]+) [^,]*, (.*)$/    \2 execs in \1, \3/'
  rm -f "$out"
}

# The built Worker under wrangler dev on loopback: the API suite, then the load test
# (1,000 posts and 1,000 gets, 50 at a time), whose figures -v prints.
wrangler_test() { verbose_test TestWrangler -tags wrangler -count=1 -v -run '^TestWrangler' ./wasm/worker; }

case "${1:-}" in
  build)
    build
    ;;
  serve)
    build
    exec bin/pipeplan serve --dir dist --addr "127.0.0.1:${PORT:-8080}"
    ;;
  worker)
    worker
    ;;
  test)
    start=$SECONDS
    step "generate ui/*_gen.go (vugugen)" generate
    step "gofmt (all .go but *_gen.go)" gofmt_check
    step "go vet" go_vet
    step "go test ./... (native)" go test ./...
    step "go test ./core/... (js/wasm in node)" wasm_tests
    step "browser test (chromium)" browser_test
    worker
    step "Worker under wrangler dev: API and load test" wrangler_test
    if [ ${#skipped[@]} -gt 0 ]; then
      echo "tests passed in $((SECONDS - start)) s; skipped: ${skipped[*]}"
    else
      echo "all tests passed in $((SECONDS - start)) s"
    fi
    ;;
  bench)
    # The searches take seconds each: run them once (-benchtime=1x), the rest as usual.
    step "benchmarks (./core/...)" go test -run '^$' -bench . -skip '^BenchmarkSearch' -benchmem ./core/...
    step "search benchmarks (./core/search/evaluate, once each)" go test -run '^$' -bench '^BenchmarkSearch' -benchtime=1x ./core/search/evaluate
    if command -v node >/dev/null; then
      step "search benchmarks under WebAssembly (node, Llama-3-8B)" \
        env GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" -run '^$' -bench '^BenchmarkSearchLlama3_8B' -benchtime=1x ./core/search/evaluate
      # Issue 8's cases, as the page's planner runs them: the small ones 40 times (the
      # first run of a fresh node compiles the code), the large once (they take seconds).
      step "small scale benchmarks under WebAssembly (node, 40 runs)" \
        env GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" -run '^$' -bench '^BenchmarkScale/(graphcore|transfer)' -benchtime=40x ./core/plan
      step "large scale benchmarks under WebAssembly (node, once each)" \
        env GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" -run '^$' -bench '^BenchmarkScale/(bench|zero|equal|huge)' -benchtime=1x ./core/plan
      # The same whole, through Run from the files' bytes (a minute: the million layers
      # take most of it on one thread).
      step "whole-request scale benchmarks under WebAssembly (node)" \
        env GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" -run '^$' -bench '^BenchmarkRunScale' -benchtime=1x ./core/request
    fi
    ;;
  fuzz)
    start=$SECONDS
    fuzz_all "${2:-60}"
    echo "every fuzz target ran ${2:-60} s without a crasher ($((SECONDS - start)) s)"
    ;;
  *)
    sed -n '2,13s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
