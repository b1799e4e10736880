package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"pipeplan/core/wire"
	"pipeplan/share/api"
)

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
