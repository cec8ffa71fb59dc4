package main

import (
	"context"
	"log/slog"

	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/crawlkeeper/crawlkeeper/httpapi"

	"github.com/crawlkeeper/crawlkeeper"
)

// env is the set of opened backends a command works with.
type env struct {
	a     *app
	store crawlkeeper.Store
	dates crawlkeeper.DateParser
	// queue, when open, receives a notification of every committed
	// batch's inserted, changed and revived records.
	queue crawlkeeper.Queue
}

// openEnv opens the configured backends.
func (a *app) openEnv(ctx context.Context) (*env, error) {
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	return &env{a: a, store: st, dates: newDateParser()}, nil
}

// Close closes every opened backend.
func (e *env) Close() error {
	if e.queue != nil {
		e.queue.Close()
	}
	return e.store.Close()
}

// ingester returns an Ingester wired to the environment.
func (e *env) ingester() *crawlkeeper.Ingester {
	g := &crawlkeeper.Ingester{
		Store:  e.store,
		Config: e.a.cfg,
		Dates:  e.dates,
		Now:    e.a.now,
		Rules:  crawlkeeper.NewRules(e.a.cfg),
	}
	if e.queue != nil {
		g.AfterCommit = append(g.AfterCommit, crawlkeeper.PublishTouched(e.queue))
	}
	return g
}

// newDateParser returns the date parser used by ingest and processing.
func newDateParser() crawlkeeper.DateParser { return dates.New() }

// extendServer adds the routes of the optional capabilities to srv.
func (e *env) extendServer(srv *httpapi.Server) {}

// extraLoops returns the background work of the optional capabilities.
func (e *env) extraLoops(srv *httpapi.Server, logger *slog.Logger) []func(context.Context) error {
	return e.pipelineLoops(logger)
}
