package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
)

// env is the set of opened backends a command works with.
type env struct {
	a     *app
	store crawlkeeper.Store
	dates crawlkeeper.DateParser
	mon   crawlkeeper.Monitor
}

// openEnv opens the configured backends.
func (a *app) openEnv(ctx context.Context) (*env, error) {
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	return &env{a: a, store: st, dates: newDateParser()}, nil
}

// Close closes every opened backend, the monitor before the store it may
// live in.
func (e *env) Close() error {
	var first error
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
	return &crawlkeeper.Ingester{
		Store:  e.store,
		Config: e.a.cfg,
		Dates:  e.dates,
		Now:    e.a.now,
		Rules:  crawlkeeper.NewRules(e.a.cfg),
	}
}

// monitorIngest connects g to the crawl monitor: marks from _target and
// _round commit with the records when the store holds the monitor, and go
// to the monitor after each commit otherwise; every committed item's
// fields feed rare-field tracking.
func (e *env) monitorIngest(ctx context.Context, g *crawlkeeper.Ingester) error {
	m, err := e.monitor(ctx)
	if err != nil {
		return err
	}
	_, inStore := m.(crawlkeeper.TxMarker)
	g.MarksInStore = inStore && e.a.monitorURL == ""
	g.Monitor = m
	g.AfterCommit = append(g.AfterCommit, crawlkeeper.FieldObserver(m, func(err error) {
		fmt.Fprintf(e.a.stderr, "crawlkeeper: rare-field tracking skipped a batch: %v\n", err)
	}))
	return nil
}

// newDateParser returns the date parser used by ingest and processing.
func newDateParser() crawlkeeper.DateParser { return dates.New() }

// extendServer adds the routes of the optional capabilities to srv.
func (e *env) extendServer(srv *httpapi.Server) {}

// extraLoops returns the background work of the optional capabilities.
func (e *env) extraLoops(srv *httpapi.Server, logger *slog.Logger) []func(context.Context) error {
	return nil
}
