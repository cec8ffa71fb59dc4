// Package bench measures crawlkeeper's hot paths against the engine
// underneath, in one process, on the same data: each measurement and its
// baseline run interleaved in chunks, so machine noise hits both alike.
// `crawlkeeper bench` prints the results; docs/PERFORMANCE.md records them.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Raw is the baselines of one store's engine: the same work as a
// crawlkeeper hot path, written by hand with the engine's driver on the
// store's schema and connection (package internal/rawbench provides them).
type Raw interface {
	// Insert writes new rows with batched multi-row inserts.
	Insert(ctx context.Context, recs []*crawlkeeper.Record) error
	// Touch sets last_updated_at of the rows of keys, batched by key.
	Touch(ctx context.Context, keys []string, now time.Time) error
	// Change updates each row to recs and inserts hist (the previous
	// versions).
	Change(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error
	// SelectAge reads what an age rule selects (crawled_at <= cutoff),
	// in the index's order; indexed false makes the engine use no index.
	SelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error)
	// Move copies rows to the archive and deletes them from active.
	Move(ctx context.Context, ids []int64, now time.Time) error
	// Keyset reads one keyset page in id order, every column, and
	// returns the count and the last id.
	Keyset(ctx context.Context, afterID int64, limit int) (int, int64, error)
	// ProcessPage is a rescan's page that writes every result back: the
	// keyset page of Keyset, then, in one transaction, a batched write of
	// a processing result for each of its records (processed_at,
	// processed_version, processed_chain and derived, conditioned on the
	// version read).
	ProcessPage(ctx context.Context, afterID int64, limit int, at time.Time) (int, int64, error)
	// Newest reads the limit most recently updated active rows.
	Newest(ctx context.Context, limit int) (int, error)
	// ArchiveInsert writes archived rows, for building large archives.
	ArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error
	// Search is the hand-written full-text query of search_p50.
	Search(ctx context.Context, words []string, phrase bool, source string, limit int) (int, error)
	// SyncIDs moves the store's id counter past the ids raw writes
	// used, so the store's own paths see them. Not timed.
	SyncIDs(ctx context.Context) error
	// Analyze refreshes the planner's statistics (and, where it
	// matters, visibility information), as a server's own maintenance
	// would between loading and querying. Not timed.
	Analyze(ctx context.Context) error
}

// Opener opens an empty scratch store named name; close removes it.
type Opener func(ctx context.Context, name string) (st crawlkeeper.Store, close func(), err error)

// Options configure a run.
type Options struct {
	Open Opener
	// OpenNormal opens a scratch store with durability normal, for
	// ingest_new_normal (nil: not measured).
	OpenNormal Opener
	// Raw returns the raw baselines of a store opened by Open.
	Raw   func(st crawlkeeper.Store) (Raw, error)
	Scale int
	// Only runs the named results (empty: all).
	Only []string
	// Dates is the parser ingest uses and the date results measure.
	Dates crawlkeeper.DateParser
	// MixedCorpus returns a realistic mix of n date strings for
	// date_parse_mixed (the dates package provides one).
	MixedCorpus func(n int, seed int64) []string
	// DateBaselines are what the date results compare Dates with (see
	// dates.go).
	DateBaselines DateBaselines
	// RecrawlRates is the distribution of change rates the recrawl
	// simulation draws its pages from (recrawl.ParseRates; empty: the
	// default preset).
	RecrawlRates string
	// Extra measurements from optional capabilities (monitor, pipeline).
	Extra []Measurement
	// Progress reports the current step.
	Progress func(step string, done, total int)
}

// Measurement is a named group of results that Run can include.
type Measurement struct {
	// Names are the results it produces, for --only.
	Names []string
	Run   func(ctx context.Context, env *Env) ([]Result, error)
}

// Env is what measurements share.
type Env struct {
	Options
	// IngestNew is the items/s of the ingest_new result, when measured.
	IngestNew float64
}

// Result is one line of the report.
type Result struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Value    float64 `json:"value"`
	Baseline float64 `json:"baseline"`
	// Ratio is as each result defines it (see Target).
	Ratio  float64 `json:"ratio"`
	N      int     `json:"n"`
	Target string  `json:"target"`
	Met    bool    `json:"met"`
}

