package crawlkeeper

import (
	"context"
	"time"
)

// Store keeps records in an active set and an archive, with their history.
// Every backend (sqlite, postgres, mysql, mongodb) implements it and runs
// the conformance suite in package storetest.
//
// Store is the sum of role interfaces, one per kind of user: RecordStore
// (ingest and reads), ArchiveStore (the archiver), ScanStore (the
// reprocessing pipeline), StateStore (checkpoints, journal, leases),
// SearchStore (full-text search) and RekeyStore (applying changed key
// rules to stored records). Code
// that needs one role takes that interface, so a new backend can be built
// and tested one role at a time (storetest runs one suite per role).
//
// The contract relies on conditional writes, not on multi-statement
// transactions: a backend without them (MongoDB on a single server) applies
// each item or move with a write conditioned on the record's version and
// stays correct, because every operation is idempotent when re-run.
type Store interface {
	RecordStore
	ArchiveStore
	ScanStore
	StateStore
	SearchStore
	RekeyStore
	RecrawlStore
}

// RecordStore is the role that ingests items and reads records back.
type RecordStore interface {
	// Ingest applies a batch of prepared items in order; later items with
	// the same key see the effect of earlier ones. The decisions are
	// PlanIngest's. When Ingest returns nil every item is committed, as
	// durably as the store's durability setting promises. When it returns
	// an error, a prefix of the batch may have been applied; ingesting the
	// batch again converges to the same records (already-applied items
	// count as unchanged).
	Ingest(ctx context.Context, b *IngestBatch) (*IngestResult, error)

	// Get returns the record with id, active or archived, or an ENOTFOUND
	// error.
	Get(ctx context.Context, id int64) (*Record, error)
	// GetByKey returns the record with the dedup key, active or archived,
	// or an ENOTFOUND error.
	GetByKey(ctx context.Context, key string) (*Record, error)
	// History returns the kept previous versions of the record, oldest
	// first. It returns an empty slice for a record without changes and
	// ENOTFOUND for an unknown id.
	History(ctx context.Context, id int64) ([]HistoryEntry, error)
	// HistoryMany returns the kept previous versions of each of ids that
	// has any, oldest first, in one read per chunk of ids. Unknown ids and
	// records without changes are absent from the map.
	HistoryMany(ctx context.Context, ids []int64) (map[int64][]HistoryEntry, error)
	// List returns one page of records matching q.
	List(ctx context.Context, q RecordQuery) (*RecordPage, error)

	// Stats counts records, history and date errors, by source.
	Stats(ctx context.Context) (*Stats, error)
	// Check verifies the store's invariants and lists every violation.
	Check(ctx context.Context) (*CheckReport, error)
	// Close releases the store's resources.
	Close() error
}

// IngestBatch is one batch of prepared items to write.
type IngestBatch struct {
	Items []*Prepared
	// Now is the delivery time: last_updated_at of every item.
	Now time.Time
	// Due applies the archive rules to an archived record refreshed by
	// this batch: when it reports true the record stays archived (and is
	// refreshed there), otherwise it is revived. Nil revives every
	// archived record that comes back.
	Due func(*Record) (ArchiveReason, bool)
	// HistoryLimit returns how many previous versions to keep for a source.
	// Nil keeps DefaultHistoryLimit.
	HistoryLimit func(source string) int
	// Marks are crawl-round marks derived from the items (_target and
	// _round). A store that also persists the embedded monitor writes them
	// in the same commit as the records (see MarkWriter); otherwise the
	// caller hands them to the monitor after the commit.
	Marks []Mark
}

// HistoryLimitFor returns the batch's history limit for source.
func (b *IngestBatch) HistoryLimitFor(source string) int {
	if b.HistoryLimit == nil {
		return DefaultHistoryLimit
	}
	return b.HistoryLimit(source)
}

