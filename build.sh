#!/usr/bin/env bash
# pipeplan's one entry point. Usage: ./build.sh build|serve|test|bench
#
#   build   the command-line tool (bin/pipeplan) and the browser app (dist/)
#   serve   build, then serve dist/ on http://127.0.0.1:${PORT:-8080}/
#   test    everything CI runs: gofmt, go vet, go test natively, the core tests under
#           WebAssembly in node, and the browser test in chromium (CI=true: required)
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
  GOOS=js GOARCH=wasm go vet ./wasm/app ./core/...
  go vet -tags browser ./wasm/app
}

wasm_tests() {
  command -v node >/dev/null || { echo "node is not on PATH: the WebAssembly tests run in node" >&2; return 1; }
  GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" ./core/...
}

browser_test() { go test -tags browser -count=1 -run '^TestBrowser' ./wasm/app; }

case "${1:-}" in
  build)
    build
    ;;
  serve)
    build
    exec bin/pipeplan serve --dir dist --addr "127.0.0.1:${PORT:-8080}"
    ;;
  test)
    start=$SECONDS
    step "gofmt (all .go but *_gen.go)" gofmt_check
    step "go vet" go_vet
    step "go test ./... (native)" go test ./...
    step "go test ./core/... (js/wasm in node)" wasm_tests
    step "browser test (chromium)" browser_test
    echo "all tests passed in $((SECONDS - start)) s"
    ;;
  bench)
    # The searches take seconds each: run them once (-benchtime=1x), the rest as usual.
    step "benchmarks (./core/...)" go test -run '^$' -bench . -skip '^BenchmarkSearch' -benchmem ./core/...
    step "search benchmarks (./core/search, once each)" go test -run '^$' -bench '^BenchmarkSearch' -benchtime=1x ./core/search
    if command -v node >/dev/null; then
      step "search benchmarks under WebAssembly (node, Llama-3-8B)" \
        env GOOS=js GOARCH=wasm go test -exec="$GOROOT/lib/wasm/go_js_wasm_exec" -run '^$' -bench '^BenchmarkSearchLlama3_8B' -benchtime=1x ./core/search
    fi
    ;;
  *)
    sed -n '2,9s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