// Report is the output of a run.
type Report struct {
	Machine struct {
		CPUs int    `json:"cpus"`
		Go   string `json:"go"`
		OS   string `json:"os"`
	} `json:"machine"`
	Scale   int       `json:"scale"`
	Date    time.Time `json:"date"`
	Results []Result  `json:"results"`
}

func (o *Options) want(names ...string) bool {
	if len(o.Only) == 0 {
		return true
	}
	for _, n := range names {
		if slices.Contains(o.Only, n) {
			return true
		}
	}
	return false
}

func (o *Options) progress(step string, done, total int) {
	if o.Progress != nil {
		o.Progress(step, done, total)
	}
}

// Run performs the measurements.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Scale <= 0 {
		opts.Scale = 1_000_000
	}
	if opts.Dates == nil {
		opts.Dates = crawlkeeper.MachineDates{}
	}
	rep := &Report{Scale: opts.Scale, Date: time.Now().UTC()}
	rep.Machine.CPUs = runtime.NumCPU()
	rep.Machine.Go = runtime.Version()
	rep.Machine.OS = runtime.GOOS + "/" + runtime.GOARCH
	env := &Env{Options: opts}
	steps := []Measurement{
		{Names: ingestNames, Run: runIngestArchive},
		{Names: []string{"query_active"}, Run: runQueryActive},
		Search,
	}
	steps = append(steps, opts.Extra...)
	steps = append(steps, Measurement{Names: dateResults, Run: runDates}, Recrawl)
	for _, m := range steps {
		if !opts.want(m.Names...) {
			continue
		}
		res, err := m.Run(ctx, env)
		if err != nil {
			return rep, err
		}
		for _, r := range res {
			if opts.want(r.Name) {
				rep.Results = append(rep.Results, r)
			}
		}
	}
	return rep, nil
}

// ratioResult builds a result whose ratio is value/baseline and whose
// target is ratio >= min.
func ratioResult(name, unit string, value, baseline float64, n int, min float64) Result {
	r := Result{Name: name, Unit: unit, Value: value, Baseline: baseline, N: n, Target: fmt.Sprintf("value/baseline >= %g", min)}
	if baseline > 0 {
		r.Ratio = value / baseline
	}
	r.Met = r.Ratio >= min
	return r
}

// timer accumulates the durations of interleaved chunks.
type timer struct{ a, b time.Duration }

func (t *timer) timeA(f func() error) error { return t.time(&t.a, f) }
func (t *timer) timeB(f func() error) error { return t.time(&t.b, f) }

func (t *timer) time(d *time.Duration, f func() error) error {
	start := time.Now()
	err := f()
	*d += time.Since(start)
	return err
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

const chunk = 10_000

// prepareRecords turns items into the records a raw baseline writes: the
// same rows crawlkeeper would store, with ids assigned in order.
func prepareRecords(opts *Options, from, to, revision int, firstID int64) ([]*crawlkeeper.Record, error) {
	prep := &crawlkeeper.Preparer{Config: &crawlkeeper.Config{}, Dates: opts.Dates}
	out := make([]*crawlkeeper.Record, 0, to-from)
	lines := bytes.Split(bytes.TrimSpace(NDJSON(from, to, revision)), []byte("\n"))
	for i, line := range lines {
		p, err := prep.Prepare(line, i+1, crawlkeeper.Meta{}, Now)
		if err != nil {
			return nil, err
		}
		r := crawlkeeper.NewRecord(p, Now)
		r.ID = firstID + int64(from+i)
		r.Version = int64(revision + 1)
		out = append(out, r)
	}
	return out, nil
}

// raw returns the baselines of st.
func (o *Options) raw(st crawlkeeper.Store) (Raw, error) {
	if o.Raw == nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "no raw baselines for the benchmark")
	}
	return o.Raw(st)
}

// noTarget marks a result measured for information: it has no target, so
// it is neither met nor missed.
func noTarget(r Result, why string) Result {
	r.Target, r.Met = "none: "+why, false
	return r
}

// ingestNames are the results of runIngestArchive.
var ingestNames = []string{"ingest_new", "ingest_new_normal", "ingest_recrawl", "ingest_changed", "archive_select", "archive_select_unindexed", "archive_move"}

