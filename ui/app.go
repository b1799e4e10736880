package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vugu/vugu"

	"pipeplan/core/examples"
	"pipeplan/core/wire"
)

// Host is what the page needs from the browser, so that the app's logic runs and is
// tested without one. wasm/app implements it with syscall/js.
type Host interface {
	// Keep stores the request's URL fragment in the address bar (push: as a new history
	// entry, so that Back returns to the previous request) and in localStorage.
	Keep(fragment string, push bool)
	// Copy puts text on the clipboard.
	Copy(text string)
	// Download offers data as a file.
	Download(name, mime string, data []byte)
	// Link returns the page's address with the fragment (for Share and the embed view).
	Link(fragment string, embed bool) string
	// ReadFile reads the file of a file input's change event or of a drop event, then
	// calls done with the event environment locked, and renders.
	ReadFile(e vugu.DOMEvent, done func(name string, data []byte))
	// ImportFile hands the file of a file input's change event or of a drop event to
	// the planner worker, which reads it, keeps it in the browser's storage and answers
	// the request's model for it (the planner's "import"), then calls done with the
	// event environment locked, and renders. The page's thread never reads the file.
	ImportFile(e vugu.DOMEvent, done func(name, answer string, err error))
	// BarX converts a pointer event's position to x in the viewBox of the SVG the handler
	// is on, whose viewBox is width wide.
	BarX(e vugu.DOMEvent, width float64) float64
	// Capture keeps the pointer of a pointerdown event on its element while it drags.
	Capture(e vugu.DOMEvent)
	// Focus moves the keyboard focus to the element the CSS selector finds, after render.
	Focus(selector string)
	// Background runs f outside the event handler (a goroutine in the browser).
	Background(f func())
	// Update runs f with the page's state locked, then draws the page if render is set.
	Update(f func(), render bool)
	// Yield lets the browser handle events and draw during a long computation.
	Yield()
	// Inflate decompresses a link's raw DEFLATE data (the browser's DecompressionStream;
	// see Inflate). It blocks: call it outside event handlers.
	Inflate(data []byte, limit int) ([]byte, error)
	// Fetch sends an HTTP request to a share server (the browser's fetch; api.Send),
	// giving up after timeout. It blocks: call it from Background.
	Fetch(method, url string, body []byte, limit int64, timeout time.Duration) (int, []byte, error)
	// PlanLink returns the page's address that opens a stored plan: ?plan=ID, with
	// &server=SERVER, and no fragment (share.Link's form).
	PlanLink(id, server string) string
	// SaveServer keeps the share server setting (localStorage); "" forgets it.
	SaveServer(server string)
}

// Tabs are the panels, in order.
var Tabs = []struct{ ID, Label string }{
	{"model", "Model"}, {"cluster", "Cluster"}, {"plan", "Plan"}, {"schedule", "Schedule"},
	{"search", "Search"}, {"export", "Export and share"},
}

// LayerPageSize is the number of layer rows the table shows at once; StagePageSize the
// stage table's, DevicePageSize the per-device overrides'. Windows keep what one render
// draws bounded however large the model and the cluster are.
const (
	LayerPageSize  = 50
	StagePageSize  = 50
	DevicePageSize = 32
)

// LayerFrameRows is how many layer rows a frame adds while an import's are drawn in
// frames (App.DrawInFrames): a row is ten elements, and a frame that creates fifty rows
// and lays their table out is the longest of an import's.
const LayerFrameRows = 25

