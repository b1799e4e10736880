package share

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"pipeplan/core/model"
	"pipeplan/share/api"
)

// Limits used when Config leaves them zero.
const (
	// DefaultMaxRequestBytes caps a POST body: 4 MiB holds imported profiles of thousands
	// of layers (a PipeDream graph.txt of a large model is a few hundred KiB).
	DefaultMaxRequestBytes = 4 << 20
	// DefaultMaxDocumentBytes caps a stored document (the canonical request and its
	// result, whose normalized request repeats the model). Workers KV takes values up to
	// 25 MiB; a schedule timeline (events) of many microbatches is what grows past this.
	DefaultMaxDocumentBytes = 20 << 20
)

// Prepared is a planning request that decoded and passed validation: what the handler
// needs of core/request to store it.
type Prepared struct {
	// ID is the request's content id (core/request's Request.ID): the same request, the
	// same id.
	ID string
	// Canonical is the request's canonical JSON (Request.Canonical).
	Canonical []byte
	// Run plans the request (core/request's Run) and returns the result as JSON.
	Run func(ctx context.Context) ([]byte, error)
	// MinDocumentBytes is the fewest bytes the document will take, priced before Run
	// (core/request's MinResultBytes: a timeline of events): beyond MaxDocumentBytes the
	// request is refused (413) without planning it.
	MinDocumentBytes int64
}

// Document runs the request and returns the document to store: the JSON of a Document
// holding the id, the canonical request and the result. Its errors are Run's.
func (p *Prepared) Document(ctx context.Context) ([]byte, error) {
	result, err := p.Run(ctx)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(Document{ID: p.ID, Request: p.Canonical, Result: result})
	if err != nil {
		panic(fmt.Sprintf("share: encoding the document of %s: %v", p.ID, err)) // the planner made invalid JSON
	}
	return doc, nil
}

// Planner decodes and validates a POST body that is a JSON object. Its errors are the
// request's faults and are answered 422; model.Errors (field path and reason) are listed
// in the answer's fields. CorePlanner is the Planner of core/request.
type Planner func(body []byte) (*Prepared, error)

// Config configures NewHandler.
type Config struct {
	// Store keeps the documents. Required.
	Store Store
	// Plan decodes, validates and runs requests. Required.
	Plan Planner
	// AllowedOrigins are the origins (scheme://host[:port], as browsers send in the
	// Origin header) whose pages may call the API from a browser; "*" allows any. With
	// none, browsers on other origins cannot read the answers (CORS).
	AllowedOrigins []string
	// MaxRequestBytes caps a POST body (413 beyond); 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// MaxDocumentBytes caps a stored document (413 beyond); 0 means
	// DefaultMaxDocumentBytes.
	MaxDocumentBytes int64
	// BaseURL is the public URL the API is reached at ("https://plans.example.com"),
	// which the url of a stored plan starts with. Empty: the scheme and host the request
	// came to.
	BaseURL string
}

// The API's wire format (package api, which the page uses without net/http).
type (
	Document  = api.Document
	Stored    = api.Stored
	ErrorBody = api.ErrorBody
	Field     = api.Field
)

// Error codes of ErrorBody.Code.
const (
	CodeMalformed        = api.CodeMalformed
	CodeTooLarge         = api.CodeTooLarge
	CodeDocumentTooLarge = api.CodeDocumentTooLarge
	CodeInvalid          = api.CodeInvalid
	CodeNotFound         = api.CodeNotFound
	CodeMethod           = api.CodeMethod
	CodeMediaType        = api.CodeMediaType
	CodeOrigin           = api.CodeOrigin
	CodeUnavailable      = api.CodeUnavailable
	CodeInternal         = api.CodeInternal
)

// Paths of the API.
const (
	PlansPath = api.PlansPath
	planPath  = PlansPath + "/"
)

// Cache-Control values: a stored plan never changes (its id is its content's hash), the
// rest must not be cached.
const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheNone      = "no-store"
)

type handler struct {
	c       Config
	origins map[string]bool
	any     bool

	// ids holds a lock per id being posted: concurrent posts of one new request plan and
	// store it once (one 201; the others wait, find it stored and answer 200). A Worker
	// runs each request in an instance of its own, where this changes nothing.
	mu  sync.Mutex
	ids map[string]*idLock
}

// idLock is the lock of one id, with the posts that hold or wait for it.
type idLock struct {
	sync.Mutex
	users int
}

// lock locks id for one post; the returned func unlocks it.
func (h *handler) lock(id string) func() {
	h.mu.Lock()
	l := h.ids[id]
	if l == nil {
		l = &idLock{}
		h.ids[id] = l
	}
	l.users++
	h.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		h.mu.Lock()
		if l.users--; l.users == 0 {
			delete(h.ids, id)
		}
		h.mu.Unlock()
	}
}