// runIngestArchive ingests the items into one store through crawlkeeper
// and writes the same prepared rows raw into another, chunk by chunk in
// turn (alternating which goes first, so neither always writes into a
// cache the other just warmed), then selects and moves the due records.
func runIngestArchive(ctx context.Context, env *Env) ([]Result, error) {
	opts := &env.Options
	n := opts.Scale
	ours, closeA, err := opts.Open(ctx, "crawlkeeper")
	if err != nil {
		return nil, err
	}
	defer closeA()
	base, closeB, err := opts.Open(ctx, "raw")
	if err != nil {
		return nil, err
	}
	defer closeB()
	raw, err := opts.raw(base)
	if err != nil {
		return nil, err
	}
	rawOurs, err := opts.raw(ours)
	if err != nil {
		return nil, err
	}
	var normal crawlkeeper.Store
	if opts.OpenNormal != nil && opts.want("ingest_new_normal") {
		st, closeN, err := opts.OpenNormal(ctx, "normal")
		if err != nil {
			return nil, err
		}
		defer closeN()
		normal = st
	}
	newIngester := func(st crawlkeeper.Store) *crawlkeeper.Ingester {
		return &crawlkeeper.Ingester{Store: st, Config: &crawlkeeper.Config{}, Dates: opts.Dates, Now: func() time.Time { return Now }}
	}
	g := newIngester(ours)
	var results []Result

	// ingest_new (raw: multi-row INSERT of the prepared rows),
	// ingest_recrawl (raw: UPDATE last_updated_at by key) and
	// ingest_changed (raw: UPDATE of the row and INSERT of the previous
	// version into history).
	for stage, name := range []string{"ingest_new", "ingest_recrawl", "ingest_changed"} {
		if stage > 0 && !opts.want(name) {
			continue // the later results need only the new items
		}
		revision := 0
		if stage == 2 {
			revision = 1
		}
		var t timer
		var tNormal time.Duration
		for from := 0; from < n; from += chunk {
			to := min(from+chunk, n)
			opts.progress(name, from, n)
			lines := NDJSON(from, to, revision)
			recs, err := prepareRecords(opts, from, to, revision, 1)
			if err != nil {
				return nil, err
			}
			var hist []*crawlkeeper.HistoryEntry
			if stage == 2 {
				prev, err := prepareRecords(opts, from, to, 0, 1)
				if err != nil {
					return nil, err
				}
				for _, p := range prev {
					hist = append(hist, &crawlkeeper.HistoryEntry{RecordID: p.ID, Version: p.Version, Item: p.Item, ContentHash: p.ContentHash, ValidFrom: Now, ValidTo: Now})
				}
			}
			keys := make([]string, len(recs))
			for i, r := range recs {
				keys[i] = r.Key
			}
			ck := func() error {
				_, err := g.Ingest(ctx, bytesReader(lines), crawlkeeper.Meta{})
				if err != nil {
					err = fmt.Errorf("%s: %w", name, err)
				}
				return err
			}
			rw := func() error {
				for i := 0; i < len(recs); i += crawlkeeper.DefaultBatchSize {
					j := min(i+crawlkeeper.DefaultBatchSize, len(recs))
					var err error
					switch stage {
					case 0:
						err = raw.Insert(ctx, recs[i:j])
					case 1:
						err = raw.Touch(ctx, keys[i:j], Now)
					case 2:
						err = raw.Change(ctx, recs[i:j], hist[i:j])
					}
					if err != nil {
						return fmt.Errorf("%s baseline: %w", name, err)
					}
				}
				return nil
			}
			first, second := t.timeA, t.timeB
			fa, fb := ck, rw
			if (from/chunk)%2 == 1 {
				first, second, fa, fb = t.timeB, t.timeA, rw, ck
			}
			if err := first(fa); err != nil {
				return nil, err
			}
			if err := second(fb); err != nil {
				return nil, err
			}
			if stage == 0 && normal != nil {
				if err := t.time(&tNormal, func() error {
					_, err := newIngester(normal).Ingest(ctx, bytesReader(lines), crawlkeeper.Meta{})
					return err
				}); err != nil {
					return nil, fmt.Errorf("ingest_new_normal: %w", err)
				}
			}
		}
		r := ratioResult(name, "items/s", rate(n, t.a), rate(n, t.b), n, 0.5)
		results = append(results, r)
		if stage == 0 {
			env.IngestNew = r.Value
			if normal != nil {
				nr := Result{Name: "ingest_new_normal", Unit: "items/s", Value: rate(n, tNormal), Baseline: r.Value, N: n}
				if nr.Baseline > 0 {
					nr.Ratio = nr.Value / nr.Baseline
				}
				results = append(results, noTarget(nr, "durability normal against full (baseline: ingest_new), the cost of durability"))
			}
		}
	}

	if !opts.want("archive_select", "archive_select_unindexed", "archive_move") {
		return results, nil
	}
	// archive_select: the age rule's selection through crawlkeeper
	// against the same selection written by hand on the same table and
	// indexes (the crawlkeeper store itself), and separately against the
	// hand-written selection with index use disabled.
	for _, r := range []Raw{rawOurs, raw} {
		if err := r.Analyze(ctx); err != nil {
			return nil, err
		}
	}
	cutoff := Now.AddDate(0, 0, -30)
	var due []crawlkeeper.DueRecord
	var t timer
	var tNoIndex time.Duration
	unindexed := opts.want("archive_select_unindexed")
	selectOurs := func() error {
		due = due[:0]
		q := crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: cutoff, Limit: 10000}
		for {
			page, err := ours.SelectDue(ctx, q)
			if err != nil {
				return err
			}
			due = append(due, page...)
			if len(page) < q.Limit {
				return nil
			}
			q.After = page[len(page)-1].Cursor()
		}
	}
	selectRaw := func(indexed bool) func() error {
		return func() error {
			got, err := rawOurs.SelectAge(ctx, cutoff, indexed)
			if err == nil && got != len(due) {
				err = fmt.Errorf("archive_select: crawlkeeper selected %d records, the raw query %d", len(due), got)
			}
			return err
		}
	}
	// A first, untimed round of each reads the pages into the caches, so
	// neither pays for them alone; then the order alternates by round.
	if err := selectOurs(); err != nil {
		return nil, err
	}
	if err := selectRaw(true)(); err != nil {
		return nil, err
	}
	const rounds = 5
	for i := 0; i < rounds; i++ {
		opts.progress("archive_select", i, rounds)
		if i%2 == 1 {
			if err := t.timeB(selectRaw(true)); err != nil {
				return nil, err
			}
		}
		if err := t.timeA(selectOurs); err != nil {
			return nil, err
		}
		if i%2 == 0 {
			if err := t.timeB(selectRaw(true)); err != nil {
				return nil, err
			}
		}
		if unindexed {
			if err := t.time(&tNoIndex, selectRaw(false)); err != nil {
				return nil, err
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / rounds }
	sel := Result{Name: "archive_select", Unit: "ms", Value: ms(t.a), Baseline: ms(t.b), N: len(due), Target: "baseline/value >= 0.8"}
	if sel.Value > 0 {
		sel.Ratio = sel.Baseline / sel.Value
	}
	sel.Met = sel.Ratio >= 0.8
	results = append(results, sel)
	if unindexed {
		u := Result{Name: "archive_select_unindexed", Unit: "ms", Value: ms(t.a), Baseline: ms(tNoIndex), N: len(due), Target: "baseline/value >= 30"}
		if u.Value > 0 {
			u.Ratio = u.Baseline / u.Value
		}
		u.Met = u.Ratio >= 30
		results = append(results, u)
	}

	if !opts.want("archive_move") {
		return results, nil
	}
	// archive_move: records moved through crawlkeeper's conditional path
	// and by raw INSERT ... SELECT + DELETE, batch by batch, the order
	// alternating by batch. The records are those an age rule of five
	// hours finds due, about half of the store: the 1% the 30-day rule
	// finds is a batch or two, too few to time.
	q := crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: Now.Add(-5 * time.Hour), Limit: 10000}
	var toMove []crawlkeeper.DueRecord
	for {
		page, err := ours.SelectDue(ctx, q)
		if err != nil {
			return nil, err
		}
		toMove = append(toMove, page...)
		if len(page) < q.Limit {
			break
		}
		q.After = page[len(page)-1].Cursor()
	}
	t = timer{}
	ids := make([]int64, 0, crawlkeeper.DefaultBatchSize)
	for i := 0; i < len(toMove); i += crawlkeeper.DefaultBatchSize {
		opts.progress("archive_move", i, len(toMove))
		j := min(i+crawlkeeper.DefaultBatchSize, len(toMove))
		moves := make([]crawlkeeper.Move, 0, j-i)
		ids = ids[:0]
		for _, d := range toMove[i:j] {
			moves = append(moves, crawlkeeper.Move{ID: d.ID, Version: d.Version, LastUpdatedAt: d.LastUpdatedAt, Reason: crawlkeeper.ReasonAge})
			ids = append(ids, d.ID)
		}
		ck := func() error {
			moved, err := ours.Archive(ctx, moves, Now)
			if err == nil && len(moved) != len(moves) {
				err = fmt.Errorf("archive_move: moved %d of %d", len(moved), len(moves))
			}
			return err
		}
		rw := func() error { return raw.Move(ctx, ids, Now) }
		first, second, fa, fb := t.timeA, t.timeB, ck, rw
		if (i/crawlkeeper.DefaultBatchSize)%2 == 1 {
			first, second, fa, fb = t.timeB, t.timeA, rw, ck
		}
		if err := first(fa); err != nil {
			return nil, err
		}
		if err := second(fb); err != nil {
			return nil, err
		}
	}
	results = append(results, ratioResult("archive_move", "records/s", rate(len(toMove), t.a), rate(len(toMove), t.b), len(toMove), 0.5))
	return results, nil
}

