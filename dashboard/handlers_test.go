package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/dashboard"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get fetches a dashboard page with an optional login cookie.
func (e *env) get(path, cookieToken string) (int, string, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	if cookieToken != "" {
		req.AddCookie(&http.Cookie{Name: httpapi.TokenCookie, Value: httpapi.TokenCookieValue(cookieToken)})
	}
	return e.do(req)
}

// postForm submits a dashboard form as the browser does (same origin).
func (e *env) postForm(path, cookieToken string, form url.Values) (int, string, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if cookieToken != "" {
		req.AddCookie(&http.Cookie{Name: httpapi.TokenCookie, Value: httpapi.TokenCookieValue(cookieToken)})
	}
	return e.do(req)
}

func (e *env) do(req *http.Request) (int, string, http.Header) {
	e.t.Helper()
	res, err := noRedirect.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// shown reads the number a page shows under data-k="key" (the first
// one), without thousands separators.
func shown(t *testing.T, body, key string) int64 {
	t.Helper()
	m := regexp.MustCompile(`data-k="` + regexp.QuoteMeta(key) + `">([-0-9,.]+)<`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no number %q on the page", key)
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("number %q: %q", key, m[1])
	}
	return n
}

func mustContain(t *testing.T, page, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", page, w)
		}
	}
}