// NewHandler returns the shared-plans API, the same for the Worker and the local twin:
//
//	POST    /v1/plans       a planning request -> 201 {id, url} (200 when already stored)
//	GET     /v1/plans/{id}  the stored Document, cacheable forever, with an ETag
//	OPTIONS either          CORS preflight
//
// Errors are ErrorBody JSON. See the package documentation.
func NewHandler(c Config) http.Handler {
	if c.Store == nil || c.Plan == nil {
		panic("share.NewHandler: Config.Store and Config.Plan are required")
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxDocumentBytes <= 0 {
		c.MaxDocumentBytes = DefaultMaxDocumentBytes
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	h := &handler{c: c, origins: map[string]bool{}, ids: map[string]*idLock{}}
	for _, o := range c.AllowedOrigins {
		if o == "*" {
			h.any = true
		}
		h.origins[strings.TrimRight(o, "/")] = true
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.fail(w, http.StatusInternalServerError, ErrorBody{Code: CodeInternal, Error: fmt.Sprintf("internal error: %v", v)})
		}
	}()
	w.Header().Add("Vary", "Origin")
	allowed := h.cors(w, r)
	plans := r.URL.Path == PlansPath
	id, onePlan := strings.CutPrefix(r.URL.Path, planPath)
	methods := "POST, OPTIONS"
	if onePlan {
		methods = "GET, HEAD, OPTIONS"
	}
	switch {
	case !plans && !onePlan:
		h.fail(w, http.StatusNotFound, ErrorBody{Code: CodeNotFound, Error: fmt.Sprintf("no such path %s: the API is POST %s and GET %s{id}", quote(r.URL.Path, 256), PlansPath, planPath)})
	case r.Method == http.MethodOptions:
		h.preflight(w, r, allowed, methods)
	case plans && r.Method == http.MethodPost:
		h.post(w, r)
	case onePlan && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.get(w, r, id)
	default:
		w.Header().Set("Allow", methods)
		h.fail(w, http.StatusMethodNotAllowed, ErrorBody{Code: CodeMethod, Error: fmt.Sprintf("method %s not allowed on %s (allowed: %s)", quote(r.Method, 32), quote(r.URL.Path, 256), methods)})
	}
}

// cors adds the CORS answer headers for an allowed Origin and reports whether the
// request's origin is allowed (a request without Origin is not a cross-origin one and
// counts as allowed).
func (h *handler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if !h.any && !h.origins[origin] {
		return false
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Expose-Headers", "ETag, Location")
	return true
}

// preflight answers OPTIONS: 204 with what the browser may do, or 403 for an origin
// that is not configured.
func (h *handler) preflight(w http.ResponseWriter, r *http.Request, allowed bool, methods string) {
	w.Header().Set("Allow", methods)
	if r.Header.Get("Access-Control-Request-Method") == "" || r.Header.Get("Origin") == "" {
		w.WriteHeader(http.StatusNoContent) // a plain OPTIONS
		return
	}
	if !allowed {
		h.fail(w, http.StatusForbidden, ErrorBody{Code: CodeOrigin, Error: fmt.Sprintf("origin %s may not call this API from a browser: it is not among the configured origins", quote(r.Header.Get("Origin"), 256))})
		return
	}
	w.Header().Set("Access-Control-Allow-Methods", methods)
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match")
	w.Header().Set("Access-Control-Max-Age", "86400")
	w.Header().Set("Cache-Control", cacheNone)
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) post(w http.ResponseWriter, r *http.Request) {
	// Only application/json: a form or text/plain POST is what any page may send
	// cross-origin without a preflight, so it is refused before anything is read.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.fail(w, http.StatusUnsupportedMediaType, ErrorBody{Code: CodeMediaType,
			Error: fmt.Sprintf("the request's Content-Type is %s: POST a planning request as application/json", quote(r.Header.Get("Content-Type"), 64))})
		return
	}
	limit := h.c.MaxRequestBytes
	if r.ContentLength > limit {
		h.fail(w, http.StatusRequestEntityTooLarge, tooLarge(r.ContentLength, limit))
		return
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.fail(w, http.StatusRequestEntityTooLarge, tooLarge(-1, limit))
			return
		} else if err != nil {
			h.fail(w, http.StatusBadRequest, ErrorBody{Code: CodeMalformed, Error: "reading the request body: " + err.Error()})
			return
		}
	}
	if msg := malformed(body); msg != "" {
		h.fail(w, http.StatusBadRequest, ErrorBody{Code: CodeMalformed, Error: msg})
		return
	}
	p, err := h.c.Plan(body)
	if err != nil {
		h.fail(w, http.StatusUnprocessableEntity, invalid(err))
		return
	}
	if !validID(p.ID) {
		panic(fmt.Sprintf("the planner made an id %q that is not 1 to %d lowercase hex digits", p.ID, maxIDLen))
	}
	if p.MinDocumentBytes > h.c.MaxDocumentBytes {
		h.fail(w, http.StatusRequestEntityTooLarge, documentTooLarge("at least", p.MinDocumentBytes, h.c.MaxDocumentBytes))
		return
	}
	ctx := r.Context()
	status := http.StatusOK
	defer h.lock(p.ID)()
	if _, err := h.c.Store.Get(ctx, p.ID); errors.Is(err, ErrNotFound) {
		// Not stored yet: plan it and store it. A plan core cannot make is refused here,
		// so nothing is stored that core would not make.
		doc, err := p.Document(ctx)
		if err != nil {
			if ctx.Err() != nil {
				h.fail(w, http.StatusServiceUnavailable, ErrorBody{Code: CodeUnavailable, Error: "planning was cancelled: " + err.Error()})
				return
			}
			h.fail(w, http.StatusUnprocessableEntity, invalid(err))
			return
		}
		if int64(len(doc)) > h.c.MaxDocumentBytes {
			h.fail(w, http.StatusRequestEntityTooLarge, documentTooLarge("", int64(len(doc)), h.c.MaxDocumentBytes))
			return
		}
		if err := h.c.Store.Put(ctx, p.ID, doc); err != nil {
			h.fail(w, http.StatusServiceUnavailable, ErrorBody{Code: CodeUnavailable, Error: "storing the plan: " + err.Error()})
			return
		}
		status = http.StatusCreated
	} else if err != nil {
		h.fail(w, http.StatusServiceUnavailable, ErrorBody{Code: CodeUnavailable, Error: "reading the store: " + err.Error()})
		return
	}
	url := h.base(r) + planPath + p.ID
	w.Header().Set("Location", url)
	w.Header().Set("Cache-Control", cacheNone)
	writeJSON(w, status, Stored{ID: p.ID, URL: url})
}

