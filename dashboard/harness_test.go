package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/alerts"
	"github.com/crawlkeeper/crawlkeeper/dashboard"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/metrics"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/crawlkeeper/crawlkeeper/processors"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

var t0 = time.Date(2025, 9, 1, 12, 0, 0, 0, time.UTC)

// Tokens of the servers with authentication.
const (
	readToken   = "read-3f9a1c"
	adminToken  = "admin-77b2e0"
	ingestToken = "ingest-0c4d5e"
)

var testTokens = []crawlkeeper.TokenConfig{
	{Name: "viewer", Token: readToken, Scopes: []string{"read"}},
	{Name: "operator", Token: adminToken, Scopes: []string{"admin"}},
	{Name: "crawler", Token: ingestToken, Scopes: []string{"ingest"}},
}

// env is a running server with the real handler: the JSON API and the
// dashboard over a SQLite store with the embedded monitor, the real
// ingester (rounds marked in the same commit, rare fields observed), the
// archiver and a pipeline engine. Its clock only moves when a test moves
// it.
type env struct {
	t      *testing.T
	st     *sqlite.Store
	store  crawlkeeper.Store // what the dashboard reads (st, or a wrapper)
	mon    crawlkeeper.Monitor
	eng    *pipeline.Engine
	api    *httpapi.Server
	srv    *httptest.Server
	clock  atomic.Int64
	tokens []crawlkeeper.TokenConfig
	cfg    *crawlkeeper.Config
}

type envOptions struct {
	tokens []crawlkeeper.TokenConfig
	// wrap replaces the store and monitor the dashboard reads, to watch
	// its queries.
	wrapStore   func(crawlkeeper.Store) crawlkeeper.Store
	wrapMonitor func(crawlkeeper.Monitor) crawlkeeper.Monitor
	noMonitor   bool
	// alerts are the alert rules of the configuration.
	alerts []crawlkeeper.AlertRule
}

func (e *env) now() time.Time          { return time.Unix(0, e.clock.Load()).UTC() }
func (e *env) setNow(t time.Time)      { e.clock.Store(t.UnixNano()) }
func (e *env) advance(d time.Duration) { e.setNow(e.now().Add(d)) }

// appClock gives the pipeline the test's clock.
type appClock struct{ e *env }