// TestPages loads every page of a seeded server without tokens and checks
// each against the API's JSON.
func TestPages(t *testing.T) {
	e := newEnv(t, envOptions{})
	s := e.seed()

	var stats crawlkeeper.Stats
	e.call("GET", "/api/v1/stats", "read", "", &stats)
	var scan pipeline.Status
	e.call("GET", "/api/v1/scan", "read", "", &scan)

	t.Run("overview", func(t *testing.T) {
		code, body, h := e.get("/", "")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		if h.Get("Content-Security-Policy") != dashboard.ContentSecurityPolicy || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("headers: %v", h)
		}
		for key, want := range map[string]int64{"active": stats.Active, "archived": stats.Archived, "date_errors": stats.DateErrors, "unchanged": 1, "due": scan.Due} {
			if got := shown(t, body, key); got != want {
				t.Errorf("%s shown %d, API says %d", key, got, want)
			}
		}
		if stats.Archived != 1 || stats.DateErrors != 1 {
			t.Errorf("seed: %+v", stats)
		}
		mustContain(t, "overview", body, `href="/records?source=news"`, "open (loopback)")
	})
	t.Run("rounds", func(t *testing.T) {
		var list struct{ Rounds []crawlkeeper.RoundSummary }
		e.call("GET", "/api/v1/rounds", "read", "", &list)
		code, body, _ := e.get("/rounds", "")
		if code != 200 || len(list.Rounds) != 2 {
			t.Fatalf("status %d, rounds %+v", code, list)
		}
		for _, r := range list.Rounds {
			row := body[strings.Index(body, `data-round="`+r.Round+`"`):]
			row = row[:strings.Index(row, "</tr>")]
			for k, want := range map[string]int64{"queued": r.Queued, "done": r.Done, "failed": r.Failed, "remaining": r.Remaining} {
				if got := shown(t, row, k); got != want {
					t.Errorf("round %s %s: shown %d, API %d", r.Round, k, got, want)
				}
			}
		}
		mustContain(t, "rounds", body, `<progress max="7" value="3"`)
	})
	t.Run("round", func(t *testing.T) {
		var st crawlkeeper.RoundStatus
		e.call("GET", "/api/v1/rounds/r1", "read", "", &st)
		code, body, _ := e.get("/rounds/r1", "")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		if shown(t, body, "done") != st.Done || shown(t, body, "remaining") != st.Remaining || st.Remaining != 3 {
			t.Errorf("round numbers differ from %+v", st)
		}
		var rem struct{ Targets []string }
		e.call("GET", "/api/v1/rounds/r1/remaining", "read", "", &rem)
		for _, n := range rem.Targets {
			mustContain(t, "round", body, "<li>"+n+"</li>")
		}
		mustContain(t, "round", body, `id="throughput" data-chart="`)
		_, body, _ = e.get("/rounds/r1?q=ACME", "")
		mustContain(t, "round search", body, "<li>acme-labs</li>", "Searched 3 remaining targets")
		if strings.Contains(body, "<li>hooli</li>") {
			t.Error("search for acme lists hooli")
		}
		var diff crawlkeeper.RoundDiff
		e.call("GET", "/api/v1/rounds/r1/diff/r2", "read", "", &diff)
		_, body, _ = e.get("/rounds/r1?vs=r2", "")
		if shown(t, body, "only_round") != diff.OnlyRound.Count || shown(t, body, "only_vs") != diff.OnlyVs.Count || diff.OnlyRound.Count != 2 {
			t.Errorf("diff differs from %+v", diff)
		}
		_, body, _ = e.get("/rounds/r1?vs=r2&side=vs", "")
		mustContain(t, "diff other side", body, `<ul class="targets" id="diff-names"><li>hooli</li></ul>`)
		if code, _, _ := e.get("/rounds/nope", ""); code != 404 {
			t.Errorf("unknown round: %d", code)
		}
	})
	t.Run("fields", func(t *testing.T) {
		var fs struct{ Fields []crawlkeeper.FieldReport }
		e.call("GET", "/api/v1/fields", "read", "", &fs)
		code, body, _ := e.get("/fields", "")
		if code != 200 || len(fs.Fields) == 0 {
			t.Fatalf("status %d, fields %+v", code, fs)
		}
		for _, f := range fs.Fields {
			i := strings.Index(body, `data-field="`+f.Source+`/`+f.Field+`"`)
			if i < 0 {
				t.Fatalf("field %s/%s not shown", f.Source, f.Field)
			}
			row := body[i : i+strings.Index(body[i:], "</tr>")]
			if shown(t, row, "present") != f.Present || shown(t, row, "filled") != f.Filled {
				t.Errorf("field %s/%s numbers differ from %+v", f.Source, f.Field, f)
			}
			for _, id := range f.Samples {
				mustContain(t, "fields", row, fmt.Sprintf(`href="/records/%d"`, id))
			}
		}
		mustContain(t, "fields", body, `data-field="jobs/remote"`, `id="fillrate" data-chart="`, "collecting")
	})
	t.Run("recrawl", func(t *testing.T) {
		var rf struct{ Sources []crawlkeeper.SourceFreshness }
		e.call("GET", "/api/v1/recrawl", "read", "", &rf)
		code, body, _ := e.get("/recrawl", "")
		if code != 200 || len(rf.Sources) != 2 {
			t.Fatalf("status %d, sources %+v", code, rf.Sources)
		}
		for _, sf := range rf.Sources {
			i := strings.Index(body, `<tr data-source="`+sf.Source+`"`)
			if i < 0 {
				t.Fatalf("source %q not shown", sf.Source)
			}
			row := body[i : i+strings.Index(body[i:], "</tr>")]
			if shown(t, row, "records") != int64(sf.Records) {
				t.Errorf("source %s: records shown differ from %+v", sf.Source, sf)
			}
			mustContain(t, "recrawl", row, fmt.Sprintf(`data-k="fresh_now">%.1f%%<`, 100*sf.FreshNow))
			mustContain(t, "recrawl", body, `class="chart budget-chart" data-source="`+sf.Source+`" data-chart="`)
		}
	})
	t.Run("archive", func(t *testing.T) {
		code, body, _ := e.get("/archive", "")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		mustContain(t, "archive", body, `id="moves" data-chart="`, `id="lifetimes" data-chart="`, `id="changes" data-chart="`, `id="preview"`, `id="force"`)
		row := body[strings.Index(body, `data-source="jobs"`):]
		if shown(t, row, "archived") != stats.Sources["jobs"].Archived {
			t.Error("archived by source differs")
		}
		code, body, _ = e.postForm("/archive/preview", "", url.Values{})
		if code != 200 {
			t.Fatalf("preview: %d %s", code, body)
		}
		if shown(t, body, "report_archived") != 1 || shown(t, body, "report_event") != 1 {
			t.Errorf("preview: want the intern due by its event")
		}
		mustContain(t, "preview", body, `data-dry-run="true"`, "Intern")
		// The dry run moved nothing.
		if shown(t, getBody(e, "/"), "archived") != 1 {
			t.Error("dry run archived records")
		}
	})
	t.Run("pipeline", func(t *testing.T) {
		code, body, _ := e.get("/pipeline", "")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		for k, want := range map[string]int64{"due": scan.Due, "active": scan.Active, "never": scan.NeverProcessed, "dead_letters": int64(scan.DeadLetters)} {
			if got := shown(t, body, k); got != want {
				t.Errorf("%s shown %d, API %d", k, got, want)
			}
		}
		mustContain(t, "pipeline", body, fmt.Sprintf(`data-id="%d"`, s.deadID), "boom: parser crashed", `id="freshness" data-chart="`, `id="retry-all"`)
		code, body, _ = e.postForm("/pipeline/retry", "", url.Values{"id": {strconv.FormatInt(s.deadID, 10)}})
		if code != 200 || shown(t, body, "retried") != 1 || shown(t, body, "retry_processed") != 1 {
			t.Fatalf("retry: %d %s", code, body)
		}
		mustContain(t, "after retry", body, `id="no-dead-letters"`)
	})
	t.Run("records", func(t *testing.T) {
		var page httpapi.RecordsPage
		e.call("GET", "/api/v1/records?limit=50", "read", "", &page)
		code, body, _ := e.get("/records", "")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		ids := regexp.MustCompile(`<tr data-id="(\d+)">`).FindAllStringSubmatch(body, -1)
		if len(ids) != len(page.Records) {
			t.Fatalf("%d rows, API %d", len(ids), len(page.Records))
		}
		for i, r := range page.Records {
			if ids[i][1] != strconv.FormatInt(r.ID, 10) {
				t.Errorf("row %d: record %s, API %d", i, ids[i][1], r.ID)
			}
		}
		_, body, _ = e.get("/records?q=sre&source=&archived=on", "")
		mustContain(t, "archived search", body, fmt.Sprintf(`<tr data-id="%d">`, s.sreID), "event, ")
		_, body, _ = e.get("/records?q=zzz", "")
		mustContain(t, "empty search", body, `id="no-records"`)
		// Full-text search with a round: the round of each record's last
		// delivery that carried one.
		_, body, _ = e.get("/records?search=analyst*&q=&source=&round=r1", "")
		if n := strings.Count(body, `<tr data-id="`); n != 9 {
			t.Errorf("analysts of round r1: %d rows, want 9", n)
		}
		mustContain(t, "round search form", body, `name="round" value="r1"`)
		_, body, _ = e.get("/records?search=engineer&q=&source=&round=r1", "")
		mustContain(t, "search in a round the record left", body, `id="no-records"`)
		_, body, _ = e.get("/records?search=engineer&q=&source=&round=r2", "")
		mustContain(t, "search in the record's last round", body, fmt.Sprintf(`<tr data-id="%d">`, s.engineerID))
		// A listing with a round, without words to search: the same
		// round of each record's last delivery.
		_, body, _ = e.get("/records?search=&q=&source=&round=r2", "")
		if n := strings.Count(body, `<tr data-id="`); n != 2 {
			t.Errorf("active records of round r2: %d rows, want the engineer and the designer", n)
		}
		mustContain(t, "round listing", body, fmt.Sprintf(`<tr data-id="%d">`, s.engineerID), `name="round" value="r2"`)
		_, body, _ = e.get("/records?search=&q=&source=&round=r2&archived=on", "")
		if n := strings.Count(body, `<tr data-id="`); n != 1 || !strings.Contains(body, fmt.Sprintf(`<tr data-id="%d">`, s.sreID)) {
			t.Errorf("archived records of round r2: %d rows, want the SRE", n)
		}
		_, body, _ = e.get("/records?q=engineer&round=r1", "")
		mustContain(t, "listing in a round the record left", body, `id="no-records"`)
		// The pager keeps the round: 11 active records of round r1 in
		// pages of 10.
		_, body, _ = e.get("/records?q=&source=&round=r1&limit=10", "")
		next := regexp.MustCompile(`<a href="([^"]*)" id="next">`).FindStringSubmatch(body)
		if n := strings.Count(body, `<tr data-id="`); n != 10 || next == nil || !strings.Contains(next[1], "round=r1") {
			t.Fatalf("round r1, first page: %d rows, next link %q", n, next)
		}
		_, body, _ = e.get(html.UnescapeString(next[1]), "")
		if n := strings.Count(body, `<tr data-id="`); n != 1 {
			t.Errorf("round r1, second page: %d rows, want 1", n)
		}
		if code, _, _ := e.get("/records?round=%09", ""); code != 400 {
			t.Errorf("a round with a control character: %d, want 400", code)
		}
		if code, _, _ := e.get("/records?cursor=bogus", ""); code != 400 {
			t.Errorf("bad cursor: %d", code)
		}
	})
	t.Run("record", func(t *testing.T) {
		code, body, _ := e.get(fmt.Sprintf("/records/%d", s.engineerID), "")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		mustContain(t, "record", body,
			`<tr class="changed" title="changed in the latest version" data-field="salary">`,
			`<tr class="changed" data-path="salary"><td><code>salary</code> <small>changed</small></td><td><code>&#34;50k&#34;</code></td><td><code>&#34;60k&#34;</code></td></tr>`,
			`<li data-version="2">`, `<li data-version="1">`, "First version.",
			`<dd id="last-round">r2 (target acme)</dd>`)
		if strings.Contains(body, `class="changed" title="changed in the latest version" data-field="title"`) {
			t.Error("unchanged title highlighted")
		}
		for path, want := range map[string]int{"/records/abc": 400, "/records/99999": 404, "/nope": 404} {
			if code, _, _ := e.get(path, ""); code != want {
				t.Errorf("%s: %d, want %d", path, code, want)
			}
		}
	})
	t.Run("assets", func(t *testing.T) {
		for _, p := range []string{"/assets/app.js", "/assets/app.css", "/assets/vendor/uPlot.iife.min.js", "/assets/vendor/uPlot.min.css"} {
			code, body, h := e.get(p, "")
			if code != 200 || len(body) < 100 || h.Get("Cache-Control") == "" {
				t.Errorf("%s: %d, %d bytes", p, code, len(body))
			}
		}
	})
	// Last: it fails and re-queues targets the subtests above count.
	t.Run("failed", func(t *testing.T) { testFailedPages(t, e) })
}