func (h *handler) get(w http.ResponseWriter, r *http.Request, id string) {
	if !validID(id) {
		h.fail(w, http.StatusNotFound, notFound(id))
		return
	}
	doc, err := h.c.Store.Get(r.Context(), id)
	if errors.Is(err, ErrNotFound) {
		h.fail(w, http.StatusNotFound, notFound(id))
		return
	} else if err != nil {
		h.fail(w, http.StatusServiceUnavailable, ErrorBody{Code: CodeUnavailable, Error: "reading the store: " + err.Error()})
		return
	}
	etag := `"` + id + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", cacheImmutable)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		// No Content-Length: the Worker would promise that many bytes and send none.
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
}

// base is the scheme and host that document URLs start with.
func (h *handler) base(r *http.Request) string {
	if h.c.BaseURL != "" {
		return h.c.BaseURL
	}
	if r.URL.Scheme != "" && r.URL.Host != "" { // the Worker sees the whole URL
		return r.URL.Scheme + "://" + r.URL.Host
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (h *handler) fail(w http.ResponseWriter, status int, e ErrorBody) {
	w.Header().Set("Cache-Control", cacheNone)
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the types above are written
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// maxIDLen bounds an id: a SHA-512 in hex is 128 digits.
const maxIDLen = 128

// validID reports whether id can be a content id: lowercase hex digits.
func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// etagMatches reports whether an If-None-Match header names etag (or is "*").
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// malformed says why body is not one JSON object, or returns "".
func malformed(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return "the request body is empty: POST a planning request (a JSON object)"
	case !json.Valid(trimmed):
		var v any
		err := json.Unmarshal(trimmed, &v)
		return "the request body is not JSON: " + err.Error()
	case trimmed[0] != '{':
		return "the request body is JSON but not an object: POST a planning request (a JSON object)"
	}
	return ""
}

func tooLarge(n, limit int64) ErrorBody {
	size := "more than"
	if n >= 0 {
		size = strconv.FormatInt(n, 10) + " bytes, more than"
	}
	return ErrorBody{
		Code:       CodeTooLarge,
		LimitBytes: limit,
		Error:      fmt.Sprintf("the request is %s the %d bytes this server takes", size, limit),
	}
}

// documentTooLarge refuses a request whose plan is n bytes (qualified: "at least", priced
// before planning), more than limit.
func documentTooLarge(qualified string, n, limit int64) ErrorBody {
	if qualified != "" {
		qualified += " "
	}
	return ErrorBody{
		Code:       CodeDocumentTooLarge,
		LimitBytes: limit,
		Error: fmt.Sprintf("the plan made of this request is %s%d bytes, more than the %d bytes a shared plan may hold (a request with events keeps the whole schedule timeline: leave events out to share it)",
			qualified, n, limit),
	}
}

func invalid(err error) ErrorBody {
	e := ErrorBody{Code: CodeInvalid, Error: "invalid request: " + err.Error()}
	if fes, ok := model.AsFieldErrors(err); ok {
		for _, fe := range fes {
			e.Fields = append(e.Fields, Field{Path: model.Clip(fe.Path), Reason: model.Clip(fe.Reason)})
		}
	}
	return e
}

func notFound(id string) ErrorBody {
	return ErrorBody{Code: CodeNotFound, Error: fmt.Sprintf("no plan is stored under id %s", quote(id, 2*maxIDLen))}
}

// quote is s quoted as %q does, cut to its first n bytes (and "..." after the quote) when
// longer: an error names what it refuses without echoing a hostile input whole.
func quote(s string, n int) string {
	if s == "" {
		return "empty"
	}
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("... (%d bytes)", len(s))
}