// IngestResult reports what a batch did.
type IngestResult struct {
	// Outcomes holds one outcome per item, in the batch's order.
	Outcomes []Outcome
	// IDs holds the record id of each item, in the batch's order.
	IDs []int64
	// Touched lists the active records that were inserted, changed or
	// revived, for real-time processing.
	Touched []RecordRef
	// MarksWritten is set when the store committed the batch's marks with
	// the records.
	MarksWritten bool
}

// Count returns how many items had outcome o.
func (r *IngestResult) Count(o Outcome) int {
	n := 0
	for _, x := range r.Outcomes {
		if x == o {
			n++
		}
	}
	return n
}

// RecordRef names a record version: enough for a notification.
type RecordRef struct {
	ID      int64 `json:"id"`
	Version int64 `json:"version"`
}

// Order is the order of a record listing.
type Order int

// Listing orders.
const (
	// OrderID lists records by ascending id.
	OrderID Order = iota
	// OrderNewest lists records by descending last_updated_at, then id.
	OrderNewest
)

// RecordQuery selects records to list.
type RecordQuery struct {
	// Archived lists the archive instead of the active records.
	Archived bool
	// Source limits the listing to one source when set (or when
	// ExactSource is).
	Source string
	// ExactSource makes Source a filter even when it is empty: the
	// records of the empty source name, not of every source. Code that
	// works on one source (rekey, the key-rules guard) sets it, because a
	// key belongs to its source and the empty name is a source like any
	// other.
	ExactSource bool
	// Q matches records whose title contains it (case-insensitive for
	// ASCII letters).
	Q string
	// Round keeps records whose last round (Record.LastRound, the round
	// of their last delivery that carried one) is exactly it; empty means
	// no filter. Like search's round filter, it finds a record delivered
	// in rounds 41 and 42 under 42 only. No store indexes the last round
	// or target (an index would cost every ingest), so a listing filtered
	// on them reads the records in its order and skips the others: a
	// round that few records are in costs a read of many to fill a page.
	Round string
	// Target keeps records whose last target (Record.LastTarget) is
	// exactly it; empty means no filter.
	Target string
	// Since keeps records with last_updated_at at or after it, when set.
	Since time.Time
	Order Order
	// Limit is the page size. Defaults to 50; at most 10000.
	Limit int
	// Cursor continues a previous page (RecordPage.Next).
	Cursor string
}

// FiltersSource reports whether the listing keeps only the records of
// q.Source.
func (q RecordQuery) FiltersSource() bool { return q.Source != "" || q.ExactSource }

// Validate checks the filters a store would otherwise answer with an
// empty page: a round that no delivery can carry (see ValidateRound) or a
// target longer than any stored one. Errors are EINVALID.
func (q RecordQuery) Validate() error { return validateRoundFilter("records", q.Round, q.Target) }

// validateRoundFilter checks the round and target filters of a listing or
// a search (what names it in the message).
func validateRoundFilter(what, round, target string) error {
	if round != "" {
		if err := ValidateRound(round); err != nil {
			return Errorf(EINVALID, "%s: %s", what, ErrorMessage(err))
		}
	}
	if len(target) > MaxNameBytes {
		return Errorf(EINVALID, "%s: target is %d bytes; targets are at most %d", what, len(target), MaxNameBytes)
	}
	return nil
}

// RecordPage is one page of a listing.
type RecordPage struct {
	Records []*Record
	// Next is the cursor of the following page, empty on the last page.
	Next string
}

// Stats are counts over the whole store.
type Stats struct {
	Active     int64                   `json:"active"`
	Archived   int64                   `json:"archived"`
	History    int64                   `json:"history"`
	DateErrors int64                   `json:"date_errors"`
	Sources    map[string]*SourceStats `json:"sources"`
	// ArchiveRawBytes and ArchiveStoredBytes are the archive's item
	// payloads before and after compression.
	ArchiveRawBytes    int64 `json:"archive_raw_bytes"`
	ArchiveStoredBytes int64 `json:"archive_stored_bytes"`
	// Deliveries and DuplicateDeliveries add up the sources' counters
	// (SourceStats), including sources whose records are all gone.
	Deliveries          int64 `json:"deliveries"`
	DuplicateDeliveries int64 `json:"duplicate_deliveries"`
	// DuplicateRate is DuplicateDeliveries / Deliveries (0 without
	// deliveries).
	DuplicateRate float64 `json:"duplicate_rate"`
}

