// Package pipeline is crawlkeeper's continuous reprocessing engine: a
// goroutine pipeline inside the crawlkeeper binary that runs a chain of
// processors over every active record soon after it changes (real time,
// from queue notifications) and again on every rescan pass (id order, in
// batches, parallel range readers feeding a bounded buffer drained by
// workers, with a checkpoint in the store so a restarted process resumes
// the pass).
//
// Results are written back with crawlkeeper.ScanStore.WriteProcessed, which
// applies a result only when the record still has the version that was
// read; a record that changed in between is read and processed again. A
// pass writes only the results that differ from the stored ones; when it
// processed the others follows from its checkpoint (see Freshness).
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
)

// Store is what the engine needs from a store: keyset reads and
// version-checked writes, and state for checkpoints, leases and dead
// letters. crawlkeeper.Store satisfies it.
type Store interface {
	crawlkeeper.ScanStore
	crawlkeeper.StateStore
}

// maxRewrites bounds how often one handling reads and processes again a
// record that keeps changing under it; past that its next notification or
// pass processes it.
const maxRewrites = 3

// Engine runs the processor chain. Fields are set before the first call
// and not changed afterwards; zero values fall back to the defaults named
// on each field.
type Engine struct {
	Store      Store
	Processors []crawlkeeper.Processor
	// Queue delivers real-time notifications; nil disables real-time
	// processing (passes still reach every record).
	Queue crawlkeeper.Subscriber
	// Clock is the time source of processed_at, pacing and waits.
	// Defaults to the system clock.
	Clock clock.Clock
	// LeaseClock stamps the scan lease, which other processes read on
	// their own clocks: a process running on a fixed or sped-up Clock
	// sets it to the wall clock. Defaults to Clock.
	LeaseClock clock.Clock
	// Period is the deadline of one pass. Defaults to 24h.
	Period time.Duration
	// Pace spreads RunPass's pass over Period; Run always paces. When
	// false, RunPass reads as fast as MaxRate allows.
	Pace bool
	// Readers is the number of parallel range readers. Defaults to 2.
	Readers int
	// Workers is the number of processing goroutines, for passes and for
	// real time each. Defaults to GOMAXPROCS.
	Workers int
	// Batch is the number of records per read and per write. Defaults
	// to 500.
	Batch int
	// MaxRate caps the records a pass reads per second; 0 is no cap.
	MaxRate float64
	// MaxFailures is how often a processor may fail on one record version
	// before the record goes to the dead letters. Defaults to 3.
	MaxFailures int
	// LeaseTTL is how long the scan lease lasts without renewal (Run).
	// Defaults to DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Owner names this process in the scan lease that keeps two
	// processes sharing a store from running passes at once. Defaults to
	// host name and process id.
	Owner string
	// Logger receives warnings about failed batches. Defaults to none.
	Logger *slog.Logger
	// Progress, when set, is called after each checkpoint of a pass.
	Progress func(Progress)
	// Observer, when set, is told what the engine processed (the
	// metrics package implements it).
	Observer Observer

	initOnce sync.Once
	initErr  error
	chain    string
	corpus   []crawlkeeper.CorpusProcessor
	// marks are the corpus epochs at the start of the pass being run (or
	// at load time before the first pass): sweeping with them forgets only
	// records the pass did not see.
	marks []uint64

	deadMu sync.Mutex
	dead   map[int64]crawlkeeper.DeadLetter

	realtime counters
}

// counters are the real-time totals.
type counters struct {
	processed atomic.Int64
	skipped   atomic.Int64
	failed    atomic.Int64
	errors    atomic.Int64
}

// Paths of processing, as Observer.ObserveProcessed names them.
const (
	PathRealtime = "realtime"
	PathRescan   = "rescan"
)

// Observer receives measurements of the engine's work. Its methods are
// called from the engine's goroutines, concurrently, and must not block.
type Observer interface {
	// ObserveProcessed counts one handling of records on a path
	// (PathRealtime for a notification, PathRescan for a pass's batch).
	ObserveProcessed(path string, out Outcome)
	// ObserveNotificationLag records the time from the commit of a batch
	// to its records being processed in real time, on the engine's clock.
	ObserveNotificationLag(d time.Duration)
}

// Progress reports a pass's checkpoint.
type Progress struct {
	Pass int64
	// Position is the id below which every record of the pass is written.
	Position int64
	// Start and End are the first position and the last id of the pass.
	Start, End int64
	Processed  int64
}

