package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/client"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

func TestRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hs := apiServer(t, func() time.Time { return now })
	c, err := client.New(client.Options{URL: hs.URL, Token: "rw", Source: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// Five records a minute apart, the odd ones in round 7 from target a.
	for i := 0; i < 5; i++ {
		item := map[string]any{"title": fmt.Sprintf("Posting %d", i), "url": fmt.Sprintf("https://c.test/%d", i)}
		if i%2 == 1 {
			item["_round"], item["_target"] = "7", "a"
		}
		if _, err := c.Send(ctx, item); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	// list pages through q with pages of one and returns the titles.
	list := func(q crawlkeeper.RecordQuery) []string {
		t.Helper()
		q.Limit = 1
		var titles []string
		for pages := 0; pages < 10; pages++ {
			page, err := c.Records(ctx, q)
			if err != nil {
				t.Fatalf("records %+v: %v", q, err)
			}
			for _, r := range page.Records {
				titles = append(titles, r.Title)
			}
			if page.Next == "" {
				return titles
			}
			q.Cursor = page.Next
		}
		t.Fatalf("records %+v: more than 10 pages of one", q)
		return nil
	}
	for _, f := range []struct {
		q    crawlkeeper.RecordQuery
		want string
	}{
		{crawlkeeper.RecordQuery{}, "[Posting 4 Posting 3 Posting 2 Posting 1 Posting 0]"},
		{crawlkeeper.RecordQuery{Round: "7"}, "[Posting 3 Posting 1]"},
		{crawlkeeper.RecordQuery{Round: "7", Target: "a", Source: "jobs"}, "[Posting 3 Posting 1]"},
		{crawlkeeper.RecordQuery{Target: "b"}, "[]"},
		{crawlkeeper.RecordQuery{Q: "posting 2"}, "[Posting 2]"},
		{crawlkeeper.RecordQuery{Since: time.Date(2026, 3, 1, 12, 3, 0, 0, time.UTC)}, "[Posting 4 Posting 3]"},
		{crawlkeeper.RecordQuery{Source: "other"}, "[]"},
		{crawlkeeper.RecordQuery{Archived: true}, "[]"},
	} {
		if got := fmt.Sprint(list(f.q)); got != f.want {
			t.Errorf("records %+v: %s, want %s", f.q, got, f.want)
		}
	}
	if _, err := c.Records(ctx, crawlkeeper.RecordQuery{Round: "bad\nround"}); client.ErrorCode(err) != crawlkeeper.EINVALID {
		t.Errorf("bad round: %v, want EINVALID", err)
	}
	if _, err := c.Records(ctx, crawlkeeper.RecordQuery{Cursor: "!!"}); client.ErrorCode(err) != crawlkeeper.EINVALID {
		t.Errorf("bad cursor: %v, want EINVALID", err)
	}
	w, _ := client.New(client.Options{URL: hs.URL, Token: "w"})
	defer w.Close(ctx)
	if _, err := w.Records(ctx, crawlkeeper.RecordQuery{}); client.ErrorCode(err) != crawlkeeper.EFORBIDDEN {
		t.Errorf("records with an ingest-only token: %v, want EFORBIDDEN", err)
	}
}

// apiServer serves the API over a new SQLite store with two tokens: "rw"
// (ingest and read) and "w" (ingest only). now is the ingest clock (nil:
// the wall clock).
func apiServer(t *testing.T, now func() time.Time) *httptest.Server {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := &crawlkeeper.Config{}
	api := &httpapi.Server{Store: st, Config: cfg,
		Ingester: &crawlkeeper.Ingester{Store: st, Config: cfg, Rules: crawlkeeper.NewRules(cfg), Now: now},
		Archiver: &crawlkeeper.Archiver{Store: st, Config: cfg},
		Tokens:   []crawlkeeper.TokenConfig{{Name: "app", Token: "rw", Scopes: []string{crawlkeeper.ScopeIngest, crawlkeeper.ScopeRead}}, {Name: "crawler", Token: "w", Scopes: []string{crawlkeeper.ScopeIngest}}},
	}
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(hs.Close)
	return hs
}
