// Package api is the shared-plans API's wire format (docs/share.md) and a client of it
// that sends through any transport, without net/http: the page sends with the browser's
// fetch (net/http would add about a megabyte to main.wasm), the command line and the
// tests with net/http (package share's Client). Package share serves the API and
// re-exports these names.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Document is what is stored under a plan's id and what GET /v1/plans/{id} returns.
type Document struct {
	// ID is the request's content id.
	ID string `json:"id"`
	// Request is the canonical request.
	Request json.RawMessage `json:"request"`
	// Result is what core made of it (core/request's Result).
	Result json.RawMessage `json:"result"`
}

// Stored is the answer to POST /v1/plans.
type Stored struct {
	// ID is the plan's id: GET /v1/plans/{id} returns it.
	ID string `json:"id"`
	// URL is the absolute URL of GET /v1/plans/{id}.
	URL string `json:"url"`
}

// Error codes of ErrorBody.Code.
const (
	CodeMalformed        = "malformed"              // 400: the body is not a JSON object
	CodeTooLarge         = "too_large"              // 413: the body exceeds the size cap
	CodeDocumentTooLarge = "document_too_large"     // 413: the plan made is too large to store
	CodeInvalid          = "invalid"                // 422: core refused the request
	CodeNotFound         = "not_found"              // 404: no such plan, or no such path
	CodeMethod           = "method_not_allowed"     // 405
	CodeMediaType        = "unsupported_media_type" // 415: a POST whose Content-Type is not application/json
	CodeOrigin           = "origin_not_allowed"     // 403: a CORS preflight from an origin not configured
	CodeUnavailable      = "unavailable"            // 503: the store failed, or the request was cancelled
	CodeInternal         = "internal"               // 500: a bug
)

// ErrorBody is every error answer's JSON.
type ErrorBody struct {
	// Error is the whole message, for people.
	Error string `json:"error"`
	// Code names the problem for programs (the Code... constants).
	Code string `json:"code"`
	// Fields lists the request's bad fields when core named them (422).
	Fields []Field `json:"fields,omitempty"`
	// LimitBytes is the cap that was exceeded (413).
	LimitBytes int64 `json:"limit_bytes,omitempty"`
}

// Field is one bad field of a request: its path in the request and why.
type Field struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// PlansPath is the API's path: POST PlansPath, GET PlansPath/{id}.
const PlansPath = "/v1/plans"

// APIError is an error answer of the server.
type APIError struct {
	// Status is the HTTP status.
	Status int
	ErrorBody
}

func (e *APIError) Error() string {
	if e.ErrorBody.Error == "" {
		return fmt.Sprintf("the share server answered HTTP %d", e.Status)
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

// Send sends one HTTP request (body nil for none; a body is JSON) and returns the
// answer's status and body, at most limit bytes of it. An error means no answer. A Send
// bounds its own time: share.Client's carries a context, the page's fetch a timeout (the
// page has no contexts: see ui.Planner).
type Send func(method, url string, body []byte, limit int64) (status int, answer []byte, err error)

// MaxAnswer bounds what the client reads of one answer: a stored document is at most
// 20 MiB unless a server is configured otherwise.
const MaxAnswer = 64 << 20

// Client calls a shared-plans server, the Worker or the twin.
type Client struct {
	// Server is the API's base URL ("https://plans.example.com"), without /v1/plans.
	Server string
	// Send sends the requests. Required.
	Send Send
}

// Share stores a planning request (its JSON) and returns the plan's id and URL. A 503
// is tried once more: posting the same request again is harmless.
func (c Client) Share(request []byte) (Stored, error) {
	var s Stored
	var err error
	for try := 0; try < 2; try++ {
		var body []byte
		body, err = c.do("POST", PlansPath, request)
		if err == nil {
			err = decodeAnswer(body, &s)
			return s, err
		}
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 503 {
			break
		}
	}
	return s, err
}

// ValidID reports whether id can be a plan's id: lowercase hex, as content ids are.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Open returns the plan stored under id. An unknown id is an *APIError with Status 404
// (an id that is not lowercase hex is one without asking the server).
func (c Client) Open(id string) (*Document, error) {
	if !ValidID(id) {
		return nil, &APIError{Status: 404, ErrorBody: ErrorBody{Code: CodeNotFound, Error: fmt.Sprintf("%q is not a plan id (ids are lowercase hex)", id)}}
	}
	body, err := c.do("GET", PlansPath+"/"+id, nil)
	if err != nil {
		return nil, err
	}
	d := new(Document)
	if err := decodeAnswer(body, d); err != nil {
		return nil, err
	}
	if d.ID != id {
		return nil, &APIError{Status: 200, ErrorBody: ErrorBody{Error: fmt.Sprintf("the share server answered plan %q for %q", d.ID, id)}}
	}
	return d, nil
}

func (c Client) do(method, path string, body []byte) ([]byte, error) {
	if c.Send == nil {
		return nil, errors.New("share client: no Send")
	}
	status, answer, err := c.Send(method, strings.TrimRight(c.Server, "/")+path, body, MaxAnswer)
	if err != nil {
		return nil, fmt.Errorf("the share server %s cannot be reached: %w", c.Server, err)
	}
	if status >= 300 {
		e := &APIError{Status: status}
		json.Unmarshal(answer, &e.ErrorBody) // an answer that is not ours leaves Code empty
		return nil, e
	}
	return answer, nil
}

func decodeAnswer(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return &APIError{Status: 200, ErrorBody: ErrorBody{Error: "the share server's answer is not this API's: " + err.Error()}}
	}
	return nil
}