func (c appClock) Now() time.Time                         { return c.e.now() }
func (c appClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawlkeeper.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, store: st, tokens: o.tokens}
	e.setNow(t0)
	cfg := &crawlkeeper.Config{Alerts: crawlkeeper.AlertsConfig{Rules: o.alerts}}
	e.cfg = cfg
	g := &crawlkeeper.Ingester{Store: st, Config: cfg, Now: e.now, Rules: crawlkeeper.NewRules(cfg)}
	var monReason string
	if !o.noMonitor {
		mon, err := roaringmon.Open(ctx, st, cfg.MonitorOptions())
		if err != nil {
			t.Fatal(err)
		}
		st.SetTxMarker(mon)
		g.Monitor, g.MarksInStore = mon, true
		g.AfterCommit = append(g.AfterCommit, crawlkeeper.FieldObserver(mon, func(err error) { t.Errorf("observe fields: %v", err) }))
		e.mon = mon
	} else {
		monReason = "the crawl monitor needs --monitor with this store"
	}
	t.Cleanup(func() {
		if e.mon != nil {
			e.mon.Close()
		}
		st.Close()
	})
	hist := dashboard.NewIngestHistory(e.now)
	g.AfterCommit = append(g.AfterCommit, hist.Observe)
	e.eng = &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{processors.Noop{}}, Clock: appClock{e}, Workers: 2}
	arch := &crawlkeeper.Archiver{Store: st, Config: cfg, Now: e.now}
	m := metrics.New()
	e.api = &httpapi.Server{Store: st, Config: cfg, Ingester: g, Archiver: arch, Metrics: m, Tokens: o.tokens, Now: e.now}
	if e.mon != nil {
		e.api.Extra = append(e.api.Extra, httpapi.MonitorRoutes(e.mon))
	}
	e.api.Extra = append(e.api.Extra, httpapi.PipelineRoutes(pipelineAPI{e}), httpapi.AlertRoutes(alertsAPI{e}),
		httpapi.RecrawlRoutes(&crawlkeeper.Advisor{Store: st, Monitor: e.mon, Now: e.now}))
	dashStore, dashMon := crawlkeeper.Store(st), e.mon
	if o.wrapStore != nil {
		dashStore = o.wrapStore(st)
	}
	if o.wrapMonitor != nil && dashMon != nil {
		dashMon = o.wrapMonitor(dashMon)
	}
	e.store = dashStore
	e.api.Dashboard = dashboard.New(dashboard.Options{
		Config:        cfg,
		Store:         dashStore,
		Monitor:       dashMon,
		MonitorReason: monReason,
		PipelineStatus: func(ctx context.Context) (*pipeline.Status, error) {
			// The pipeline's own status read, as serve wires it: not one of
			// the dashboard's queries.
			return pipeline.ReadStatus(ctx, st, e.eng.Chain(), e.eng.Period, e.now())
		},
		RetryDeadLetters: e.retry,
		IngestHistory:    hist,
		Archiver:         arch,
		Metrics:          m,
		Auth:             e.api,
		Now:              e.now,
	})
	e.srv = httptest.NewServer(e.api.Handler())
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) retry(ctx context.Context, ids []int64) (*dashboard.RetryResult, error) {
	out, removed, err := e.eng.RetryDeadLetters(ctx, ids)
	if err != nil {
		return nil, err
	}
	return &dashboard.RetryResult{Retried: len(removed), Processed: out.Processed, Skipped: out.Skipped, Failed: out.Failed}, nil
}

// pipelineAPI serves the API's pipeline routes from the test's engine.
type pipelineAPI struct{ e *env }

func (p pipelineAPI) Status(ctx context.Context) (any, error) {
	return pipeline.ReadStatus(ctx, p.e.st, p.e.eng.Chain(), p.e.eng.Period, p.e.now())
}

func (p pipelineAPI) Retry(ctx context.Context, ids []int64) (any, error) {
	return p.e.retry(ctx, ids)
}

// alertsAPI serves GET /api/v1/alerts from the stored alert state, as
// serve does.
type alertsAPI struct{ e *env }

func (a alertsAPI) List(ctx context.Context, limit int) (any, error) {
	return alerts.List(ctx, a.e.st, a.e.cfg.Alerts, limit)
}

