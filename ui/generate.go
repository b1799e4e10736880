package ui

// The components' Go code (*_gen.go) is generated from the .vugu files by vugugen, pinned
// in go.mod's tool directive; build.sh runs this and gofmt on the output.
//go:generate go tool vugugen -skip-go-mod -skip-main .
