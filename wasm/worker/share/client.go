package share

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls a shared-plans server, the Worker or the twin, from Go. In the browser
// (js/wasm) net/http sends with fetch, so the page can use it as it is; the server must
// then list the page's origin among its allowed origins (CORS).
type Client struct {
	// Server is the API's base URL ("https://plans.example.com"), without /v1/plans.
	Server string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
}

// APIError is an error answer of the server.
type APIError struct {
	// Status is the HTTP status.
	Status int
	ErrorBody
}

func (e *APIError) Error() string {
	if e.ErrorBody.Error == "" {
		return fmt.Sprintf("the share server answered %d %s", e.Status, http.StatusText(e.Status))
	}
	return e.ErrorBody.Error
}

// Unreachable reports whether err means that the server could not be used: no answer
// (offline, a wrong address, CORS refused), a server error (5xx), or an answer that is not
// this API's. The page then shares by URL fragment and says so. Other errors are the
// request's fault (400, 413, 422: show them) or an unknown plan (404).
func Unreachable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500 || ae.Code == ""
	}
	return err != nil
}

// maxAnswer bounds what the client reads of one answer: a stored document is at most
// DefaultMaxDocumentBytes unless a server is configured otherwise.
const maxAnswer = 64 << 20

// Share stores a planning request (its JSON) and returns the plan's id and URL. A 503
// is tried once more: posting the same request again is harmless.
func (c Client) Share(ctx context.Context, request []byte) (Stored, error) {
	var s Stored
	var err error
	for try := 0; try < 2; try++ {
		var body []byte
		body, err = c.do(ctx, http.MethodPost, PlansPath, request)
		if err == nil {
			err = decodeAnswer(body, &s)
			return s, err
		}
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable {
			break
		}
	}
	return s, err
}

// Open returns the plan stored under id. An unknown id is an *APIError with Status 404.
func (c Client) Open(ctx context.Context, id string) (*Document, error) {
	body, err := c.do(ctx, http.MethodGet, planPath+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	d := new(Document)
	if err := decodeAnswer(body, d); err != nil {
		return nil, err
	}
	if d.ID != id {
		return nil, &APIError{Status: http.StatusOK, ErrorBody: ErrorBody{Error: fmt.Sprintf("the share server answered plan %q for %q", d.ID, id)}}
	}
	return d, nil
}

func (c Client) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Server, "/")+path, r)
	if err != nil {
		return nil, err
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
		return nil, fmt.Errorf("the share server %s cannot be reached: %w", c.Server, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("reading the share server's answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		e := &APIError{Status: resp.StatusCode}
		json.Unmarshal(answer, &e.ErrorBody) // an answer that is not ours leaves Code empty
		return nil, e
	}
	return answer, nil
}

func decodeAnswer(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return &APIError{Status: http.StatusOK, ErrorBody: ErrorBody{Error: "the share server's answer is not this API's: " + err.Error()}}
	}
	return nil
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
