package crawlkeeper

import "time"

// Outcome is what ingesting one item did.
type Outcome int

// Outcomes of ingesting one item.
const (
	OutcomeInserted  Outcome = iota + 1 // a new record
	OutcomeChanged                      // an active record whose content changed
	OutcomeUnchanged                    // an active record delivered again with the same content
	OutcomeRevived                      // an archived record moved back to active
	OutcomeRefreshed                    // an archived record refreshed in the archive
)

func (o Outcome) String() string {
	switch o {
	case OutcomeInserted:
		return "inserted"
	case OutcomeChanged:
		return "changed"
	case OutcomeUnchanged:
		return "unchanged"
	case OutcomeRevived:
		return "revived"
	case OutcomeRefreshed:
		return "refreshed"
	}
	return "unknown"
}

// NewRecord builds the record for an item whose key is not stored yet.
// The ID is assigned by the store.
func NewRecord(in *Prepared, now time.Time) *Record {
	now = Truncate(now)
	crawled := now
	if !in.CrawledAt.IsZero() && in.CrawledAt.Before(now) {
		// A crawler clock ahead of ours must not put crawled_at after
		// last_updated_at.
		crawled = in.CrawledAt
	}
	return &Record{
		Key:            in.Key,
		KeyParts:       in.KeyParts,
		Source:         in.Source,
		Title:          in.Title,
		URL:            in.URL,
		Item:           in.Item,
		ContentHash:    in.ContentHash,
		CrawledAt:      crawled,
		LastUpdatedAt:  now,
		LastChangedAt:  crawled,
		Version:        1,
		EventAt:        in.EventAt,
		DateErrors:     in.DateErrors,
		SearchText:     in.SearchText,
		SearchLanguage: in.SearchLanguage,
		LastRound:      in.Round,
		LastTarget:     in.Target,
		Fetches:        &FetchCounts{},
	}
}

// Merge applies a newly delivered item to the stored record cur and returns
// the next state, and the history entry to keep when the content changed
// (nil otherwise). cur is not modified. crawled_at never changes and
// last_updated_at never moves backwards, even when the clock does.
func Merge(cur *Record, in *Prepared, now time.Time) (next *Record, hist *HistoryEntry) {
	now = Truncate(now)
	next = cur.Clone()
	// The delivery closes the interval since the previous one; counts
	// start at a record's first delivery after they were introduced.
	if next.Fetches == nil {
		next.Fetches = &FetchCounts{}
	}
	next.Fetches.Add(now.Sub(cur.LastUpdatedAt), in.ContentHash != cur.ContentHash)
	if now.After(next.LastUpdatedAt) {
		next.LastUpdatedAt = now
	}
	// Event fields are re-read on every delivery: relative dates resolve
	// against the delivery time, and a fixed parser applies at once.
	next.EventAt = in.EventAt
	next.DateErrors = in.DateErrors
	// Round and target are overwritten only by a delivery that carries
	// them (see Record.LastRound).
	if in.Round != "" {
		next.LastRound = in.Round
	}
	if in.Target != "" {
		next.LastTarget = in.Target
	}
	if in.ContentHash == cur.ContentHash {
		return next, nil
	}
	changedAt := now
	if changedAt.Before(cur.LastChangedAt) {
		changedAt = cur.LastChangedAt
	}
	hist = &HistoryEntry{
		RecordID:    cur.ID,
		Version:     cur.Version,
		Item:        cur.Item,
		ContentHash: cur.ContentHash,
		ValidFrom:   cur.LastChangedAt,
		ValidTo:     changedAt,
	}
	next.Item = in.Item
	next.ContentHash = in.ContentHash
	next.Title = in.Title
	next.URL = in.URL
	next.KeyParts = in.KeyParts
	next.SearchText, next.SearchLanguage = in.SearchText, in.SearchLanguage
	next.Version = cur.Version + 1
	next.LastChangedAt = changedAt
	return next, hist
}

// Touched reports whether next differs from cur only in the fields an
// unchanged delivery updates (last_updated_at, event_at, date_errors,
// last_round, last_target), so a store can write a small update instead
// of the whole record.
func Touched(cur, next *Record) bool { return cur.Version == next.Version }
