package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

var t0 = time.Date(2025, 9, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t   *testing.T
	srv *httptest.Server
	api *httpapi.Server
	now time.Time
}

func newFixture(t *testing.T, tokens []crawlkeeper.TokenConfig, cfg *crawlkeeper.Config) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if cfg == nil {
		cfg = &crawlkeeper.Config{}
	}
	f := &fixture{t: t, now: t0}
	clock := func() time.Time { return f.now }
	f.api = &httpapi.Server{
		Store:    st,
		Config:   cfg,
		Ingester: &crawlkeeper.Ingester{Store: st, Config: cfg, Now: clock, Rules: crawlkeeper.NewRules(cfg)},
		Archiver: &crawlkeeper.Archiver{Store: st, Config: cfg, Now: clock},
		Tokens:   tokens,
		Now:      clock,
	}
	f.srv = httptest.NewServer(f.api.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// do sends a request and decodes the JSON response into out (if not nil).
func (f *fixture) do(method, path, token, body string, out any) int {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			f.t.Fatalf("%s %s: status %d, body %q is not JSON: %v", method, path, res.StatusCode, b, err)
		}
	}
	return res.StatusCode
}

func TestIngestAndRead(t *testing.T) {
	f := newFixture(t, nil, nil)
	var sum map[string]any
	code := f.do("POST", "/api/v1/items?source=jobs&round=3&target=acme", "", `{"title":"A","url":"https://x.test/a","deadline":"2025-09-10"}
{"title":"B","url":"https://x.test/b"}
not json
[1]`, &sum)
	if code != 400 || sum["inserted"] != float64(2) || sum["rejected"] != float64(2) || len(sum["errors"].([]any)) != 2 {
		t.Fatalf("NDJSON with bad lines: %d %v", code, sum)
	}
	code = f.do("POST", "/api/v1/items?source=jobs", "", `[{"title":"A","url":"https://x.test/a","deadline":"2025-09-10"},{"title":"C","url":"https://x.test/c"}]`, &sum)
	if code != 200 || sum["inserted"] != float64(1) || sum["unchanged"] != float64(1) {
		t.Fatalf("JSON array: %d %v", code, sum)
	}
	var page httpapi.RecordsPage
	if code := f.do("GET", "/api/v1/records?source=jobs&limit=2", "", "", &page); code != 200 || len(page.Records) != 2 || page.Next == "" {
		t.Fatalf("records page 1: %d %+v", code, page)
	}
	first, next := page.Records, page.Next
	page = httpapi.RecordsPage{}
	f.do("GET", "/api/v1/records?source=jobs&limit=2&cursor="+next, "", "", &page)
	if len(page.Records) != 1 || page.Next != "" || page.Records[0].ID == first[0].ID {
		t.Fatalf("records page 2: %+v", page)
	}
	f.do("GET", "/api/v1/records?q=b", "", "", &page)
	if len(page.Records) != 1 || page.Records[0].Title != "B" {
		t.Fatalf("q=b: %+v", page.Records)
	}
	var rec crawlkeeper.Record
	if code := f.do("GET", fmt.Sprintf("/api/v1/records/%d", first[0].ID), "", "", &rec); code != 200 || rec.ID != first[0].ID {
		t.Fatalf("get record: %d %+v", code, rec)
	}
	var e httpapi.ErrorBody
	if code := f.do("GET", "/api/v1/records/999", "", "", &e); code != 404 || e.Error.Code != "not_found" {
		t.Fatalf("missing record: %d %+v", code, e)
	}
	for _, bad := range []string{"/api/v1/records/abc", "/api/v1/records?limit=0", "/api/v1/records?since=yesterday", "/api/v1/records?archived=maybe", "/api/v1/records?cursor=%7B%22%24gt%22%3A%22%22%7D", "/api/v1/records?bogus=1"} {
		if code := f.do("GET", bad, "", "", &e); code != 400 || e.Error.Code != "invalid" || e.Error.Message == "" {
			t.Errorf("GET %s: %d %+v, want 400 invalid", bad, code, e)
		}
	}
	// Injection strings are data.
	if code := f.do("GET", "/api/v1/records?q=%27%20OR%201%3D1%20--&source=%7B%22%24gt%22%3A%22%22%7D", "", "", &page); code != 200 || len(page.Records) != 0 {
		t.Fatalf("injection filters: %d %+v", code, page)
	}

	// A change, then history.
	f.now = t0.Add(time.Hour)
	f.do("POST", "/api/v1/items?source=jobs", "", `{"title":"B","url":"https://x.test/b","salary":"more"}`, &sum)
	var hist httpapi.HistoryBody
	b := findRecord(t, f, "B")
	if code := f.do("GET", fmt.Sprintf("/api/v1/records/%d/history", b.ID), "", "", &hist); code != 200 || len(hist.Versions) != 1 || hist.Record.Version != 2 {
		t.Fatalf("history: %d %+v", code, hist)
	}

	// Archive: dry run, then for real, then restore.
	f.now = time.Date(2025, 9, 11, 0, 0, 0, 0, time.UTC)
	var rep crawlkeeper.ArchiveReport
	if code := f.do("POST", "/api/v1/archive?dry_run=true", "", "", &rep); code != 200 || !rep.DryRun || rep.Archived != 1 || len(rep.Samples) != 1 {
		t.Fatalf("dry run: %d %+v", code, rep)
	}
	if code := f.do("POST", "/api/v1/archive", "", `{"dry_run":false}`, &rep); code != 200 || rep.Archived != 1 || rep.ByReason[crawlkeeper.ReasonEvent] != 1 {
		t.Fatalf("archive: %d %+v", code, rep)
	}
	if code := f.do("POST", "/api/v1/archive", "", `{"dryrun":true}`, &e); code != 400 {
		t.Fatalf("unknown archive option: %d", code)
	}
	var runs struct{ Runs []crawlkeeper.ArchiveReport }
	if f.do("GET", "/api/v1/archive/runs", "", "", &runs); len(runs.Runs) != 1 || runs.Runs[0].Archived != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	f.do("GET", "/api/v1/records?archived=true", "", "", &page)
	if len(page.Records) != 1 || page.Records[0].ArchiveReason != crawlkeeper.ReasonEvent {
		t.Fatalf("archived listing: %+v", page.Records)
	}
	id := page.Records[0].ID
	var rr crawlkeeper.RestoreReport
	if code := f.do("POST", fmt.Sprintf("/api/v1/records/%d/restore", id), "", "", &rr); code != 200 || len(rr.Restored) != 1 {
		t.Fatalf("restore: %d %+v", code, rr)
	}
	if code := f.do("POST", fmt.Sprintf("/api/v1/records/%d/restore", id), "", "", &e); code != 409 {
		t.Fatalf("restore of an active record: %d %+v", code, e)
	}
	var st crawlkeeper.Stats
	if code := f.do("GET", "/api/v1/stats", "", "", &st); code != 200 || st.Active != 3 || st.History != 1 {
		t.Fatalf("stats: %d %+v", code, st)
	}
	if code := f.do("GET", "/api/v1/nothing", "", "", &e); code != 404 || e.Error.Code != "not_found" {
		t.Fatalf("unknown route: %d %+v", code, e)
	}
}