// runQueryActive measures the newest-50 query of the records browser on a
// store whose archive is ten times its active set, against the same query
// written by hand (ORDER BY last_updated_at DESC LIMIT 50, every column)
// on the same store, alternating query by query.
func runQueryActive(ctx context.Context, env *Env) ([]Result, error) {
	opts := &env.Options
	active := max(opts.Scale/11, 1000)
	st, closeSt, err := opts.Open(ctx, "query")
	if err != nil {
		return nil, err
	}
	defer closeSt()
	raw, err := opts.raw(st)
	if err != nil {
		return nil, err
	}
	total := active * 11
	for from := 0; from < total; from += chunk {
		to := min(from+chunk, total)
		opts.progress("query_active (load)", from, total)
		recs, err := prepareRecords(opts, from, to, 0, 1)
		if err != nil {
			return nil, err
		}
		for i := 0; i < len(recs); i += crawlkeeper.DefaultBatchSize {
			j := min(i+crawlkeeper.DefaultBatchSize, len(recs))
			part := recs[i:j]
			if from+i < active {
				err = raw.Insert(ctx, part)
			} else {
				err = raw.ArchiveInsert(ctx, part, Now)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if err := raw.SyncIDs(ctx); err != nil {
		return nil, err
	}
	if err := raw.Analyze(ctx); err != nil {
		return nil, err
	}
	const queries = 300
	var value, baseline []time.Duration
	q := crawlkeeper.RecordQuery{Order: crawlkeeper.OrderNewest, Limit: 50}
	for i := 0; i < queries; i++ {
		opts.progress("query_active", i, queries)
		ck := func() error {
			start := time.Now()
			p, err := st.List(ctx, q)
			if err != nil {
				return err
			}
			value = append(value, time.Since(start))
			if len(p.Records) != 50 {
				return fmt.Errorf("query_active: %d records", len(p.Records))
			}
			return nil
		}
		rw := func() error {
			start := time.Now()
			k, err := raw.Newest(ctx, 50)
			if err != nil {
				return err
			}
			baseline = append(baseline, time.Since(start))
			if k != 50 {
				return fmt.Errorf("query_active baseline: %d records", k)
			}
			return nil
		}
		first, second := ck, rw
		if i%2 == 1 {
			first, second = rw, ck
		}
		if err := first(); err != nil {
			return nil, err
		}
		if err := second(); err != nil {
			return nil, err
		}
	}
	r := Result{Name: "query_active", Unit: "ms (p50)", Value: p50(value), Baseline: p50(baseline), N: queries, Target: "baseline/value >= 0.8"}
	if r.Value > 0 {
		r.Ratio = r.Baseline / r.Value
	}
	r.Met = r.Ratio >= 0.8
	return []Result{r}, nil
}

func p50(ds []time.Duration) float64 {
	return percentile(ds, 0.5)
}

func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
}

// Percentile is exported for measurements in other packages.
func Percentile(ds []time.Duration, p float64) float64 { return percentile(ds, p) }

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
