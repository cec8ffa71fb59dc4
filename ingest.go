package crawlkeeper

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"time"
)

// maxReportedErrors bounds the per-item errors an ingest summary lists;
// Rejected still counts them all.
const maxReportedErrors = 1000

// IngestSummary reports one ingest: the CLI prints it and the HTTP API
// returns it.
type IngestSummary struct {
	Read      int         `json:"read"`
	Inserted  int         `json:"inserted"`
	Changed   int         `json:"changed"`
	Unchanged int         `json:"unchanged"`
	Revived   int         `json:"revived"`
	Refreshed int         `json:"refreshed"`
	Rejected  int         `json:"rejected"`
	Errors    []ItemError `json:"errors"`
	// ErrorsTruncated is set when more items were rejected than Errors lists.
	ErrorsTruncated bool `json:"errors_truncated,omitempty"`
	// CrawledAtDefaulted counts inserted items whose _crawled_at was
	// missing or unreadable, so their crawled_at is the ingest time. Other
	// outcomes keep the record's crawled_at and are not counted.
	CrawledAtDefaulted int `json:"crawled_at_defaulted"`
	// NoSource counts stored items that had no source (no _source field
	// and no default source): they share the empty source's rules and
	// keys, which is rarely what a crawler meant.
	NoSource int `json:"no_source,omitempty"`
	// DateErrors counts event-field strings that could not be read.
	DateErrors int `json:"date_errors"`
	// DateErrorList names the first of them, by item position and field:
	// `deadline: cannot read "Rolling"`, so that an operator knows which
	// selector broke. DateErrors counts them all.
	DateErrorList []ItemError `json:"date_error_list,omitempty"`
	// Marked counts crawl-round marks recorded from _target and _round.
	Marked int `json:"marked"`
	// Reports counts failure reports: items with _error and no other
	// fields, which mark their target failed and are not stored.
	Reports int `json:"reports,omitempty"`
}

// maxReportedDateErrors bounds the date errors an ingest summary lists.
const maxReportedDateErrors = 100

// dateErrors counts the date errors of one prepared item and lists the
// first ones.
func (s *IngestSummary) dateErrors(p *Prepared) {
	s.DateErrors += len(p.DateFailures)
	for _, e := range p.DateFailures {
		if len(s.DateErrorList) >= maxReportedDateErrors {
			return
		}
		s.DateErrorList = append(s.DateErrorList, ItemError{Line: p.Line, Error: e.String()})
	}
}

func (s *IngestSummary) reject(line int, err error) {
	s.Rejected++
	if len(s.Errors) >= maxReportedErrors {
		s.ErrorsTruncated = true
		return
	}
	s.Errors = append(s.Errors, ItemError{Line: line, Error: ErrorMessage(err)})
}

// AfterCommit is called with each committed batch and its result. Hooks run
// after the commit, so a failing or slow hook never loses an item; they
// must not block for long (hand work to a bounded queue).
type AfterCommit func(ctx context.Context, items []*Prepared, res *IngestResult)

// Ingester reads items, prepares them in parallel and writes them to the
// store in batches, one transaction per batch.
type Ingester struct {
	Store  RecordStore
	Config *Config
	// Dates reads event fields and _crawled_at. Defaults to MachineDates.
	Dates DateParser
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// BatchSize is items per transaction. Defaults to Config.Limits.Batch,
	// then 1000.
	BatchSize int
	// Workers prepare items in parallel. Defaults to GOMAXPROCS.
	Workers int
	// Rules decide whether archived records that come back stay archived.
	// Nil revives them all.
	Rules *Rules
	// MarksInStore puts the crawl-round marks of each batch into the
	// batch, for stores that commit them with the records.
	MarksInStore bool
	// Monitor, when set, records the marks of each batch after its commit
	// when the store did not commit them with the records. A failure there
	// stops the ingest with an error after the batch was stored; ingesting
	// again records the marks (the items come back unchanged).
	Monitor Monitor
	// AfterCommit hooks run after each committed batch.
	AfterCommit []AfterCommit
	// Progress, when set, is called after each batch with the items read
	// so far.
	Progress func(read int)
	// Retry retries a batch that failed transiently. Nil uses the
	// defaults of Retry.
	Retry *Retry
	// KeyRules checks each source's key rules against the store's before
	// its first batch is written (and records them for a new source). Nil
	// uses a guard of the Ingester's own that records without warning,
	// when the store also plays the state role.
	KeyRules *KeyRulesGuard

	keyRulesOnce sync.Once
}

type rawChunk struct {
	items []RawItem
	// readErr is set on the last chunk when the input failed.
	readErr error
}

type preparedChunk struct {
	items    []*Prepared
	rejected []ItemError
	read     int
	readErr  error
}

