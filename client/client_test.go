package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/client"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// server is a real crawlkeeper API (the httpapi handler on a SQLite store)
// that counts the requests it gets.
type server struct {
	url      string
	store    crawlkeeper.Store
	requests atomic.Int64
}

const token = "secret-ingest"

func mustServe(t *testing.T, cfg *crawlkeeper.Config) *server {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if cfg == nil {
		cfg = &crawlkeeper.Config{}
	}
	api := &httpapi.Server{
		Store:    st,
		Config:   cfg,
		Ingester: &crawlkeeper.Ingester{Store: st, Config: cfg, Rules: crawlkeeper.NewRules(cfg)},
		Archiver: &crawlkeeper.Archiver{Store: st, Config: cfg},
		Tokens:   []crawlkeeper.TokenConfig{{Name: "crawler", Token: token, Scopes: []string{crawlkeeper.ScopeIngest}}},
	}
	s := &server{store: st}
	h := api.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

func mustNew(t *testing.T, opts client.Options) *client.Client {
	t.Helper()
	c, err := client.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func job(i int) map[string]any {
	return map[string]any{"title": fmt.Sprintf("Job %d", i), "url": fmt.Sprintf("https://jobs.example/%d", i), "salary": i * 1000}
}

// results collects OnResult calls.
type results struct {
	mu  sync.Mutex
	all []client.BatchResult
}

func (r *results) add(b client.BatchResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, b)
}

func (r *results) get() []client.BatchResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]client.BatchResult(nil), r.all...)
}

