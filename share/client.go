package share

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"pipeplan/share/api"
)

// Client calls a shared-plans server, the Worker or the twin, from Go with net/http
// (the page uses api.Client with the browser's fetch instead). The server must list a
// page's origin among its allowed origins (CORS).
type Client struct {
	// Server is the API's base URL ("https://plans.example.com"), without /v1/plans.
	Server string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
}

// APIError is an error answer of the server.
type APIError = api.APIError

// Unreachable reports whether err means that the server could not be used: no answer
// (offline, a wrong address, CORS refused), a server error (5xx), or an answer that is not
// this API's. The page then shares by URL fragment and says so. Other errors are the
// request's fault (400, 413, 422: show them) or an unknown plan (404).
func Unreachable(err error) bool { return api.Unreachable(err) }

// api is the client of the API whose requests ctx bounds.
func (c Client) api(ctx context.Context) api.Client {
	return api.Client{Server: c.Server, Send: func(method, url string, body []byte, limit int64) (int, []byte, error) {
		return c.send(ctx, method, url, body, limit)
	}}
}

// Share stores a planning request (its JSON) and returns the plan's id and URL. A 503
// is tried once more: posting the same request again is harmless.
func (c Client) Share(ctx context.Context, request []byte) (Stored, error) {
	return c.api(ctx).Share(request)
}

// Open returns the plan stored under id. An unknown id is an *APIError with Status 404.
func (c Client) Open(ctx context.Context, id string) (*Document, error) {
	return c.api(ctx).Open(id)
}

// send is api.Send over net/http, bounded by ctx.
func (c Client) send(ctx context.Context, method, url string, body []byte, limit int64) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, answer, nil
}

// Link returns the page's address that opens a stored plan: page (the app's URL) with
// ?plan=id, and ?server= when server is not empty (a page that has no server configured,
// or another one, then finds it). Other query parameters of page are kept; its fragment
// is dropped.
func Link(page, id, server string) (string, error) {
	u, err := url.Parse(page)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("plan", id)
	if server != "" {
		q.Set("server", server)
	} else {
		q.Del("server")
	}
	u.RawQuery = q.Encode()
	u.Fragment = ""
	return u.String(), nil
}
