//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main explains how to build the Worker: it runs only in workerd, as WebAssembly.
func main() {
	fmt.Fprintln(os.Stderr, "wasm/worker is the Cloudflare Worker: build it with ./build.sh worker (GOOS=js GOARCH=wasm) and run it with wrangler;\n`pipeplan share-server` runs the same API natively")
	os.Exit(2)
}