func TestBatchesReachTheStore(t *testing.T) {
	ctx := context.Background()
	s := mustServe(t, nil)
	var res results
	c := mustNew(t, client.Options{URL: s.url, Token: token, Source: "jobs", Round: "3", BatchSize: 4, FlushInterval: time.Hour, OnResult: res.add})
	for i := 1; i <= 10; i++ {
		item := job(i)
		item["_target"] = fmt.Sprintf("company-%d", i%3)
		if err := c.Add(ctx, item); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := res.get()
	if len(got) != 3 || got[0].Items != 4 || got[1].Items != 4 || got[2].Items != 2 {
		t.Fatalf("batches %+v, want 4+4+2 items", got)
	}
	inserted := 0
	for _, b := range got {
		if b.Err != nil || b.Summary == nil || b.Attempts != 1 {
			t.Fatalf("batch %+v", b)
		}
		inserted += b.Summary.Inserted
	}
	if inserted != 10 {
		t.Fatalf("inserted %d, want 10", inserted)
	}
	page, err := s.store.List(ctx, crawlkeeper.RecordQuery{Source: "jobs", Limit: 100})
	if err != nil || len(page.Records) != 10 {
		t.Fatalf("store has %d records (%v), want 10", len(page.Records), err)
	}

	// The same items again: deduplicated, nothing new.
	for i := 1; i <= 10; i++ {
		if err := c.Add(ctx, job(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	unchanged := 0
	for _, b := range res.get()[3:] {
		unchanged += b.Summary.Unchanged
	}
	if unchanged != 10 {
		t.Fatalf("second delivery: %d unchanged, want 10", unchanged)
	}
	if st := c.Stats(); st.Added != 20 || st.Sent != 20 || st.Failed != 0 || st.Batches != 6 {
		t.Fatalf("stats %+v", st)
	}
	if err := c.Add(ctx, job(1)); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Add after Close: %v, want ErrClosed", err)
	}
}

func TestPartialBatchIsSentAfterTheFlushInterval(t *testing.T) {
	s := mustServe(t, nil)
	done := make(chan client.BatchResult, 1)
	c := mustNew(t, client.Options{URL: s.url, Token: token, Source: "jobs", FlushInterval: time.Millisecond, OnResult: func(b client.BatchResult) { done <- b }})
	if err := c.Add(context.Background(), job(1)); err != nil {
		t.Fatal(err)
	}
	// Nobody calls Flush: the interval alone sends the batch.
	if b := <-done; b.Err != nil || b.Summary.Inserted != 1 {
		t.Fatalf("batch %+v", b)
	}
}

func TestRejectedItemsAreReportedWithTheItem(t *testing.T) {
	ctx := context.Background()
	s := mustServe(t, nil)
	var res results
	c := mustNew(t, client.Options{URL: s.url, Token: token, Source: "jobs", OnResult: res.add})
	c.Add(ctx, job(1))
	c.Add(ctx, map[string]any{"title": "bad", "_round": map[string]any{"no": 1}})
	c.Add(ctx, job(2))
	err := c.Flush(ctx)
	if client.ErrorCode(err) != crawlkeeper.EINVALID {
		t.Fatalf("Flush: %v, want an invalid error", err)
	}
	got := res.get()
	if len(got) != 1 || len(got[0].Rejected) != 1 || got[0].Summary.Inserted != 2 || got[0].Attempts != 1 {
		t.Fatalf("result %+v", got)
	}
	if r := got[0].Rejected[0]; !strings.Contains(string(r.Item), `"bad"`) || !strings.Contains(r.Error, "_round") {
		t.Fatalf("rejected %s: %s", r.Item, r.Error)
	}
	if st := c.Stats(); st.Sent != 2 || st.Rejected != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Errors are reported once: the next Flush is clean.
	if err := c.Flush(ctx); err != nil {
		t.Fatalf("second Flush: %v", err)
	}
}

func TestAuthErrorsAreTypedAndNotRetried(t *testing.T) {
	ctx := context.Background()
	s := mustServe(t, nil)
	for _, tc := range []struct {
		name, token, code string
	}{
		{"no token", "", crawlkeeper.EUNAUTHORIZED},
		{"unknown token", "wrong", crawlkeeper.EUNAUTHORIZED},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.requests.Load()
			c := mustNew(t, client.Options{URL: s.url, Token: tc.token, MinBackoff: time.Nanosecond})
			_, err := c.Send(ctx, job(1))
			var e *client.Error
			if !errors.As(err, &e) || e.Code != tc.code || e.StatusCode != 401 || e.Temporary() {
				t.Fatalf("Send: %#v", err)
			}
			if n := s.requests.Load() - before; n != 1 {
				t.Fatalf("%d requests, want 1 (4xx is never retried)", n)
			}
		})
	}
}

func TestTooLargeBatchesAreSplit(t *testing.T) {
	ctx := context.Background()
	// A body limit that fits about two items: a batch of eight must be
	// split until every part fits.
	s := mustServe(t, &crawlkeeper.Config{Limits: crawlkeeper.LimitsConfig{MaxBodyBytes: 200}})
	var res results
	c := mustNew(t, client.Options{URL: s.url, Token: token, Source: "jobs", BatchSize: 8, OnResult: res.add})
	for i := 1; i <= 8; i++ {
		c.Add(ctx, job(i))
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := res.get()
	if len(got) != 1 || got[0].Items != 8 || got[0].Attempts < 3 {
		t.Fatalf("result %+v", got)
	}
	sum := got[0].Summary
	if sum.Inserted+sum.Unchanged != 8 || sum.Inserted < 1 {
		t.Fatalf("summary %+v", sum)
	}
	page, _ := s.store.List(ctx, crawlkeeper.RecordQuery{Limit: 100})
	if len(page.Records) != 8 {
		t.Fatalf("%d records stored, want 8", len(page.Records))
	}
}

func TestInvalidItemsFailAtAdd(t *testing.T) {
	s := mustServe(t, nil)
	c := mustNew(t, client.Options{URL: s.url})
	for _, it := range []any{[]int{1}, "text", json.RawMessage(`{"a":`), make(chan int)} {
		if err := c.Add(context.Background(), it); err == nil {
			t.Errorf("Add(%T) succeeded", it)
		}
	}
	if _, err := client.New(client.Options{URL: "127.0.0.1:8080"}); err == nil || !strings.Contains(err.Error(), "base URL") {
		t.Fatalf("New with a URL without scheme: %v", err)
	}
}

// TestNewRefusesMetadataOverTheLimits: a Source or Target the server would
// refuse on every batch fails New instead, naming the limit.
func TestNewRefusesMetadataOverTheLimits(t *testing.T) {
	long := strings.Repeat("x", crawlkeeper.MaxNameBytes+1)
	for _, o := range []client.Options{{Source: long}, {Target: long}, {Round: strings.Repeat("7", 129)}} {
		o.URL = "http://127.0.0.1:8080"
		_, err := client.New(o)
		if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID || !strings.Contains(err.Error(), "Options.") {
			t.Fatalf("New with metadata over the limits: %v", err)
		}
	}
	c, err := client.New(client.Options{URL: "http://127.0.0.1:8080", Source: long[1:], Target: long[1:]})
	if err != nil {
		t.Fatalf("New with a source and target of exactly %d bytes: %v", crawlkeeper.MaxNameBytes, err)
	}
	c.Close(context.Background())
}

func TestConcurrentAdds(t *testing.T) {
	ctx := context.Background()
	s := mustServe(t, nil)
	c := mustNew(t, client.Options{URL: s.url, Token: token, Source: "jobs", BatchSize: 50, Buffer: 64})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				if err := c.Add(ctx, job(w*1000+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := s.store.Stats(ctx)
	if err != nil || st.Active != 1000 {
		t.Fatalf("active %d (%v), want 1000", st.Active, err)
	}
}
