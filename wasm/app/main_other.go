//go:build !js

package main

import (
	"fmt"
	"os"
)

// main explains how to build the app: it runs only in a browser, as WebAssembly.
func main() {
	fmt.Fprintln(os.Stderr, "wasm/app is the browser app: build it with ./build.sh build (GOOS=js GOARCH=wasm)")
	os.Exit(2)
}