func (g *Ingester) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Ingester) batchSize() int {
	if g.BatchSize > 0 {
		return g.BatchSize
	}
	if g.Config != nil && g.Config.Limits.Batch > 0 {
		return g.Config.Limits.Batch
	}
	return DefaultBatchSize
}

// Ingest reads JSON lines or a JSON array from r and stores every valid
// item; invalid ones are rejected one by one. base is the request's
// metadata. It returns the summary so far together with an error when the
// input could not be read or the store failed; batches committed before the
// failure stay committed.
func (g *Ingester) Ingest(ctx context.Context, r io.Reader, base Meta) (*IngestSummary, error) {
	// Metadata no store can hold fails the whole request, before any of
	// it is read, rather than every item that lacks its own.
	if err := base.Validate([3]string{"the request's source", "the request's target", "the request's round"}); err != nil {
		return &IngestSummary{Errors: []ItemError{}}, err
	}
	maxBytes := 0
	if g.Config != nil {
		maxBytes = g.Config.Limits.MaxItemBytes
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	raws := make(chan rawChunk, 2)
	go func() {
		defer close(raws)
		size := g.batchSize()
		chunk := make([]RawItem, 0, size)
		err := ReadItems(r, maxBytes, func(it RawItem) error {
			chunk = append(chunk, it)
			if len(chunk) == size {
				select {
				case raws <- rawChunk{items: chunk}:
				case <-ctx.Done():
					return ctx.Err()
				}
				chunk = make([]RawItem, 0, size)
			}
			return nil
		})
		select {
		case raws <- rawChunk{items: chunk, readErr: err}:
		case <-ctx.Done():
		}
	}()
	prepared := make(chan preparedChunk, 1)
	go func() {
		defer close(prepared)
		for c := range raws {
			pc := g.prepareChunk(c.items, base)
			pc.readErr = c.readErr
			select {
			case prepared <- pc:
			case <-ctx.Done():
				return
			}
		}
	}()
	sum := &IngestSummary{Errors: []ItemError{}}
	var readErr error
	for pc := range prepared {
		sum.Read += pc.read
		for _, p := range pc.items {
			sum.dateErrors(p)
		}
		for _, e := range pc.rejected {
			sum.reject(e.Line, Errorf(EINVALID, "%s", e.Error))
		}
		if err := g.write(ctx, pc.items, sum); err != nil {
			return sum, err
		}
		if pc.readErr != nil && pc.readErr != context.Canceled {
			readErr = pc.readErr
		}
		if g.Progress != nil {
			g.Progress(sum.Read)
		}
	}
	if readErr != nil {
		return sum, &Error{Code: EINVALID, Message: "read input", Err: readErr}
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	return sum, nil
}

// IngestItems stores already-decoded items (from an API client, an
// importer or a simulation) with the same semantics as Ingest. Each
// element of lines is the item's position for error messages.
func (g *Ingester) IngestItems(ctx context.Context, items []map[string]any, metas []Meta) (*IngestSummary, error) {
	sum := &IngestSummary{Errors: []ItemError{}}
	now := g.now()
	size := g.batchSize()
	batch := make([]*Prepared, 0, size)
	for i, it := range items {
		sum.Read++
		if err := metas[i].Validate([3]string{"metadata _source", "metadata _target", "metadata _round"}); err != nil {
			sum.reject(i+1, err)
			continue
		}
		p, err := (&Preparer{Config: g.Config, Dates: g.Dates}).PrepareDecoded(it, metas[i], i+1, now)
		if err != nil {
			sum.reject(i+1, err)
			continue
		}
		sum.dateErrors(p)
		batch = append(batch, p)
		if len(batch) == size {
			if err := g.write(ctx, batch, sum); err != nil {
				return sum, err
			}
			batch = batch[:0:0]
		}
	}
	if err := g.write(ctx, batch, sum); err != nil {
		return sum, err
	}
	return sum, nil
}

// prepareChunk validates and prepares raw items in parallel, keeping their
// order.
func (g *Ingester) prepareChunk(raws []RawItem, base Meta) preparedChunk {
	out := make([]*Prepared, len(raws))
	errs := make([]error, len(raws))
	now := g.now()
	prep := &Preparer{Config: g.Config, Dates: g.Dates}
	workers := g.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > len(raws) {
		workers = len(raws)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(raws); i += workers {
				it := raws[i]
				if it.Err != nil {
					errs[i] = it.Err
					continue
				}
				out[i], errs[i] = prep.Prepare(it.Data, it.Line, base, now)
			}
		}(w)
	}
	wg.Wait()
	pc := preparedChunk{read: len(raws), items: make([]*Prepared, 0, len(raws))}
	for i, p := range out {
		if errs[i] != nil {
			pc.rejected = append(pc.rejected, ItemError{Line: raws[i].Line, Error: ErrorMessage(errs[i])})
			continue
		}
		pc.items = append(pc.items, p)
	}
	sort.SliceStable(pc.rejected, func(i, j int) bool { return pc.rejected[i].Line < pc.rejected[j].Line })
	return pc
}

// checkKeyRules runs the key-rules guard for each source of the batch; the
// guard remembers the sources it has checked.
func (g *Ingester) checkKeyRules(ctx context.Context, items []*Prepared) {
	g.keyRulesOnce.Do(func() {
		if st, ok := g.Store.(KeyRulesBackend); ok && g.KeyRules == nil {
			g.KeyRules = &KeyRulesGuard{Store: st, Config: g.Config}
		}
	})
	if g.KeyRules == nil {
		return
	}
	last := ""
	for i, it := range items {
		if i == 0 || it.Source != last {
			last = it.Source
			g.KeyRules.Check(ctx, last)
		}
	}
}

// write commits one batch and runs the hooks. Failure reports among the
// items give marks only; the other items are stored.
func (g *Ingester) write(ctx context.Context, all []*Prepared, sum *IngestSummary) error {
	if len(all) == 0 {
		return nil
	}
	now := g.now()
	monitored := g.MarksInStore || g.Monitor != nil
	items := all
	var reports []*Prepared
	for i, it := range all {
		if !it.Report {
			if reports != nil {
				items = append(items, it)
			}
			continue
		}
		if reports == nil {
			items = append([]*Prepared{}, all[:i]...)
			reports = []*Prepared{}
		}
		if !monitored {
			sum.reject(it.Line, Errorf(EINVALID, "item has no fields besides metadata: a failure report (_error) needs the crawl monitor, which this process does not have"))
			continue
		}
		reports = append(reports, it)
	}
	if len(items) == 0 {
		if len(reports) == 0 {
			return nil
		}
		if g.Monitor == nil {
			for _, it := range reports {
				sum.reject(it.Line, Errorf(EINVALID, "a failure report (_error) in a batch of its own needs the crawl monitor, which this process does not have"))
			}
			return nil
		}
		marks := MarksFromItems(reports, now)
		n, err := g.Monitor.Mark(ctx, marks)
		if err != nil {
			return &Error{Code: ErrorCode(err), Message: fmt.Sprintf("%d failure reports were not recorded (send them again once the monitor is back)", len(reports)), Err: err}
		}
		sum.Marked += n
		sum.Reports += len(reports)
		return nil
	}
	b := &IngestBatch{Items: items, Now: now}
	if g.Config != nil {
		// Every source's policy is resolved before the write: a source
		// whose configuration cannot be resolved fails the batch rather
		// than falling back to another history limit.
		limits := map[string]int{}
		for _, it := range items {
			if _, ok := limits[it.Source]; ok {
				continue
			}
			p, err := g.Config.Policy(it.Source)
			if err != nil {
				return fmt.Errorf("history limit of source %q: %w", it.Source, err)
			}
			limits[it.Source] = p.HistoryLimit
		}
		b.HistoryLimit = func(source string) int {
			if n, ok := limits[source]; ok {
				return n
			}
			return DefaultHistoryLimit
		}
	}
	if g.Rules != nil {
		rules := g.Rules
		b.Due = func(r *Record) (ArchiveReason, bool) { return rules.Due(r, now) }
	}
	if monitored {
		b.Marks = MarksFromItems(append(append([]*Prepared{}, items...), reports...), now)
	}
	g.checkKeyRules(ctx, items)
	// A batch is idempotent (re-applying it converges), so a store outage
	// or a lost race is retried with backoff before the ingest fails; the
	// items are acknowledged only once the commit succeeded.
	var res *IngestResult
	err := g.Retry.Do(ctx, func() error {
		var err error
		res, err = g.Store.Ingest(ctx, b)
		return err
	})
	if err != nil {
		return err
	}
	for i, o := range res.Outcomes {
		if items[i].Source == "" {
			sum.NoSource++
		}
		switch o {
		case OutcomeInserted:
			sum.Inserted++
			if items[i].CrawledAtDefaulted {
				sum.CrawledAtDefaulted++
			}
		case OutcomeChanged:
			sum.Changed++
		case OutcomeUnchanged:
			sum.Unchanged++
		case OutcomeRevived:
			sum.Revived++
		case OutcomeRefreshed:
			sum.Refreshed++
		}
	}
	sum.Reports += len(reports)
	if res.MarksWritten {
		sum.Marked += len(b.Marks)
	}
	for _, h := range g.AfterCommit {
		h(ctx, items, res)
	}
	if !res.MarksWritten && g.Monitor != nil && len(b.Marks) > 0 {
		n, err := g.Monitor.Mark(ctx, b.Marks)
		if err != nil {
			return &Error{Code: ErrorCode(err), Message: fmt.Sprintf("the batch was stored but its %d crawl marks were not recorded (ingest it again once the monitor is back)", len(b.Marks)), Err: err}
		}
		sum.Marked += n
	}
	return nil
}
