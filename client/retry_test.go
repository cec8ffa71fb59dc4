package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// flaky answers each request with the next scripted response, then with
// success. A response of 0 drops the connection without an answer.
type flaky struct {
	mu      sync.Mutex
	script  []int
	headers map[int]http.Header
	bodies  []string
	calls   int
}

const okBody = `{"read":1,"inserted":1,"changed":0,"unchanged":0,"revived":0,"refreshed":0,"rejected":0,"errors":[],"crawled_at_defaulted":1,"date_errors":0,"marked":0}`

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.bodies = append(f.bodies, string(body))
	status := http.StatusOK
	if i < len(f.script) {
		status = f.script[i]
	}
	h := f.headers[i]
	f.mu.Unlock()
	if status == 0 {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	if status == http.StatusOK {
		io.WriteString(w, okBody)
		return
	}
	if status == http.StatusBadGateway {
		io.WriteString(w, "<html>bad gateway</html>")
		return
	}
	io.WriteString(w, `{"error":{"code":"unavailable","message":"try later"}}`)
}

func (f *flaky) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// newTestClient returns a client whose retry waits are recorded instead
// of spent.
func newTestClient(t *testing.T, url string, opts Options) (*Client, *[]time.Duration) {
	t.Helper()
	opts.URL = url
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c.wait = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return ctx.Err()
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, waits
}

func TestRetriesOnRetryableFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script []int
	}{
		{"503", []int{503, 503}},
		{"429", []int{429}},
		{"502 without JSON", []int{502}},
		{"dropped connection", []int{0, 0}},
		{"mixed", []int{500, 0, 429, 503}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{script: tc.script}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c, waits := newTestClient(t, srv.URL, Options{Retries: 5})
			sum, err := c.Send(context.Background(), map[string]any{"title": "a"})
			if err != nil || sum == nil || sum.Inserted != 1 {
				t.Fatalf("Send: %v %+v", err, sum)
			}
			if f.count() != len(tc.script)+1 || len(*waits) != len(tc.script) {
				t.Fatalf("%d requests and %d waits, want %d and %d", f.count(), len(*waits), len(tc.script)+1, len(tc.script))
			}
			// Every attempt sends the same body.
			for _, b := range f.bodies {
				if b != f.bodies[0] {
					t.Fatalf("bodies differ: %q vs %q", b, f.bodies[0])
				}
			}
		})
	}
}

func TestGivesUpAfterTheRetries(t *testing.T) {
	f := &flaky{script: []int{503, 503, 503, 503}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, waits := newTestClient(t, srv.URL, Options{Retries: 2})
	_, err := c.Send(context.Background(), map[string]any{"title": "a"})
	var e *Error
	if !errors.As(err, &e) || e.Code != crawlkeeper.EUNAVAILABLE || e.Message != "try later" || !e.Temporary() {
		t.Fatalf("Send: %#v", err)
	}
	if f.count() != 3 || len(*waits) != 2 {
		t.Fatalf("%d requests, %d waits; want 3 and 2", f.count(), len(*waits))
	}
}

func TestNeverRetriesOtherClientErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 413} {
		f := &flaky{script: []int{status}}
		srv := httptest.NewServer(f)
		c, waits := newTestClient(t, srv.URL, Options{Retries: 5})
		_, err := c.Send(context.Background(), map[string]any{"title": "a"})
		if err == nil || f.count() != 1 || len(*waits) != 0 {
			t.Errorf("status %d: err %v after %d requests", status, err, f.count())
		}
		srv.Close()
	}
}

func TestBackoffGrowsAndHonoursRetryAfter(t *testing.T) {
	f := &flaky{script: []int{503, 503, 503, 429}, headers: map[int]http.Header{3: {"Retry-After": []string{"7"}}}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, waits := newTestClient(t, srv.URL, Options{Retries: 5, MinBackoff: 100 * time.Millisecond, MaxBackoff: 10 * time.Second})
	if _, err := c.Send(context.Background(), map[string]any{"title": "a"}); err != nil {
		t.Fatal(err)
	}
	w := *waits
	if len(w) != 4 {
		t.Fatalf("waits %v", w)
	}
	// Full jitter keeps each wait in [base/2, base] for base 100ms, 200ms, 400ms.
	for i, base := range []time.Duration{100, 200, 400} {
		base *= time.Millisecond
		if w[i] < base/2 || w[i] > base {
			t.Errorf("wait %d = %v, want within [%v, %v]", i, w[i], base/2, base)
		}
	}
	if w[3] != 7*time.Second {
		t.Errorf("wait after Retry-After: 7 = %v", w[3])
	}
}

// blocking is a server that holds every request until released.
type blocking struct {
	release chan struct{}
	arrived chan struct{}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.ReadAll(r.Body)
	b.arrived <- struct{}{}
	select {
	case <-b.release:
	case <-r.Context().Done():
		return
	}
	io.WriteString(w, okBody)
}

func TestAddBlocksWhenTheBufferIsFull(t *testing.T) {
	b := &blocking{release: make(chan struct{}), arrived: make(chan struct{}, 10)}
	srv := httptest.NewServer(b)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{Buffer: 2, BatchSize: 2, FlushInterval: time.Hour})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := c.Add(ctx, map[string]any{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	<-b.arrived // the full batch is in flight and unacknowledged
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Add(cancelled, map[string]any{"n": 3}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add on a full buffer: %v, want context.Canceled", err)
	}
	// A blocked Add goes through once the batch is acknowledged.
	added := make(chan error, 1)
	go func() { added <- c.Add(ctx, map[string]any{"n": 4}) }()
	close(b.release)
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Added != 3 || st.Sent != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCloseWithAnExpiredContextCancelsTheRequest(t *testing.T) {
	b := &blocking{release: make(chan struct{}), arrived: make(chan struct{}, 10)}
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer close(b.release)
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour})
	ctx := context.Background()
	c.Add(ctx, map[string]any{"n": 1})
	flushed := make(chan error, 1)
	go func() { flushed <- c.Flush(ctx) }()
	<-b.arrived
	expired, cancel := context.WithCancel(ctx)
	cancel()
	err := c.Close(expired)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "1 items") {
		t.Fatalf("Close: %v", err)
	}
	if err := <-flushed; err == nil {
		t.Fatal("Flush reported success for a cancelled batch")
	}
	if st := c.Stats(); st.Failed != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSendIsCancelledWithItsContext(t *testing.T) {
	f := &flaky{script: []int{503, 503, 503}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := New(Options{URL: srv.URL, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	// The real wait is an hour; cancelling ends it at once.
	c.wait = func(ctx context.Context, d time.Duration) error {
		cancel()
		return sleep(ctx, d)
	}
	_, err = c.Send(ctx, map[string]any{"title": "a"})
	if ErrorCode(err) != crawlkeeper.EUNAVAILABLE || f.count() != 1 {
		t.Fatalf("Send: %v after %d requests", err, f.count())
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&Error{StatusCode: 503}, true},
		{&Error{StatusCode: 500}, true},
		{&Error{StatusCode: 429}, true},
		{&Error{StatusCode: 400}, false},
		{&Error{StatusCode: 401}, false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