// SourceStats are the counts of one source.
type SourceStats struct {
	Active     int64 `json:"active"`
	Archived   int64 `json:"archived"`
	DateErrors int64 `json:"date_errors"`
	// ActiveDateErrors counts the active records among DateErrors.
	ActiveDateErrors int64 `json:"active_date_errors"`
	// Deliveries counts the items ingested for the source since the
	// store was created, and DuplicateDeliveries those that went to a
	// record the store already held (a re-crawl merged into its record
	// instead of becoming a second one). Both are persistent: the store
	// adds to them in the ingest's own write (see IngestWrites.Deliveries).
	Deliveries          int64 `json:"deliveries"`
	DuplicateDeliveries int64 `json:"duplicate_deliveries"`
	// DuplicateRate is the share of deliveries that went to an existing
	// record, from 0 to 1: the rate at which crawlers deliver pages
	// crawlkeeper already holds, all of them merged (0 without deliveries).
	DuplicateRate float64 `json:"duplicate_rate"`
	// ArchivedByReason counts archived records by reason.
	ArchivedByReason map[ArchiveReason]int64 `json:"archived_by_reason,omitempty"`
	// MedianLifetimeS is the median of last_updated_at − crawled_at over
	// archived records, in seconds. Stores may take it over the most
	// recently archived records only (SQLite: the last 100,000), so it
	// stays cheap on large archives.
	MedianLifetimeS *float64 `json:"median_lifetime_s,omitempty"`
	// ChangesPerWeek is content changes per week over the last 4 weeks.
	ChangesPerWeek *float64 `json:"changes_per_week,omitempty"`
	// DateErrorSamples name a few of the source's date errors by field
	// (`deadline: cannot read "Rolling"`), from its most recently updated
	// active records. SampleDateErrors fills them; stores do not.
	DateErrorSamples []string `json:"date_error_samples,omitempty"`
}

func duplicateRate(deliveries, duplicates int64) float64 {
	if deliveries == 0 {
		return 0
	}
	return float64(duplicates) / float64(deliveries)
}

// AddDeliveries adds the delivery counters of counts (a store's counter
// rows, any number per source) to the sources and the totals, and sets
// the duplicate rates. Only sources with records get an entry in Sources.
func (s *Stats) AddDeliveries(counts []DeliveryCount) {
	for _, c := range counts {
		s.Deliveries += c.Deliveries
		s.DuplicateDeliveries += c.Duplicates
		if ss := s.Sources[c.Source]; ss != nil {
			ss.Deliveries += c.Deliveries
			ss.DuplicateDeliveries += c.Duplicates
		}
	}
	s.DuplicateRate = duplicateRate(s.Deliveries, s.DuplicateDeliveries)
	for _, ss := range s.Sources {
		ss.DuplicateRate = duplicateRate(ss.Deliveries, ss.DuplicateDeliveries)
	}
}

// Merge adds the per-source analytics of ArchiveStore.ArchiveStats.
func (s *Stats) Merge(extra map[string]*SourceStats) {
	for name, x := range extra {
		if ss := s.Sources[name]; ss != nil {
			ss.MedianLifetimeS, ss.ChangesPerWeek = x.MedianLifetimeS, x.ChangesPerWeek
		}
	}
}

// CheckReport lists invariant violations; OK is true when there are none.
type CheckReport struct {
	OK         bool        `json:"ok"`
	Violations []Violation `json:"violations"`
}

// Violation is one broken invariant.
type Violation struct {
	// Kind names the invariant: key_in_both, duplicate_id,
	// crawled_after_updated, history_gap, history_orphan, id_counter.
	Kind    string `json:"kind"`
	ID      int64  `json:"id,omitempty"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}
