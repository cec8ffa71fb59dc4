package reprocess

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// A worker runs many instances of each DoFn (one per concurrent bundle).
// They share one store connection pool per URL and one engine per chain:
// an engine's corpus processors load every active record when it starts,
// which one worker should do once, not once per DoFn instance.
var (
	sharedMu sync.Mutex
	stores   = map[string]*sharedStore{}
	engines  = map[string]*sharedEngine{}
)

type sharedStore struct {
	st   crawlkeeper.Store
	refs int
}

// acquireStore opens the store of url, or shares the one already open.
func acquireStore(ctx context.Context, url string) (crawlkeeper.Store, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if s, ok := stores[url]; ok {
		s.refs++
		return s.st, nil
	}
	if !strings.Contains(url, "://") {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store %q: give a server store URL such as postgres://host/db", url)
	}
	st, err := backends.OpenStore(ctx, url, "")
	if err != nil {
		return nil, err
	}
	stores[url] = &sharedStore{st: st, refs: 1}
	return st, nil
}

// releaseStore closes the store of url when its last user releases it.
func releaseStore(url string) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s, ok := stores[url]
	if !ok {
		return
	}
	if s.refs--; s.refs == 0 {
		s.st.Close()
		delete(stores, url)
	}
}

type sharedEngine struct {
	e       *pipeline.Engine
	release func()
	refs    int

	mu    sync.Mutex
	saved time.Time
}

// engineKey identifies an engine by what it is built from.
func engineKey(o Options) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s", o.Store, strings.Join(o.Processors, ","), o.Batch, o.ConfigYAML)
}

// acquireEngine returns the worker's engine for o, building and
// initialising it on first use.
func acquireEngine(ctx context.Context, o Options) (*sharedEngine, error) {
	key := engineKey(o)
	sharedMu.Lock()
	if se, ok := engines[key]; ok {
		se.refs++
		sharedMu.Unlock()
		return se, nil
	}
	sharedMu.Unlock()

	st, err := acquireStore(ctx, o.Store)
	if err != nil {
		return nil, err
	}
	cfg, err := parseConfig(o.ConfigYAML)
	if err != nil {
		releaseStore(o.Store)
		return nil, err
	}
	procs, release, err := chainFor(o.Processors, cfg, 0)
	if err != nil {
		releaseStore(o.Store)
		return nil, err
	}
	e := &pipeline.Engine{Store: st, Processors: procs, Period: o.Period, Batch: o.Batch}
	if cfg != nil {
		e.Apply(cfg.Pipeline)
	}
	if err := e.Init(ctx); err != nil {
		release()
		releaseStore(o.Store)
		return nil, err
	}

	sharedMu.Lock()
	if se, ok := engines[key]; ok {
		// Another instance built one meanwhile: use it, drop ours (after
		// unlocking, as releaseStore takes the lock).
		se.refs++
		sharedMu.Unlock()
		release()
		releaseStore(o.Store)
		return se, nil
	}
	se := &sharedEngine{e: e, release: func() { release(); releaseStore(o.Store) }, refs: 1, saved: time.Now()}
	engines[key] = se
	sharedMu.Unlock()
	return se, nil
}

// releaseEngine saves the engine's published state and closes it when its
// last user releases it.
func releaseEngine(o Options) {
	key := engineKey(o)
	sharedMu.Lock()
	se, ok := engines[key]
	if !ok {
		sharedMu.Unlock()
		return
	}
	se.refs--
	last := se.refs == 0
	if last {
		delete(engines, key)
	}
	sharedMu.Unlock()
	if last {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		se.e.Save(ctx)
		se.release()
	}
}

// saveEvery is how often a worker publishes corpus state (per-source
// statistics) and rereads the dead letters. The goroutine engine does both
// once per pass; a worker does not see pass ends (the shards wrap
// independently), so it does them on a timer instead.
const saveEvery = time.Minute

// maybeSave rereads the dead letters and publishes the engine's corpus
// state when saveEvery passed.
func (se *sharedEngine) maybeSave(ctx context.Context) error {
	se.mu.Lock()
	if time.Since(se.saved) < saveEvery {
		se.mu.Unlock()
		return nil
	}
	se.saved = time.Now()
	se.mu.Unlock()
	// Dead letters retried or added by other processes (crawlkeeper
	// deadletters retry) take effect here, as at each goroutine pass.
	if err := se.e.ReloadDeadLetters(ctx); err != nil {
		return err
	}
	return se.e.Save(ctx)
}

// parseConfig reads the configuration text; nil for none.
func parseConfig(text string) (*crawlkeeper.Config, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
