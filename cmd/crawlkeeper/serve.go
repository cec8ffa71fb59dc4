package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/alerts"
	"github.com/crawlkeeper/crawlkeeper/dashboard"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/metrics"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

func init() {
	register(&command{name: "serve", summary: "run the HTTP API, dashboard and background work", run: runServe})
}

// serveOptions are the knobs of one serve process.
type serveOptions struct {
	addr         string
	archiveEvery time.Duration
	// clock overrides the app clock (the demo's time-lapse).
	clock func() time.Time
	// ready, when set, receives the listening address.
	ready func(addr string)
	// prepare, when set, runs once the server is wired and before it
	// listens (the demo's simulated past).
	prepare func(ctx context.Context, srv *httpapi.Server, env *env, archive *archiveRunner) error
	// simulate, when set, runs next to the server with its wiring (the
	// demo's simulated crawl).
	simulate func(ctx context.Context, srv *httpapi.Server, env *env) error
}

func runServe(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("serve", "serve [--addr HOST:PORT] [--archive-every D]")
	addr := fs.String("addr", "", "listen `address` (default: serve.addr, 127.0.0.1:8080)")
	every := fs.String("archive-every", "", "run the archiver this often (default: archive.every, 1h; \"off\" disables)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments")
	}
	opts := serveOptions{addr: *addr}
	if *every != "" {
		d, err := crawlkeeper.ParseDuration(*every)
		if err != nil {
			return usagef("--archive-every: %v", err)
		}
		opts.archiveEvery = d.D()
		if d == 0 {
			opts.archiveEvery = -1
		}
	}
	return serve(ctx, a, opts)
}

