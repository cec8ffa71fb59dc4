// Package dashboard is crawlkeeper's web dashboard: server-rendered pages
// (html/template) over the Go APIs of the store, the crawl monitor, the
// archiver and the pipeline, with charts drawn by uPlot. Templates and
// assets are embedded, so the binary serves everything itself.
//
// Every page reads through indexed, bounded queries (a page of records, a
// page of targets, the newest journal entries), so pages stay fast on a
// store with millions of records. Admin actions are POST forms; the server
// around the dashboard refuses cross-site ones, and the dashboard wraps
// itself in the same protection when mounted alone.
package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/alerts"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/metrics"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// ContentSecurityPolicy is set on every dashboard response: scripts,
// styles and everything else only from the dashboard's own assets; no
// inline script, no framing, forms only to this origin.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Authorizer checks the dashboard's visitors; *httpapi.Server implements
// it, so the dashboard accepts exactly the API's tokens.
type Authorizer interface {
	// AuthRequired reports whether tokens are checked at all.
	AuthRequired() bool
	// Authorize checks the request's token (bearer header or
	// httpapi.TokenCookie) for scope and returns the token's name.
	Authorize(r *http.Request, scope string) (string, error)
	// CheckToken checks a token typed into the login form.
	CheckToken(token, scope string) (string, error)
}

// RetryResult reports a dead-letter retry.
type RetryResult struct {
	// Retried counts the dead letters removed and processed again.
	Retried   int
	Processed int64
	Skipped   int64
	// Failed counts records that failed again and are back in the dead
	// letters.
	Failed int64
}

// Options are what the dashboard reads from and acts on. Store is
// required; a nil capability shows as "not available" on its page.
type Options struct {
	Store crawlkeeper.Store
	// Config names each source's search fields, which search snippets
	// are taken from. Defaults to the built-in defaults.
	Config *crawlkeeper.Config
	// Monitor is the crawl monitor; when nil, MonitorReason says why
	// (shown on the rounds and rare-fields pages).
	Monitor       crawlkeeper.Monitor
	MonitorReason string
	// PipelineStatus reads where reprocessing stands.
	PipelineStatus func(ctx context.Context) (*pipeline.Status, error)
	// RetryDeadLetters processes the dead letters of ids again (all when
	// ids is nil); an admin action.
	RetryDeadLetters func(ctx context.Context, ids []int64) (*RetryResult, error)
	// Archiver runs the dry-run preview and the forced pass (admin).
	Archiver *crawlkeeper.Archiver
	// RunArchive, when set, runs the forced pass instead of Archiver.Run:
	// serve runs it under the archiver lease.
	RunArchive func(ctx context.Context, opts crawlkeeper.ArchiveOptions) (*crawlkeeper.ArchiveReport, error)
	// Metrics give the ingest rate and the duplicates avoided since the
	// process started.
	Metrics *metrics.Metrics
	// IngestHistory, when set, draws the overview's items per hour; its
	// Observe must be one of the ingester's AfterCommit hooks.
	IngestHistory *IngestHistory
	// Auth checks tokens. Nil leaves every page and action open, like a
	// server without tokens.
	Auth Authorizer
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger receives template and internal errors. Defaults to none.
	Logger *slog.Logger
}

// Page sizes: every listing is one bounded page.
const (
	recordsPageSize   = 50
	targetsPageSize   = 100
	diffPageSize      = 100
	deadLettersShown  = 100
	archiveRunsShown  = 200
	lifetimesSampled  = 10000
	lifetimesFallback = 1000
	// remainingSearchBudget bounds how many remaining targets one search
	// page examines; the page then offers to continue from there.
	remainingSearchBudget = 20000
)

type dash struct {
	o    Options
	tpls map[string]*template.Template
	rate *rateMeter

	recrawlCache recrawlCache
}

