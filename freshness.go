package crawlkeeper

import (
	"sort"
	"time"
)

// A rescan pass writes back only results that changed, so a record whose
// result stays the same keeps the processed_at of the write that last
// changed it. When it was processed since follows from the passes: the
// reprocessing pipeline knows which ids each pass read and when, and hands
// that to Freshness as covered spans. The rule, written once here and
// applied by every store (in SQL, or with Tally):
//
//   - A record is current when it was processed (processed_at set) at its
//     version (processed_version = version) by the chain asked about
//     (processed_chain = chain). A pass writes every record that is not
//     current, because its result then differs from the stored one.
//   - A pass that covered a record's id processed the record, at the
//     version it read, at or after the span's At; so the record's
//     processed time is the later of processed_at and At. The exception
//     is a record that came back to the active set (revived by a crawl or
//     restored by hand): Reactivate sets its processed_version to 0, as a
//     pass that covered its id may have run while it was archived, and
//     its processed time is its processed_at until it is processed again.
//     A record never processed has no processed time.
//   - A record is due when it is not current, or its processed time is
//     before the due time.

// FreshnessQuery asks how current processing is for a processor chain.
type FreshnessQuery struct {
	// Chain is the processor chain signature (see ChainSignature).
	Chain string
	// DueBefore: a record processed before it is due.
	DueBefore time.Time
	// Covered are the ids that passes of Chain read, each span with the
	// time its reads began; sorted by id and disjoint. Empty means every
	// record's processed time is its processed_at.
	Covered []CoveredSpan
}

// CoveredSpan says that a pass read, and processed, every active record
// with After < id <= Through at or after At.
type CoveredSpan struct {
	After   int64     `json:"after"`
	Through int64     `json:"through"`
	At      time.Time `json:"at"`
}

// Check reports whether the spans are well formed: each non-empty, in id
// order, not overlapping.
func (q FreshnessQuery) Check() error {
	for i, s := range q.Covered {
		if s.Through <= s.After {
			return Errorf(EINVALID, "freshness: covered span %d is empty (%d, %d]", i, s.After, s.Through)
		}
		if i > 0 && s.After < q.Covered[i-1].Through {
			return Errorf(EINVALID, "freshness: covered spans %d and %d overlap or are out of order", i-1, i)
		}
	}
	return nil
}

// Bound returns the At of the span covering id, and false when no span
// covers it.
func (q FreshnessQuery) Bound(id int64) (time.Time, bool) {
	i := sort.Search(len(q.Covered), func(i int) bool { return q.Covered[i].Through >= id })
	if i < len(q.Covered) && q.Covered[i].After < id {
		return q.Covered[i].At, true
	}
	return time.Time{}, false
}

// ProcessedAt returns the processed time of a record stored with this id,
// processed_version and processed_at; nil when it was never processed.
func (q FreshnessQuery) ProcessedAt(id, processedVersion int64, processedAt *time.Time) *time.Time {
	if processedAt == nil {
		return nil
	}
	t := *processedAt
	if processedVersion != 0 {
		if b, ok := q.Bound(id); ok && b.After(t) {
			t = b
		}
	}
	return &t
}

// Tally counts one active record stored with these fields into f: the
// rule for stores that compute freshness outside their engine.
func (q FreshnessQuery) Tally(f *Freshness, id, version, processedVersion int64, processedChain string, processedAt *time.Time) {
	f.Active++
	at := q.ProcessedAt(id, processedVersion, processedAt)
	if at == nil {
		f.NeverProcessed++
		f.Due++
		return
	}
	if processedVersion != version || processedChain != q.Chain || at.Before(q.DueBefore) {
		f.Due++
	}
	if f.OldestProcessedAt == nil || at.Before(*f.OldestProcessedAt) {
		v := *at
		f.OldestProcessedAt = &v
	}
}

// Reactivate clears what marks r as archived when it moves back to the
// active set, and makes it due for processing: a pass may have covered its
// id while it was archived, so its stored result must not count as
// current until it is processed again.
func (r *Record) Reactivate() {
	r.ArchivedAt, r.ArchiveReason = nil, ""
	r.ProcessedVersion = 0
}
