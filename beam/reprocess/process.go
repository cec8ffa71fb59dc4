package reprocess

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

func init() {
	register.DoFn2x0[[]byte, func(Work)](&notifyFn{})
	register.DoFn3x1[context.Context, Work, func(string, int64), error](&processFn{})
	register.DoFn2x1[context.Context, Work, error](&writeFn{})
	register.DoFn3x0[context.Context, string, int64](&countFn{})
	register.Emitter2[string, int64]()
	beam.RegisterType(reflect.TypeOf((*Work)(nil)).Elem())
}

// Kinds of Work.
const (
	// KindScan is a batch the scan read: Records holds the records.
	KindScan = "scan"
	// KindNotify is a notification: IDs names records that changed.
	KindNotify = "notify"
)

// Work is what the write-back stage receives from the scan and from the
// notifications.
type Work struct {
	Kind string
	// Pass and Shard say where a scan batch comes from.
	Pass  int64
	Shard int
	// Records is a scan batch, as a JSON array of records: Beam moves it
	// between stages as bytes, whatever the runner.
	Records []byte
	// IDs are the records a notification names.
	IDs []int64
}

// notifyFn turns a notification read from the stream into Work.
type notifyFn struct{}

func (fn *notifyFn) ProcessElement(data []byte, emit func(Work)) {
	defer running()()
	var refs []crawlkeeper.RecordRef
	if err := json.Unmarshal(data, &refs); err != nil {
		// Not ours; the next pass reaches every record anyway.
		slog.Warn("reprocess: dropping a malformed notification", "err", err)
		return
	}
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	if len(ids) > 0 {
		emit(Work{Kind: KindNotify, IDs: ids})
	}
}

// observeFunc sees a Work handled: the store it was handled against, the
// ids it handled and the outcome.
type observeFunc func(store string, w Work, ids []int64, out pipeline.Outcome)

// observe, when set (by tests and the bench, before a job starts), sees
// every Work handled. It is swapped atomically, and observers filter by
// store, because the workers of a cancelled job may still finish bundles
// after the next job's observer is set.
var observe atomic.Pointer[observeFunc]

// setObserve makes f see every Work handled until the returned function
// is called.
func setObserve(f observeFunc) (unset func()) {
	observe.Store(&f)
	return func() { observe.CompareAndSwap(&f, nil) }
}

var (
	processedCount = beam.NewCounter("crawlkeeper", "processed")
	skippedCount   = beam.NewCounter("crawlkeeper", "skipped")
	failedCount    = beam.NewCounter("crawlkeeper", "failed")
	errorCount     = beam.NewCounter("crawlkeeper", "errors")
)

// handler is the write-back logic processFn and writeFn share.
type handler struct {
	se    *sharedEngine
	store string
}

func (h *handler) setup(ctx context.Context, o Options) error {
	se, err := acquireEngine(ctx, o.withDefaults())
	if err != nil {
		return err
	}
	h.se, h.store = se, o.Store
	return nil
}

func (h *handler) teardown(o Options) {
	if h.se != nil {
		releaseEngine(o.withDefaults())
		h.se = nil
	}
}

// handle processes w's records and writes them back, with the version
// check: a record that changed since it was read is read and processed
// again (pipeline.Engine.Handle). Store errors are logged and counted, not
// returned: failing the bundle would make the runner retry the whole
// batch (or, on Prism, fail the job), while the next pass or notification
// reaches those records anyway, as in the goroutine engine.
func (h *handler) handle(ctx context.Context, w Work) (pipeline.Outcome, error) {
	e := h.se.e
	var out pipeline.Outcome
	var ids []int64
	var err error
	switch w.Kind {
	case KindScan:
		var recs []*crawlkeeper.Record
		if err := json.Unmarshal(w.Records, &recs); err != nil {
			errorCount.Inc(ctx, 1)
			slog.Error("reprocess: undecodable scan batch", "pass", w.Pass, "shard", w.Shard, "err", err)
			return out, nil
		}
		ids = make([]int64, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		out, err = e.Handle(ctx, recs)
	case KindNotify:
		ids = w.IDs
		var gone int64
		out, gone, err = e.HandleIDs(ctx, w.IDs)
		out.Skipped += gone
	}
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		errorCount.Inc(ctx, 1)
		slog.Warn("reprocess: batch failed; the next pass processes its records", "kind", w.Kind, "pass", w.Pass, "shard", w.Shard, "err", err)
	}
	processedCount.Inc(ctx, out.Processed)
	skippedCount.Inc(ctx, out.Skipped)
	failedCount.Inc(ctx, out.Failed)
	if f := observe.Load(); f != nil {
		(*f)(h.store, w, ids, out)
	}
	if err := h.se.maybeSave(ctx); err != nil {
		slog.Warn("reprocess: save corpus state", "err", err)
	}
	return out, nil
}

// processFn is the write-back stage. It emits, per Work, its kind and how
// many records it wrote, which countFn totals in another stage.
//
// That output exists for Prism: a stage with no outputs makes Prism's
// progress loop select on an already closed channel for as long as each
// of its bundles runs, and the scan's bundles run for a whole slice. An
// output consumed by a stage of its own keeps that loop waiting instead.
type processFn struct {
	Opts Options
	h    handler
}

func (fn *processFn) Setup(ctx context.Context) error { return fn.h.setup(ctx, fn.Opts) }
func (fn *processFn) Teardown()                       { fn.h.teardown(fn.Opts) }

func (fn *processFn) ProcessElement(ctx context.Context, w Work, emit func(string, int64)) error {
	defer running()()
	out, err := fn.h.handle(ctx, w)
	if err != nil {
		return err
	}
	emit(w.Kind, out.Processed)
	return nil
}

// writeFn is processFn without the output (Options.SinkWithoutOutput),
// kept to measure what the output saves.
type writeFn struct {
	Opts Options
	h    handler
}

func (fn *writeFn) Setup(ctx context.Context) error { return fn.h.setup(ctx, fn.Opts) }
func (fn *writeFn) Teardown()                       { fn.h.teardown(fn.Opts) }

func (fn *writeFn) ProcessElement(ctx context.Context, w Work) error {
	defer running()()
	_, err := fn.h.handle(ctx, w)
	return err
}

// countFn totals the written records in a counter. It reads the
// write-back stage's output after a Reshuffle (see Build), which makes it
// the root of a stage of its own on every runner: that is what gives the
// write-back stage a consumed output.
//
// It keeps no user state: with state, the SDK harness opens a state
// stream, and when a job is cancelled with a state request in flight, the
// harness's reader and writer of that stream both call Recv on it (Beam
// 2.77, harness/statemgr.go), a race the race detector reports.
type countFn struct{}

var totalCount = beam.NewCounter("crawlkeeper", "written")

func (fn *countFn) ProcessElement(ctx context.Context, kind string, n int64) {
	defer running()()
	totalCount.Inc(ctx, n)
}
