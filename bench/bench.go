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

// Raw is what a store backend offers the benchmark as baselines: the same
// work done directly with its driver, on the same schema.
type Raw interface {
	RawUpsert(ctx context.Context, recs []*crawlkeeper.Record) error
	RawTouch(ctx context.Context, recs []*crawlkeeper.Record, now time.Time) error
	RawChange(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error
	RawSelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error)
	RawMove(ctx context.Context, ids []int64, now time.Time) error
	RawKeyset(ctx context.Context, afterID int64, limit int) (int, int64, error)
	RawArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error
	// RawSyncIDs moves the store's id counter past the ids raw writes
	// used, so the store's own paths (a scan pass) see them. Not timed.
	RawSyncIDs(ctx context.Context) error
	// RawAnalyze refreshes the planner's statistics (and, where it
	// matters, visibility information), as a server's own maintenance
	// would between loading and querying. It is not timed.
	RawAnalyze(ctx context.Context) error
}

// Opener opens an empty scratch store named name; close removes it.
type Opener func(ctx context.Context, name string) (st crawlkeeper.Store, close func(), err error)

// Options configure a run.
type Options struct {
	Open  Opener
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
		{Names: []string{"ingest_new", "ingest_recrawl", "ingest_changed", "archive_select", "archive_move"}, Run: runIngestArchive},
		{Names: []string{"query_active"}, Run: runQueryActive},
		Search,
	}
	steps = append(steps, opts.Extra...)
	steps = append(steps, Measurement{Names: dateResults, Run: runDates})
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
	raw, ok := base.(Raw)
	if !ok {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "this store backend offers no raw baselines for the benchmark")
	}
	g := &crawlkeeper.Ingester{Store: ours, Config: &crawlkeeper.Config{}, Dates: opts.Dates, Now: func() time.Time { return Now }}
	var results []Result

	// ingest_new, ingest_recrawl, ingest_changed: each chunk is ingested
	// through crawlkeeper into one store and written raw into the other.
	for stage, name := range []string{"ingest_new", "ingest_recrawl", "ingest_changed"} {
		revision := 0
		if stage == 2 {
			revision = 1
		}
		var t timer
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
				for _, r := range recs {
					hist = append(hist, &crawlkeeper.HistoryEntry{RecordID: r.ID, Version: 1, Item: r.Item, ContentHash: r.ContentHash, ValidFrom: Now, ValidTo: Now})
				}
			}
			if err := t.timeA(func() error {
				_, err := g.Ingest(ctx, bytesReader(lines), crawlkeeper.Meta{})
				return err
			}); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if err := t.timeB(func() error {
				for i := 0; i < len(recs); i += crawlkeeper.DefaultBatchSize {
					j := min(i+crawlkeeper.DefaultBatchSize, len(recs))
					var err error
					switch stage {
					case 0:
						err = raw.RawUpsert(ctx, recs[i:j])
					case 1:
						err = raw.RawTouch(ctx, recs[i:j], Now)
					case 2:
						err = raw.RawChange(ctx, recs[i:j], hist[i:j])
					}
					if err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return nil, fmt.Errorf("%s baseline: %w", name, err)
			}
		}
		r := ratioResult(name, "items/s", rate(n, t.a), rate(n, t.b), n, 0.5)
		if stage == 0 {
			env.IngestNew = r.Value
		}
		results = append(results, r)
	}

	// archive_select: the age rule's selection through its index against
	// the same selection with index use disabled.
	for _, st := range []crawlkeeper.Store{ours, base} {
		if err := st.(Raw).RawAnalyze(ctx); err != nil {
			return nil, err
		}
	}
	cutoff := Now.AddDate(0, 0, -30)
	var due []crawlkeeper.DueRecord
	var t timer
	const rounds = 3
	for i := 0; i < rounds; i++ {
		opts.progress("archive_select", i, rounds)
		due = due[:0]
		if err := t.timeA(func() error {
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
		}); err != nil {
			return nil, err
		}
		var got int
		if err := t.timeB(func() error {
			var err error
			got, err = raw.RawSelectAge(ctx, cutoff, false)
			return err
		}); err != nil {
			return nil, err
		}
		if got != len(due) {
			return nil, fmt.Errorf("archive_select: crawlkeeper selected %d records, the raw query %d", len(due), got)
		}
	}
	sel := Result{Name: "archive_select", Unit: "ms", Value: float64(t.a.Microseconds()) / 1000 / rounds,
		Baseline: float64(t.b.Microseconds()) / 1000 / rounds, N: len(due), Target: "baseline/value >= 30"}
	if sel.Value > 0 {
		sel.Ratio = sel.Baseline / sel.Value
	}
	sel.Met = sel.Ratio >= 30
	results = append(results, sel)

	// archive_move: the due records moved through crawlkeeper's
	// conditional, compressing path and raw INSERT ... SELECT + DELETE.
	t = timer{}
	ids := make([]int64, 0, len(due))
	for i := 0; i < len(due); i += crawlkeeper.DefaultBatchSize {
		opts.progress("archive_move", i, len(due))
		j := min(i+crawlkeeper.DefaultBatchSize, len(due))
		moves := make([]crawlkeeper.Move, 0, j-i)
		ids = ids[:0]
		for _, d := range due[i:j] {
			moves = append(moves, crawlkeeper.Move{ID: d.ID, Version: d.Version, LastUpdatedAt: d.LastUpdatedAt, Reason: crawlkeeper.ReasonAge})
			ids = append(ids, d.ID)
		}
		var moved []int64
		if err := t.timeA(func() error {
			var err error
			moved, err = ours.Archive(ctx, moves, Now)
			return err
		}); err != nil {
			return nil, err
		}
		if len(moved) != len(moves) {
			return nil, fmt.Errorf("archive_move: moved %d of %d", len(moved), len(moves))
		}
		if err := t.timeB(func() error { return raw.RawMove(ctx, ids, Now) }); err != nil {
			return nil, err
		}
	}
	results = append(results, ratioResult("archive_move", "records/s", rate(len(due), t.a), rate(len(due), t.b), len(due), 0.5))
	return results, nil
}