func getBody(e *env, path string) string {
	_, b, _ := e.get(path, "")
	return b
}

// TestAuth checks the login flow and scopes on a server with tokens.
func TestAuth(t *testing.T) {
	e := newEnv(t, envOptions{tokens: testTokens})
	e.seed()
	code, _, h := e.get("/records?q=x", "")
	if code != http.StatusSeeOther || h.Get("Location") != "/login?next=%2Frecords%3Fq%3Dx" {
		t.Fatalf("no token: %d to %q, want the login page", code, h.Get("Location"))
	}
	code, body, _ := e.get("/login?next=/records", "")
	if code != 200 || !strings.Contains(body, `name="next" value="/records"`) {
		t.Fatalf("login page: %d %s", code, body)
	}
	// Wrong tokens: refused, never echoed.
	for tok, want := range map[string]int{"wrong-token-123": 401, ingestToken: 403} {
		code, body, h := e.postForm("/login", "", url.Values{"token": {tok}})
		if code != want || h.Get("Set-Cookie") != "" || strings.Contains(body, tok) {
			t.Errorf("login with %s: %d, cookie %q", tok, code, h.Get("Set-Cookie"))
		}
	}
	// An open redirect is not possible through next.
	code, _, h = e.postForm("/login", "", url.Values{"token": {readToken}, "next": {"//evil.example/"}})
	if code != http.StatusSeeOther || h.Get("Location") != "/" {
		t.Errorf("next=//evil: %d to %q", code, h.Get("Location"))
	}
	c := h.Get("Set-Cookie")
	for _, want := range []string{httpapi.TokenCookie + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(c, want) {
			t.Errorf("cookie %q lacks %s", c, want)
		}
	}
	if strings.Contains(c, "Secure") || strings.Contains(c, readToken) {
		t.Errorf("cookie %q: Secure without TLS, or the raw token", c)
	}

	// A read token sees every page but no admin button, and admin actions
	// are refused.
	for _, p := range []string{"/", "/rounds", "/rounds/r1", "/fields", "/archive", "/pipeline", "/records"} {
		code, body, _ := e.get(p, readToken)
		if code != 200 {
			t.Errorf("%s with read token: %d", p, code)
		}
		for _, tok := range []string{readToken, adminToken, ingestToken} {
			if strings.Contains(body, tok) {
				t.Errorf("%s shows a token", p)
			}
		}
		if strings.Contains(body, `id="preview"`) || strings.Contains(body, `id="retry-all"`) {
			t.Errorf("%s shows admin buttons to a read token", p)
		}
	}
	mustContain(t, "archive as reader", getAs(e, "/archive", readToken), `id="admin-only"`, "viewer (read)")
	e.call("POST", "/api/v1/rounds/r1/fail", "ingest", "umbrella", nil)
	if body := getAs(e, "/rounds/r1", readToken); !strings.Contains(body, `id="requeue-admin-only"`) || strings.Contains(body, `id="requeue-form"`) {
		t.Errorf("the round page offers a re-queue to a read token")
	}
	for _, p := range []string{"/archive/preview", "/archive/force", "/pipeline/retry", "/rounds/r1/requeue"} {
		if code, _, _ := e.postForm(p, readToken, nil); code != 403 {
			t.Errorf("POST %s with read token: %d, want 403", p, code)
		}
		if code, _, _ := e.postForm(p, "", nil); code != 401 {
			t.Errorf("POST %s without token: %d, want 401", p, code)
		}
	}
	if code, _, _ := e.get("/", ingestToken); code != 403 {
		t.Errorf("pages with an ingest token: %d, want 403", code)
	}
	// The admin token may act; a cross-site form post is refused even
	// with it.
	code, body, _ = e.postForm("/archive/preview", adminToken, nil)
	if code != 200 || !strings.Contains(body, `data-dry-run="true"`) {
		t.Fatalf("preview as admin: %d", code)
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/archive/force", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	req.AddCookie(&http.Cookie{Name: httpapi.TokenCookie, Value: httpapi.TokenCookieValue(adminToken)})
	if code, _, _ := e.do(req); code != 403 {
		t.Errorf("cross-site POST: %d, want 403", code)
	}
	// Logging out clears the cookie.
	_, _, h = e.postForm("/logout", readToken, nil)
	if c := h.Get("Set-Cookie"); !strings.Contains(c, "Max-Age=0") {
		t.Errorf("logout cookie %q", c)
	}
}

func getAs(e *env, path, tok string) string {
	_, b, _ := e.get(path, tok)
	return b
}

// TestMonitorUnavailable shows the reason on the monitor's pages.
func TestMonitorUnavailable(t *testing.T) {
	e := newEnv(t, envOptions{noMonitor: true})
	e.ingest("source=jobs", `{"title":"a","url":"https://x.test/a"}`)
	for _, p := range []string{"/rounds", "/rounds/r1", "/fields"} {
		code, body, _ := e.get(p, "")
		if code != 200 || !strings.Contains(body, "the crawl monitor needs --monitor with this store") {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
}

// plainStore hides the store's optional interfaces.
type plainStore struct{ crawlkeeper.Store }

// TestLifetimesWithoutIndex checks the archive page on a store without
// LifetimeReader: the histogram comes from a page of the listing.
func TestLifetimesWithoutIndex(t *testing.T) {
	e := newEnv(t, envOptions{wrapStore: func(s crawlkeeper.Store) crawlkeeper.Store { return plainStore{s} }})
	e.seed()
	code, body, _ := e.get("/archive", "")
	if code != 200 {
		t.Fatalf("archive: %d %s", code, body)
	}
	mustContain(t, "archive", body, `id="lifetimes" data-chart="`, "over the 1 most recently archived")
}

// spyStore records the calls that read many rows, with their limits.
type spyStore struct {
	crawlkeeper.Store
	mu    sync.Mutex
	calls []string
}

func (s *spyStore) log(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

func (s *spyStore) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

func (s *spyStore) List(ctx context.Context, q crawlkeeper.RecordQuery) (*crawlkeeper.RecordPage, error) {
	s.log("List limit=%d", q.Limit)
	return s.Store.List(ctx, q)
}

func (s *spyStore) ScanActive(ctx context.Context, afterID, maxID int64, limit int) ([]*crawlkeeper.Record, error) {
	s.log("ScanActive limit=%d", limit)
	return s.Store.ScanActive(ctx, afterID, maxID, limit)
}

func (s *spyStore) GetMany(ctx context.Context, ids []int64) ([]*crawlkeeper.Record, error) {
	s.log("GetMany n=%d", len(ids))
	return s.Store.GetMany(ctx, ids)
}

func (s *spyStore) ArchivedBefore(ctx context.Context, source *string, before time.Time, afterID int64, limit int) ([]*crawlkeeper.Record, error) {
	s.log("ArchivedBefore limit=%d", limit)
	return s.Store.ArchivedBefore(ctx, source, before, afterID, limit)
}

func (s *spyStore) SelectDue(ctx context.Context, q crawlkeeper.DueQuery) ([]crawlkeeper.DueRecord, error) {
	s.log("SelectDue limit=%d", q.Limit)
	return s.Store.SelectDue(ctx, q)
}

func (s *spyStore) Journal(ctx context.Context, kind string, limit int) ([]crawlkeeper.JournalEntry, error) {
	s.log("Journal limit=%d", limit)
	return s.Store.Journal(ctx, kind, limit)
}

func (s *spyStore) DeadLetters(ctx context.Context, limit int) ([]crawlkeeper.DeadLetter, error) {
	s.log("DeadLetters limit=%d", limit)
	return s.Store.DeadLetters(ctx, limit)
}

func (s *spyStore) RecentLifetimes(ctx context.Context, limit int) ([]crawlkeeper.Lifetime, error) {
	s.log("RecentLifetimes limit=%d", limit)
	return s.Store.(crawlkeeper.LifetimeReader).RecentLifetimes(ctx, limit)
}

// spyMonitor records the pages of targets read.
type spyMonitor struct {
	crawlkeeper.Monitor
	store *spyStore
}

func (m spyMonitor) Remaining(ctx context.Context, round, after string, limit int) ([]string, error) {
	m.store.log("Remaining limit=%d", limit)
	return m.Monitor.Remaining(ctx, round, after, limit)
}

func (m spyMonitor) Diff(ctx context.Context, a, b, after string, limit int) (*crawlkeeper.RoundDiff, error) {
	m.store.log("Diff limit=%d", limit)
	return m.Monitor.Diff(ctx, a, b, after, limit)
}

// TestManyRecordsQueryShape loads every page of a store with many records,
// targets and history, and checks what the pages asked the store and the
// monitor: only bounded pages, through indexes, and never a walk over
// every record (ScanActive, GetMany, ArchivedBefore, SelectDue). Stats and
// ArchiveStats are aggregates that return one row per source.
func TestManyRecordsQueryShape(t *testing.T) {
	longtest.Skip(t, "loads thousands of records")
	var spy *spyStore
	e := newEnv(t, envOptions{
		wrapStore:   func(s crawlkeeper.Store) crawlkeeper.Store { spy = &spyStore{Store: s}; return spy },
		wrapMonitor: func(m crawlkeeper.Monitor) crawlkeeper.Monitor { return spyMonitor{m, spy} },
	})
	const n = manyRecords
	last := fmt.Sprintf("t%05d", n-1)
	var targets, items, fresh strings.Builder
	for i := range n {
		fmt.Fprintf(&targets, "t%05d\n", i)
		fmt.Fprintf(&items, `{"title":"Item %d","url":"https://many.test/%d","deadline":"2025-09-02"}`+"\n", i, i)
		fmt.Fprintf(&fresh, `{"title":"Fresh %d","url":"https://many.test/f%d"}`+"\n", i, i)
	}
	e.call("POST", "/api/v1/rounds/big/queue", "ingest", targets.String(), nil)
	e.call("POST", "/api/v1/items?source=bulk&round=big&target=t00000", "ingest", items.String(), nil)
	e.advance(48 * time.Hour)
	var rep crawlkeeper.ArchiveReport
	e.call("POST", "/api/v1/archive", "admin", "", &rep)
	if rep.Archived != n {
		t.Fatalf("archived %d of %d", rep.Archived, n)
	}
	e.call("POST", "/api/v1/items?source=bulk", "ingest", fresh.String(), nil)
	spy.take()

	limits := map[string]int{"List": 200, "Journal": archiveRunsShown, "DeadLetters": 100, "RecentLifetimes": 10000, "Remaining": 1001, "Diff": 100}
	for _, p := range []string{"/", "/rounds", "/rounds/big", "/rounds/big?q=" + last, "/rounds/big?after=t00100", "/fields", "/archive", "/pipeline", "/records", "/records?q=Fresh%201", "/records?archived=true", "/records/1"} {
		code, body, _ := e.get(p, "")
		if code != 200 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
		calls := spy.take()
		for _, c := range calls {
			name, arg, _ := strings.Cut(c, " ")
			max, ok := limits[name]
			if !ok {
				t.Errorf("%s called %s: a walk over all records", p, c)
				continue
			}
			_, v, _ := strings.Cut(arg, "=")
			if got, _ := strconv.Atoi(v); got > max {
				t.Errorf("%s called %s, over the page bound %d", p, c, max)
			}
		}
		t.Logf("%s: %v", p, calls)
		switch p {
		case "/records", "/records?archived=true":
			if rows := strings.Count(body, "<tr data-id="); rows != 50 || !strings.Contains(body, `id="next"`) {
				t.Errorf("records: %d rows, want a page of 50 with a next link", rows)
			}
		case "/rounds/big":
			if rows := strings.Count(body, "<li>t"); rows != 100 || !strings.Contains(body, `id="targets-next"`) {
				t.Errorf("round: %d targets, want a page of 100 with a next link", rows)
			}
		case "/rounds/big?q=" + last:
			// The last target: the search walked every remaining one.
			mustContain(t, p, body, "<li>"+last+"</li>", "Searched "+num(n-1)) // t00000 is done
		}
	}
}

const archiveRunsShown = 200

// num formats n as the pages do.
func num(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// testFailedPages checks the round page's failed targets against the API,
// the download of their names and the re-queue with its confirmation.
func testFailedPages(t *testing.T, e *env) {
	e.call("POST", "/api/v1/rounds/r1/fail?reason=HTTP%20503", "ingest", `["hooli",{"target":"vandelay","reason":"robots.txt disallows /"}]`, nil)
	e.call("POST", "/api/v1/rounds/r2/fail", "ingest", `[{"target":"vandelay","reason":"timeout"}]`, nil)
	var page crawlkeeper.FailedPage
	e.call("GET", "/api/v1/rounds/r1/failed", "read", "", &page)
	code, body, _ := e.get("/rounds/r1", "")
	if code != 200 || shown(t, body, "failed_listed") != page.Count || page.Count < 3 {
		t.Fatalf("failed list: status %d, API %+v", code, page)
	}
	for _, ft := range page.Targets {
		mustContain(t, "failed list", body, "<tr><td data-name>"+ft.Target+`</td><td class="err">`+template.HTMLEscapeString(ft.Reason)+"</td>")
	}
	mustContain(t, "failed list", body, `id="requeue-form"`, `href="/rounds/r1/failed.txt"`, `name="into" value="r1-retry"`)
	// Failed in r1 and in r2.
	_, body, _ = e.get("/rounds/r1?also=r2", "")
	if shown(t, body, "failed_listed") != 1 {
		t.Errorf("failed in r1 and r2: %d shown", shown(t, body, "failed_listed"))
	}
	mustContain(t, "failed in both", body, `<td data-name>vandelay</td><td class="err">robots.txt disallows /</td><td class="err">timeout</td>`, `href="/rounds/r1/failed.txt?also=r2"`)
	// The download lists every name of the filter, one per line.
	code, text, h := e.get("/rounds/r1/failed.txt", "")
	var want []string
	for _, ft := range page.Targets {
		want = append(want, ft.Target)
	}
	if code != 200 || text != strings.Join(want, "\n")+"\n" || !strings.Contains(h.Get("Content-Disposition"), `filename="round-r1-failed.txt"`) {
		t.Errorf("download: %d %q %v", code, text, h)
	}
	if _, text, _ = e.get("/rounds/r1/failed.txt?also=r2", ""); text != "vandelay\n" {
		t.Errorf("download of failed in both: %q", text)
	}
	// Re-queue: first a confirmation that queues nothing, then the queue.
	code, body, _ = e.postForm("/rounds/r1/requeue", "", url.Values{"into": {"r1-retry"}})
	if code != 200 || shown(t, body, "requeue_count") != page.Count || !strings.Contains(body, `id="requeue-yes"`) {
		t.Fatalf("confirmation: %d %s", code, body)
	}
	if code, _, _ := e.get("/rounds/r1-retry", ""); code != 404 {
		t.Fatalf("the confirmation queued already: %d", code)
	}
	code, body, _ = e.postForm("/rounds/r1/requeue", "", url.Values{"into": {"r1-retry"}, "confirm": {"yes"}})
	if code != 200 || shown(t, body, "requeued") != page.Count {
		t.Fatalf("re-queue: %d %s", code, body)
	}
	var rem struct{ Targets []string }
	e.call("GET", "/api/v1/rounds/r1-retry/remaining", "read", "", &rem)
	if strings.Join(rem.Targets, "\n") != strings.Join(want, "\n") {
		t.Errorf("remaining in r1-retry = %v, want %v", rem.Targets, want)
	}
	// Bad requests: into the same round, no round, a bad filter.
	for _, form := range []url.Values{{"into": {"r1"}, "confirm": {"yes"}}, {"into": {""}}, {"into": {"x"}, "done_later": {"maybe"}}} {
		if code, _, _ := e.postForm("/rounds/r1/requeue", "", form); code != 400 {
			t.Errorf("re-queue %v: %d, want 400", form, code)
		}
	}
	if code, _, _ := e.get("/rounds/nope/failed.txt", ""); code != 404 {
		t.Errorf("download of an unknown round: %d", code)
	}
}
