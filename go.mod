module pipeplan

go 1.26

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/syumai/workers v0.29.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/sys v0.45.0 // indirect
)

tool github.com/syumai/workers/cmd/workers-assets-gen
