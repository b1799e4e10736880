//go:build !js

package main

import (
	"fmt"
	"os"
)

// main explains how to build the planner: it runs only in a browser's Web Worker.
func main() {
	fmt.Fprintln(os.Stderr, "wasm/planner is the browser's planner (planner.wasm): build it with ./build.sh build (GOOS=js GOARCH=wasm)")
	os.Exit(2)
}
