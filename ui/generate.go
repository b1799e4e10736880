package ui

// The components' Go code (*_gen.go) is generated from the .vugu files by vugugen, pinned
// in go.mod's tool directive, then trimmed by cmd/vgtrim (the same nodes, built by the
// small functions of vgnode.go: a smaller main.wasm); build.sh runs this and gofmt on the
// output.
//go:generate go tool vugugen -skip-go-mod -skip-main .
//go:generate go run ../cmd/vgtrim .