// New returns the dashboard's handler, to mount at "/" (httpapi.Server's
// Dashboard field).
func New(o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	d := &dash{o: o, tpls: parseTemplates()}
	if o.Metrics != nil {
		d.rate = newRateMeter(o.Now(), ingestTotal(o.Metrics))
	}
	mux := http.NewServeMux()
	assets, _ := fs.Sub(assetFS, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", cacheAssets(http.FileServerFS(assets))))
	mux.HandleFunc("GET /login", d.loginPage)
	mux.HandleFunc("POST /login", d.login)
	mux.HandleFunc("POST /logout", d.logout)
	mux.Handle("GET /{$}", d.page(d.overview))
	mux.Handle("GET /rounds", d.page(d.rounds))
	mux.Handle("GET /rounds/{round}", d.page(d.round))
	mux.Handle("GET /rounds/{round}/failed.txt", d.page(d.failedText))
	mux.Handle("POST /rounds/{round}/requeue", d.action(d.requeue))
	mux.Handle("GET /fields", d.page(d.fields))
	mux.Handle("GET /recrawl", d.page(d.recrawl))
	mux.Handle("GET /archive", d.page(d.archive))
	mux.Handle("POST /archive/preview", d.action(d.archivePreview))
	mux.Handle("POST /archive/force", d.action(d.archiveForce))
	mux.Handle("GET /pipeline", d.page(d.pipeline))
	mux.Handle("POST /pipeline/retry", d.action(d.retry))
	mux.Handle("GET /records", d.page(d.records))
	mux.Handle("GET /records/{id}", d.page(d.record))
	mux.Handle("GET /alerts", d.page(d.alertsPage))
	mux.Handle("/", d.page(func(w http.ResponseWriter, r *http.Request, v *view) error {
		return crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "no dashboard page at %s", r.URL.Path)
	}))
	// The server around the dashboard already refuses cross-site POSTs;
	// doing it here too keeps admin forms safe if the dashboard is mounted
	// on another server.
	return headers(http.NewCrossOriginProtection().Handler(mux))
}

func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

func cacheAssets(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Assets change only with the binary; an hour spares reloads
		// without keeping an old version for long after an upgrade.
		w.Header().Set("Cache-Control", "public, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// view is what every page template gets: who is looking, the page's own
// data, and messages.
type view struct {
	Title string
	Nav   string
	// User is the token's name; Admin whether admin actions are allowed;
	// Auth whether tokens are checked at all (login and logout shown).
	User  string
	Admin bool
	Auth  bool
	Now   time.Time
	Data  any
	// Alerts are the alerts firing now: the banner on every page, the
	// badges of rounds and sources.
	Alerts []alerts.Alert
	// Notice is a message to show above the page (an action's outcome).
	Notice string
	Error  string
	Status int
}

func (d *dash) newView(r *http.Request) (*view, error) {
	v := &view{Now: d.o.Now(), Status: http.StatusOK}
	if d.o.Auth == nil || !d.o.Auth.AuthRequired() {
		v.Admin = true
		return v, nil
	}
	v.Auth = true
	name, err := d.o.Auth.Authorize(r, crawlkeeper.ScopeRead)
	if err != nil {
		return v, err
	}
	v.User = name
	_, err = d.o.Auth.Authorize(r, crawlkeeper.ScopeAdmin)
	v.Admin = err == nil
	return v, nil
}

type pageFunc func(w http.ResponseWriter, r *http.Request, v *view) error

// page serves a GET page to visitors with the read scope; others are sent
// to the login page (no or unknown token) or refused (a token without
// read, such as a crawler's ingest token).
func (d *dash) page(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := d.newView(r)
		if err != nil {
			if crawlkeeper.ErrorCode(err) == crawlkeeper.EUNAUTHORIZED {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			d.fail(w, r, v, err)
			return
		}
		v.Alerts = d.firingAlerts(r.Context())
		if err := f(w, r, v); err != nil {
			d.fail(w, r, v, err)
		}
	})
}

// action serves an admin POST form; its page function renders the
// outcome.
func (d *dash) action(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := d.newView(r)
		if err == nil && !v.Admin {
			err = crawlkeeper.Errorf(crawlkeeper.EFORBIDDEN, "this action needs a token with the admin scope; log in with one")
		}
		if err != nil {
			if crawlkeeper.ErrorCode(err) == crawlkeeper.EUNAUTHORIZED {
				err = crawlkeeper.Errorf(crawlkeeper.EUNAUTHORIZED, "log in with a token that has the admin scope")
			}
			d.fail(w, r, v, err)
			return
		}
		v.Alerts = d.firingAlerts(r.Context())
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			d.fail(w, r, v, crawlkeeper.Errorf(crawlkeeper.EINVALID, "read the form: %v", err))
			return
		}
		if err := f(w, r, v); err != nil {
			d.fail(w, r, v, err)
		}
	})
}

