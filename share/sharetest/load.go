package sharetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"pipeplan/share"
)

// Load is a load test's shape: Posts distinct requests, then a GET of each stored plan
// (Gets in all, cycling over them), Concurrency at a time.
type Load struct {
	Posts, Gets, Concurrency int
	// Limit bounds each phase's time: requests not yet sent when it has passed are not
	// sent and count as errors. 0: no bound.
	Limit time.Duration
	// Retry, if set, says which failed answers to a POST are the transport's fault, not
	// the server's: such a POST is sent again (a POST is idempotent here), up to twice,
	// and counted in Figures.Retries.
	Retry func(*Response) bool
}

// Figures is what a load test measured.
type Figures struct {
	Posts, Gets, Concurrency int
	// Errors counts requests that failed or answered wrongly; FirstErrors holds the
	// first few.
	Errors      int
	FirstErrors []string
	// Retries counts POSTs sent again because Load.Retry said so.
	Retries int
	// PostTime and GetTime are the wall times of the two phases.
	PostTime, GetTime time.Duration
	// PostLatency and GetLatency are latency percentiles: p50, p90, p99, max.
	PostLatency, GetLatency [4]time.Duration
}

// String is the figures on a few lines, for logs and reports.
func (f Figures) String() string {
	rate := func(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
	ms := func(l [4]time.Duration) string {
		return fmt.Sprintf("p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms",
			l[0].Seconds()*1e3, l[1].Seconds()*1e3, l[2].Seconds()*1e3, l[3].Seconds()*1e3)
	}
	s := fmt.Sprintf("%d posts in %.2f s (%.0f/s; %s)\n%d gets in %.2f s (%.0f/s; %s)\n%d at a time; %d errors",
		f.Posts, f.PostTime.Seconds(), rate(f.Posts, f.PostTime), ms(f.PostLatency),
		f.Gets, f.GetTime.Seconds(), rate(f.Gets, f.GetTime), ms(f.GetLatency),
		f.Concurrency, f.Errors)
	if f.Retries > 0 {
		s = fmt.Sprintf("%s (%d posts retried)", s, f.Retries)
	}
	if len(f.FirstErrors) > 0 {
		s += ":\n  " + strings.Join(f.FirstErrors, "\n  ")
	}
	return s
}

// Run posts l.Posts distinct requests of fx (fx.Valid(0..Posts-1)) to the target, then
// reads the stored plans back, l.Concurrency requests in flight at a time. A post must
// answer 201 or 200 with the id core gives the request locally; a get must answer 200
// with exactly the document computed locally (so the server stored what core makes,
// and every platform makes the same). Everything else counts as an error.
func (l Load) Run(tg Target, fx Fixture) (Figures, error) {
	f := Figures{Posts: l.Posts, Gets: l.Gets, Concurrency: l.Concurrency}
	bodies := make([][]byte, l.Posts)
	ids := make([]string, l.Posts)
	docs := make([][]byte, l.Posts)
	for i := range bodies {
		bodies[i] = fx.Valid(i)
		var err error
		if ids[i], docs[i], err = fx.Expect(bodies[i]); err != nil {
			return f, fmt.Errorf("the fixture's request %d: %v", i, err)
		}
	}
	if l.Posts > 0 && l.Gets > 0 && len(slices.Compact(slices.Sorted(slices.Values(ids)))) != l.Posts {
		return f, fmt.Errorf("the fixture's %d requests are not distinct", l.Posts)
	}

	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		f.Errors++
		if len(f.FirstErrors) < 5 {
			f.FirstErrors = append(f.FirstErrors, fmt.Sprintf(format, args...))
		}
	}
	unsent := func(n int, what string) {
		if n > 0 {
			fail("%d %s not sent: the phase ran past its limit of %s", n, what, l.Limit)
			f.Errors += n - 1
		}
	}
	var skipped int
	f.PostTime, f.PostLatency, skipped = l.phase(l.Posts, func(i int) {
		r, err := tg.Do("POST", share.PlansPath, bodies[i], nil)
		for try := 0; try < 2 && err == nil && l.Retry != nil && l.Retry(r); try++ {
			mu.Lock()
			f.Retries++
			mu.Unlock()
			time.Sleep(100 * time.Millisecond << try)
			r, err = tg.Do("POST", share.PlansPath, bodies[i], nil)
		}
		if err != nil {
			fail("POST %d: %v", i, err)
			return
		}
		var s share.Stored
		if err := json.Unmarshal(r.Body, &s); err != nil || (r.Status != http.StatusCreated && r.Status != http.StatusOK) || s.ID != ids[i] {
			fail("POST %d: %d %.200s, want 201 with id %s", i, r.Status, r.Body, ids[i])
		}
	})
	unsent(skipped, "posts")
	if l.Posts == 0 {
		return f, nil
	}
	f.GetTime, f.GetLatency, skipped = l.phase(l.Gets, func(k int) {
		i := k % l.Posts
		r, err := tg.Do("GET", share.PlansPath+"/"+ids[i], nil, nil)
		if err != nil {
			fail("GET %d: %v", i, err)
			return
		}
		if r.Status != http.StatusOK || !bytes.Equal(r.Body, docs[i]) {
			fail("GET %d: %d %.200s, want 200 with the %d bytes core makes", i, r.Status, r.Body, len(docs[i]))
		}
	})
	unsent(skipped, "gets")
	return f, nil
}

// phase calls do(0..n-1) from l.Concurrency goroutines and returns the wall time, the
// latency percentiles and how many calls were not made for want of time.
func (l Load) phase(n int, do func(i int)) (time.Duration, [4]time.Duration, int) {
	lat := make([]time.Duration, n)
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range max(l.Concurrency, 1) {
		wg.Go(func() {
			for i := range next {
				t := time.Now()
				do(i)
				lat[i] = time.Since(t)
			}
		})
	}
	var deadline <-chan time.Time
	if l.Limit > 0 {
		deadline = time.After(l.Limit)
	}
	sent := 0
send:
	for ; sent < n; sent++ {
		select {
		case next <- sent:
		case <-deadline:
			break send
		}
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)
	var p [4]time.Duration
	if sent > 0 {
		lat = lat[:sent]
		slices.Sort(lat)
		for j, q := range []float64{0.5, 0.9, 0.99, 1} {
			p[j] = lat[min(sent-1, int(q*float64(sent)))]
		}
	}
	return wall, p, n - sent
}

// Client returns an HTTP client for concurrency requests in flight to one host that
// keeps its connections open (the default keeps 2 idle, so 50 at a time would open and
// close connections by the thousand).
func Client(concurrency int, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency
	tr.MaxConnsPerHost = concurrency
	return &http.Client{Transport: tr, Timeout: timeout}
}