// runQueryActive measures the newest-50 query of the records browser on a
// store whose archive is ten times its active set, against the same query
// on a store with an empty archive.
func runQueryActive(ctx context.Context, env *Env) ([]Result, error) {
	opts := &env.Options
	active := max(opts.Scale/11, 1000)
	big, closeA, err := opts.Open(ctx, "query-big-archive")
	if err != nil {
		return nil, err
	}
	defer closeA()
	small, closeB, err := opts.Open(ctx, "query-no-archive")
	if err != nil {
		return nil, err
	}
	defer closeB()
	rawBig, ok1 := big.(Raw)
	rawSmall, ok2 := small.(Raw)
	if !ok1 || !ok2 {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "this store backend offers no raw baselines for the benchmark")
	}
	if !ok1 || !ok2 {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "this store backend offers no raw baselines for the benchmark")
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
			if from < active {
				if err := rawBig.RawUpsert(ctx, part); err != nil {
					return nil, err
				}
				if err := rawSmall.RawUpsert(ctx, part); err != nil {
					return nil, err
				}
			} else if err := rawBig.RawArchiveInsert(ctx, part, Now); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range []Raw{rawBig, rawSmall} {
		if err := r.RawAnalyze(ctx); err != nil {
			return nil, err
		}
	}
	const queries = 300
	var withArchive, without []time.Duration
	q := crawlkeeper.RecordQuery{Order: crawlkeeper.OrderNewest, Limit: 50}
	for i := 0; i < queries; i++ {
		opts.progress("query_active", i, queries)
		for _, s := range []struct {
			st  crawlkeeper.Store
			out *[]time.Duration
		}{{big, &withArchive}, {small, &without}} {
			start := time.Now()
			p, err := s.st.List(ctx, q)
			if err != nil {
				return nil, err
			}
			*s.out = append(*s.out, time.Since(start))
			if len(p.Records) != 50 {
				return nil, fmt.Errorf("query_active: %d records", len(p.Records))
			}
		}
	}
	r := Result{Name: "query_active", Unit: "ms (p50)", Value: p50(withArchive), Baseline: p50(without), N: queries, Target: "value/baseline <= 1.2"}
	if r.Baseline > 0 {
		r.Ratio = r.Value / r.Baseline
	}
	r.Met = r.Ratio <= 1.2
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
