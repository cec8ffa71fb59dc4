package crawlkeeper

import (
	"encoding/json"
	"math"
	"time"
)

// ArchiveReason says why a record was moved to the archive.
type ArchiveReason string

// Archive reasons, in the order rules are evaluated.
const (
	ReasonEvent  ArchiveReason = "event"  // its deadline or event date passed (plus grace)
	ReasonStale  ArchiveReason = "stale"  // crawlers stopped delivering it (last_updated_at too old)
	ReasonAge    ArchiveReason = "age"    // it was first seen too long ago (crawled_at too old)
	ReasonManual ArchiveReason = "manual" // someone archived it by hand
)

// ArchiveReasons lists every reason, for reports that count by reason.
var ArchiveReasons = []ArchiveReason{ReasonAge, ReasonStale, ReasonEvent, ReasonManual}

// Record is what crawlkeeper stores for one item identity. The same struct
// describes active and archived records; ArchivedAt is nil for active ones.
type Record struct {
	ID       int64    `json:"id"`
	Key      string   `json:"key"`
	KeyParts []string `json:"key_parts"`
	Source   string   `json:"source"`
	Title    string   `json:"title"`
	URL      string   `json:"url"`
	// Item is the latest item as compact JSON with sorted keys, without
	// metadata keys.
	Item        json.RawMessage `json:"item"`
	ContentHash string          `json:"content_hash"`

	CrawledAt     time.Time `json:"crawled_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
	LastChangedAt time.Time `json:"last_changed_at"`
	Version       int64     `json:"version"`

	// EventAt is the moment the record's own deadline or event is over:
	// for a date without a time of day, the end of that day in the
	// source's time zone. Nil when the item has no readable event field.
	EventAt    *time.Time `json:"event_at"`
	DateErrors []string   `json:"date_errors,omitempty"`

	ProcessedAt      *time.Time      `json:"processed_at"`
	ProcessedVersion int64           `json:"processed_version"`
	ProcessedChain   string          `json:"processed_chain,omitempty"`
	Derived          json.RawMessage `json:"derived"`

	// LastRound and LastTarget are the crawl round and target (the _round
	// and _target metadata) of the last delivery that carried them: a
	// delivery without _round leaves LastRound as it was, and likewise
	// for _target, because a record seen again outside a round was still
	// last delivered in that round. Empty when no delivery carried one.
	// Search filters on them (SearchQuery.Round, SearchQuery.Target).
	LastRound  string `json:"last_round,omitempty"`
	LastTarget string `json:"last_target,omitempty"`

	ArchivedAt    *time.Time    `json:"archived_at,omitempty"`
	ArchiveReason ArchiveReason `json:"archive_reason,omitempty"`

	// Fetches counts the record's deliveries for the recrawl advisor
	// (package recrawl): ingest adds every re-delivery. Nil for a record
	// stored before they were counted, until its next delivery. Like
	// SearchText it is the store's bookkeeping, not part of the record's
	// JSON; the advisor reports what it concludes from it.
	Fetches *FetchCounts `json:"-"`

	// SearchText is what the store's full-text index reads (see
	// Prepared.SearchText). It is derived from the item under the
	// configuration, so it is not part of the record's JSON; Reindex
	// recomputes it from the item.
	SearchText string `json:"-"`
	// SearchLanguage is the PostgreSQL text search configuration of
	// SearchText; empty means "simple".
	SearchLanguage string `json:"-"`
}

// FetchCounts are what ingest keeps of a record's deliveries: each
// re-delivery closes the interval since the previous delivery, and the
// content it brings either changed or not. From these sums a record's
// change rate is estimated, changes missed between deliveries accounted
// for (package recrawl), without reading its history.
type FetchCounts struct {
	// Refetches counts the re-deliveries.
	Refetches int64 `json:"refetches"`
	// Changes counts the re-deliveries whose content changed.
	Changes int64 `json:"changes"`
	// ChangedUS and UnchangedUS add up the intervals, in microseconds,
	// that ended in a change and that did not.
	ChangedUS   int64 `json:"changed_us"`
	UnchangedUS int64 `json:"unchanged_us"`
	// ChangedLog adds up the natural logarithms of the lengths in seconds
	// (at least 1) of the intervals that ended in a change: with
	// ChangedUS it tells how spread they are, so that one short interval
	// that found a change (the best evidence that a page changes fast) is
	// not averaged away among long ones (package recrawl).
	ChangedLog float64 `json:"changed_log"`
}

// Add counts a re-delivery after interval since the previous one.
func (f *FetchCounts) Add(interval time.Duration, changed bool) {
	us := max(interval.Microseconds(), 0)
	f.Refetches++
	if changed {
		f.Changes++
		f.ChangedUS += us
		f.ChangedLog += math.Log(math.Max(float64(us)/1e6, 1))
	} else {
		f.UnchangedUS += us
	}
}

// Archived reports whether r is in the archive.
func (r *Record) Archived() bool { return r.ArchivedAt != nil }

// Clone returns a deep copy of r, so that callers may change it freely.
func (r *Record) Clone() *Record {
	c := *r
	c.KeyParts = append([]string(nil), r.KeyParts...)
	c.Item = append(json.RawMessage(nil), r.Item...)
	c.DateErrors = append([]string(nil), r.DateErrors...)
	c.Derived = append(json.RawMessage(nil), r.Derived...)
	c.EventAt = cloneTime(r.EventAt)
	c.ProcessedAt = cloneTime(r.ProcessedAt)
	c.ArchivedAt = cloneTime(r.ArchivedAt)
	if r.Fetches != nil {
		f := *r.Fetches
		c.Fetches = &f
	}
	return &c
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

// HistoryEntry is a previous version of a record's content: the item as it
// was, and the time range during which it was current.
type HistoryEntry struct {
	RecordID    int64           `json:"record_id"`
	Version     int64           `json:"version"`
	Item        json.RawMessage `json:"item"`
	ContentHash string          `json:"content_hash"`
	ValidFrom   time.Time       `json:"valid_from"`
	ValidTo     time.Time       `json:"valid_to"`
}

// TimeMicros converts t to the microseconds since the Unix epoch that SQL
// backends store; time precision in crawlkeeper is one microsecond.
func TimeMicros(t time.Time) int64 { return t.UnixMicro() }

// MicrosTime is the inverse of TimeMicros and returns UTC.
func MicrosTime(us int64) time.Time { return time.UnixMicro(us).UTC() }

// Truncate returns t in UTC at the precision crawlkeeper stores, so that a
// value compares equal before and after a round trip through any backend.
func Truncate(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
