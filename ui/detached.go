package ui

// Detached is a value the host sets on an element itself after each render, instead of
// through vugu's virtual DOM: the strings that grow with the model (the share link, the
// embed snippet, the exports, the request's JSON, the boundaries). One of them can be
// larger than domrender's instruction buffer (RenderBufferBytes: a 5,000-layer model's
// link is tens of kilobytes), which would fail the render. The element is found by Selector; the
// value is its property Name (Attr false: "value", "textContent") or its attribute
// Name (Attr true: "href", "data-boundaries").
type Detached struct {
	Selector, Name string
	Attr           bool
	Value          string
}

// Detached lists the values the page shows outside the virtual DOM, for the elements
// the current view has (an element that is not there is skipped).
func (a *App) Detached() []Detached {
	var out detachedList
	add := out.add
	if a.Res != nil && a.Res.Plan != nil {
		// The stage bars' boundaries, as "0,8,15,22,26": what a script (or a test)
		// reads of the split shown.
		add("#bar-main", "data-boundaries", true, joinInts(a.Res.Plan.Boundaries))
	}
	if a.Opt != nil && a.Opt.Plan != nil {
		add("#bar-opt", "data-boundaries", true, joinInts(a.Opt.Plan.Boundaries))
	}
	switch {
	case a.Embed:
		add("#open-full", "href", true, a.ShareLink(false))
	case a.Tab == "plan":
		add("#plan-bounds", "value", false, a.Boundaries())
	case a.Tab == "export":
		add("#share-link", "value", false, a.ShareLink(false))
		add("#embed-link", "value", false, a.EmbedSnippet())
		add("#request-json", "textContent", false, string(a.RequestJSON()))
		for _, x := range a.Exports() {
			if x.Err == "" {
				add("#exports .export-"+x.Format+" pre", "textContent", false, x.Text)
			}
		}
	}
	return out
}

type detachedList []Detached

// add is not inlined: Detached calls it in ten places (each inlined append was code).
//
//go:noinline
func (l *detachedList) add(sel, name string, attr bool, v string) {
	*l = append(*l, Detached{sel, name, attr, v})
}

// EmbedSnippet is the HTML that embeds this plan in another page: an iframe of the
// read-only view, as wide as the page it sits in allows.
func (a *App) EmbedSnippet() string {
	l := a.ShareLink(true)
	if l == "" {
		return ""
	}
	return `<iframe src="` + l + `" title="pipeplan plan" style="width: 100%; max-width: 720px; height: 280px" loading="lazy"></iframe>`
}
