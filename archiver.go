package crawlkeeper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// JournalArchiveRun is the journal kind of archive pass reports.
const JournalArchiveRun = "archive_run"

// ErrJournal is wrapped by the error of an archive pass whose moves are
// committed but whose journal entry could not be written, even after
// retries: the pass happened, but it is missing from the run history.
var ErrJournal = errors.New("archive journal entry not written")

// Archiver moves expired records to the archive by the configured rules.
type Archiver struct {
	Store  Store
	Config *Config
	// Dates re-reads event fields for --force and restore. Defaults to
	// MachineDates.
	Dates DateParser
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Progress, when set, is called after each batch with the records
	// examined and moved so far.
	Progress func(scanned, archived int)
	// Retry retries the journal write of a pass. Nil retries with the
	// defaults of Retry.
	Retry *Retry
}

// ArchiveOptions parameterise one archive pass.
type ArchiveOptions struct {
	// DryRun reports what would move, with samples, and moves nothing.
	DryRun bool
	// Force re-reads the event fields of every active record with the
	// current parser before archiving: the way to apply a parser fix.
	Force bool
	// Source limits the pass to one source when set.
	Source string
	// Batch is the number of records moved per batch. Defaults to
	// Config.Archive.Batch, then 1000.
	Batch int
	// Samples is the number of samples a dry run lists. Defaults to 20.
	Samples int
}

// ArchiveReport is what an archive pass did (or, for a dry run, would do).
type ArchiveReport struct {
	DryRun bool `json:"dry_run"`
	// Scanned counts the records the rules' indexes selected. A record
	// that a crawl changed after one rule selected it (Skipped) and that a
	// later rule selects again counts twice.
	Scanned  int                   `json:"scanned"`
	Archived int                   `json:"archived"`
	ByReason map[ArchiveReason]int `json:"by_reason"`
	// Skipped counts selected records left for the next pass because a
	// crawl touched them after selection.
	Skipped int `json:"skipped"`
	// Reparsed counts active records whose event fields were re-read
	// (--force); ReparseChanged those whose event_at or date errors changed.
	Reparsed       int `json:"reparsed"`
	ReparseChanged int `json:"reparse_changed"`
	// DateErrors counts active records whose event fields cannot be read;
	// they never archive by the event rule.
	DateErrors int             `json:"date_errors"`
	DurationS  float64         `json:"duration_s"`
	StartedAt  time.Time       `json:"started_at"`
	Samples    []ArchiveSample `json:"samples,omitempty"`
	Source     string          `json:"source,omitempty"`
	Manual     bool            `json:"manual,omitempty"`
	// NotActive lists ids a manual archive was given that are not active
	// records (unknown ids, or records archived already).
	NotActive []int64 `json:"not_active,omitempty"`
}

// ArchiveSample is one record a dry run would move.
type ArchiveSample struct {
	ID     int64         `json:"id"`
	Key    string        `json:"key"`
	Source string        `json:"source"`
	Title  string        `json:"title"`
	Reason ArchiveReason `json:"reason"`
}

func newArchiveReport(dry bool, now time.Time) *ArchiveReport {
	r := &ArchiveReport{DryRun: dry, StartedAt: now, ByReason: map[ArchiveReason]int{}}
	for _, reason := range ArchiveReasons {
		r.ByReason[reason] = 0
	}
	return r
}

func (a *Archiver) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Archiver) config() *Config {
	if a.Config == nil {
		a.Config = &Config{}
	}
	return a.Config
}

func (a *Archiver) batch(opts ArchiveOptions) int {
	switch {
	case opts.Batch > 0:
		return opts.Batch
	case a.config().Archive.Batch > 0:
		return a.config().Archive.Batch
	}
	return DefaultBatchSize
}

