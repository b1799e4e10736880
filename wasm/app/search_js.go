//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"syscall/js"
)

// searchJS is window.pipeplan.search(query, onProgress, options): it returns a Promise of
// the search's answer (docs/search.md). The search runs in a goroutine that yields to the
// event loop every searchSlice, so the page keeps drawing and answering while it runs.
// The promise has a cancel() method, and options.signal may be an AbortSignal: either
// stops the search, and the promise rejects with a DOMException named AbortError. A bad
// query resolves to an error object, as pipeplan.plan returns one. onProgress, when a
// function, receives {done, total, evaluated, best} objects as the search goes.
func searchJS(_ js.Value, args []js.Value) any {
	var text string
	if bad := callJSON(func(s string) string { text = s; return "" }, args); bad != "" {
		return js.Global().Get("Promise").Call("resolve", parsed(bad))
	}
	var onProgress, signal js.Value
	if len(args) > 1 && args[1].Type() == js.TypeFunction {
		onProgress = args[1]
	}
	if len(args) > 2 && args[2].Type() == js.TypeObject {
		if s := args[2].Get("signal"); s.Type() == js.TypeObject {
			signal = s
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var resolve, reject js.Value
	executor := js.FuncOf(func(_ js.Value, a []js.Value) any { resolve, reject = a[0], a[1]; return nil })
	promise := js.Global().Get("Promise").New(executor)
	executor.Release()
	cancelFunc := js.FuncOf(func(js.Value, []js.Value) any { cancel(); return nil })
	promise.Set("cancel", cancelFunc)
	if !signal.IsUndefined() {
		if signal.Get("aborted").Truthy() {
			cancel()
		}
		signal.Call("addEventListener", "abort", cancelFunc)
	}
	y := newYielder()
	go func() {
		defer func() {
			cancel()
			y.release()
			promise.Set("cancel", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
			if !signal.IsUndefined() {
				signal.Call("removeEventListener", "abort", cancelFunc)
			}
			cancelFunc.Release()
		}()
		var progress func(string)
		if !onProgress.IsUndefined() {
			progress = func(p string) { invokeQuietly(onProgress, parsed(p)) }
		}
		out, err := safeSearch(ctx, text, progress, y.yield)
		switch {
		case err == context.Canceled:
			reject.Invoke(abortError())
		case err != nil:
			reject.Invoke(js.Global().Get("Error").New(err.Error()))
		default:
			resolve.Invoke(parsed(out))
		}
	}()
	return promise
}

// safeSearch is searchJSON with a panic turned into an error object.
func safeSearch(ctx context.Context, text string, progress func(string), yield func()) (out string, err error) {
	defer recovered(&out)
	return searchJSON(ctx, text, progress, yield)
}

// invokeQuietly calls a JS callback; an exception it throws is logged, not fatal.
func invokeQuietly(f js.Value, args ...any) {
	defer func() {
		if r := recover(); r != nil {
			js.Global().Get("console").Call("error", fmt.Sprintf("pipeplan.search: onProgress threw: %v", r))
		}
	}()
	f.Invoke(args...)
}

// abortError is what a cancelled search rejects with: a DOMException named AbortError,
// as fetch rejects when its signal aborts.
func abortError() js.Value {
	if d := js.Global().Get("DOMException"); d.Type() == js.TypeFunction {
		return d.New("the search was cancelled", "AbortError")
	}
	e := js.Global().Get("Error").New("the search was cancelled")
	e.Set("name", "AbortError")
	return e
}

// yielder lets the event loop run: yield blocks the goroutine until a message posted to
// itself (a MessageChannel, which unlike setTimeout is not clamped to 4 ms) comes back;
// while every goroutine is blocked, the Go runtime returns to JavaScript.
type yielder struct {
	ch     chan struct{}
	onMsg  js.Func
	port   js.Value // posts to the other port, whose onmessage is onMsg
	closer func()
}

func newYielder() *yielder {
	y := &yielder{ch: make(chan struct{}, 1)}
	y.onMsg = js.FuncOf(func(js.Value, []js.Value) any {
		select {
		case y.ch <- struct{}{}:
		default:
		}
		return nil
	})
	if mc := js.Global().Get("MessageChannel"); mc.Type() == js.TypeFunction {
		c := mc.New()
		c.Get("port1").Set("onmessage", y.onMsg)
		y.port = c.Get("port2")
		y.closer = func() { c.Get("port1").Call("close"); c.Get("port2").Call("close") }
	}
	return y
}

func (y *yielder) yield() {
	if y.port.IsUndefined() {
		js.Global().Call("setTimeout", y.onMsg, 0)
	} else {
		y.port.Call("postMessage", nil)
	}
	<-y.ch
}

func (y *yielder) release() {
	if y.closer != nil {
		y.closer()
	}
	y.onMsg.Release()
}
