package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/client"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// A crawler's scheduler asks the advisor what to fetch (GET /api/v1/next)
// and the dashboard's figures (GET /api/v1/recrawl) through the client.
func TestNextAndRecrawlFreshness(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mon, err := roaringmon.Open(ctx, st, crawlkeeper.MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	cfg := &crawlkeeper.Config{}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	g := &crawlkeeper.Ingester{Store: st, Config: cfg, Now: clock}
	// 30 pages crawled daily for 8 days; the first ten change every day.
	for d := 0; d < 8; d++ {
		now = start.Add(time.Duration(d) * 24 * time.Hour)
		var items []map[string]any
		var metas []crawlkeeper.Meta
		for i := 0; i < 30; i++ {
			body := "same"
			if i < 10 {
				body = fmt.Sprint("day ", d)
			}
			items = append(items, map[string]any{"url": fmt.Sprintf("https://jobs.test/%d", i), "title": fmt.Sprint("Job ", i), "body": body})
			metas = append(metas, crawlkeeper.Meta{Source: "jobs"})
		}
		if _, err := g.IngestItems(ctx, items, metas); err != nil {
			t.Fatal(err)
		}
	}
	now = start.Add(8 * 24 * time.Hour)
	if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "r", Targets: []string{"https://jobs.test/3", "https://jobs.test/new"}, At: now}); err != nil {
		t.Fatal(err)
	}
	api := &httpapi.Server{Store: st, Config: cfg, Now: clock,
		Tokens: []crawlkeeper.TokenConfig{{Name: "reader", Token: "tok-r", Scopes: []string{"read"}}, {Name: "crawler", Token: "tok-i", Scopes: []string{"ingest"}}},
		Extra:  []func(*httpapi.Server){httpapi.RecrawlRoutes(&crawlkeeper.Advisor{Store: st, Monitor: mon, Now: clock})},
	}
	hs := httptest.NewServer(api.Handler())
	defer hs.Close()
	c, err := client.New(client.Options{URL: hs.URL, Token: "tok-r"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)

	plan, err := c.Next(ctx, crawlkeeper.NextQuery{Source: "jobs", Budget: 12, Limit: 6, Round: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Records != 30 || plan.Budget != 12 || plan.Targets != 1 || len(plan.Items) == 0 || plan.Items[0].Name != "https://jobs.test/new" || plan.Items[0].Reason != "never_fetched" {
		t.Fatalf("Next = %+v, want the round's page never fetched first, of 30 records at 12 a day", plan)
	}
	for _, it := range plan.Items[1:] {
		var i int
		fmt.Sscanf(it.URL, "https://jobs.test/%d", &i)
		if it.ID == 0 || (it.Due && i >= 10) {
			t.Errorf("item %+v: a page that never changed is not due a day after its last fetch", it)
		}
	}
	// fill tops the list up; the pace of the last day is the default
	// budget.
	plan, err = c.Next(ctx, crawlkeeper.NextQuery{Source: "jobs", Limit: 7, Fill: true})
	if err != nil || len(plan.Items) != 7 || plan.BudgetFrom != "last_day" || plan.Budget != 30 {
		t.Fatalf("Next with fill: %+v, %v; want 7 items at the pace of 30 a day", plan, err)
	}

	sources, err := c.RecrawlFreshness(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != 1 || sources[0].Source != "jobs" || sources[0].Records != 30 || len(sources[0].Curve) == 0 || !(sources[0].FreshNow > 0) {
		t.Fatalf("RecrawlFreshness = %+v", sources)
	}

	// Bad input is a 400 that says what to do; the ingest scope cannot read.
	if _, err := c.Next(ctx, crawlkeeper.NextQuery{Source: "jobs", Budget: -1}); err == nil {
		t.Errorf("Next with a negative budget succeeded")
	}
	for path, want := range map[string]string{
		"/api/v1/next?budget=10":                  "source is required",
		"/api/v1/next?source=jobs&budget=often":   "1000/day",
		"/api/v1/next?source=jobs&limit=0":        "limit",
		"/api/v1/next?source=jobs&fill=sometimes": "fill",
	} {
		code, body := get(t, hs.URL+path, "tok-r")
		if code != 400 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %s; want 400 saying %q", path, code, body, want)
		}
	}
	if code, _ := get(t, hs.URL+"/api/v1/next?source=jobs", "tok-i"); code != 403 {
		t.Errorf("GET /api/v1/next with an ingest token: %d, want 403", code)
	}
}

// get sends a GET with a bearer token and returns the status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
