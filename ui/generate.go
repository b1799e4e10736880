package ui

// The components' Go code (*_gen.go) is generated from the .vugu files by vugugen, pinned
// in go.mod's tool directive; ui/droplog then removes the `log` import vugugen writes
// into every file (unused, and its initialization costs main.wasm about 60 KB). build.sh
// runs this and gofmt on the output.
//go:generate go tool vugugen -skip-go-mod -skip-main .
//go:generate go run ./droplog