// App is the page's state: the request being planned (the whole state a link keeps), its
// result, and what the panels show besides. Its methods are the event handlers.
type App struct {
	Req *wire.Request
	// Res is the request's result and Err the error that replaced it (bad input).
	Res *wire.Result
	Err error
	// Opt is the optimum's result beside a manual split (Req.Boundaries set).
	Opt *wire.Result
	// View and OptView are Res and Opt as the planner cut them (Res is View.Result):
	// windows of their stages and layers, and what the page draws of the rest.
	View, OptView *wire.View
	// bars are the stage bars of View and OptView, made once per view; timeline the
	// Schedule panel's timeline of View.
	bars     barMemo
	timeline timelineMemo
	// Elapsed is how long the last replan took (both runs when there is a manual split).
	Elapsed time.Duration
	// Replans counts the replans, for tests that wait for the next one.
	Replans int

	Tab   string
	Embed bool
	// Search is the Search panel.
	Search Searcher
	// exports are the Export panel's exports of the request whose fragment is exportsFor.
	exports    []ExportView
	exportsFor string
	// Failure says what went wrong in the page itself (a render that failed, an action
	// that panicked), set by the host, which keeps the page running; DismissFailure
	// clears it.
	Failure string
	// Notice is a message about the last import or share; NoticeBad marks a failure.
	Notice    string
	NoticeBad bool
	// Server is the share server (docs/share.md) that Share stores plans on: the page's
	// ?server=, else the setting; "" shares by URL fragment.
	Server string
	// Sharing is set while a share or an open talks to the server.
	Sharing bool
	// Opened is the id of the stored plan shown, drawn from the server's result without
	// replanning; an edit clears it.
	Opened string
	// shared is the link the last Share gave, for the request it was made for.
	shared *sharedLink
	// LayerStart is the first row of the layer table's window; StageStart the stage
	// table's, DeviceStart the per-device overrides'.
	LayerStart, StageStart, DeviceStart int
	// BoundsText is what the user typed in the boundaries box, kept while it does not parse.
	BoundsText string
	// drafts holds what the user typed in a number box that is not (yet) a valid value,
	// so that a render does not overwrite it while they type.
	drafts map[string]string

	Host Host
	// DeferKeep makes edits wait for FlushKeep to store the request (in the URL and
	// localStorage), so that the page can draw the new plan first.
	DeferKeep             bool
	keepPending, keepPush bool
	// DrawInFrames lets the renders after an import draw the layer table's rows over the
	// next frames (DrawNext): none in the frame that draws the new model, then
	// LayerFrameRows more in each, so that no frame builds the whole Model panel at once.
	DrawInFrames bool
	// layersPending is set while an import's layer rows are drawn in frames, the next
	// render drawing layersShown of them.
	layersPending bool
	layersShown   int
	// Planner plans: in the browser, planner.wasm in a Web Worker.
	Planner Planner
	// planSeq numbers the replans: an answer for an older one is dropped.
	planSeq int
	// calib is the Model panel's calibration to a measured profile.
	calib calibration
	// Normal is what each knob of the page resolves to in core's normal form of the
	// request (the planner's "normal"), by knob name, for the knobs to show what
	// "default" is.
	Normal map[string]string
	// Layout says where the replicas and sharding came from when core's starting layout
	// set them (request.StartLayout's rule); "" once the user sets them.
	Layout string
}

// InitialRequest is the request a first visit starts with: the default example on its
// device and stage count (core/examples), with everything else core's defaults, the
// schedule's timeline kept for the Schedule panel and the layers' costs for the layer
// table.
func InitialRequest() *wire.Request {
	e := examples.Default()
	return &wire.Request{
		Version: wire.Version,
		Model:   wire.ModelSpec{Example: e.Name},
		Cluster: wire.ClusterSpec{Device: e.Device, Count: e.Stages},
		Events:  true,
		Layers:  true,
	}
}

// NewApp returns an app showing r (nil: InitialRequest), planned by planner.
func NewApp(r *wire.Request, host Host, planner Planner) *App {
	if r == nil {
		r = InitialRequest()
	}
	a := &App{Req: r, Host: host, Planner: planner, Tab: "plan"}
	a.replan()
	return a
}

// background runs f with Host.Background (at once without a host).
func (a *App) background(f func()) {
	if a.Host == nil {
		f()
		return
	}
	a.Host.Background(f)
}