// Outcome counts what one handling of records did.
type Outcome struct {
	// Processed records have their result stored: written back, or
	// found unchanged by a pass and left as they were (Unchanged counts
	// those).
	Processed int64 `json:"processed"`
	Unchanged int64 `json:"unchanged"`
	// Skipped records were not written: they left the active set or kept
	// changing while they were processed.
	Skipped int64 `json:"skipped"`
	// Failed records had a processor fail MaxFailures times and went to
	// the dead letters (their other processors' results were written).
	Failed int64 `json:"failed"`
}

func (o *Outcome) add(x Outcome) {
	o.Processed += x.Processed
	o.Unchanged += x.Unchanged
	o.Skipped += x.Skipped
	o.Failed += x.Failed
}

// Chain returns the signature of the processor chain, as stored in
// processed_chain.
func (e *Engine) Chain() string { return crawlkeeper.ChainSignature(e.Processors) }

// RealtimeStats returns the real-time totals so far.
func (e *Engine) RealtimeStats() (processed, skipped, failed, errs int64) {
	return e.realtime.processed.Load(), e.realtime.skipped.Load(), e.realtime.failed.Load(), e.realtime.errors.Load()
}

func (e *Engine) clock() clock.Clock {
	if e.Clock == nil {
		return clock.Real{}
	}
	return e.Clock
}

// leaseNow is the time the scan lease is stamped with.
func (e *Engine) leaseNow() time.Time {
	if e.LeaseClock != nil {
		return e.LeaseClock.Now()
	}
	return e.clock().Now()
}

func (e *Engine) now() time.Time { return crawlkeeper.Truncate(e.clock().Now()) }

func (e *Engine) period() time.Duration {
	if e.Period > 0 {
		return e.Period
	}
	return crawlkeeper.DefaultPipelinePeriod
}

func (e *Engine) readers() int {
	if e.Readers > 0 {
		return e.Readers
	}
	return crawlkeeper.DefaultReaders
}