// TestRecordsRoundFilters lists records by the round and target of their
// last delivery that carried them, as search filters them.
func TestRecordsRoundFilters(t *testing.T) {
	f := newFixture(t, nil, nil)
	ingest := func(params, items string) {
		t.Helper()
		if code := f.do("POST", "/api/v1/items?"+params, "", items, nil); code != 200 {
			t.Fatalf("ingest %s: %d", params, code)
		}
	}
	ingest("source=jobs&round=1&target=acme", `{"title":"job a","url":"https://r.test/jobs/a"}`+"\n"+`{"title":"job b","url":"https://r.test/jobs/b"}`)
	ingest("source=news&round=1&target=globex", `{"title":"news a","url":"https://r.test/news/a"}`+"\n"+`{"title":"news b","url":"https://r.test/news/b"}`)
	// Round 2 redelivers one record of each source, from another target
	// for jobs and without one for news (it keeps globex).
	f.now = t0.Add(time.Hour)
	ingest("source=jobs&round=2&target=initech", `{"title":"job a","url":"https://r.test/jobs/a"}`)
	ingest("source=news&round=2", `{"title":"news a","url":"https://r.test/news/a","changed":true}`)
	for _, c := range []struct {
		params string
		want   []string
	}{
		{"round=1", []string{"news b", "job b"}},
		{"round=2", []string{"news a", "job a"}},
		{"target=globex", []string{"news a", "news b"}},
		{"round=2&target=initech", []string{"job a"}},
		{"round=1&source=jobs", []string{"job b"}},
		{"round=2&target=globex&source=news", []string{"news a"}},
		{"round=3", nil},
		{"target=" + url.QueryEscape(`' OR 1=1 --`), nil},
		{"round=1&archived=true", nil},
	} {
		// Pages of one record: the cursor keeps the filters.
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("%s: pagination does not end", c.params)
			}
			var page httpapi.RecordsPage
			if code := f.do("GET", "/api/v1/records?limit=1&"+c.params+"&cursor="+url.QueryEscape(cursor), "", "", &page); code != 200 {
				t.Fatalf("%s: %d", c.params, code)
			}
			for _, r := range page.Records {
				got = append(got, r.Title)
			}
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("records?%s: %q, want %q (newest first)", c.params, got, c.want)
		}
	}
	for _, bad := range []string{"round=%09", "round=" + strings.Repeat("r", 129), "round=1&round=2", "target=a&target=b"} {
		var e httpapi.ErrorBody
		if code := f.do("GET", "/api/v1/records?"+bad, "", "", &e); code != http.StatusBadRequest || e.Error.Code != crawlkeeper.EINVALID || e.Error.Message == "" {
			t.Errorf("GET /records?%.40s: %d %+v, want 400 invalid", bad, code, e)
		}
	}
}