// update runs f with Host.Update, drawing the page (at once without a host).
func (a *App) update(f func()) {
	if a.Host == nil {
		f()
		return
	}
	a.Host.Update(f, true)
}

// replan plans the request (and the optimum beside a manual split) with the planner, in
// the background: the page draws the answer when it comes (at once where Background runs
// f at once, as in tests). The answer for a request edited since is dropped.
func (a *App) replan() {
	a.planSeq++
	seq, r := a.planSeq, clone(a.Req)
	a.Opened = ""
	w := a.window()
	a.background(func() {
		start := time.Now()
		v, err := a.plan(r, w)
		var opt *wire.View
		if len(r.Boundaries) > 0 {
			o := clone(r)
			o.Boundaries = nil
			if x, err := a.plan(o, wire.Window{}); err == nil {
				opt = x
			}
		}
		elapsed := time.Since(start)
		// What the knobs left to core resolve to (its normal form), after the timing.
		var norm map[string]string
		if a.call(nil, "normal", &norm, r) != nil {
			norm = nil
		}
		a.update(func() {
			if seq != a.planSeq {
				return
			}
			a.show(v, opt)
			a.Err, a.Elapsed = err, elapsed
			a.Normal = norm
			a.Replans++
			if m := a.Model(); m != nil && a.LayerStart >= m.Layers {
				a.LayerStart = 0
			}
		})
	})
}

// show shows a plan's view and the optimum's beside it (either nil: none).
func (a *App) show(v, opt *wire.View) {
	a.View, a.OptView, a.Res, a.Opt = v, opt, nil, nil
	if v != nil {
		v.Expand()
		a.Res = v.Result
	}
	if opt != nil {
		opt.Expand()
		a.Opt = opt.Result
	}
}

// window is the rows the page shows: the stage table's and the layer table's.
func (a *App) window() wire.Window {
	return wire.Window{StageStart: a.StageStart, LayerStart: a.LayerStart}
}

// refetch brings the rows the tables show when they are outside the view held, from the
// planner, which holds the result (a result it no longer holds is planned again).
func (a *App) refetch() {
	v := a.View
	sw, n := a.StageWindow(), a.LayerCount()
	held := 0 // the stages the view holds
	if v != nil && v.Result != nil && v.Result.Plan != nil {
		held = len(v.Result.Plan.Stages)
	}
	if v == nil || (sw.Start >= v.StageStart && sw.End <= v.StageStart+held) &&
		(a.LayerStart >= v.LayerStart && min(a.LayerStart+LayerPageSize, n) <= v.LayerStart+wire.ViewLayers) {
		return
	}
	w := a.window()
	seq := a.planSeq
	a.background(func() {
		nv := new(wire.View)
		err := a.call(nil, "window", nv, strconv.Itoa(v.Handle), w)
		a.update(func() {
			// Windows asked for one after another (a person paging fast) may come in
			// any order: each of the plan shown is shown, and the rows the tables show
			// by then are asked for if it does not hold them.
			if seq != a.planSeq || a.View == nil || a.View.Handle != v.Handle {
				return
			}
			if err != nil || nv.Result == nil {
				a.replan()
				return
			}
			a.show(nv, a.OptView)
			a.refetch()
		})
	})
}

// changed replans after an edit and keeps the request in the URL and localStorage.
func (a *App) changed(push bool) {
	a.replan()
	a.keep(push)
}

func (a *App) keep(push bool) {
	a.keepPending, a.keepPush = true, a.keepPush || push
	if !a.DeferKeep {
		a.FlushKeep()
	}
}

// FlushKeep stores the request if an edit changed it since the last flush.
func (a *App) FlushKeep() {
	if !a.keepPending {
		return
	}
	push := a.keepPush
	a.keepPending, a.keepPush = false, false
	if a.Host == nil || a.Embed {
		return
	}
	if f, err := a.Fragment(); err == nil {
		a.Host.Keep(f, push)
	}
}