func (e *Engine) workers() int {
	if e.Workers > 0 {
		return e.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (e *Engine) batch() int {
	if e.Batch > 0 {
		return e.Batch
	}
	return crawlkeeper.DefaultPipelineBatch
}

func (e *Engine) maxFailures() int {
	if e.MaxFailures > 0 {
		return e.MaxFailures
	}
	return crawlkeeper.DefaultMaxFailures
}

func (e *Engine) owner() string {
	if e.Owner != "" {
		return e.Owner
	}
	h, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}

func (e *Engine) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// Apply sets the fields that are still zero from the configuration.
func (e *Engine) Apply(c crawlkeeper.PipelineConfig) {
	if e.Period == 0 {
		e.Period = c.Period.D()
	}
	if e.Readers == 0 {
		e.Readers = c.Readers
	}
	if e.Workers == 0 {
		e.Workers = c.Workers
	}
	if e.Batch == 0 {
		e.Batch = c.Batch
	}
	if e.MaxRate == 0 {
		e.MaxRate = c.MaxRate
	}
	if e.MaxFailures == 0 {
		e.MaxFailures = c.MaxFailures
	}
	if e.LeaseTTL == 0 {
		e.LeaseTTL = c.Lease.D()
	}
}

// Init checks the chain, rebuilds the corpus processors' state from every
// active record and loads the dead letters. The other methods call it;
// calling it first moves that work to a moment of the caller's choosing.
func (e *Engine) Init(ctx context.Context) error {
	e.initOnce.Do(func() { e.initErr = e.init(ctx) })
	return e.initErr
}

func (e *Engine) init(ctx context.Context) error {
	if e.Store == nil {
		return errors.New("pipeline: no store")
	}
	if len(e.Processors) == 0 {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "pipeline: the processor chain is empty; name processors in pipeline.processors")
	}
	if err := crawlkeeper.ValidateChain(e.Processors); err != nil {
		return err
	}
	e.chain = e.Chain()
	for _, p := range e.Processors {
		if c, ok := p.(crawlkeeper.CorpusProcessor); ok {
			e.corpus = append(e.corpus, c)
		}
	}
	if err := e.loadCorpus(ctx); err != nil {
		return err
	}
	return e.reloadDead(ctx)
}

// loadCorpus feeds every active record to the corpus processors: their
// state is rebuilt on start rather than persisted, so it can never
// disagree with the records.
func (e *Engine) loadCorpus(ctx context.Context) error {
	e.marks = e.mark()
	if len(e.corpus) == 0 {
		return nil
	}
	after := int64(0)
	for {
		recs, err := e.Store.ScanActive(ctx, after, 0, 1000)
		if err != nil {
			return fmt.Errorf("pipeline: load corpus: %w", err)
		}
		for _, r := range recs {
			for _, c := range e.corpus {
				c.Load(r)
			}
		}
		if len(recs) < 1000 {
			return nil
		}
		after = recs[len(recs)-1].ID
	}
}

func (e *Engine) mark() []uint64 {
	marks := make([]uint64, len(e.corpus))
	for i, c := range e.corpus {
		marks[i] = c.Mark()
	}
	return marks
}

func (e *Engine) sweep(marks []uint64) {
	for i, c := range e.corpus {
		if i < len(marks) {
			c.Sweep(marks[i])
		}
	}
}

// Save asks the processors that publish state to save it.
func (e *Engine) Save(ctx context.Context) error {
	var first error
	for _, p := range e.Processors {
		if s, ok := p.(crawlkeeper.StateSaver); ok {
			if err := s.Save(ctx, e.Store); err != nil && first == nil {
				first = fmt.Errorf("pipeline: save %s: %w", p.Name(), err)
			}
		}
	}
	return first
}

// reloadDead reads the dead letters, so processors that failed a record
// version too often are not run on it again until it changes or is
// retried.
func (e *Engine) reloadDead(ctx context.Context) error {
	dls, err := e.Store.DeadLetters(ctx, 1<<30)
	if err != nil {
		return fmt.Errorf("pipeline: dead letters: %w", err)
	}
	m := make(map[int64]crawlkeeper.DeadLetter, len(dls))
	for _, d := range dls {
		m[d.ID] = d
	}
	e.deadMu.Lock()
	e.dead = m
	e.deadMu.Unlock()
	return nil
}

// deadProcessors returns the processors that failed r's current version
// too often.
func (e *Engine) deadProcessors(r *crawlkeeper.Record) (map[string]bool, string) {
	e.deadMu.Lock()
	d, ok := e.dead[r.ID]
	e.deadMu.Unlock()
	if !ok || d.Version != r.Version {
		return nil, ""
	}
	m := map[string]bool{}
	for _, n := range strings.Split(d.Processor, ",") {
		m[n] = true
	}
	return m, d.Error
}

// Handle processes records and writes them back, every result: a runner
// that drives Handle keeps no pass checkpoint that would tell when the
// records it did not write were processed. Records whose write was
// skipped because they changed are read and processed again, up to a few
// times.
func (e *Engine) Handle(ctx context.Context, recs []*crawlkeeper.Record) (Outcome, error) {
	if err := e.Init(ctx); err != nil {
		return Outcome{}, err
	}
	return e.handle(ctx, recs, false)
}

// handle processes records and writes their results back. In a pass
// (inPass), a result equal to the stored one is not written: the pass's
// checkpoint records that the record was processed. A result that comes
// with a new dead letter is written all the same, so that the letter is
// kept only if the version it names is still the record's.
func (e *Engine) handle(ctx context.Context, recs []*crawlkeeper.Record, inPass bool) (Outcome, error) {
	var out Outcome
	for round := 0; len(recs) > 0; round++ {
		ws := make([]crawlkeeper.ProcessedWrite, 0, len(recs))
		var dls []crawlkeeper.DeadLetter
		for _, r := range recs {
			w, dl, err := e.processOne(ctx, r)
			if err != nil {
				return out, err
			}
			if inPass && dl == nil && unchanged(r, &w) {
				out.Processed++
				out.Unchanged++
				continue
			}
			ws = append(ws, w)
			if dl != nil {
				dls = append(dls, *dl)
			}
		}
		if len(ws) == 0 {
			break
		}
		skipped, err := e.Store.WriteProcessed(ctx, ws)
		if err != nil {
			return out, err
		}
		out.Processed += int64(len(ws) - len(skipped))
		if len(dls) > 0 {
			gone := make(map[int64]bool, len(skipped))
			for _, id := range skipped {
				gone[id] = true
			}
			for _, d := range dls {
				if gone[d.ID] {
					continue // the record changed: its new version gets new tries
				}
				if err := e.Store.AddDeadLetter(ctx, d); err != nil {
					return out, err
				}
				e.deadMu.Lock()
				e.dead[d.ID] = d
				e.deadMu.Unlock()
				out.Failed++
			}
		}
		if len(skipped) == 0 {
			break
		}
		if round == maxRewrites-1 {
			out.Skipped += int64(len(skipped))
			break
		}
		recs, err = e.Store.GetMany(ctx, skipped)
		if err != nil {
			return out, err
		}
		out.Skipped += int64(len(skipped) - len(recs))
	}
	return out, nil
}

// processOne runs the chain over one record and returns its write, and a
// dead letter when a processor failed MaxFailures times in a row.
func (e *Engine) processOne(ctx context.Context, r *crawlkeeper.Record) (crawlkeeper.ProcessedWrite, *crawlkeeper.DeadLetter, error) {
	derived := make(map[string]any, len(e.Processors))
	var errs map[string]string
	var failed, msgs []string
	setEvent := false
	dead, deadErr := e.deadProcessors(r)
	for _, p := range e.Processors {
		name := p.Name()
		if dead[name] {
			if errs == nil {
				errs = map[string]string{}
			}
			errs[name] = "dead letter: " + deadErr
			continue
		}
		var err error
		for attempt := 0; attempt < e.maxFailures(); attempt++ {
			if err := ctx.Err(); err != nil {
				return crawlkeeper.ProcessedWrite{}, nil, err
			}
			if err = callProcess(ctx, p, r, derived); err == nil {
				break
			}
			delete(derived, name) // drop a partial result
		}
		if err != nil {
			if ctx.Err() != nil {
				return crawlkeeper.ProcessedWrite{}, nil, ctx.Err()
			}
			if errs == nil {
				errs = map[string]string{}
			}
			errs[name] = err.Error()
			failed = append(failed, name)
			msgs = append(msgs, name+": "+err.Error())
			continue
		}
		if ew, ok := p.(crawlkeeper.EventWriter); ok && ew.WritesEvent() {
			setEvent = true
		}
	}
	if errs != nil {
		derived["errors"] = errs
	}
	now := e.now()
	w := crawlkeeper.ProcessedWrite{ID: r.ID, Version: r.Version, ProcessedAt: now, Chain: e.chain, SetEvent: setEvent}
	if setEvent {
		w.EventAt, w.DateErrors = r.EventAt, r.DateErrors
	}
	if len(derived) == 0 {
		w.Derived = json.RawMessage(`{}`)
	} else {
		b, err := json.Marshal(derived)
		if err != nil {
			return w, nil, fmt.Errorf("pipeline: record %d: encode derived: %w", r.ID, err)
		}
		w.Derived = b
	}
	if len(failed) == 0 {
		return w, nil, nil
	}
	sort.Strings(failed)
	return w, &crawlkeeper.DeadLetter{
		ID: r.ID, Version: r.Version, Processor: strings.Join(failed, ","),
		Error: strings.Join(msgs, "; "), Failures: e.maxFailures(), At: now,
	}, nil
}

// callProcess runs one processor, turning a panic into an error so that
// one bad record cannot stop the pipeline.
func callProcess(ctx context.Context, p crawlkeeper.Processor, r *crawlkeeper.Record, derived map[string]any) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return p.Process(ctx, r, derived)
}

// RetryDeadLetters removes the dead letters of ids (all when ids is nil)
// and processes their records at once; records that fail again go back to
// the dead letters.
func (e *Engine) RetryDeadLetters(ctx context.Context, ids []int64) (Outcome, []int64, error) {
	if err := e.Init(ctx); err != nil {
		return Outcome{}, nil, err
	}
	removed, err := e.Store.RemoveDeadLetters(ctx, ids)
	if err != nil {
		return Outcome{}, nil, err
	}
	e.deadMu.Lock()
	for _, id := range removed {
		delete(e.dead, id)
	}
	e.deadMu.Unlock()
	var out Outcome
	for rest := removed; len(rest) > 0; {
		n := min(len(rest), e.batch())
		chunk := rest[:n]
		rest = rest[n:]
		recs, err := e.Store.GetMany(ctx, chunk)
		if err != nil {
			return out, removed, err
		}
		out.Skipped += int64(len(chunk) - len(recs))
		o, err := e.handle(ctx, recs, false)
		out.add(o)
		if err != nil {
			return out, removed, err
		}
	}
	return out, removed, nil
}