// fail renders an error page with the error's status. Messages of
// application errors are meant for users; other errors are logged and
// shown as internal.
func (d *dash) fail(w http.ResponseWriter, r *http.Request, v *view, err error) {
	if v == nil {
		v = &view{Now: d.o.Now()}
	}
	code := crawlkeeper.ErrorCode(err)
	v.Status = httpapi.StatusOf(code)
	v.Title = http.StatusText(v.Status)
	v.Error = crawlkeeper.ErrorMessage(err)
	if code == crawlkeeper.EINTERNAL {
		d.o.Logger.Error("dashboard page failed", "path", r.URL.Path, "err", err)
		var ae *crawlkeeper.Error
		if !errors.As(err, &ae) {
			v.Error = "internal error: " + err.Error()
		}
	}
	if code == crawlkeeper.EUNAUTHORIZED || code == crawlkeeper.EFORBIDDEN {
		// Do not show which pages exist or why a token failed beyond the
		// scope it needs.
		v.User, v.Admin, v.Alerts = "", false, nil
	}
	d.render(w, "error", v)
}

// render executes the named page into a buffer first, so a template error
// becomes a clean 500 instead of half a page.
func (d *dash) render(w http.ResponseWriter, name string, v *view) {
	var buf bytes.Buffer
	if err := d.tpls[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		d.o.Logger.Error("render dashboard page", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(v.Status)
	w.Write(buf.Bytes())
}

var pageNames = []string{"overview", "rounds", "round", "requeue", "fields", "recrawl", "archive", "pipeline", "records", "record", "alerts", "login", "error"}

func parseTemplates() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t := template.New(name).Funcs(funcs)
		out[name] = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

// rateMeter turns the ingest counter into a recent rate. It keeps a
// sample per page view (at most one per rateSampleEvery of the clock) and
// measures from the newest sample at least rateWindow old, so the rate
// always covers the window or more. A sample younger than that would
// measure a few minutes of a process whose counter holds days (the demo
// replays a week before the first page view); without an old enough
// sample the rate covers everything since the dashboard started.
type rateMeter struct {
	mu sync.Mutex
	// samples are in time order; the first is the start, or the newest
	// sample at least rateWindow old.
	samples []sample
}

type sample struct {
	at time.Time
	n  float64
}

func newRateMeter(now time.Time, n float64) *rateMeter {
	return &rateMeter{samples: []sample{{now, n}}}
}

// rateWindow is the least span the recent rate covers; rateSampleEvery
// spaces the samples, which bounds them to about 90.
const (
	rateWindow      = 15 * time.Minute
	rateSampleEvery = 10 * time.Second
)

// observe adds a sample and returns the items per minute since the newest
// sample at least rateWindow old (or since the start, when there is none)
// and the span the rate covers.
func (m *rateMeter) observe(now time.Time, n float64) (perMinute float64, over time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if last := m.samples[len(m.samples)-1]; now.Sub(last.at) >= rateSampleEvery {
		m.samples = append(m.samples, sample{now, n})
	}
	// Drop the oldest sample while the next one is old enough to measure
	// from: the first sample stays the start until a window has passed
	// since a later one.
	for len(m.samples) > 1 && now.Sub(m.samples[1].at) >= rateWindow {
		m.samples = m.samples[1:]
	}
	from := m.samples[0]
	span := now.Sub(from.at)
	if span <= 0 {
		return 0, 0
	}
	return (n - from.n) / span.Minutes(), span
}

// localNext keeps a post-login redirect on this site: a path, never a
// URL that a browser would take to another host.
func localNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}