// Restore shows the request in a fragment (after Back or Forward, or a pasted link). It
// inflates the fragment with Host.Inflate, which blocks: call it outside event handlers.
func (a *App) Restore(fragment string) {
	r, err := DecodeFragment(fragment, a.Host.Inflate)
	if err != nil {
		a.notice(err.Error(), true)
		return
	}
	a.Req, a.Search.Knobs = r, FragmentSearch(fragment)
	a.BoundsText = ""
	a.replan()
}

// DrawNext reports whether the render just done left a part to the next one (layer rows
// of a model just imported), and lets the next render draw LayerFrameRows more.
func (a *App) DrawNext() bool {
	if !a.layersPending {
		return false
	}
	if a.layersShown += LayerFrameRows; a.layersShown >= LayerPageSize {
		a.layersPending = false
	}
	return true
}

func (a *App) notice(msg string, bad bool) { a.Notice, a.NoticeBad = msg, bad }

// typed records what the user typed in the box named field: kept as a draft when it is
// not valid (ok false), forgotten when it is.
func (a *App) typed(field, v string, ok bool) {
	if a.drafts == nil {
		a.drafts = map[string]string{}
	}
	if ok {
		delete(a.drafts, field)
	} else {
		a.drafts[field] = v
	}
}

// Val is the text a number box shows: what the user is typing, or v.
func (a *App) Val(field string, v any) string {
	if d, ok := a.drafts[field]; ok {
		return d
	}
	return fmt.Sprint(v)
}

// Model describes the model being planned (core's ModelInfo), or nil.
func (a *App) Model() *wire.ModelInfo {
	switch {
	case a.Res != nil:
		return &a.Res.Model
	case a.Opt != nil:
		return &a.Opt.Model
	}
	return nil
}

// DismissFailure clears the failure banner.
func (a *App) DismissFailure() { a.Failure = "" }

// SetTab shows a panel.
func (a *App) SetTab(id string) { a.Tab = id }

// TabIndex is the roving tabindex of the tab list: only the selected tab is in the
// Tab order; the arrow keys move between tabs.
func (a *App) TabIndex(id string) string {
	if id == a.Tab {
		return "0"
	}
	return "-1"
}

// TabKey moves between tabs with the arrow keys, Home and End.
func (a *App) TabKey(key string) {
	i := slices.IndexFunc(Tabs, func(t struct{ ID, Label string }) bool { return t.ID == a.Tab })
	switch key {
	case "ArrowRight":
		i = (i + 1) % len(Tabs)
	case "ArrowLeft":
		i = (i + len(Tabs) - 1) % len(Tabs)
	case "Home":
		i = 0
	case "End":
		i = len(Tabs) - 1
	default:
		return
	}
	a.Tab = Tabs[i].ID
}

// Status is the line under the header: what is planned and how long it took.
func (a *App) Status() string {
	ms := float64(a.Elapsed.Microseconds()) / 1000
	switch {
	case a.Err != nil:
		return "The request has a problem (below)."
	case a.Opened != "" && a.Res != nil:
		return fmt.Sprintf("Stored plan %s from %s, as planner %s made it (not replanned).", ShortID(a.Opened), a.Server, a.Res.PlannerVersion)
	case a.Res != nil && !a.Res.Feasible:
		if d := a.Res.FirstError(); d != nil {
			return fmt.Sprintf("%s (planned in %.1f ms).", capitalize(strings.TrimSuffix(d.Message, ".")), ms)
		}
		return fmt.Sprintf("No plan fits (planned in %.1f ms).", ms)
	case a.Res != nil:
		return fmt.Sprintf("Planned in %.1f ms, in this page.", ms)
	}
	return ""
}

func itoa0(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// Keep stores the request shown (in the URL and localStorage) without replanning.
func (a *App) Keep() { a.keep(false) }

// capitalize starts a sentence made of a core message ("no plan fits: ...").
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