// serve runs the server until ctx is cancelled, then shuts down
// gracefully: the listener closes, in-flight requests (and the batches
// they are writing) finish, background loops stop.
func serve(ctx context.Context, a *app, opts serveOptions) error {
	logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if opts.clock != nil {
		a.clock = opts.clock
	}
	cfg := a.cfg
	addr := opts.addr
	if addr == "" {
		addr = cfg.Serve.Addr
	}
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	tokens := append([]crawlkeeper.TokenConfig(nil), cfg.Serve.Tokens...)
	envTokens, err := parseTokens(os.Getenv("CRAWLKEEPER_TOKENS"))
	if err != nil {
		return err
	}
	tokens = append(tokens, envTokens...)
	loopback, err := isLoopback(addr)
	if err != nil {
		return err
	}
	if len(tokens) == 0 && !loopback {
		return usagef("refusing to listen on %s without API tokens: anyone on the network could write and delete data. Configure serve.tokens or CRAWLKEEPER_TOKENS, or listen on 127.0.0.1", addr)
	}

	env, err := a.createEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	// Ingests through the API notify the real-time pipeline.
	if err := env.openQueue(ctx); err != nil {
		return err
	}
	m := metrics.New()
	srv := &httpapi.Server{
		Store:    env.store,
		Config:   cfg,
		Ingester: env.ingester(),
		Archiver: env.archiver(),
		Metrics:  m,
		Tokens:   tokens,
		Logger:   logger,
		Now:      a.now,
		Ready: func(ctx context.Context) error {
			_, err := env.store.Stats(ctx)
			return err
		},
	}
	if err := env.extendServer(ctx, srv, logger); err != nil {
		return err
	}
	env.refreshMetrics(m)
	// Passes started by hand (API, dashboard) and scheduled ones run under
	// the one archiver lease that every process sharing the store takes.
	runner := env.archiveRunner(srv.Archiver, opts)
	srv.RunArchive = runner.runByHand
	srv.Dashboard = env.dashboard(ctx, srv, logger)
	if opts.prepare != nil {
		if err := opts.prepare(ctx, srv, env, runner); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute, // large ingest bodies from slow crawlers
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String() + "/"
	if len(tokens) == 0 {
		logger.Info("no API tokens configured: listening on loopback only, without authentication", "url", url)
	} else {
		logger.Info("listening", "url", url, "tokens", len(tokens))
	}
	fmt.Fprintf(a.stdout, "crawlkeeper is serving on %s\n", url)
	if opts.ready != nil {
		opts.ready(ln.Addr().String())
	}

	// A serve restarted after a kill -9 takes its predecessor's leases
	// now rather than when they expire.
	takeOverDeadLeases(ctx, env.store, logger, pipeline.ScanLease, crawlkeeper.ArchiverLease, alerts.LeaseName)
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	done := make(chan struct{})
	loops := env.backgroundLoops(srv, runner, logger, opts)
	// Warn at start, not at a source's first delivery, when the store's
	// keys were built under other key rules.
	loops = append(loops, func(ctx context.Context) error {
		if err := env.keyRules().CheckStore(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("could not check the key rules of the stored records", "err", err)
		}
		return nil
	})
	if opts.simulate != nil {
		loops = append(loops, func(ctx context.Context) error { return opts.simulate(ctx, srv, env) })
	}
	running := len(loops)
	for _, f := range loops {
		go func(f func(context.Context) error) {
			defer func() { done <- struct{}{} }()
			if err := f(bg); err != nil && !errors.Is(err, context.Canceled) {
				logger.Error("background work stopped", "err", err)
			}
		}(f)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	select {
	case err := <-serveErr:
		stopBG()
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing in-flight requests")
	shutCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = hs.Shutdown(shutCtx)
	stopBG()
	for i := 0; i < running; i++ {
		<-done
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// dashboard builds the web dashboard over the environment serve opened.
// Without a monitor, opening it again gives the reason the rounds pages
// show.
func (e *env) dashboard(ctx context.Context, srv *httpapi.Server, logger *slog.Logger) http.Handler {
	// The overview's items-per-hour chart counts what this process's
	// ingester commits.
	history := dashboard.NewIngestHistory(e.a.now)
	srv.Ingester.AfterCommit = append(srv.Ingester.AfterCommit, history.Observe)
	o := dashboard.Options{
		IngestHistory: history,
		Config:        e.a.cfg,
		Store:         e.store,
		Monitor:       e.mon,
		Archiver:      srv.Archiver,
		RunArchive:    srv.RunArchive,
		Metrics:       srv.Metrics,
		Auth:          srv,
		Now:           e.a.now,
		Logger:        logger.With("part", "dashboard"),
	}
	if e.mon == nil {
		if _, err := e.monitor(ctx); err != nil {
			o.MonitorReason = crawlkeeper.ErrorMessage(err)
		}
	}
	if eng := e.eng; eng != nil {
		o.PipelineStatus = func(ctx context.Context) (*pipeline.Status, error) {
			return pipeline.ReadStatus(ctx, e.store, eng.Chain(), eng.Period, e.a.now())
		}
		o.RetryDeadLetters = func(ctx context.Context, ids []int64) (*dashboard.RetryResult, error) {
			out, removed, err := eng.RetryDeadLetters(ctx, ids)
			if err != nil {
				return nil, err
			}
			return &dashboard.RetryResult{Retried: len(removed), Processed: out.Processed, Skipped: out.Skipped, Failed: out.Failed}, nil
		}
	}
	return dashboard.New(o)
}

// backgroundLoops returns the periodic work of a serve process.
func (e *env) backgroundLoops(srv *httpapi.Server, runner *archiveRunner, logger *slog.Logger, opts serveOptions) []func(context.Context) error {
	var loops []func(context.Context) error
	if every := archiveEvery(e.a.cfg, opts); every > 0 {
		loops = append(loops, func(ctx context.Context) error {
			return tick(ctx, every, func(ctx context.Context) {
				archiveTick(ctx, runner, srv.Metrics, logger, e.a.now)
			})
		})
	}
	return append(loops, e.extraLoops(srv, logger)...)
}

// refreshMetrics has m read, at every scrape, the gauges that come from
// the store (which other processes write too): record counts, round
// progress, and the rescan's pass, position and freshness.
func (e *env) refreshMetrics(m *metrics.Metrics) {
	m.OnScrape(func(ctx context.Context) error { return m.RefreshStore(ctx, e.store) })
	if e.mon != nil {
		m.OnScrape(func(ctx context.Context) error { return m.RefreshRounds(ctx, e.mon) })
	}
	if eng := e.eng; eng != nil {
		eng.Observer = m
		m.OnScrape(func(ctx context.Context) error {
			now := e.a.now()
			st, err := pipeline.ReadStatus(ctx, e.store, eng.Chain(), eng.Period, now)
			if err != nil {
				return err
			}
			last, finished, err := pipeline.LastPassDuration(ctx, e.store)
			if err != nil {
				return err
			}
			m.SetPipeline(st, last, finished, now)
			return nil
		})
	}
}

// tick runs fn now and then every interval until ctx ends.
func tick(ctx context.Context, every time.Duration, fn func(ctx context.Context)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		fn(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// isLoopback reports whether addr only accepts connections from this
// machine.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, usagef("--addr %q: use HOST:PORT, such as 127.0.0.1:8080", addr)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// parseTokens reads CRAWLKEEPER_TOKENS: entries separated by ";" or
// white space, each "[NAME=]TOKEN:SCOPE[,SCOPE...]".
func parseTokens(s string) ([]crawlkeeper.TokenConfig, error) {
	var out []crawlkeeper.TokenConfig
	for i, entry := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ' ' || r == '\n' || r == '\t' }) {
		name := fmt.Sprintf("env-%d", i+1)
		if n, rest, ok := strings.Cut(entry, "="); ok {
			name, entry = n, rest
		}
		tok, scopes, ok := strings.Cut(entry, ":")
		if !ok || tok == "" || scopes == "" {
			return nil, usagef("CRAWLKEEPER_TOKENS entry %d: use [NAME=]TOKEN:SCOPE[,SCOPE] with scopes ingest, read, admin", i+1)
		}
		t := crawlkeeper.TokenConfig{Name: name, Token: tok}
		for _, sc := range strings.Split(scopes, ",") {
			switch sc {
			case crawlkeeper.ScopeIngest, crawlkeeper.ScopeRead, crawlkeeper.ScopeAdmin:
				t.Scopes = append(t.Scopes, sc)
			default:
				return nil, usagef("CRAWLKEEPER_TOKENS entry %d (%s): unknown scope %q; use ingest, read or admin", i+1, name, sc)
			}
		}
		out = append(out, t)
	}
	return out, nil
}