// evaluateAlerts runs the alert rules once at the test's clock.
func (e *env) evaluateAlerts() *alerts.Report {
	e.t.Helper()
	eng := &alerts.Engine{Store: e.st, Config: e.cfg.Alerts, Now: e.now, Chain: e.eng.Chain(), Period: e.eng.Period}
	if e.mon != nil {
		eng.Monitor = e.mon
	}
	rep, err := eng.Evaluate(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

// token returns the token of a scope when the server has tokens.
func (e *env) token(scope string) string {
	if len(e.tokens) == 0 {
		return ""
	}
	switch scope {
	case "ingest":
		return ingestToken
	case "admin":
		return adminToken
	}
	return readToken
}

// call sends an API request and decodes the JSON answer into out.
func (e *env) call(method, path, scope, body string, out any) int {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if tok := e.token(scope); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		e.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return res.StatusCode
}

// ingest pushes NDJSON items through the API.
func (e *env) ingest(query string, items ...string) {
	e.t.Helper()
	e.call("POST", "/api/v1/items?"+query, "ingest", strings.Join(items, "\n"), nil)
}

// seeded names what seed created, for checks.
type seeded struct {
	engineerID int64 // a record with two versions: salary changed
	sreID      int64 // archived by its deadline
	deadID     int64 // dead-lettered record
}

// seed builds a small crawl story: two rounds over several targets, a
// rare field, a record that changes, re-deliveries that change nothing,
// an unreadable date, an archive pass, a record due for the next pass and
// a dead letter.
func (e *env) seed() seeded {
	e.t.Helper()
	ctx := context.Background()
	e.call("POST", "/api/v1/rounds/r1/queue?bucket=10m", "ingest", "acme\nglobex\ninitech\numbrella\nhooli\nacme-labs\nvandelay\n", nil)
	e.ingest("source=jobs&round=r1&target=acme",
		`{"title":"Data Engineer","url":"https://jobs.test/1","salary":"50k","deadline":"2025-12-01","remote":""}`,
		`{"title":"SRE","url":"https://jobs.test/2","deadline":"2025-09-02","remote":""}`)
	var items []string
	for i := range 9 {
		remote := ""
		if i == 0 {
			remote = "yes"
		}
		items = append(items, fmt.Sprintf(`{"title":"Analyst %d","url":"https://jobs.test/a%d","remote":%q,"deadline":"2026-01-0%d"}`, i, i, remote, i+1))
	}
	e.ingest("source=jobs&round=r1&target=globex", items...)
	e.advance(15 * time.Minute)
	e.ingest("source=news&round=r1&target=initech",
		`{"title":"Launch party","url":"https://news.test/1","deadline":"not a date at all"}`,
		`{"title":"Quarterly report","url":"https://news.test/2"}`)
	e.call("POST", "/api/v1/rounds/r1/fail", "ingest", "umbrella", nil)

	// A day later: the engineer's salary changes, the SRE comes back
	// unchanged (a duplicate avoided), round r2 starts.
	e.advance(24 * time.Hour)
	e.call("POST", "/api/v1/rounds/r2/queue?bucket=10m", "ingest", "acme\nhooli\n", nil)
	e.ingest("source=jobs&round=r2&target=acme",
		`{"title":"Data Engineer","url":"https://jobs.test/1","salary":"60k","deadline":"2025-12-01","remote":""}`,
		`{"title":"SRE","url":"https://jobs.test/2","deadline":"2025-09-02","remote":""}`)
	e.ingest("source=jobs&round=r2&target=hooli", `{"title":"Designer","url":"https://jobs.test/3","remote":"no"}`)

	// Another day: the SRE's deadline has passed; an archive pass moves it.
	e.advance(24 * time.Hour)
	var rep crawlkeeper.ArchiveReport
	e.call("POST", "/api/v1/archive", "admin", "", &rep)
	if rep.Archived != 1 || rep.ByReason[crawlkeeper.ReasonEvent] != 1 {
		e.t.Fatalf("archive pass: %+v", rep)
	}
	// Due for the next pass: an item whose deadline is already over.
	e.ingest("source=jobs&target=acme", `{"title":"Intern","url":"https://jobs.test/4","deadline":"2025-09-01"}`)

	var s seeded
	for title, id := range map[string]*int64{"Data Engineer": &s.engineerID, "SRE": &s.sreID, "Quarterly report": &s.deadID} {
		for _, archived := range []bool{false, true} {
			page, err := e.st.List(ctx, crawlkeeper.RecordQuery{Q: title, Archived: archived, Limit: 1})
			if err != nil {
				e.t.Fatal(err)
			}
			if len(page.Records) == 1 {
				*id = page.Records[0].ID
			}
		}
		if *id == 0 {
			e.t.Fatalf("seed: no record %q", title)
		}
	}
	// A processor that kept failing on one record.
	if err := e.st.AddDeadLetter(ctx, crawlkeeper.DeadLetter{ID: s.deadID, Version: 1, Processor: "noop", Error: "boom: parser crashed", Failures: 3, At: e.now()}); err != nil {
		e.t.Fatal(err)
	}
	return s
}