// Run performs one archive pass. Selection walks each rule's index; moves
// happen in batches, each only if the record is unchanged since it was
// selected. Killed at any point and run again, the pass converges: a batch
// is atomic (or, without transactions, idempotent), so nothing is lost and
// nothing ends up in both stores.
func (a *Archiver) Run(ctx context.Context, opts ArchiveOptions) (*ArchiveReport, error) {
	start := time.Now()
	now := a.now()
	rep := newArchiveReport(opts.DryRun, now)
	rep.Source = opts.Source
	if opts.Force {
		n, changed, errs, err := a.Reparse(ctx, opts.Source, now, opts.DryRun)
		if err != nil {
			return rep, err
		}
		rep.Reparsed, rep.ReparseChanged, rep.DateErrors = n, changed, errs
	}
	groups, err := a.groups(ctx, opts.Source)
	if err != nil {
		return rep, err
	}
	samples := opts.Samples
	if samples <= 0 {
		samples = 20
	}
	batch := a.batch(opts)
	var moves []Move
	flush := func() error {
		if len(moves) == 0 {
			return nil
		}
		defer func() { moves = moves[:0] }()
		if opts.DryRun {
			for _, m := range moves {
				rep.Archived++
				rep.ByReason[m.Reason]++
			}
			return nil
		}
		moved, err := a.Store.Archive(ctx, moves, now)
		if err != nil {
			return err
		}
		done := make(map[int64]bool, len(moved))
		for _, id := range moved {
			done[id] = true
		}
		for _, m := range moves {
			if done[m.ID] {
				rep.Archived++
				rep.ByReason[m.Reason]++
			} else {
				rep.Skipped++
			}
		}
		if a.Progress != nil {
			a.Progress(rep.Scanned, rep.Archived)
		}
		return nil
	}
	for _, g := range groups {
		var walked []DueCondition
		for _, rule := range g.rules(now) {
			// Selection pages are larger than move batches: a page is one
			// cheap index range, a batch one transaction.
			q := DueQuery{Rule: rule.rule, Cutoff: rule.cutoff, Sources: g.sources, Exclude: g.exclude, Limit: max(batch, 10000)}
			// Rules are walked event, stale, age, and a record due by
			// several counts under the first, the most specific reason.
			// A pass needs no memory of what it saw for that: a record
			// moved under one rule is no longer active when the next
			// rule selects. A dry run moves nothing, so each of its
			// selections leaves out the rules walked before.
			if opts.DryRun {
				q.Except = walked
			}
			selected := 0
			for {
				page, err := a.Store.SelectDue(ctx, q)
				if err != nil {
					return rep, err
				}
				selected += len(page)
				for i := range page {
					d := &page[i]
					rep.Scanned++
					reason := rule.reason()
					if opts.DryRun && len(rep.Samples) < samples {
						rep.Samples = append(rep.Samples, ArchiveSample{ID: d.ID, Reason: reason})
					}
					m := Move{ID: d.ID, Version: d.Version, LastUpdatedAt: d.LastUpdatedAt, Reason: reason}
					if rule.rule == DueByEvent {
						m.EventBefore = &rule.cutoff
					}
					moves = append(moves, m)
					if len(moves) >= batch {
						if err := flush(); err != nil {
							return rep, err
						}
					}
				}
				if len(page) < q.Limit {
					break
				}
				q.After = page[len(page)-1].Cursor()
			}
			// Only a rule that selected something can make a later one
			// count a record twice; leaving the others out keeps the
			// later selections within their own index.
			if selected > 0 {
				walked = append(walked, DueCondition{Rule: rule.rule, Cutoff: rule.cutoff})
			}
			// The rule's last moves go before the next rule selects, so
			// that it finds them archived.
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	if err := flush(); err != nil {
		return rep, err
	}
	if err := a.describeSamples(ctx, rep.Samples); err != nil {
		return rep, err
	}
	if !opts.Force {
		if rep.DateErrors, err = a.activeDateErrors(ctx, opts.Source); err != nil {
			return rep, err
		}
	}
	rep.DurationS = time.Since(start).Seconds()
	if !opts.DryRun {
		if err := a.journal(ctx, rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// activeDateErrors returns how many active records (of source, when set)
// have date errors: from the store's counts where it keeps them, so a pass
// never counts the active table.
func (a *Archiver) activeDateErrors(ctx context.Context, source string) (int, error) {
	if c, ok := a.Store.(DateErrorCounter); ok {
		counts, err := c.ActiveDateErrors(ctx)
		if err != nil {
			return 0, err
		}
		n := int64(0)
		for name, k := range counts {
			if source == "" || name == source {
				n += k
			}
		}
		return int(n), nil
	}
	st, err := a.Store.Stats(ctx)
	if err != nil {
		return 0, err
	}
	n := int64(0)
	for name, s := range st.Sources {
		if source == "" || name == source {
			n += s.ActiveDateErrors
		}
	}
	return int(n), nil
}

// journal records the pass in the store's journal, retrying transient
// failures. The moves are committed whatever happens here, so a failure
// is returned wrapped in ErrJournal, with the report, for the caller to
// show: the pass is not undone, but it would be missing from the history.
func (a *Archiver) journal(ctx context.Context, rep *ArchiveReport) error {
	b, err := json.Marshal(rep)
	if err == nil {
		err = a.Retry.Do(ctx, func() error { return a.Store.AppendJournal(ctx, JournalArchiveRun, rep.StartedAt, b) })
	}
	if err != nil {
		return fmt.Errorf("%w (%d records were archived): %w", ErrJournal, rep.Archived, err)
	}
	return nil
}

// ruleQuery is one rule to walk for a policy group.
type ruleQuery struct {
	rule   DueRule
	cutoff time.Time
}

func (r ruleQuery) reason() ArchiveReason {
	switch r.rule {
	case DueByStale:
		return ReasonStale
	case DueByEvent:
		return ReasonEvent
	}
	return ReasonAge
}

// describeSamples fills in the key, source and title of dry-run samples,
// which selection does not read.
func (a *Archiver) describeSamples(ctx context.Context, samples []ArchiveSample) error {
	if len(samples) == 0 {
		return nil
	}
	ids := make([]int64, len(samples))
	for i, s := range samples {
		ids[i] = s.ID
	}
	recs, err := a.Store.GetMany(ctx, ids)
	if err != nil {
		return err
	}
	byID := make(map[int64]*Record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	for i := range samples {
		if r := byID[samples[i].ID]; r != nil {
			samples[i].Key, samples[i].Source, samples[i].Title = r.Key, r.Source, r.Title
		}
	}
	return nil
}

// policyGroup is a set of sources sharing one policy: each source with an
// override alone, and every other source together under the defaults.
type policyGroup struct {
	policy  *SourcePolicy
	sources []string
	exclude []string
}

func (g policyGroup) rules(now time.Time) []ruleQuery {
	c := g.policy.Cutoffs(now)
	var out []ruleQuery
	// Event first: it is the most specific reason, so a record due by two
	// rules is counted under event.
	if g.policy.Event {
		out = append(out, ruleQuery{DueByEvent, c.EventBefore})
	}
	if !c.UpdatedBefore.IsZero() {
		out = append(out, ruleQuery{DueByStale, c.UpdatedBefore})
	}
	if !c.CrawledBefore.IsZero() {
		out = append(out, ruleQuery{DueByAge, c.CrawledBefore})
	}
	return out
}

func (a *Archiver) groups(ctx context.Context, source string) ([]policyGroup, error) {
	cfg := a.config()
	if source != "" {
		p, err := cfg.Policy(source)
		if err != nil {
			return nil, err
		}
		return []policyGroup{{policy: p, sources: []string{source}}}, nil
	}
	var overridden []string
	for name := range cfg.Sources {
		overridden = append(overridden, name)
	}
	sort.Strings(overridden)
	def, err := cfg.DefaultPolicy()
	if err != nil {
		return nil, err
	}
	groups := []policyGroup{{policy: def, exclude: overridden}}
	for _, name := range overridden {
		p, err := cfg.Policy(name)
		if err != nil {
			return nil, err
		}
		groups = append(groups, policyGroup{policy: p, sources: []string{name}})
	}
	return groups, nil
}

// Reparse re-reads the event fields of every active record (of source,
// when set) with the current parser and writes back those that changed,
// unless dryRun. It returns the records re-read, those changed and those
// left with date errors.
func (a *Archiver) Reparse(ctx context.Context, source string, now time.Time, dryRun bool) (reparsed, changed, dateErrors int, err error) {
	dates := a.Dates
	if dates == nil {
		dates = MachineDates{}
	}
	var after int64
	for {
		recs, err := a.Store.ScanActive(ctx, after, 0, 1000)
		if err != nil {
			return reparsed, changed, dateErrors, err
		}
		var ups []EventUpdate
		for _, r := range recs {
			after = r.ID
			if source != "" && r.Source != source {
				continue
			}
			reparsed++
			u, diff, err := a.reread(dates, r, now)
			if err != nil {
				return reparsed, changed, dateErrors, err
			}
			if len(u.DateErrors) > 0 {
				dateErrors++
			}
			if diff {
				ups = append(ups, u)
			}
		}
		if len(ups) > 0 {
			changed += len(ups)
			if !dryRun {
				if _, err := a.Store.UpdateEvents(ctx, ups); err != nil {
					return reparsed, changed, dateErrors, err
				}
			}
		}
		if a.Progress != nil {
			a.Progress(reparsed, 0)
		}
		if len(recs) < 1000 {
			return reparsed, changed, dateErrors, nil
		}
	}
}

// reread reads r's event fields again and reports whether anything differs
// from what is stored.
func (a *Archiver) reread(dates DateParser, r *Record, now time.Time) (EventUpdate, bool, error) {
	pol, err := a.config().Policy(r.Source)
	if err != nil {
		return EventUpdate{}, false, err
	}
	item, _, err := DecodeItem(r.Item, Meta{})
	if err != nil {
		return EventUpdate{}, false, fmt.Errorf("record %d: stored item: %w", r.ID, err)
	}
	at, errs := ReadEventFields(dates, pol, item, now)
	u := EventUpdate{ID: r.ID, Version: r.Version, EventAt: at, DateErrors: errs}
	diff := (at == nil) != (r.EventAt == nil) || (at != nil && !at.Equal(*r.EventAt)) || fmt.Sprint(errs) != fmt.Sprint(r.DateErrors)
	return u, diff, nil
}

// ArchiveManual archives the given active records with reason manual,
// regardless of the rules. Ids that are not active (unknown, or archived
// already) are listed in the report's NotActive.
func (a *Archiver) ArchiveManual(ctx context.Context, ids []int64) (*ArchiveReport, error) {
	start := time.Now()
	now := a.now()
	rep := newArchiveReport(false, now)
	rep.Manual = true
	batch := a.batch(ArchiveOptions{})
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), batch)]
		ids = ids[len(chunk):]
		recs, err := a.Store.GetMany(ctx, chunk)
		if err != nil {
			return rep, err
		}
		found := make(map[int64]bool, len(recs))
		moves := make([]Move, 0, len(recs))
		for _, r := range recs {
			found[r.ID] = true
			moves = append(moves, Move{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: ReasonManual})
		}
		for _, id := range chunk {
			if !found[id] {
				rep.NotActive = append(rep.NotActive, id)
			}
		}
		if err := a.moveManual(ctx, moves, now, rep); err != nil {
			return rep, err
		}
	}
	rep.DurationS = time.Since(start).Seconds()
	if err := a.journal(ctx, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// ArchiveOlderThan archives, with reason manual, the active records of
// source first seen more than age ago. It walks the crawled_at index one
// page at a time and moves each page as it goes, so its memory does not
// grow with the number of records.
func (a *Archiver) ArchiveOlderThan(ctx context.Context, source string, age time.Duration) (*ArchiveReport, error) {
	start := time.Now()
	now := a.now()
	rep := newArchiveReport(false, now)
	rep.Manual, rep.Source = true, source
	q := DueQuery{Rule: DueByAge, Cutoff: now.Add(-age), Limit: a.batch(ArchiveOptions{})}
	if source != "" {
		q.Sources = []string{source}
	}
	for {
		page, err := a.Store.SelectDue(ctx, q)
		if err != nil {
			return rep, err
		}
		moves := make([]Move, len(page))
		for i, d := range page {
			moves[i] = Move{ID: d.ID, Version: d.Version, LastUpdatedAt: d.LastUpdatedAt, Reason: ReasonManual}
		}
		if err := a.moveManual(ctx, moves, now, rep); err != nil {
			return rep, err
		}
		if len(page) < q.Limit {
			break
		}
		// Moving records does not disturb the pagination (SelectDue).
		q.After = page[len(page)-1].Cursor()
	}
	rep.DurationS = time.Since(start).Seconds()
	if err := a.journal(ctx, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// moveManual moves one batch of manual moves and counts it in rep.
func (a *Archiver) moveManual(ctx context.Context, moves []Move, now time.Time, rep *ArchiveReport) error {
	rep.Scanned += len(moves)
	if len(moves) == 0 {
		return nil
	}
	moved, err := a.Store.Archive(ctx, moves, now)
	if err != nil {
		return err
	}
	rep.Archived += len(moved)
	rep.ByReason[ReasonManual] += len(moved)
	rep.Skipped += len(moves) - len(moved)
	if a.Progress != nil {
		a.Progress(rep.Scanned, rep.Archived)
	}
	return nil
}

// RestoreReport says what a restore did.
type RestoreReport struct {
	Restored    []int64 `json:"restored"`
	NotArchived []int64 `json:"not_archived"`
	// StillDue lists restored records the rules would archive again at the
	// next pass, with the reason.
	StillDue []RestoreDue `json:"still_due"`
}

// RestoreDue is a restored record that the rules still consider expired.
type RestoreDue struct {
	ID     int64         `json:"id"`
	Reason ArchiveReason `json:"reason"`
}

// Restore moves archived records back to active, re-reads their event
// fields with the current parser, and reports which of them the rules
// would archive again.
func (a *Archiver) Restore(ctx context.Context, ids []int64) (*RestoreReport, error) {
	rep := &RestoreReport{Restored: []int64{}, NotArchived: []int64{}, StillDue: []RestoreDue{}}
	restored, err := a.Store.Restore(ctx, ids)
	if err != nil {
		return rep, err
	}
	rep.Restored = restored
	done := map[int64]bool{}
	for _, id := range restored {
		done[id] = true
	}
	for _, id := range ids {
		if !done[id] {
			rep.NotArchived = append(rep.NotArchived, id)
		}
	}
	recs, err := a.Store.GetMany(ctx, restored)
	if err != nil {
		return rep, err
	}
	now := a.now()
	dates := a.Dates
	if dates == nil {
		dates = MachineDates{}
	}
	var ups []EventUpdate
	rules := NewRules(a.config())
	for _, r := range recs {
		u, diff, err := a.reread(dates, r, now)
		if err != nil {
			return rep, err
		}
		if diff {
			ups = append(ups, u)
			r.EventAt, r.DateErrors = u.EventAt, u.DateErrors
		}
		if reason, due := rules.Due(r, now); due {
			rep.StillDue = append(rep.StillDue, RestoreDue{ID: r.ID, Reason: reason})
		}
	}
	if _, err := a.Store.UpdateEvents(ctx, ups); err != nil {
		return rep, err
	}
	return rep, nil
}

// PurgeReport says what a retention purge did.
type PurgeReport struct {
	Purged   int `json:"purged"`
	Exported int `json:"exported"`
	// Changed counts records that a crawl refreshed or changed after they
	// were exported: they stay archived until a later purge exports and
	// deletes them.
	Changed  int            `json:"changed"`
	BySource map[string]int `json:"by_source"`
}

// PurgeExport receives each archived record and its history before the
// record is deleted.
type PurgeExport interface {
	Write(v any) error
	// Sync makes every line written so far durable (on disk, file and
	// folder entry). Purge deletes nothing that a Sync has not covered.
	Sync() error
}

// PurgeLine is one line of a purge export.
type PurgeLine struct {
	Record  *Record        `json:"record"`
	History []HistoryEntry `json:"history"`
}

// purgePage is how many archived records one purge step reads, exports
// and deletes: memory stays bounded whatever the archive's size.
const purgePage = 1000

// Purge deletes archived records older than their source's purge_after,
// one page at a time: the page's records and their history are written to
// export and synced, then each record is deleted only if it is still
// archived in the state that was exported (PlanPurge). A record refreshed
// meanwhile is kept and counted as changed. A nil export purges without
// exporting. Killed at any point, every deleted record is in the export.
func (a *Archiver) Purge(ctx context.Context, export PurgeExport) (*PurgeReport, error) {
	rep := &PurgeReport{BySource: map[string]int{}}
	st, err := a.Store.Stats(ctx)
	if err != nil {
		return rep, err
	}
	now := a.now()
	sources := make([]string, 0, len(st.Sources))
	for name, s := range st.Sources {
		if s.Archived > 0 {
			sources = append(sources, name)
		}
	}
	sort.Strings(sources)
	for _, src := range sources {
		pol, err := a.config().Policy(src)
		if err != nil {
			return rep, err
		}
		if pol.PurgeAfter <= 0 {
			continue
		}
		var after int64
		for {
			recs, err := a.Store.ArchivedBefore(ctx, &src, now.Add(-pol.PurgeAfter), after, purgePage)
			if err != nil {
				return rep, err
			}
			if len(recs) == 0 {
				break
			}
			after = recs[len(recs)-1].ID
			n, err := a.purgePage(ctx, export, recs, rep)
			if err != nil {
				return rep, err
			}
			rep.BySource[src] += n
			if a.Progress != nil {
				a.Progress(rep.Exported, rep.Purged)
			}
			if len(recs) < purgePage {
				break
			}
		}
	}
	return rep, nil
}

// purgePage exports recs (when export is set), syncs the export and
// deletes the records still in their exported state. It returns how many
// it deleted.
func (a *Archiver) purgePage(ctx context.Context, export PurgeExport, recs []*Record, rep *PurgeReport) (int, error) {
	targets := make([]RecordState, len(recs))
	for i, r := range recs {
		targets[i] = StateOf(r)
	}
	if export != nil {
		ids := make([]int64, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		hist, err := a.Store.HistoryMany(ctx, ids)
		if err != nil {
			return 0, err
		}
		for _, r := range recs {
			h := hist[r.ID]
			if h == nil {
				h = []HistoryEntry{}
			}
			if err := export.Write(PurgeLine{Record: r, History: h}); err != nil {
				return 0, fmt.Errorf("export record %d: %w", r.ID, err)
			}
		}
		if err := export.Sync(); err != nil {
			return 0, fmt.Errorf("make the export durable, nothing more was deleted: %w", err)
		}
		rep.Exported += len(recs)
	}
	res, err := a.Store.Purge(ctx, targets)
	if err != nil {
		return 0, err
	}
	rep.Purged += len(res.Purged)
	rep.Changed += len(res.Changed)
	return len(res.Purged), nil
}
