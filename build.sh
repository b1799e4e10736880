#!/usr/bin/env bash
# pipeplan's one entry point. Usage: ./build.sh build|serve|worker|test|bench
#
#   build   the command-line tool (bin/pipeplan) and the browser app (dist/)
#   serve   build, then serve dist/ on http://127.0.0.1:${PORT:-8080}/
#   worker  the shared-plans Worker (wasm/worker/build/) and wrangler (npm ci)
#   test    everything CI runs: gofmt, go vet, go test natively, the core tests under
#           WebAssembly in node, the browser test in chromium and the Worker under
#           wrangler dev (CI=true: both required)
#   bench   the core benchmarks
set -euo pipefail
cd "$(dirname "$0")"

die() { echo "build.sh: $*" >&2; exit 1; }

# step NAME COMMAND...: runs one named step, timing it. A failing command anywhere in it
# stops the script (set -e applies inside the step's functions), and the EXIT trap names
# the step that failed.
current=
trap 'rc=$?; [ "$rc" -ne 0 ] && [ -n "$current" ] && echo "build.sh: FAILED: $current (exit $rc)" >&2' EXIT
step() {
  current=$1; shift
  echo "==> $current"
  local start=$SECONDS
  "$@"
  echo "    ok: $current ($((SECONDS - start)) s)"
  current=
}

command -v go >/dev/null || die "go is not on PATH (Go 1.26 is needed: https://go.dev/dl/)"
GOROOT=$(go env GOROOT)
WASM_EXEC_JS=$GOROOT/lib/wasm/wasm_exec.js
[ -f "$WASM_EXEC_JS" ] || die "$WASM_EXEC_JS is missing: is this Go 1.24 or newer?"

build_cli() { go build -trimpath -o bin/pipeplan ./cmd/pipeplan; }

build_web() {
  GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o dist/main.wasm ./wasm/app
  cp index.html "$WASM_EXEC_JS" dist/
  rm -rf dist/public
  cp -R public dist/public
}

build() {
  mkdir -p bin dist
  step "build bin/pipeplan" build_cli
  step "build dist/ (browser app)" build_web
  echo "    dist/main.wasm: $(wc -c <dist/main.wasm) bytes, $(gzip -9 -c dist/main.wasm | wc -c) gzipped"
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
  GOOS=js GOARCH=wasm go vet ./wasm/app ./core/... ./wasm/worker ./wasm/worker/share ./wasm/worker/share/sharetest
  go vet -tags browser ./wasm/app
  go vet -tags wrangler ./wasm/worker
}

wasm_tests() {
  command -v node >/dev/null || { echo "node is not on PATH: the WebAssembly tests run in node" >&2; return 1; }
  GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" ./core/...
}

browser_test() { go test -tags browser -count=1 -run '^TestBrowser' ./wasm/app; }

# The built Worker under wrangler dev on loopback: the API suite, then the load test
# (1,000 posts and 1,000 gets, 50 at a time), whose figures -v prints.
wrangler_test() { go test -tags wrangler -count=1 -v -run '^TestWrangler' ./wasm/worker; }

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
    step "gofmt (all .go but *_gen.go)" gofmt_check
    step "go vet" go_vet
    step "go test ./... (native)" go test ./...
    step "go test ./core/... (js/wasm in node)" wasm_tests
    step "browser test (chromium)" browser_test
    worker
    step "Worker under wrangler dev: API and load test" wrangler_test
    echo "all tests passed in $((SECONDS - start)) s"
    ;;
  bench)
    step "benchmarks (./core/...)" go test -run '^$' -bench . -benchmem ./core/...
    ;;
  *)
    sed -n '2,11s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
