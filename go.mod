module pipeplan

go 1.26

require (
	github.com/andybalholm/brotli v1.1.1
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/schollz/progressbar/v3 v3.14.6
	github.com/syumai/workers v0.29.0
	github.com/vugu/vjson v0.0.0-20200505061711-f9cbed27d3d9
	github.com/vugu/vugu v0.4.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/vugu/html v0.0.0-20190914200101-c62dc20b8289 // indirect
	github.com/vugu/xxhash v0.0.0-20191111030615-ed24d0179019 // indirect
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/term v0.22.0 // indirect
)

tool (
	github.com/syumai/workers/cmd/workers-assets-gen
	github.com/vugu/vugu/cmd/vugugen
)
