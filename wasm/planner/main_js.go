//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"sync"
	"syscall/js"

	"pipeplan/wasm/internal/promise"
	"pipeplan/wasm/planner/ops"
)

var (
	mu      sync.Mutex
	running = map[int]context.CancelFunc{}
)

func main() {
	ops.Models.Load = loadStored
	ops.Models.Keep = keepStored
	ops.Models.Files = storedFiles
	ops.Models.Delete = deleteStored
	ops.Models.Used = func(key string) { js.Global().Call("pipeplanUseFile", key) }
	self := js.Global()
	self.Set("onmessage", js.FuncOf(func(_ js.Value, args []js.Value) any {
		receive(args[0].Get("data"))
		return nil
	}))
	if q := self.Get("pipeplanQueue"); q.Truthy() {
		for i := range q.Length() {
			receive(q.Index(i))
		}
		q.Set("length", 0)
	}
	select {}
}

// receive starts an operation, or cancels one ({id, op: "cancel"}).
func receive(m js.Value) {
	id := m.Get("id").Int()
	op := m.Get("op").String()
	if op == "cancel" {
		mu.Lock()
		if cancel := running[id]; cancel != nil {
			cancel()
		}
		mu.Unlock()
		return
	}
	if op == "import" {
		go importFile(id, m.Get("args"))
		return
	}
	var args []string
	if a := m.Get("args"); a.Truthy() {
		for i := range a.Length() {
			v := a.Index(i)
			if v.Type() == js.TypeString {
				args = append(args, v.String())
				continue
			}
			// An object the page passed as it is: its JSON, checked (worker.js).
			what := ""
			if i > 0 {
				what = argNames[op]
			}
			out := js.Global().Call("pipeplanJSON", v, what)
			if e := out.Get("error"); e.Type() == js.TypeString {
				b, _ := json.Marshal(map[string]string{"error": e.String()})
				post(map[string]any{"id": id, "result": string(b) + "\n"})
				return
			}
			args = append(args, out.Get("text").String())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	mu.Lock()
	running[id] = cancel
	mu.Unlock()
	go func() {
		defer func() {
			mu.Lock()
			delete(running, id)
			mu.Unlock()
			cancel()
		}()
		var y *yielder
		if op == "search" {
			y = newYielder()
			defer y.release()
		}
		progress := func(p string) { post(map[string]any{"id": id, "progress": p}) }
		var yield func()
		if y != nil {
			yield = y.yield
		}
		out, err := ops.Do(ctx, op, args, progress, yield)
		switch {
		case err != nil && out != "":
			post(map[string]any{"id": id, "error": err.Error(), "abort": ctx.Err() != nil, "result": out})
		case err != nil:
			post(map[string]any{"id": id, "error": err.Error(), "abort": ctx.Err() != nil})
		default:
			post(map[string]any{"id": id, "result": out})
		}
	}()
}

func post(m map[string]any) { js.Global().Call("postMessage", m) }

// argNames name an operation's second argument in its errors.
var argNames = map[string]string{"export": "options", "exports": "options", "calibrate": "profile"}

// yielder lets the worker's event loop run (and a cancel message come in) during a
// search: yield blocks the goroutine until a message posted to itself (a MessageChannel,
// which unlike setTimeout is not clamped to 4 ms) comes back; while every goroutine is
// blocked, the Go runtime returns to JavaScript.
type yielder struct {
	ch    chan struct{}
	onMsg js.Func
	c     js.Value
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
	y.c = js.Global().Get("MessageChannel").New()
	y.c.Get("port1").Set("onmessage", y.onMsg)
	return y
}

func (y *yielder) yield() {
	y.c.Get("port2").Call("postMessage", nil)
	<-y.ch
}

func (y *yielder) release() {
	y.c.Get("port1").Call("close")
	y.c.Get("port2").Call("close")
	y.onMsg.Release()
}

// importFile reads a model file the page passed as it is (a File: the page's thread never
// reads it), keeps it in the browser's storage (worker.js, pipeplanReadFile) and answers
// ops.Store.Import's JSON. args: [name, file].
func importFile(id int, args js.Value) {
	name := args.Index(0).String()
	v, err := promise.Await(js.Global().Call("pipeplanReadFile", args.Index(1), ops.MaxFileBytes))
	if err != nil {
		b, _ := json.Marshal(map[string]string{"error": name + " could not be read: " + err.Error()})
		post(map[string]any{"id": id, "result": string(b)})
		return
	}
	if e := v.Get("error"); e.Type() == js.TypeString {
		b, _ := json.Marshal(map[string]string{"error": e.String()})
		post(map[string]any{"id": id, "result": string(b)})
		return
	}
	buf := v.Get("data")
	data := make([]byte, buf.Length())
	js.CopyBytesToGo(data, buf)
	post(map[string]any{"id": id, "result": ops.Models.Import(name, v.Get("hash").String(), data, v.Get("kept").Bool())})
}

// loadStored reads a model file kept in the browser's storage (ops.Store.Load).
func loadStored(hash string) ([]byte, bool, error) {
	v, err := promise.Await(js.Global().Call("pipeplanLoadFile", hash))
	if err != nil {
		return nil, false, err
	}
	if v.IsNull() || v.IsUndefined() {
		return nil, false, nil
	}
	data := make([]byte, v.Length())
	js.CopyBytesToGo(data, v)
	return data, true, nil
}

// keepStored puts a model file in the browser's storage (ops.Store.Keep).
func keepStored(hash string, data []byte) bool {
	buf := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(buf, data)
	v, err := promise.Await(js.Global().Call("pipeplanKeepFile", hash, buf))
	return err == nil && v.Truthy()
}

// storedFiles lists the model files in the browser's storage (ops.Store.Files).
func storedFiles() ([]ops.StoredFile, error) {
	v, err := promise.Await(js.Global().Call("pipeplanStoredFiles"))
	if err != nil {
		return nil, err
	}
	var files []ops.StoredFile
	if err := json.Unmarshal([]byte(v.String()), &files); err != nil {
		return nil, err
	}
	return files, nil
}

// deleteStored deletes model files from the browser's storage (ops.Store.Delete).
func deleteStored(keys []string) error {
	list := make([]any, len(keys))
	for i, k := range keys {
		list[i] = k
	}
	_, err := promise.Await(js.Global().Call("pipeplanDeleteFiles", list))
	return err
}
