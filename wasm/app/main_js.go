//go:build js && wasm

package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"

	"pipeplan/core/wire"
	"pipeplan/ui"
	"pipeplan/wasm/internal/promise"
)

// storageKey is the localStorage key of the last request's fragment; serverKey the
// share server setting's.
const (
	storageKey = "pipeplan.request"
	serverKey  = "pipeplan.server"
)

func main() {
	planner := startPlanner()
	exposeAPI(planner)
	doc := js.Global().Get("document")
	if doc.Call("getElementById", "app").IsNull() {
		select {} // a page that only wants the JS API (public/embed-example.html)
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
	h := &browser{env: r.EventEnv(), planner: planner}
	req, fragment, notice, showing := startRequest()
	// The plans come from the planner worker: the page draws each when it comes.
	app := ui.NewApp(req, h, planner.Do)
	app.Search.Knobs = ui.FragmentSearch(fragment)
	app.Embed = queryParam("embed") == "1"
	if notice != "" {
		app.Notice, app.NoticeBad = notice, true
	}
	// The share server: the page's ?server=, else the setting.
	app.Server = strings.TrimRight(queryParam("server"), "/")
	if app.Server == "" {
		app.Server = storageGet(serverKey)
	}
	plan := queryParam("plan")
	switch {
	case plan != "":
		// ?plan=ID: the stored plan, once the server answers; meanwhile (and if it
		// cannot) the page shows what startRequest found, and keeps the URL as it is.
		app.OpenPlan(plan, showing)
	case !app.Embed:
		app.Keep()
	}
	// Back, Forward and a pasted link change the fragment: show its request.
	onNav := js.FuncOf(func(js.Value, []js.Value) any {
		f := strings.TrimPrefix(js.Global().Get("location").Get("hash").String(), "#")
		go func() {
			h.env.Lock()
			if cur, err := app.Fragment(); f != "" && (err != nil || cur != f) {
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
	app.DrawInFrames = true
	// A panic in an event handler (ui.RecoverHandlers recovers it, holding vugu's lock) or in
	// a background task is shown, and the page goes on.
	h.failed = func(v any) {
		app.Failure = fmt.Sprint("an action failed (", v, "); the page is still running.")
		console("error", "pipeplan: "+app.Failure)
	}
	ui.HandlerPanicked = h.failed
	root := &ui.Root{A: app}
	handlers := &ui.RecoverHandlers{}
	detached := newDetacher()
	// Renders wait for the next animation frame (index.html's pipeplanFrame), so that
	// each is a task of its own, apart from the planner's answer it draws (decoded in the
	// task that received it) and from the event that asked for it. What is asked for
	// meanwhile makes one render: wake holds one request. An edit's request is handed to
	// index.html's pipeplanKeep at once, which writes the URL and localStorage when the
	// page is idle.
	wake := make(chan bool, 1)
	go func() {
		for ok := true; ok; {
			ok = r.EventWait()
			select {
			case wake <- ok:
			default:
			}
		}
	}()
	// Go's garbage collector runs where an allocation finds the heap at its goal, which
	// on a page that only draws is most often inside a render; in WebAssembly it has one
	// thread, and a collection of the page's heap takes tens of milliseconds of its CPU
	// (issue 23: an import's frame waited for one). So index.html sets GOGC high enough
	// that a burst of renders (an import's) does not reach the goal, and calls
	// pipeplanCollect when the page has drawn a while and then been idle: the page
	// collects in a task of its own, between frames. (The collection runs before the
	// call's task ends: Go runs its goroutines until all wait before it returns to
	// JavaScript.)
	js.Global().Set("pipeplanCollect", js.FuncOf(func(js.Value, []js.Value) any {
		go runtime.GC()
		return nil
	}))
	for ok := true; ok; ok = <-wake {
		h.env.Lock()
		app.FlushKeep()
		h.env.UnlockOnly()
		frame()
		select {
		case ok = <-wake:
		default:
		}
		t0 := time.Now()
		var t1 time.Time
		err := renderOnce(r, env, root, handlers, &t1)
		if err != nil {
			// The page keeps running: it says what failed, and draws again (a failure
			// that repeats draws the banner outside vugu).
			console("error", "pipeplan: the page could not be drawn: "+err.Error())
			h.env.Lock()
			app.Failure = "the page could not draw what it was showing (" + err.Error() + "). Change the request, or reload the page."
			h.env.UnlockOnly()
			if err := renderOnce(r, env, root, handlers, &t1); err != nil {
				console("error", "pipeplan: drawing the failure failed too: "+err.Error())
			}
		}
		t2 := time.Now()
		h.env.Lock()
		detached.apply(app.Detached())
		// An answer that arrived while this render waited for its frame (an import's)
		// set a request to keep and its wake-up was taken by this render: hand it on now,
		// or the URL would keep the old request until the next event.
		app.FlushKeep()
		if app.DrawNext() { // a part left to the next frame: render again
			h.env.UnlockRender()
		} else {
			h.env.UnlockOnly()
		}
		h.afterRender()
		js.Global().Set("pipeplanTimings", map[string]any{
			"plan_ms":   ms(app.Elapsed),
			"build_ms":  ms(t1.Sub(t0)),
			"render_ms": ms(t2.Sub(t1)),
			"keep_ms":   ms(time.Since(t2)),
		})
	}
}

// frame waits for the next animation frame (index.html's pipeplanFrame; at once on a
// page without it).
func frame() {
	if f := js.Global().Get("pipeplanFrame"); f.Type() == js.TypeFunction {
		promise.Await(f.Invoke())
	}
}

// renderOnce builds the page and renders it, returning a panic in either as an error;
// t1 is set to when the build ended. What does not fit vugu's render buffer is cut
// first (ui.BoundRender), and said in the console: the page keeps its long strings out
// of the virtual DOM (ui.App.Detached), so this is only the net under that. The build's
// event handlers recover their panics (ui.RecoverHandlers).
func renderOnce(r *domrender.JSRenderer, env *vugu.BuildEnv, root *ui.Root, handlers *ui.RecoverHandlers, t1 *time.Time) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	out := env.RunBuild(root)
	*t1 = time.Now()
	handlers.Wrap(out)
	if n := ui.BoundRender(out); n > 0 {
		console("warn", "pipeplan: "+strconv.Itoa(n)+" strings too long for vugu's render buffer were cut or left out")
	}
	return r.Render(out)
}

func console(level, msg string) { js.Global().Get("console").Call(level, msg) }

// detacher sets the page's detached values (ui.Detached) on their elements after each
// render, where the element does not already hold the value (vugu may have replaced the
// element, or removed an attribute it did not set).
type detacher struct{ set js.Value }

func newDetacher() *detacher {
	return &detacher{js.Global().Get("Function").New("sel", "name", "attr", "v", `
const e = document.querySelector(sel);
if (!e) return;
if (attr) { if (e.getAttribute(name) !== v) e.setAttribute(name, v); }
else if (e[name] !== v) e[name] = v;`)}
}

func (d *detacher) apply(values []ui.Detached) {
	defer func() {
		if v := recover(); v != nil {
			console("error", fmt.Sprint("pipeplan: setting the page's long values: ", v))
		}
	}()
	for _, x := range values {
		d.set.Invoke(x.Selector, x.Name, x.Attr, x.Value)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// startRequest picks the request a page load shows: the URL fragment's, else the one kept
// in localStorage, else the first visit's, with the fragment it came from (which holds
// the Search panel's knobs too: ui.FragmentSearch), and says which ("the link's
// #fragment"). A fragment that does not decode is reported.
func startRequest() (*wire.Request, string, string, string) {
	notice := ""
	if f := strings.TrimPrefix(js.Global().Get("location").Get("hash").String(), "#"); f != "" {
		r, err := ui.DecodeFragment(f, inflate)
		if err == nil {
			return r, f, "", "the link's #fragment"
		}
		notice = err.Error() + " Showing the last request instead."
	}
	if f := storageGet(storageKey); f != "" {
		if r, err := ui.DecodeFragment(f, inflate); err == nil {
			return r, f, notice, "your last request"
		}
	}
	return nil, "", notice, "the first example"
}

// browser is ui.Host in a browser.
type browser struct {
	env vugu.EventEnv
	// failed shows a panic recovered in a handler or a background task (vugu's lock held).
	failed func(any)
	// planner is the planner worker's client (ImportFile hands it files).
	planner *client
	mu      sync.Mutex
	focus   string
	// yielded is when a long computation last let the browser run, as the time since
	// started (a time.Time here would keep time.Time's formatting and parsing in
	// main.wasm: the browser is used as an interface, ui.Host).
	yielded time.Duration
}

// started is when the program started.
var started = time.Now()

// Background runs f in a goroutine; a panic in it is shown (failed), not the end of
// the program.
func (b *browser) Background(f func()) {
	go func() {
		defer func() {
			if v := recover(); v != nil {
				b.env.Lock()
				b.failed(v)
				b.env.UnlockRender()
			}
		}()
		f()
	}()
}

// Update runs f holding vugu's lock, which it releases whatever f does (a panic is
// shown, and the page renders).
func (b *browser) Update(f func(), render bool) {
	b.env.Lock()
	defer func() {
		if v := recover(); v != nil {
			b.failed(v)
			render = true
		}
		if render {
			b.env.UnlockRender()
		} else {
			b.env.UnlockOnly()
		}
	}()
	f()
}

// Yield gives the browser a turn (events, rendering) every 25 ms of a long computation:
// a goroutine that sleeps returns control to JavaScript's event loop.
func (b *browser) Yield() {
	if time.Since(started)-b.yielded < 25*time.Millisecond {
		return
	}
	time.Sleep(time.Millisecond)
	b.yielded = time.Since(started)
}

// Keep puts the request in the URL's fragment and in localStorage, when the page is
// idle (index.html's pipeplanKeep). A stored plan's ?plan= goes: the fragment is the
// page's state now (and opens the plan where the server cannot).
func (b *browser) Keep(fragment string, push bool) {
	if k := js.Global().Get("pipeplanKeep"); k.Type() == js.TypeFunction {
		k.Invoke(fragment, push, storageKey)
	}
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

// eventFile is the file of a file input's change event or of a drop event; ok false
// when there is none.
func eventFile(e vugu.DOMEvent) (f js.Value, ok bool) {
	ev := js.Value(e.JSEvent())
	var files js.Value
	if dt := ev.Get("dataTransfer"); dt.Truthy() {
		files = dt.Get("files")
	} else {
		files = js.Value(e.JSEventTarget()).Get("files")
	}
	if !files.Truthy() || files.Length() == 0 {
		return js.Undefined(), false
	}
	return files.Index(0), true
}

// ImportFile posts the event's File to the planner worker as it is (postMessage clones a
// File without reading it): the worker reads, hashes and keeps it (its "import").
func (b *browser) ImportFile(e vugu.DOMEvent, done func(name, answer string, err error)) {
	f, ok := eventFile(e)
	if !ok {
		return
	}
	name := f.Get("name").String()
	b.planner.start("import", []any{name, f}, nil, func(answer string, err error) {
		go func() {
			b.env.Lock()
			done(name, answer, err)
			b.env.UnlockRender()
		}()
	})
	// Let the same file be picked again after it was fixed.
	if t := js.Value(e.JSEventTarget()); t.Get("type").String() == "file" {
		t.Set("value", "")
	}
}

func (b *browser) ReadFile(e vugu.DOMEvent, done func(string, []byte)) {
	f, ok := eventFile(e)
	if !ok {
		return
	}
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

// Fetch sends a request with the browser's fetch (api.Send): no net/http in main.wasm. It
// blocks its goroutine until the answer has come (it must not run in an event handler:
// App runs it in Background). The fetch is aborted after timeout.
func (b *browser) Fetch(method, url string, body []byte, limit int64, timeout time.Duration) (status int, answer []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("fetch: %v", v)
		}
	}()
	ctl := js.Global().Get("AbortController").New()
	abort := js.FuncOf(func(js.Value, []js.Value) any { ctl.Call("abort"); return nil })
	defer abort.Release()
	timer := js.Global().Call("setTimeout", abort, timeout.Milliseconds())
	defer js.Global().Call("clearTimeout", timer)
	opts := map[string]any{"method": method, "signal": ctl.Get("signal")}
	if body != nil {
		opts["body"] = string(body)
		opts["headers"] = map[string]any{"Content-Type": "application/json"}
	}
	resp, err := promise.Await(js.Global().Call("fetch", url, opts))
	if err != nil {
		return 0, nil, err
	}
	buf, err := promise.Await(resp.Call("arrayBuffer"))
	if err != nil {
		return 0, nil, err
	}
	arr := js.Global().Get("Uint8Array").New(buf)
	n := min(int64(arr.Length()), limit)
	answer = make([]byte, n)
	js.CopyBytesToGo(answer, arr.Call("subarray", 0, n))
	return resp.Get("status").Int(), answer, nil
}

// Inflate is ui.Host's: inflate.
func (b *browser) Inflate(data []byte, limit int) ([]byte, error) { return inflate(data, limit) }

// inflate decompresses raw DEFLATE data with the browser's DecompressionStream
// ("deflate-raw"), reading at most limit+1 bytes of its output (ui.Inflate): so the page
// does not link compress/flate's decompressor. It blocks its goroutine until the stream
// has answered: never call it in an event handler.
func inflate(data []byte, limit int) (out []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	in := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(in, data)
	ds := js.Global().Get("DecompressionStream").New("deflate-raw")
	reader := js.Global().Get("Blob").New([]any{in}).Call("stream").Call("pipeThrough", ds).Call("getReader")
	for {
		r, err := promise.Await(reader.Call("read"))
		if err != nil {
			return nil, err
		}
		if r.Get("done").Bool() {
			return out, nil
		}
		chunk := r.Get("value")
		n := min(chunk.Length(), limit+1-len(out))
		buf := make([]byte, n)
		js.CopyBytesToGo(buf, chunk.Call("subarray", 0, n))
		out = append(out, buf...)
		if len(out) > limit {
			reader.Call("cancel")
			return out, nil
		}
	}
}

// PlanLink is the page's address with ?plan=ID and &server=SERVER (share.Link's form),
// and no fragment.
func (b *browser) PlanLink(id, server string) string {
	loc := js.Global().Get("location")
	u := js.Global().Get("URL").New(loc.Get("origin").String() + loc.Get("pathname").String() + loc.Get("search").String())
	q := u.Get("searchParams")
	q.Call("set", "plan", id)
	q.Call("set", "server", server)
	q.Call("delete", "embed")
	return u.Call("toString").String()
}

// SaveServer keeps the share server setting in localStorage.
func (b *browser) SaveServer(server string) {
	if server == "" {
		defer func() { recover() }()
		js.Global().Get("localStorage").Call("removeItem", serverKey)
		return
	}
	storageSet(serverKey, server)
}
