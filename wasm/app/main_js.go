//go:build js && wasm

package main

import (
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"

	"pipeplan/ui"
)

// storageKey is the localStorage key of the last request's fragment.
const storageKey = "pipeplan.request"

func main() {
	exposeAPI()
	doc := js.Global().Get("document")
	if doc.Call("getElementById", "app").IsNull() {
		select {} // a page that only wants the JS API (public/embed-example.html)
	}
	h := &browser{}
	req, notice := startRequest()
	app := ui.NewApp(req, h, ui.Run)
	app.Embed = queryParam("embed") == "1"
	if notice != "" {
		app.Notice, app.NoticeBad = notice, true
	}
	r, err := domrender.New("#app")
	if err != nil {
		panic(err)
	}
	defer r.Release()
	env, err := vugu.NewBuildEnv(r.EventEnv())
	if err != nil {
		panic(err)
	}
	h.env = r.EventEnv()
	if !app.Embed {
		app.Keep()
	}
	// Back, Forward and a pasted link change the fragment: show its request.
	onNav := js.FuncOf(func(js.Value, []js.Value) any {
		f := strings.TrimPrefix(js.Global().Get("location").Get("hash").String(), "#")
		go func() {
			h.env.Lock()
			if cur, err := ui.EncodeFragment(app.Req); f != "" && (err != nil || cur != f) {
				app.Restore(f)
				storageSet(storageKey, f)
			}
			h.env.UnlockRender()
		}()
		return nil
	})
	js.Global().Call("addEventListener", "popstate", onNav)
	js.Global().Call("addEventListener", "hashchange", onNav)
	app.DeferKeep = true
	root := &ui.Root{A: app}
	for ok := true; ok; ok = r.EventWait() {
		t0 := time.Now()
		out := env.RunBuild(root)
		t1 := time.Now()
		if err := r.Render(out); err != nil {
			panic(err)
		}
		t2 := time.Now()
		h.afterRender()
		// The URL and localStorage follow once the plan is on the screen.
		h.env.Lock()
		app.FlushKeep()
		h.env.UnlockOnly()
		js.Global().Set("pipeplanTimings", map[string]any{
			"plan_ms":   ms(app.Elapsed),
			"build_ms":  ms(t1.Sub(t0)),
			"render_ms": ms(t2.Sub(t1)),
			"keep_ms":   ms(time.Since(t2)),
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// startRequest picks the request a page load shows: the URL fragment's, else the one kept
// in localStorage, else the first visit's. A fragment that does not decode is reported.
func startRequest() (*ui.Request, string) {
	notice := ""
	if f := strings.TrimPrefix(js.Global().Get("location").Get("hash").String(), "#"); f != "" {
		r, err := ui.DecodeFragment(f)
		if err == nil {
			return r, ""
		}
		notice = err.Error() + " Showing the last request instead."
	}
	if f := storageGet(storageKey); f != "" {
		if r, err := ui.DecodeFragment(f); err == nil {
			return r, notice
		}
	}
	return nil, notice
}

// browser is ui.Host in a browser.
type browser struct {
	env   vugu.EventEnv
	mu    sync.Mutex
	focus string
	// yielded is when a long computation last let the browser run.
	yielded time.Time
}

func (b *browser) Background(f func()) { go f() }

func (b *browser) Update(f func(), render bool) {
	b.env.Lock()
	f()
	if render {
		b.env.UnlockRender()
	} else {
		b.env.UnlockOnly()
	}
}

// Yield gives the browser a turn (events, rendering) every 25 ms of a long computation:
// a goroutine that sleeps returns control to JavaScript's event loop.
func (b *browser) Yield() {
	if time.Since(b.yielded) < 25*time.Millisecond {
		return
	}
	time.Sleep(time.Millisecond)
	b.yielded = time.Now()
}

func (b *browser) Keep(fragment string, push bool) {
	u := js.Global().Get("URL").New(js.Global().Get("location").Get("href"))
	u.Set("hash", fragment)
	method := "replaceState"
	if push {
		method = "pushState"
	}
	if u.Call("toString").String() != js.Global().Get("location").Get("href").String() {
		js.Global().Get("history").Call(method, nil, "", u.Call("toString"))
	}
	storageSet(storageKey, fragment)
}

func (b *browser) Copy(text string) {
	defer func() { recover() }()
	cb := js.Global().Get("navigator").Get("clipboard")
	if cb.Truthy() {
		cb.Call("writeText", text).Call("catch", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
	}
}

func (b *browser) Download(name, mime string, data []byte) {
	arr := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(arr, data)
	blob := js.Global().Get("Blob").New([]any{arr}, map[string]any{"type": mime})
	url := js.Global().Get("URL").Call("createObjectURL", blob)
	a := js.Global().Get("document").Call("createElement", "a")
	a.Set("href", url)
	a.Set("download", name)
	a.Call("click")
	js.Global().Get("URL").Call("revokeObjectURL", url)
}

// Link is the page's own address (any host, any sub-path) with the fragment.
func (b *browser) Link(fragment string, embed bool) string {
	loc := js.Global().Get("location")
	base := loc.Get("origin").String() + loc.Get("pathname").String()
	if embed {
		base += "?embed=1"
	}
	return base + "#" + fragment
}

func (b *browser) ReadFile(e vugu.DOMEvent, done func(string, []byte)) {
	ev := js.Value(e.JSEvent())
	var files js.Value
	if dt := ev.Get("dataTransfer"); dt.Truthy() {
		files = dt.Get("files")
	} else {
		files = js.Value(e.JSEventTarget()).Get("files")
	}
	if !files.Truthy() || files.Length() == 0 {
		return
	}
	f := files.Index(0)
	name := f.Get("name").String()
	var then, fail js.Func
	release := func() { then.Release(); fail.Release() }
	then = js.FuncOf(func(_ js.Value, args []js.Value) any {
		buf := js.Global().Get("Uint8Array").New(args[0])
		data := make([]byte, buf.Length())
		js.CopyBytesToGo(data, buf)
		release()
		go func() {
			b.env.Lock()
			done(name, data)
			b.env.UnlockRender()
		}()
		return nil
	})
	fail = js.FuncOf(func(js.Value, []js.Value) any {
		release()
		go func() {
			b.env.Lock()
			done(name, nil)
			b.env.UnlockRender()
		}()
		return nil
	})
	f.Call("arrayBuffer").Call("then", then, fail)
	// Let the same file be picked again after it was fixed.
	if t := js.Value(e.JSEventTarget()); t.Get("type").String() == "file" {
		t.Set("value", "")
	}
}

func (b *browser) BarX(e vugu.DOMEvent, width float64) float64 {
	r := js.Value(e.JSEventCurrentTarget()).Call("getBoundingClientRect")
	w := r.Get("width").Float()
	if w <= 0 {
		return 0
	}
	return (e.PropFloat64("clientX") - r.Get("left").Float()) / w * width
}

func (b *browser) Capture(e vugu.DOMEvent) {
	defer func() { recover() }()
	t := js.Value(e.JSEventCurrentTarget())
	if svg := t.Get("ownerSVGElement"); svg.Truthy() {
		svg.Call("setPointerCapture", e.PropFloat64("pointerId"))
	}
}

func (b *browser) Focus(selector string) {
	b.mu.Lock()
	b.focus = selector
	b.mu.Unlock()
}

func (b *browser) afterRender() {
	b.mu.Lock()
	sel := b.focus
	b.focus = ""
	b.mu.Unlock()
	if sel != "" {
		if el := js.Global().Get("document").Call("querySelector", sel); el.Truthy() {
			el.Call("focus")
		}
	}
}

func queryParam(name string) string {
	v := js.Global().Get("URL").New(js.Global().Get("location").Get("href")).Get("searchParams").Call("get", name)
	if v.IsNull() {
		return ""
	}
	return v.String()
}

// storageGet reads localStorage, which may be missing or refuse (private modes): "".
func storageGet(key string) (v string) {
	defer func() {
		if recover() != nil {
			v = ""
		}
	}()
	s := js.Global().Get("localStorage").Call("getItem", key)
	if s.IsNull() {
		return ""
	}
	return s.String()
}

// storageSet writes localStorage, ignoring a refusal (or a full store): the URL still
// keeps the state.
func storageSet(key, value string) {
	defer func() { recover() }()
	js.Global().Get("localStorage").Call("setItem", key, value)
}