func findRecord(t *testing.T, f *fixture, title string) *crawlkeeper.Record {
	t.Helper()
	var page httpapi.RecordsPage
	f.do("GET", "/api/v1/records?q="+title, "", "", &page)
	for _, r := range page.Records {
		if r.Title == title {
			return r
		}
	}
	t.Fatalf("no record titled %q", title)
	return nil
}

func TestBodyLimit(t *testing.T) {
	f := newFixture(t, nil, &crawlkeeper.Config{Limits: crawlkeeper.LimitsConfig{MaxBodyBytes: 4096, Batch: 5}})
	var buf bytes.Buffer
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&buf, `{"title":"t%d","url":"https://l.test/%d"}`+"\n", i, i)
	}
	var sum map[string]any
	code := f.do("POST", "/api/v1/items", "", buf.String(), &sum)
	if code != 413 || sum["inserted"].(float64) <= 0 || sum["stopped"] == nil {
		t.Fatalf("over the limit: %d %v", code, sum)
	}
}

func TestSecurityHeadersAndCrossOrigin(t *testing.T) {
	f := newFixture(t, nil, nil)
	res, err := http.Get(f.srv.URL + "/api/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	// A browser on another site posting to a loopback server: refused.
	req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/archive", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site POST: %d, want 403", res.StatusCode)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.do("POST", "/api/v1/items", "", `{"title":"m","url":"https://m.test/"}`, nil)
	res, err := http.Get(f.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`crawlkeeper_items_total{outcome="inserted"} 1`, `crawlkeeper_http_request_duration_seconds_count{code="200",method="POST",route="POST /api/v1/items"} 1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code := f.do("GET", p, "", "", nil); code != 200 {
			t.Errorf("%s: %d", p, code)
		}
	}
}

var httpapiParse = httpapi.ParseRecordQuery
