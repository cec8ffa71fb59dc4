package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// env is the set of opened backends a command works with.
type env struct {
	a     *app
	store crawlkeeper.Store
	dates crawlkeeper.DateParser
	mon   crawlkeeper.Monitor
	// queue, when open, receives a notification of every committed
	// batch's inserted, changed and revived records.
	queue crawlkeeper.Queue
	// eng is serve's pipeline engine; releaseEngine stops its processors.
	eng           *pipeline.Engine
	releaseEngine func()
	// keyGuard is shared by every ingester of the process, so each source's
	// key rules are checked, and warned about, once.
	keyGuard *crawlkeeper.KeyRulesGuard
}

// openEnv opens the configured backends; the store must exist (see
// openStore).
func (a *app) openEnv(ctx context.Context) (*env, error) {
	return a.newEnv(a.openStore(ctx))
}

// createEnv opens the configured backends and creates the store when it
// does not exist (see createStore).
func (a *app) createEnv(ctx context.Context) (*env, error) {
	return a.newEnv(a.createStore(ctx))
}

func (a *app) newEnv(st crawlkeeper.Store, err error) (*env, error) {
	if err != nil {
		return nil, err
	}
	return &env{a: a, store: st, dates: newDateParser()}, nil
}

// Close closes every opened backend, the monitor before the store it may
// live in.
func (e *env) Close() error {
	var first error
	if e.releaseEngine != nil {
		e.releaseEngine()
	}
	if e.queue != nil {
		first = e.queue.Close()
	}
	if e.mon != nil {
		first = e.mon.Close()
	}
	if err := e.store.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// monitor opens the crawl monitor on first use: embedded in the store, or
// the one --monitor names.
func (e *env) monitor(ctx context.Context) (crawlkeeper.Monitor, error) {
	if e.mon != nil {
		return e.mon, nil
	}
	m, err := backends.OpenMonitor(ctx, e.a.monitorURL, e.store, e.a.cfg.MonitorOptions())
	if err != nil {
		return nil, err
	}
	e.mon = m
	return m, nil
}

// ingester returns an Ingester wired to the environment.
func (e *env) ingester() *crawlkeeper.Ingester {
	g := &crawlkeeper.Ingester{
		Store:    e.store,
		Config:   e.a.cfg,
		Dates:    e.dates,
		Now:      e.a.now,
		Rules:    crawlkeeper.NewRules(e.a.cfg),
		KeyRules: e.keyRules(),
	}
	if e.queue != nil {
		g.AfterCommit = append(g.AfterCommit, crawlkeeper.PublishTouched(e.queue))
	}
	return g
}

// keyRules returns the process's key-rules guard, which prints a warning
// when a source's keys in the store were built under other key rules.
func (e *env) keyRules() *crawlkeeper.KeyRulesGuard {
	if e.keyGuard == nil {
		e.keyGuard = &crawlkeeper.KeyRulesGuard{Store: e.store, Config: e.a.cfg, Warn: func(_, msg string) {
			fmt.Fprintf(e.a.stderr, "crawlkeeper: warning: %s\n", msg)
		}}
	}
	return e.keyGuard
}

// monitorIngest connects g to the crawl monitor: marks from _target and
// _round commit with the records when the store holds the monitor and has
// transactions, and go to the monitor after each commit otherwise; every
// committed item's fields feed rare-field tracking.
func (e *env) monitorIngest(ctx context.Context, g *crawlkeeper.Ingester) error {
	m, err := e.monitor(ctx)
	if err != nil {
		return err
	}
	// The embedded monitor commits marks in the ingest transaction where
	// the store has one to offer (SQLite, PostgreSQL, MySQL); on MongoDB
	// and with --monitor they are written right after each commit, before
	// the ingest (or serve's POST) answers.
	_, marker := m.(crawlkeeper.TxMarker)
	_, txStore := e.store.(crawlkeeper.TxMarkStore)
	g.MarksInStore = marker && txStore && e.a.monitorURL == ""
	g.Monitor = m
	g.AfterCommit = append(g.AfterCommit, crawlkeeper.FieldObserver(m, func(err error) {
		fmt.Fprintf(e.a.stderr, "crawlkeeper: rare-field tracking skipped a batch: %v\n", err)
	}))
	return nil
}

// newDateParser returns the date parser used by ingest and processing.
func newDateParser() crawlkeeper.DateParser { return dates.New() }

// extendServer connects the optional capabilities to srv: the crawl
// monitor's routes and its marks from ingest. A monitor that cannot open
// (a store that cannot hold the embedded one, without --monitor) leaves
// serve running without it, and its routes answer with the reason.
func (e *env) extendServer(ctx context.Context, srv *httpapi.Server, logger *slog.Logger) error {
	// Notifications: ingest publishes what it commits (in process, or to
	// NATS for several processes), the engine processes it in real time.
	if e.queue == nil {
		if err := e.openQueue(ctx); err != nil {
			return err
		}
	}
	srv.Ingester = e.ingester()
	eng, release, err := e.engine(pipelineFlags{}, logger.With("part", "pipeline"))
	if err != nil {
		return err
	}
	eng.Queue = e.queue
	e.eng, e.releaseEngine = eng, release
	adv := &crawlkeeper.Advisor{Store: e.store, Now: e.a.now}
	srv.Extra = append(srv.Extra, httpapi.PipelineRoutes(&pipelineAPI{e: e}), httpapi.AlertRoutes(&alertsAPI{e: e}), httpapi.RecrawlRoutes(adv))
	if err := e.monitorIngest(ctx, srv.Ingester); err != nil {
		if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
			return err
		}
		logger.Warn("crawl monitor disabled", "reason", crawlkeeper.ErrorMessage(err))
		srv.Extra = append(srv.Extra, httpapi.Unsupported("/api/v1/rounds", "/api/v1/targets", "/api/v1/fields")(crawlkeeper.ErrorMessage(err)))
		return nil
	}
	srv.Extra = append(srv.Extra, httpapi.MonitorRoutes(e.mon))
	// The advisor puts a round's targets never fetched first (next's
	// round parameter); without a monitor that parameter is refused.
	adv.Monitor = e.mon
	return nil
}

// extraLoops returns the background work of the optional capabilities.
func (e *env) extraLoops(srv *httpapi.Server, logger *slog.Logger) []func(context.Context) error {
	loops := append(e.pipelineLoops(logger), e.alertLoop(logger))
	if e.mon != nil {
		loops = append(loops, func(ctx context.Context) error {
			crawlkeeper.RunMerger(ctx, e.mon, time.Minute, e.a.now, func(err error) { logger.Warn("merge buckets", "err", err) })
			return ctx.Err()
		})
	}
	return loops
}

// pipelineAPI serves the reprocessing routes from serve's engine.
type pipelineAPI struct{ e *env }

func (p *pipelineAPI) Status(ctx context.Context) (any, error) {
	return pipeline.ReadStatus(ctx, p.e.store, p.e.eng.Chain(), p.e.eng.Period, p.e.a.now())
}

func (p *pipelineAPI) Retry(ctx context.Context, ids []int64) (any, error) {
	out, removed, err := p.e.eng.RetryDeadLetters(ctx, ids)
	if err != nil {
		return nil, err
	}
	return retryJSON{Retried: len(removed), Processed: out.Processed, Skipped: out.Skipped, Failed: out.Failed}, nil
}
