package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vugu/vugu"

	"pipeplan/core/arch"
	"pipeplan/core/cluster"
	"pipeplan/core/examples"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
	"pipeplan/core/units"
	"pipeplan/core/wire"
	"pipeplan/share/api"
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
		a.Res = v.Result
	}
	if opt != nil {
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
	if v == nil || (sw.Start >= v.StageStart && sw.End <= v.StageStart+wire.ViewStages) &&
		(a.LayerStart >= v.LayerStart && min(a.LayerStart+LayerPageSize, n) <= v.LayerStart+wire.ViewLayers) {
		return
	}
	w := a.window()
	seq := a.planSeq
	a.background(func() {
		nv := new(wire.View)
		err := a.call(nil, "window", nv, strconv.Itoa(v.Handle), w)
		a.update(func() {
			if seq != a.planSeq || a.View != v {
				return
			}
			if err != nil || nv.Result == nil {
				a.replan()
				return
			}
			a.show(nv, a.OptView)
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
	if f, err := EncodeFragment(a.Req); err == nil {
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
	a.Req = r
	a.BoundsText = ""
	a.replan()
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

// --- The Model panel.

// ModelSource is "example", "architecture" or "document".
func (a *App) ModelSource() string {
	switch {
	case a.Req.Model.Architecture != nil:
		return "architecture"
	case len(a.Req.Model.Document) > 0:
		return "document"
	}
	return "example"
}

// ModelChoice is the value of the model picker: "example:NAME", "arch:NAME" or "file".
func (a *App) ModelChoice() string {
	switch a.ModelSource() {
	case "architecture":
		if len(a.Req.Model.Architecture.Config) > 0 {
			return "file"
		}
		return "arch:" + a.Req.Model.Architecture.Name
	case "document":
		return "file"
	}
	return "example:" + a.Req.Model.Example
}

// ModelOption is an entry of the model picker.
type ModelOption struct{ Value, Label, Group string }

// ModelOptions lists the bundled examples and architectures.
func (a *App) ModelOptions() []ModelOption {
	var out []ModelOption
	for _, e := range examples.All() {
		out = append(out, ModelOption{"example:" + e.Name, e.Title, "Example profiles"})
	}
	for _, n := range arch.BundledNames() {
		out = append(out, ModelOption{"arch:" + n, n, "Architectures (costed analytically)"})
	}
	if a.ModelChoice() == "file" {
		out = append(out, ModelOption{"file", "the imported file", "Imported"})
	}
	return out
}

// ModelGroups returns the picker's option groups in order.
func (a *App) ModelGroups() []string {
	var g []string
	for _, o := range a.ModelOptions() {
		if !slices.Contains(g, o.Group) {
			g = append(g, o.Group)
		}
	}
	return g
}

// ModelOptionsIn returns the picker's options of one group.
func (a *App) ModelOptionsIn(group string) []ModelOption {
	var out []ModelOption
	for _, o := range a.ModelOptions() {
		if o.Group == group {
			out = append(out, o)
		}
	}
	return out
}

// PickModel handles the model picker.
func (a *App) PickModel(v string) {
	kind, name, _ := strings.Cut(v, ":")
	switch kind {
	case "example":
		a.Req.Model = wire.ModelSpec{Example: name}
		a.noTensor()
	case "arch":
		old := a.Req.Model.Architecture
		ar := &wire.Architecture{Name: name}
		if old != nil { // keep the knobs the user set
			ar.Seq, ar.DType, ar.Attention = old.Seq, old.DType, old.Attention
		}
		if old == nil || old.Name != name {
			// Expert knobs belong to a mixture's experts: another model starts without.
			par := &a.Req.Parallelism
			par.Expert, par.ExpertOverlap, par.ExpertDispatcher = 0, false, ""
		}
		a.Req.Model = wire.ModelSpec{Architecture: ar}
	default:
		return
	}
	a.Req.Boundaries, a.BoundsText, a.LayerStart = nil, "", 0
	a.notice("", false)
	a.relayout(true)
}

// relayout asks core for the starting layout of the devices (the planner's "layout":
// request.StartLayout) when the model or the cluster changed, unless the user set the
// replicas or the stages, then plans. The answer for a request edited since is dropped.
func (a *App) relayout(push bool) {
	par := &a.Req.Parallelism
	if a.Layout != "" { // the replicas and sharding were the last layout's: lay out again
		par.Data, par.Sharding, par.ZeRO = 0, "", 0
		a.Layout = ""
	}
	// Core lays out architectures only (request.StartLayout); a model document, which
	// may be megabytes, is not sent to be told so.
	if len(a.Req.Model.Document) > 0 || len(a.Req.Cluster.Document) > 0 || par.Pipeline != 0 || par.Data != 0 || a.Req.Cluster.Count < 2 {
		a.changed(push)
		return
	}
	a.planSeq++
	seq, r := a.planSeq, clone(a.Req)
	a.background(func() {
		var l struct {
			Request *wire.Request `json:"request"`
			Stages  int           `json:"stages"`
			Rule    string        `json:"rule"`
		}
		err := a.call(nil, "layout", &l, r)
		a.update(func() {
			if seq != a.planSeq {
				return
			}
			if err == nil && l.Request != nil && l.Stages > 0 {
				a.Req.Parallelism.Data, a.Req.Parallelism.Sharding = l.Request.Parallelism.Data, l.Request.Parallelism.Sharding
				a.Layout = l.Rule
				a.typed("data", "", true)
			}
			a.changed(push)
		})
	})
}

// Knob returns an architecture or training knob's value as text.
func (a *App) Knob(name string) string {
	ar := a.Req.Model.Architecture
	if ar == nil {
		ar = &wire.Architecture{}
	}
	switch name {
	case "batch":
		return itoa0(a.Req.Schedule.MicrobatchSize)
	case "seq":
		return itoa0(ar.Seq)
	case "dtype":
		return ar.DType
	case "attention":
		return ar.Attention
	case "precision":
		return a.Req.Training.Precision
	case "fp8_recipe":
		return a.Req.Training.FP8Recipe
	case "optimizer":
		return a.Req.Training.Optimizer
	case "recompute":
		return a.Req.Training.Recompute
	case "mode":
		return a.Req.Training.Mode
	case "sharding":
		if a.Req.Parallelism.ZeRO == 1 && a.Req.Parallelism.Sharding == "" {
			return "zero1" // the former field's value, as core reads it
		}
		return a.Req.Parallelism.Sharding
	case "context_method":
		return a.Req.Parallelism.ContextMethod
	case "expert_dispatcher":
		return a.Req.Parallelism.ExpertDispatcher
	}
	return ""
}

// KnobChoices lists the values of an enumerated knob, core's (core/wire): "" (core's
// default), then the values. Core refuses a value the request's device lacks (an fp8
// recipe, flash3 off Hopper) and says why.
func KnobChoices(name string) []string {
	var values []string
	switch name {
	case "dtype":
		values = wire.DTypes()
	case "fp8_recipe":
		values = wire.FP8Recipes()
	case "attention":
		values = wire.Attentions()
	case "precision":
		values = wire.Precisions()
	case "optimizer":
		values = wire.Optimizers()
	case "recompute":
		values = wire.RecomputeModes()
	case "mode":
		values = wire.Modes()
	case "sharding":
		values = wire.ShardingModes()
	case "context_method":
		values = wire.ContextMethods()
	case "expert_dispatcher":
		values = wire.ExpertDispatchers()
	default:
		return nil
	}
	return append([]string{""}, values...)
}

// ChoiceLabel labels an enumerated knob's value ("" is core's default).
func ChoiceLabel(v string) string {
	if v == "" {
		return "default"
	}
	return v
}

// ChoiceText labels knob name's value v: "" is "default (bf16)", with what core's
// normal form of the request resolves it to (Resolved), "default" before it is known.
func (a *App) ChoiceText(name, v string) string {
	if v != "" {
		return v
	}
	if r := a.Resolved(name); r != "" {
		return "default (" + r + ")"
	}
	return "default"
}

// DefaultText is a number box's placeholder: "default: 4096", from core's normal form.
func (a *App) DefaultText(name string) string {
	if r := a.Resolved(name); r != "" {
		return "default: " + r
	}
	return "default"
}

// Resolved is what knob name's default resolves to in core's normal form of the
// request (Normal, the planner's "normal" answer by the page's knob names), "" when
// unknown or when core leaves it unset.
func (a *App) Resolved(name string) string { return a.Normal[name] }

// SetKnob handles an architecture or training knob.
func (a *App) SetKnob(name, v string) {
	v = strings.TrimSpace(v)
	ar := a.Req.Model.Architecture
	switch name {
	case "batch", "seq":
		if ar == nil && name == "seq" {
			return
		}
		n, err := strconv.Atoi(v)
		if v == "" {
			n, err = 0, nil
		}
		if err != nil || n < 0 {
			a.typed(name, v, false)
			a.notice(name+": enter a whole number", true)
			return
		}
		a.typed(name, v, true)
		if name == "batch" {
			a.Req.Schedule.MicrobatchSize = n
		} else {
			ar.Seq = n
		}
	case "dtype":
		if ar == nil {
			return
		}
		ar.DType = v
	case "attention":
		if ar == nil {
			return
		}
		ar.Attention = v
	case "precision":
		a.Req.Training.Precision = v
	case "fp8_recipe":
		a.Req.Training.FP8Recipe = v
	case "optimizer":
		a.Req.Training.Optimizer = v
	case "recompute":
		a.Req.Training.Recompute = v
	case "sharding":
		// One field says it (the former zero goes); hsdp's group and the prefetch of
		// weights are core's defaults.
		par := &a.Req.Parallelism
		par.Sharding, par.ZeRO, par.ShardGroup, par.Prefetch = v, 0, 0, ""
		a.Layout = "" // the user's sharding, not the layout's
	case "context_method":
		a.Req.Parallelism.ContextMethod = v
	case "expert_dispatcher":
		a.Req.Parallelism.ExpertDispatcher = v
	case "mode":
		// Inference runs the inference schedule and has no optimizer (core refuses
		// either otherwise); training goes back to core's default schedule.
		a.Req.Training.Mode = v
		if v == "inference" {
			a.Req.Schedule.Name = "inference"
			a.Req.Training.Optimizer = ""
		} else if a.Req.Schedule.Name == "inference" {
			a.Req.Schedule.Name = ""
		}
	default:
		return
	}
	a.notice("", false)
	a.changed(false)
}

// Import loads a model file picked or dropped by the user: a native or Graphcore model,
// a PipeDream graph.txt, or a HuggingFace config.json. The planner plans it in the
// background; a file that does not load (a model that fits no split still loads) leaves
// the model as it was and a message naming the problem.
func (a *App) Import(name string, data []byte) {
	spec, err := importSpec(data)
	if err != nil {
		a.notImported(name, err)
		return
	}
	a.importModel(name, spec, "")
}

// ImportAnswer takes the planner's answer to a file handed to it (Host.ImportFile): the
// request's model, which for a large file is a reference to the file the planner kept in
// the browser's storage, so that links and localStorage stay short.
func (a *App) ImportAnswer(name, answer string, err error) {
	if err == nil {
		if e := errorObject(answer); e != nil {
			err = e
		}
	}
	var im struct {
		Model        wire.ModelSpec `json:"model"`
		Stored, Kept bool
	}
	if err == nil {
		err = json.Unmarshal([]byte(answer), &im)
	}
	if err != nil {
		a.notImported(name, err)
		return
	}
	extra := ""
	switch {
	case im.Stored && im.Kept:
		extra = " It is kept in this browser's storage: the link and a reload find it here (a share server's link opens it elsewhere)."
	case im.Stored:
		extra = " This browser's storage did not take it: a reload will not find it."
	}
	a.importModel(name, im.Model, extra)
}

// importModel plans the request with the model spec of the file name, and shows it
// when it plans; extra ends the notice.
func (a *App) importModel(name string, m wire.ModelSpec, extra string) {
	r := clone(a.Req)
	if m.Architecture != nil {
		if old := r.Model.Architecture; old != nil {
			m.Architecture.Seq, m.Architecture.DType, m.Architecture.Attention = old.Seq, old.DType, old.Attention
		}
		m.Name = path.Base(name)
	} else {
		r.Parallelism.Tensor, r.Parallelism.SequenceParallel = 0, false
		r.Parallelism.Context, r.Parallelism.ContextMethod = 0, ""
	}
	r.Model = m
	r.Boundaries = nil
	a.background(func() {
		v, err := a.plan(r, wire.Window{})
		a.update(func() {
			if err != nil {
				a.notImported(name, err)
				return
			}
			a.Req = r
			if m.Architecture == nil {
				a.noTensor()
			}
			a.BoundsText, a.LayerStart, a.StageStart = "", 0, 0
			a.planSeq++ // an answer still coming is for the model before
			a.show(v, nil)
			a.Err, a.Opened = nil, ""
			a.Replans++
			a.keep(true)
			a.notice(fmt.Sprintf("Loaded %s: %d layers.%s", name, v.Result.Model.Layers, extra), false)
		})
	})
}

func (a *App) notImported(name string, err error) {
	a.notice(fmt.Sprintf("%s was not loaded: %v. The model shown is unchanged.", name, err), true)
}

// maxImportBytes bounds a file the page reads itself (a calibration profile, a model in
// the tests); the Model panel's files go to the planner worker (Host.ImportFile), which
// takes files up to the planner's own bound.
const maxImportBytes = 32 << 20

// importSpec turns a file into a model spec (spec.ModelFromFile).
func importSpec(data []byte) (wire.ModelSpec, error) { return wire.ModelFromFile(data, maxImportBytes) }

// --- The Cluster panel.

// DeviceNames lists the device presets.
func DeviceNames() []string { return cluster.DeviceNames() }

// LinkNames lists the link presets.
func LinkNames() []string { return cluster.LinkNames() }

// ClusterForm is the Cluster panel's inputs, read from the request.
type ClusterForm struct {
	// Device is the device preset; the cluster is Nodes nodes of PerNode such devices.
	Device         string
	Nodes, PerNode int
	// Link joins the devices of a node ("": the device's usual link) and InterLink the
	// nodes ("": the device's usual network). One node: Link joins all the devices.
	Link, InterLink string
	// Devices is each device's preset (the base device unless overridden).
	Devices []string
	// FromFile: the cluster is a document the form cannot edit (an imported file).
	FromFile bool
}

// UsualLinks returns a device preset's usual link inside a node and between nodes
// (core's defaults for cluster.link_intra and cluster.link_inter); "" when unknown.
func UsualLinks(device string) (intra, inter string) {
	p, err := cluster.LookupDevice(device)
	if err != nil {
		return "", ""
	}
	return p.Link, p.Network
}

// Form returns the Cluster panel's inputs.
func (a *App) Form() ClusterForm {
	cs := a.Req.Cluster
	if len(cs.Document) > 0 {
		return ClusterForm{FromFile: true, Nodes: 1}
	}
	f := ClusterForm{Device: cs.Device, Nodes: 1, PerNode: cs.Count, Link: cs.Link}
	n := cs.Count
	if len(cs.Devices) > 0 {
		n = len(cs.Devices)
		f.PerNode = n
	}
	if d := cs.DevicesPerNode; d > 0 {
		f.Nodes, f.PerNode = max(1, (n+d-1)/d), d
		f.Link, f.InterLink = cs.LinkIntra, cs.LinkInter
	}
	if len(cs.Devices) > 0 {
		f.Devices = slices.Clone(cs.Devices)
		return f
	}
	f.Devices = make([]string, f.Nodes*f.PerNode)
	for i := range f.Devices {
		f.Devices[i] = cs.Device
	}
	return f
}

// SetCluster handles an edit of the Cluster panel: field is "device", "count",
// "nodes", "per_node", "link", "inter_link", or "device:I" for device I's override.
func (a *App) SetCluster(field, v string) {
	f := a.Form()
	v = strings.TrimSpace(v)
	if f.FromFile && field != "device" {
		return
	}
	if field == "count" {
		field = "per_node"
	}
	num := func() (int, bool) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > wire.MaxDevices {
			a.typed(field, v, false)
			if v != "" {
				a.notice(fmt.Sprintf("%s: enter a whole number from 1 to %d", field, wire.MaxDevices), true)
			}
			return 0, false
		}
		a.typed(field, v, true)
		return n, true
	}
	switch {
	case field == "device":
		f.Device = v
		f.Devices = nil
		f.FromFile = false
		// The links the user left to the device follow the new device.
	case field == "per_node":
		n, ok := num()
		if !ok {
			return
		}
		f.PerNode = n
	case field == "nodes":
		n, ok := num()
		if !ok {
			return
		}
		f.Nodes = n
	case field == "link":
		f.Link = v
	case field == "inter_link":
		f.InterLink = v
	case strings.HasPrefix(field, "device:"):
		i, err := strconv.Atoi(strings.TrimPrefix(field, "device:"))
		if err != nil || i < 0 || i >= len(f.Devices) {
			return
		}
		f.Devices[i] = v
	default:
		return
	}
	if n := max(1, f.Nodes) * max(1, f.PerNode); n > wire.MaxDevices {
		a.typed(field, v, false)
		a.notice(fmt.Sprintf("%d nodes of %d devices are %d devices: at most %d", f.Nodes, f.PerNode, n, wire.MaxDevices), true)
		return
	}
	a.Req.Cluster = f.spec()
	// A parallelism applied from the search (stages, replicas) does not survive a change
	// of the devices: the pipeline takes the devices again. The panel's knobs (replicas,
	// tensor, context and sharding) stay.
	if field != "link" && field != "inter_link" {
		a.Req.Parallelism = a.panelParallelism()
	}
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	if field == "link" || field == "inter_link" {
		a.changed(false)
		return
	}
	a.relayout(field == "device")
}

// spec writes the form as a cluster spec: a device preset x count, in nodes
// (cluster.devices_per_node) when there are several, with each device's preset
// (cluster.devices) when they differ.
func (f ClusterForm) spec() wire.ClusterSpec {
	nodes, per := max(1, f.Nodes), max(1, f.PerNode)
	n := nodes * per
	devs := make([]string, n)
	mixed := false
	for i := range devs {
		devs[i] = f.Device
		if i < len(f.Devices) && f.Devices[i] != "" {
			devs[i] = f.Devices[i]
		}
		mixed = mixed || devs[i] != f.Device
	}
	switch {
	case !mixed && nodes == 1:
		return wire.ClusterSpec{Device: f.Device, Count: n, Link: f.Link}
	case !mixed:
		return wire.ClusterSpec{Device: f.Device, Count: n, DevicesPerNode: per, LinkIntra: f.Link, LinkInter: f.InterLink}
	}
	c := wire.ClusterSpec{Device: f.Device, Count: n, Devices: devs, Link: f.Link}
	if nodes > 1 {
		c.Link, c.DevicesPerNode, c.LinkIntra, c.LinkInter = "", per, f.Link, f.InterLink
	}
	return c
}

// noTensor drops tensor, sequence and context parallelism, which only architectures have.
func (a *App) noTensor() {
	a.Req.Parallelism.Tensor, a.Req.Parallelism.SequenceParallel = 0, false
	a.Req.Parallelism.Context, a.Req.Parallelism.ContextMethod = 0, ""
	a.typed("tensor", "", true)
	a.typed("context", "", true)
}

// panelParallelism is the parallelism the Cluster panel sets (replicas, tensor and
// sequence parallelism, context parallelism, sharding, experts), without the pipeline, which
// follows from the devices.
func (a *App) panelParallelism() wire.Parallelism {
	p := a.Req.Parallelism
	return wire.Parallelism{Data: p.Data, Tensor: p.Tensor, SequenceParallel: p.SequenceParallel,
		Context: p.Context, ContextMethod: p.ContextMethod, ZeRO: p.ZeRO, Sharding: p.Sharding,
		ShardGroup: p.ShardGroup, Prefetch: p.Prefetch,
		Expert: p.Expert, ExpertOverlap: p.ExpertOverlap, ExpertDispatcher: p.ExpertDispatcher}
}

// Degree is a parallel degree's box ("data" replicas, "context", "expert") as it shows it
// ("" for core's default, 1).
func (a *App) Degree(name string) string {
	switch name {
	case "data":
		return itoa0(a.Req.Parallelism.Data)
	case "expert":
		return itoa0(a.Req.Parallelism.Expert)
	}
	return itoa0(a.Req.Parallelism.Context)
}

// SetDegree handles the data-parallel replicas or the context-parallel degree
// (architectures): the pipeline gets devices / (replicas x tensor x context) stages. ""
// is 1. Core checks what goes together (a context degree that does not split the
// sequence, sharding without replicas) and says so by field.
func (a *App) SetDegree(name, v string) {
	v = strings.TrimSpace(v)
	n, err := strconv.Atoi(v)
	if v == "" {
		n, err = 0, nil
	}
	if err != nil || n < 0 || n > wire.MaxDevices {
		a.typed(name, v, false)
		a.notice(name+": enter a whole number", true)
		return
	}
	a.typed(name, v, true)
	par := &a.Req.Parallelism
	switch name {
	case "data":
		par.Data = n
		if a.Layout != "" && n < 2 && par.Sharding == "zero1" {
			par.Sharding = "" // the layout's ZeRO-1 needs replicas
		}
		a.Layout = "" // the user's replicas, not the layout's
	case "expert":
		// Expert parallelism uses no devices of its own (Megatron-Core folds it into
		// replicas x tensor); core checks that it divides them and the experts.
		par.Expert = n
		if n < 2 {
			par.ExpertOverlap = false
		}
	default:
		par.Context = n
		if n < 2 {
			par.ContextMethod = ""
		}
	}
	par.Pipeline = 0 // the stages follow from the devices
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	if name != "context" { // replicas and experts use no devices of their own
		a.changed(false)
		return
	}
	a.relayout(false) // a layout's replicas may not divide the new groups
}

// Tensor is the tensor-parallel degree as its box shows it ("" for core's default, 1).
func (a *App) Tensor() string { return itoa0(a.Req.Parallelism.Tensor) }

// SetTensor handles the tensor-parallel degree (architectures): each pipeline device
// becomes a group of t devices, so the pipeline has devices / t stages. "" is 1.
func (a *App) SetTensor(v string) {
	v = strings.TrimSpace(v)
	n, err := strconv.Atoi(v)
	if v == "" {
		n, err = 0, nil
	}
	if err != nil || n < 0 || n > wire.MaxDevices {
		a.typed("tensor", v, false)
		a.notice("tensor-parallel degree: enter a whole number", true)
		return
	}
	a.typed("tensor", v, true)
	par := &a.Req.Parallelism
	par.Tensor = n
	par.Pipeline = 0 // the stages follow from the devices and t
	// Expert tensor parallelism defaults to the tensor degree: it follows the new one.
	par.ExpertTensor = 0
	if n < 2 {
		par.SequenceParallel = false
	}
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	a.relayout(false) // a layout's replicas may not divide the new groups
}

// SetFP8ParamGather handles the fp8 primary weights box (training.fp8_param_gather: the
// fp8 products' weights kept in fp8 only; core refuses it without fp8).
func (a *App) SetFP8ParamGather(on bool) {
	a.Req.Training.FP8ParamGather = on
	a.notice("", false)
	a.changed(false)
}

// SetExpertOverlap handles the box that hides the expert all-to-alls behind an adjacent
// microbatch (parallelism.expert_overlap; with expert >= 2).
func (a *App) SetExpertOverlap(on bool) {
	a.Req.Parallelism.ExpertOverlap = on
	a.notice("", false)
	a.changed(false)
}

// SetSequenceParallel handles the sequence-parallelism box (with tensor >= 2).
func (a *App) SetSequenceParallel(on bool) {
	a.Req.Parallelism.SequenceParallel = on
	a.notice("", false)
	a.changed(false)
}

// Parallel describes how the devices are used, from core's result: "2 nodes of 8:
// 4 pipeline stages × 4-way tensor parallel", or "" without a plan.
func (a *App) Parallel() string {
	if a.Res == nil || a.Res.Step == nil || a.Res.Plan == nil {
		return ""
	}
	p := a.StageCount()
	if a.Res.Schedule != nil && a.Res.Schedule.Devices > 0 {
		p = a.Res.Schedule.Devices
	}
	s := fmt.Sprintf("%s in use: %s", units.Count(int64(a.Res.Step.Devices), "device"), units.Count(int64(p), "pipeline stage"))
	if pl := a.Res.Placement; pl != nil {
		if pl.Data > 1 {
			s += fmt.Sprintf(" × %d replicas", pl.Data)
		}
		if pl.Tensor > 1 {
			s += fmt.Sprintf(" × %d-way tensor parallel", pl.Tensor)
		}
		if pl.Context > 1 {
			s += fmt.Sprintf(" × %d-way context parallel", pl.Context)
		}
		s += ", on " + units.Count(int64(pl.Nodes), "node")
		cross := 0
		for _, c := range pl.StageCrossesNodes {
			if c {
				cross++
			}
		}
		s += fmt.Sprintf("; %d of %d stage transfers cross nodes", cross, len(pl.StageCrossesNodes))
		return s + "."
	}
	if d := a.Req.Parallelism.Data; d > 1 {
		s += fmt.Sprintf(" × %d replicas", d)
	}
	if t := a.Req.Parallelism.Tensor; t > 1 {
		s += fmt.Sprintf(" × %d-way tensor parallel", t)
	}
	if c := a.Req.Parallelism.Context; c > 1 {
		s += fmt.Sprintf(" × %d-way context parallel", c)
	}
	return s + "."
}

// MemoryProportion is the memory proportion as the input shows it.
func (a *App) MemoryProportion() string {
	if a.Req.MemoryProportion == 0 {
		return ""
	}
	return strconv.FormatFloat(a.Req.MemoryProportion, 'g', -1, 64)
}

// SetMemoryProportion handles the memory proportion input ("" is core's default).
func (a *App) SetMemoryProportion(v string) {
	v = strings.TrimSpace(v)
	p := 0.0
	if v != "" {
		var err error
		p, err = strconv.ParseFloat(v, 64)
		if err != nil || !(p > 0 && p <= 1) {
			a.typed("memory_proportion", v, false)
			a.notice("memory proportion: enter a number in (0, 1]", true)
			return
		}
	}
	a.typed("memory_proportion", v, true)
	a.Req.MemoryProportion = p
	a.notice("", false)
	a.changed(false)
}

// --- The Plan panel.

// SetPlanOption handles the schedule, microbatch and objective inputs.
func (a *App) SetPlanOption(field, v string) {
	v = strings.TrimSpace(v)
	switch field {
	case "schedule":
		a.Req.Schedule.Name = v
	case "microbatches", "microbatch_size":
		n, err := strconv.Atoi(v)
		if v == "" {
			n, err = 0, nil
		}
		if err != nil || n < 0 || n > 1<<16 {
			a.typed(field, v, false)
			a.notice(field+": enter a whole number", true)
			return
		}
		a.typed(field, v, true)
		if field == "microbatches" {
			a.Req.Schedule.Microbatches = n
		} else {
			a.Req.Schedule.MicrobatchSize = n
		}
	case "objective":
		a.Req.Objective = v
	case "partition":
		a.Req.Partition = v
		if v == wire.PartitionGraph {
			a.Req.Boundaries, a.BoundsText = nil, "" // the graph partition finds the split
		}
	default:
		return
	}
	a.notice("", false)
	a.changed(false)
}

// Schedules lists the schedule names the picker offers: "" (core's default), then
// core's (core/wire).
func Schedules() []string { return append([]string{""}, wire.Schedules()...) }

// ScheduleLabel labels a schedule name.
func ScheduleLabel(s string) string {
	if s == "" {
		return "default (1f1b; inference for inference)"
	}
	return s
}

// Bar is the stage bar of the current result, or nil.
func (a *App) Bar() *StageBar {
	if a.Res == nil || a.Res.Plan == nil {
		return nil
	}
	b := ViewBar(a.View)
	return &b
}

// OptBar is the optimum's stage bar beside a manual split, or nil.
func (a *App) OptBar() *StageBar {
	if a.Opt == nil || a.Opt.Plan == nil {
		return nil
	}
	b := ViewBar(a.OptView)
	return &b
}

// Rows are the stage table's rows: its window, from StageStart.
func (a *App) Rows() []StageRow {
	if a.Res == nil || a.Res.Plan == nil {
		return nil
	}
	v := a.View
	w := a.StageWindow()
	return stagePage(a.Res.Plan, v.StageStart, v.Bottleneck, w.Start, w.End-w.Start)
}

// StageWindow is the stage table's window: from StageStart, moved back so that it
// shows a full window when the plan has fewer stages than before.
func (a *App) StageWindow() Window { return window(a.StageStart, StagePageSize, a.StageCount()) }

// Window is the rows [Start, End) of N that a table shows.
type Window struct{ Start, End, N int }

// First and Last say whether the window is the first or the last; Range names its rows
// ("stages 0–49 of 3000").
func (w Window) First() bool { return w.Start == 0 }
func (w Window) Last() bool  { return w.End >= w.N }
func (w Window) Range(rows string) string {
	return fmt.Sprintf("%s %d–%d of %d", rows, w.Start, w.End-1, w.N)
}

// window is the window of size rows from start over n rows, moved back to show a full
// window where start is past the end.
func window(start, size, n int) Window {
	start = max(0, min(start, n-size))
	return Window{start, min(n, start+size), n}
}

// StageCount is the number of stages in the plan shown, 0 without one.
func (a *App) StageCount() int {
	if a.Res == nil || a.Res.Plan == nil {
		return 0
	}
	return a.View.Stages
}

// PageStages moves the stage table's window by delta rows.
func (a *App) PageStages(delta int) {
	a.StageStart = window(a.StageWindow().Start+delta, StagePageSize, a.StageCount()).Start
	a.refetch()
}

// DeviceWindow is the per-device overrides' window: the presets of the devices from
// DeviceRange().Start.
func (a *App) DeviceWindow() []string {
	w := a.DeviceRange()
	return a.Form().Devices[w.Start:w.End]
}

// PageDevices moves the overrides' window by delta devices.
func (a *App) PageDevices(delta int) {
	n := len(a.Form().Devices)
	a.DeviceStart = window(window(a.DeviceStart, DevicePageSize, n).Start+delta, DevicePageSize, n).Start
}

// DeviceRange is the overrides' window.
func (a *App) DeviceRange() Window {
	n := 0
	if cs := a.Req.Cluster; len(cs.Document) == 0 {
		// Form's devices, counted without listing them (the panel asks for each row).
		n = cs.Count
		if d := cs.DevicesPerNode; d > 0 {
			n = max(1, (cs.Count+d-1)/d) * d
		}
	} else {
		n = len(a.Form().Devices)
	}
	return window(a.DeviceStart, DevicePageSize, n)
}

// Summary is the Plan panel's headline numbers, formatted.
type Summary struct {
	// StepLine is Step as the sum of its parts, with the communication hidden behind
	// compute named (core's spec.Step.Breakdown).
	Bottleneck, Step, StepLine, Throughput, Tokens, Bubble, Schedule, MFU string
	Stages, Layers                                                        int
	Manual                                                                bool
}

// Summarize reads a result's headline numbers.
func Summarize(r *wire.Result) Summary {
	var s Summary
	if r == nil || r.Plan == nil {
		return s
	}
	s.Stages, s.Layers = len(r.Plan.Stages), r.Model.Layers
	s.Bottleneck = units.Time(r.Plan.BottleneckSeconds, model.Seconds)
	if r.Schedule != nil {
		s.Schedule = fmt.Sprintf("%s, %s", r.Schedule.Schedule, units.Count(int64(r.Schedule.Microbatches), "microbatch"))
	}
	if st := r.Step; st != nil {
		s.Step = units.Time(st.StepSeconds, model.Seconds)
		s.StepLine = s.Step + " = " + st.Breakdown
		s.Throughput = units.Rate(st.SamplesPerSecond, "samples/s")
		if st.TokensPerSecond > 0 {
			s.Tokens = units.Rate(st.TokensPerSecond, "tokens/s")
		}
		if st.MFU > 0 {
			s.MFU = fmt.Sprintf("%.1f%%", 100*st.MFU)
		}
		s.Bubble = fmt.Sprintf("%.1f%%", 100*st.BubbleFraction)
	}
	return s
}

// Summary of the current result.
func (a *App) Summary() Summary {
	s := Summarize(a.Res)
	s.Manual = len(a.Req.Boundaries) > 0
	if s.Stages > 0 {
		s.Stages = a.View.Stages
	}
	return s
}

// OptSummary of the optimum beside a manual split.
func (a *App) OptSummary() Summary {
	s := Summarize(a.Opt)
	if s.Stages > 0 {
		s.Stages = a.OptView.Stages
	}
	return s
}

// ErrorLines are the field errors (or the message) of a bad request, one per line.
func (a *App) ErrorLines() []string {
	if a.Err == nil {
		return nil
	}
	if fes, ok := model.AsFieldErrors(a.Err); ok {
		out := make([]string, len(fes))
		for i, fe := range fes {
			out[i] = fe.Path + ": " + fe.Reason
		}
		return out
	}
	return []string{a.Err.Error()}
}

// Boundaries is the boundaries box's text.
func (a *App) Boundaries() string {
	if a.BoundsText != "" {
		return a.BoundsText
	}
	if a.Res != nil && a.Res.Plan != nil && a.Res.Plan.LayerOrder == nil {
		return joinInts(a.Res.Plan.Boundaries)
	}
	return joinInts(a.Req.Boundaries)
}

// SetBoundaries handles the boundaries box: a manual split to cost beside the optimum.
func (a *App) SetBoundaries(v string) {
	a.BoundsText = v
	b, err := ParseBoundaries(v)
	if err != nil {
		a.notice(err.Error(), true)
		return
	}
	if len(b) == 0 {
		a.ClearManual()
		return
	}
	a.Req.Boundaries, a.Req.Partition = b, "" // a manual split is of ranges
	a.notice("", false)
	a.changed(true)
	if a.Err == nil {
		a.BoundsText = ""
	}
}

// MoveBoundary moves boundary k (1..p-1) to layer l, keeping every stage non-empty.
func (a *App) MoveBoundary(k, l int) {
	if a.Res == nil || a.Res.Plan == nil {
		return
	}
	b := slices.Clone(a.Res.Plan.Boundaries)
	if k <= 0 || k >= len(b)-1 {
		return
	}
	l = max(b[k-1]+1, min(l, b[k+1]-1))
	if l == b[k] {
		return
	}
	b[k] = l
	a.Req.Boundaries, a.Req.Partition = b, ""
	a.BoundsText = ""
	a.notice("", false)
	a.changed(false)
}

// ClearManual goes back to the optimum.
func (a *App) ClearManual() {
	a.Req.Boundaries, a.BoundsText = nil, ""
	a.notice("", false)
	a.changed(true)
}

// Diagnostics of the current result.
func (a *App) Diagnostics() []wire.Diagnostic {
	if a.Res == nil {
		return nil
	}
	return a.Res.Diagnostics
}

// --- The Schedule panel.

// Timeline of the current result.
func (a *App) Timeline() (Timeline, int, int) {
	if a.Res == nil {
		return Timeline{}, 0, 0
	}
	t, drawn, total := NewTimeline(a.Res.Schedule)
	if a.Res.Schedule != nil && total > 0 {
		// The planner cut the schedule (spec.ViewEvents): its counts are the whole's.
		total = max(total, a.View.Events)
		t.Devices = max(t.Devices, a.Res.Schedule.Devices)
	}
	return t, drawn, total
}

// --- The layer table.

// Layers is the layer table's window.
func (a *App) Layers() []LayerRow {
	var stageOf []int
	off := 0
	if a.View != nil {
		stageOf, off = a.View.LayerStages, a.View.LayerStart
	}
	rows := layerPage(a.Model(), off, stageOf, a.LayerStart, LayerPageSize)
	if a.Res != nil && a.Res.Plan != nil {
		markRecomputed(rows, a.Res.Plan)
	}
	return rows
}

// HasRecompute reports whether the plan chose recomputation per layer (recompute auto).
func (a *App) HasRecompute() bool {
	p := a.Res
	return p != nil && p.Plan != nil && len(p.Plan.Stages) > 0 && p.Plan.Stages[0].Recompute != nil
}

// HasLayerCosts reports whether the result has the layers' costs (request.layers).
func (a *App) HasLayerCosts() bool {
	m := a.Model()
	return m != nil && m.LayerCosts != nil
}

// ShowLayerCosts asks core for the layers' costs (request.layers) and replans.
func (a *App) ShowLayerCosts() {
	a.Req.Layers = true
	a.changed(false)
}

// LayerCount is the number of layers, 0 without a model.
func (a *App) LayerCount() int {
	if m := a.Model(); m != nil {
		return m.Layers
	}
	return 0
}

// PageLayers moves the layer table's window by delta rows, or to row "at" if at >= 0.
func (a *App) PageLayers(delta, at int) {
	n := a.LayerCount()
	s := a.LayerStart + delta
	if at >= 0 {
		s = at
	}
	a.LayerStart = max(0, min(s, n-1))
	a.refetch()
}

// --- Export and share.

// ResultJSON is the plan as JSON: the whole result, which the planner holds (the page
// has its view). It blocks: call it from Host.Background.
func (a *App) ResultJSON() []byte {
	var handle int
	a.Host.Update(func() {
		if a.View != nil {
			handle = a.View.Handle
		}
	}, false)
	if handle == 0 || a.Planner == nil {
		return nil
	}
	out, err := a.Planner(nil, "result", []string{strconv.Itoa(handle)}, nil)
	if err != nil || errorObject(out) != nil {
		return nil
	}
	return []byte(out)
}

// RequestJSON is the request as JSON.
func (a *App) RequestJSON() []byte {
	b, _ := json.MarshalIndent(a.Req, "", "  ")
	return b
}

// ExportPlan downloads the plan as JSON: the whole result, which the planner gives.
func (a *App) ExportPlan() {
	if a.Host == nil || a.Res == nil {
		return
	}
	a.Host.Background(func() {
		if b := a.ResultJSON(); b != nil {
			a.Host.Download("pipeplan-plan.json", "application/json", b)
		} else {
			a.Host.Update(func() {
				a.notice("The plan could not be downloaded: the planner no longer holds it. Try again after it plans.", true)
			}, true)
		}
	})
}

// StoredModel reports whether the request's model is a file kept in the browser's
// storage, which the request references (the planner's "import").
func (a *App) StoredModel() bool {
	d := strings.TrimLeft(string(a.Req.Model.Document), " \t\r\n")
	return strings.HasPrefix(d, "{") && strings.HasPrefix(strings.TrimLeft(d[1:], " \t\r\n"), `"stored":`)
}

// ShareLink is the link to this request: the one the last Share gave for it (a stored
// plan's ?plan=ID), else the page with the request in its #fragment.
func (a *App) ShareLink(embed bool) string {
	f, err := EncodeFragment(a.Req)
	if err != nil || a.Host == nil {
		return ""
	}
	if s := a.shared; !embed && s != nil && s.For == f {
		return s.Link
	}
	return a.Host.Link(f, embed)
}

// Share copies a link to this request: with a share server, it stores the plan there
// and the link is ?plan=ID; without one, or when the server cannot be reached, the link
// holds the whole request in its #fragment, and the notice says which.
func (a *App) Share() {
	f, err := EncodeFragment(a.Req)
	if err != nil || a.Host == nil || a.Sharing {
		return
	}
	fragLink := a.Host.Link(f, false)
	if a.Server == "" {
		a.shared = nil
		a.Host.Copy(fragLink)
		if a.StoredModel() {
			a.notice("Link copied: its model file is kept in this browser's storage, so it opens this plan in this browser only. Set a share server for a link that opens anywhere.", false)
		} else {
			a.notice("Link copied: it holds the whole request, and opens this plan on any copy of pipeplan.", false)
		}
		return
	}
	body, err := json.Marshal(a.Req)
	if err != nil {
		return
	}
	server := a.Server
	a.Sharing = true
	a.notice("Storing the plan on "+server+"…", false)
	stored := a.StoredModel()
	a.Host.Background(func() {
		if stored {
			// The server stores the whole request: the planner puts the model file back.
			out, perr := a.Planner(nil, "expand", []string{string(body)}, nil)
			if e := errorObject(out); perr == nil && e != nil {
				perr = e
			}
			if perr != nil {
				a.Host.Update(func() { a.shareDone(f, fragLink, server, api.Stored{}, perr) }, true)
				return
			}
			body = []byte(out)
		}
		st, err := a.shareClient(server).Share(body)
		a.Host.Update(func() { a.shareDone(f, fragLink, server, st, err) }, true)
	})
}

// shareTimeout bounds a talk with the share server.
const shareTimeout = 20 * time.Second

// shareClient is the share server's client: the host's fetch, each request bounded by
// shareTimeout.
func (a *App) shareClient(server string) api.Client {
	return api.Client{Server: server, Send: func(method, url string, body []byte, limit int64) (int, []byte, error) {
		return a.Host.Fetch(method, url, body, limit, shareTimeout)
	}}
}

// sharedLink is the link a Share gave, for the request whose fragment is For.
type sharedLink struct {
	For, Link string
}

func (a *App) shareDone(f, fragLink, server string, st api.Stored, err error) {
	a.Sharing = false
	switch {
	case err == nil:
		link := a.Host.PlanLink(st.ID, server)
		a.shared = &sharedLink{For: f, Link: link}
		a.Host.Copy(link)
		a.notice(fmt.Sprintf("Stored on %s as plan %s. Link copied: it opens this plan from the server.", server, ShortID(st.ID)), false)
	case api.Unreachable(err):
		a.shared = &sharedLink{For: f, Link: fragLink}
		a.Host.Copy(fragLink)
		a.notice(fmt.Sprintf("The share server %s could not be reached (%v). Link copied instead: it holds the whole request in its #fragment, and opens this plan on any copy of pipeplan.", server, cause(err)), true)
	default:
		a.shared = nil
		a.notice("The share server refused the request: "+refusal(err), true)
	}
}

// cause is what lies under the client's "the share server X cannot be reached: ..."
// (the notice names the server itself): "TypeError: Failed to fetch".
func cause(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// refusal says why the server refused, with the fields core named.
func refusal(err error) string {
	var ae *api.APIError
	if !errors.As(err, &ae) || len(ae.Fields) == 0 {
		return err.Error()
	}
	var s []string
	for _, f := range ae.Fields {
		s = append(s, f.Path+": "+f.Reason)
	}
	return strings.Join(s, "; ")
}

// ShortID is a plan id as people read it: its first 12 characters.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// OpenPlan shows the plan stored under id on the share server (?plan=ID): the form
// from its request, the drawing from its result, without replanning. showing says what
// the page shows meanwhile, and if the server cannot be reached ("the link's #fragment",
// "your last request").
func (a *App) OpenPlan(id, showing string) {
	if a.Host == nil {
		return
	}
	server := a.Server
	if server == "" {
		a.notice(fmt.Sprintf("This link names the stored plan %s but no share server (?server=, or the setting in Export and share): showing %s.", ShortID(id), showing), true)
		return
	}
	a.Sharing = true
	a.notice(fmt.Sprintf("Opening plan %s from %s…", ShortID(id), server), false)
	a.Host.Background(func() {
		doc, err := a.shareClient(server).Open(id)
		// The planner reads the stored plan: it holds the result (the page receives its
		// view) and keeps a large model in the browser's storage (the page's request
		// references it).
		var o struct {
			Request *wire.Request `json:"request"`
			View    *wire.View    `json:"view"`
		}
		if err == nil {
			err = a.call(nil, "open", &o, string(doc.Request), string(doc.Result))
			if err == nil && (o.Request == nil || o.View == nil || o.View.Result == nil) {
				err = errors.New("the planner's answer has no plan")
			}
			if err != nil {
				err = fmt.Errorf("the stored plan does not read: %v", err)
			}
		}
		a.Host.Update(func() { a.openDone(id, server, showing, o.Request, o.View, err) }, true)
	})
}

func (a *App) openDone(id, server, showing string, r *wire.Request, v *wire.View, err error) {
	a.Sharing = false
	var ae *api.APIError
	switch {
	case err == nil:
		a.planSeq++ // an answer still coming is for the request before
		seq := a.planSeq
		a.BoundsText, a.LayerStart, a.StageStart, a.Opened = "", 0, 0, id
		a.Req, a.Err = r, nil
		a.show(v, nil)
		if len(r.Boundaries) > 0 { // the optimum beside a manual split, when it comes
			o := clone(r)
			o.Boundaries = nil
			a.background(func() {
				if opt, err := a.plan(o, wire.Window{}); err == nil {
					a.update(func() {
						if seq == a.planSeq {
							a.OptView, a.Opt = opt, opt.Result
						}
					})
				}
			})
		}
		f, _ := EncodeFragment(r)
		a.shared = &sharedLink{For: f, Link: a.Host.PlanLink(id, server)}
		a.keep(false)
		a.notice(fmt.Sprintf("Opened plan %s, stored on %s.", ShortID(id), server), false)
	case errors.As(err, &ae) && ae.Status == 404:
		a.notice(fmt.Sprintf("%s does not know plan %s: showing %s.", server, ShortID(id), showing), true)
	case api.Unreachable(err):
		a.notice(fmt.Sprintf("The share server %s could not be reached (%v): showing %s instead of plan %s.", server, cause(err), showing, ShortID(id)), true)
	default:
		a.notice(fmt.Sprintf("Plan %s could not be opened: %v. Showing %s.", ShortID(id), err, showing), true)
	}
}

// SetServer handles the share server setting: an http(s) URL, or "" for none. The
// page's ?server= wins over the setting for the page it opened.
func (a *App) SetServer(v string) {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v != "" && !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
		a.typed("server", v, false)
		a.notice("share server: give its address, as https://plans.example.org", true)
		return
	}
	a.typed("server", v, true)
	a.Server = v
	a.shared = nil
	if a.Host != nil {
		a.Host.SaveServer(v)
	}
	if v == "" {
		a.notice("No share server: links hold the whole request.", false)
	} else {
		a.notice("Share stores plans on "+v+".", false)
	}
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

// ScheduleKinds is core/schedule's list, for the docs and tests.
var ScheduleKinds = schedule.Kinds

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
